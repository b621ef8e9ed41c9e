#include "record/events/counter_reads.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include <fmt/format.h>

namespace sample::record {

Result<CounterRead> ParseCounterRead(std::span<const uint64_t> words, uint64_t read_format) {
  size_t at = 0;
  auto next = [&](uint64_t* out) {
    if (at >= words.size()) return false;
    *out = words[at++];
    return true;
  };
  CounterRead r;
  auto times = [&] {
    return (!(read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) || next(&r.enabled)) &&
           (!(read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) || next(&r.running));
  };
  // A value with what follows it: its id and lost count, when asked for.
  auto value = [&] {
    uint64_t v = 0, id = 0, lost = 0;
    if (!next(&v) || ((read_format & PERF_FORMAT_ID) && !next(&id))) return false;
    if ((read_format & PERF_FORMAT_LOST) && !next(&lost)) return false;
    r.values.push_back({v, id});
    return true;
  };
  bool ok;
  if (read_format & PERF_FORMAT_GROUP) {
    // nr, the times, then nr values (the leader's first).
    uint64_t nr = 0;
    ok = next(&nr) && times();
    for (uint64_t i = 0; i < nr && ok; ++i) ok = value();
  } else {
    // The value, the times, then its id and lost count.
    uint64_t v = 0, id = 0, lost = 0;
    ok = next(&v) && times() && (!(read_format & PERF_FORMAT_ID) || next(&id)) &&
         (!(read_format & PERF_FORMAT_LOST) || next(&lost));
    if (ok) r.values.push_back({v, id});
  }
  if (!ok || r.values.empty()) {
    return Fail(
        fmt::format("short read: {} bytes for read_format {:#x}", words.size() * 8, read_format));
  }
  return r;
}

Result<CounterRead> ReadCounter(int fd, uint64_t read_format) {
  // nr, the two times, then value, id and lost of each member: 256 words
  // hold a group of 80.
  uint64_t words[256] = {};
  const ssize_t n = read(fd, words, sizeof(words));
  if (n < 0) return Fail(strerror(errno), errno);
  return ParseCounterRead(std::span<const uint64_t>(words, static_cast<size_t>(n) / 8),
                          read_format);
}

Result<CounterTotals> ReadCounterTotals(int fd, uint64_t read_format) {
  TRY_ASSIGN(auto r, ReadCounter(fd, read_format));
  return CounterTotals{r.values.front().first, r.enabled, r.running};
}

std::vector<CounterTotals> SumFdTotals(const std::vector<FdTotals>& fds, size_t events) {
  std::map<std::pair<size_t, pid_t>, CounterTotals> per_thread;
  for (const FdTotals& fd : fds) {
    CounterTotals& t = per_thread[{fd.event, fd.thread}];
    t.count += fd.totals.count;
    t.running += fd.totals.running;
    t.enabled =
        fd.thread == -1 ? t.enabled + fd.totals.enabled : std::max(t.enabled, fd.totals.enabled);
  }
  std::vector<CounterTotals> sums(events);
  for (const auto& [key, t] : per_thread) {
    if (key.first >= events) continue;
    sums[key.first].count += t.count;
    sums[key.first].enabled += t.enabled;
    sums[key.first].running += t.running;
  }
  return sums;
}

}  // namespace sample::record
