// Fuzz target: the kernel record parsers (libsample/perf/perf_record.h), which
// read whatever a recording file holds. The attr that decides the layout is
// taken from the input too, so every combination of sample_type,
// read_format, sample_id_all, branch and register flags gets tried. Every
// view a parser returns is read end to end, so a view past the record shows
// up under AddressSanitizer. Input: u64 sample_type, u64 read_format, u64
// sample_regs_user, u64 branch_sample_type, u8 flags (bit 0:
// sample_id_all), then the record (header included).
#include <linux/perf_event.h>

#include <cstdlib>
#include <span>
#include <string_view>

#include "libsample/perf/perf_record.h"
#include "libsample/perf/record_walker.h"
#include "tests/fuzz/fuzz_target.h"

namespace sample {
namespace {

// Sums what a view covers: reading every byte is the point.
uint64_t Touch(std::span<const std::byte> bytes) {
  uint64_t sum = 0;
  for (std::byte b : bytes) sum += static_cast<uint8_t>(b);
  return sum;
}
uint64_t Touch(std::string_view text) { return Touch(std::as_bytes(std::span(text))); }
uint64_t Touch(const U64List& list) {
  uint64_t sum = 0;
  for (size_t i = 0; i < list.size(); ++i) sum += list[i];
  return sum + Touch(list.bytes());
}
uint64_t Touch(const SampleId& id) { return id.pid + id.tid + id.time + id.id + id.cpu; }

// Every view of `record` must lie inside it.
void CheckInside(std::span<const std::byte> view, std::span<const std::byte> record) {
  if (view.empty()) return;
  if (view.data() < record.data() || view.data() + view.size() > record.data() + record.size()) {
    std::abort();
  }
}

uint64_t ParseAll(std::span<const std::byte> record, const perf_event_attr& attr) {
  uint64_t sum = ReadRecordHeader(record).size + RecordTime(record, attr);
  if (auto s = ParseSample(record, attr)) {
    sum += s->ip + s->period + s->time_enabled + s->time_running + Touch(s->callchain) +
           Touch(s->raw) + Touch(s->user_regs) + Touch(s->user_stack);
    for (size_t i = 0; i < s->read.size(); ++i) {
      sum += s->read.value(i) + s->read.id(i) + s->read.lost(i);
    }
    CheckInside(s->callchain.bytes(), record);
    CheckInside(s->raw, record);
    CheckInside(s->user_regs.bytes(), record);
    CheckInside(s->user_stack, record);
  }
  if (auto m = ParseMmap2(record, attr)) {
    sum += Touch(m->build_id) + Touch(m->filename) + Touch(m->sample_id);
    CheckInside(m->build_id, record);
    CheckInside(std::as_bytes(std::span(m->filename)), record);
  }
  if (auto c = ParseComm(record, attr)) {
    sum += Touch(c->comm) + Touch(c->sample_id);
    CheckInside(std::as_bytes(std::span(c->comm)), record);
  }
  if (auto t = ParseTask(record, attr)) sum += t->pid + t->time + Touch(t->sample_id);
  if (auto l = ParseLost(record, attr)) sum += l->lost + Touch(l->sample_id);
  if (auto l = ParseLostSamples(record, attr)) sum += l->lost + Touch(l->sample_id);
  if (auto t = ParseThrottle(record, attr)) sum += t->time + Touch(t->sample_id);
  if (auto s = ParseSwitch(record, attr)) sum += s->other_pid + s->out + Touch(s->sample_id);
  if (auto id = ParseSampleIdTrailer(record, attr)) sum += Touch(*id);
  return sum;
}

}  // namespace
}  // namespace sample

SAMPLE_FUZZ_TARGET(perf_record)(std::span<const std::byte> input) {
  using namespace sample;
  fuzz::InputTaker take(input);
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.sample_type = take.Take<uint64_t>();
  attr.read_format = take.Take<uint64_t>();
  attr.sample_regs_user = take.Take<uint64_t>();
  attr.branch_sample_type = take.Take<uint64_t>();
  attr.sample_id_all = take.Take<uint8_t>() & 1;
  // The record as given, whatever its header claims, then the bytes as a
  // stream of records, as a records chunk is walked.
  volatile uint64_t sum = ParseAll(take.rest(), attr);
  ForEachRecord(take.rest(), [&](const perf_event_header&, std::span<const std::byte> record) {
    sum = sum + ParseAll(record, attr);
  });
  return 0;
}
