#include "formats/sample_columns.h"

#include <linux/perf_event.h>

#include <array>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "formats/embedded_fields.h"
#include "formats/frame_regs.h"
#include "libsample/count_bits.h"
#include "libsample/perf/perf_record.h"
#include "libsample/perf/record_walker.h"

namespace sample::format {
namespace {

constexpr size_t kTimeColumn = 0;
constexpr size_t kIpColumn = 1;
constexpr size_t kFirstRegColumn = 2;

// Where an event's fixed-position fields sit in its samples (0: absent),
// and what its columns hold.
struct Layout {
  uint32_t time = 0;
  uint32_t ip = 0;
  uint32_t period = 0;
  bool ns_period = false;   // the period is the nanoseconds since the last sample
  bool reg_deltas = false;  // BP, SP and IP are all recorded
};

Layout LayoutOf(const perf_event_attr& attr) {
  Layout layout;
  const uint64_t type = attr.sample_type;
  uint32_t at = sizeof(perf_event_header);
  // The fields before PERF_SAMPLE_READ are one u64 each, in this order.
  for (const uint64_t bit :
       {uint64_t{PERF_SAMPLE_IDENTIFIER}, uint64_t{PERF_SAMPLE_IP}, uint64_t{PERF_SAMPLE_TID},
        uint64_t{PERF_SAMPLE_TIME}, uint64_t{PERF_SAMPLE_ADDR}, uint64_t{PERF_SAMPLE_ID},
        uint64_t{PERF_SAMPLE_STREAM_ID}, uint64_t{PERF_SAMPLE_CPU}, uint64_t{PERF_SAMPLE_PERIOD}}) {
    if ((type & bit) == 0) continue;
    if (bit == PERF_SAMPLE_IP) layout.ip = at;
    if (bit == PERF_SAMPLE_TIME) layout.time = at;
    if (bit == PERF_SAMPLE_PERIOD) layout.period = at;
    at += 8;
  }
  layout.ns_period =
      layout.period != 0 && attr.type == PERF_TYPE_SOFTWARE &&
      (attr.config == PERF_COUNT_SW_CPU_CLOCK || attr.config == PERF_COUNT_SW_TASK_CLOCK);
  layout.reg_deltas = (type & PERF_SAMPLE_REGS_USER) != 0 &&
                      (attr.sample_regs_user & kFrameRegsMask) == kFrameRegsMask;
  return layout;
}

// BP's slot among the values of `mask`; SP and IP follow it (bits 6-8).
size_t BpSlot(uint64_t mask) { return CountBits(mask & ((uint64_t{1} << kPerfRegBp) - 1)); }

// The chain's first address (its first entry that is not a context
// marker), or 0.
uint64_t ChainFirst(const U64List& chain) {
  for (size_t i = 0; i < chain.size(); ++i) {
    if (!IsContextMarker(chain[i])) return chain[i];
  }
  return 0;
}

// The user pc the record holds elsewhere: the chain's first user entry, or
// the sample's ip.
uint64_t UserPc(const U64List& chain, uint64_t ip) {
  for (size_t i = 0; i + 1 < chain.size(); ++i) {
    if (chain[i] == PERF_CONTEXT_USER) return chain[i + 1];
  }
  return ip;
}

// Calls fn(record bytes, layout, sample) for each sample the table parses.
// The fields the columns hold may be zeros: nothing here reads them.
template <typename Fn>
void ForEachColumnSample(std::span<std::byte> records, const EventTable& events,
                         const std::vector<Layout>& layouts, Fn&& fn) {
  ForEachRecord(records, [&](const perf_event_header& header, std::span<const std::byte> record) {
    if (header.type != PERF_RECORD_SAMPLE) return;
    const auto index = events.EventIndexFor(record);
    if (!index) return;
    const auto sample = ParseSample(record, events.events()[*index].attr);
    if (!sample) return;
    // The walker hands out const views of our own mutable bytes.
    fn(const_cast<std::byte*>(record.data()), layouts[*index], *sample,
       events.events()[*index].attr.sample_regs_user);
  });
}

std::vector<Layout> Layouts(const EventTable& events) {
  std::vector<Layout> layouts;
  layouts.reserve(events.events().size());
  for (const EventDesc& event : events.events()) layouts.push_back(LayoutOf(event.attr));
  return layouts;
}

// Reads one column's varints.
class ColumnReader {
 public:
  ColumnReader() = default;
  ColumnReader(const std::byte* begin, const std::byte* end, size_t start)
      : at_(begin), end_(end), start_(start), begin_(begin) {}

  bool Next(uint64_t& value) {
    uint64_t zigzag = 0;
    if (!NextUnsigned(zigzag)) return false;
    value = (zigzag >> 1) ^ (0 - (zigzag & 1));
    return true;
  }
  bool NextUnsigned(uint64_t& value) {
    uint64_t bits = 0;
    for (unsigned shift = 0; shift < 70 && at_ != end_; shift += 7) {
      const auto byte = static_cast<uint8_t>(*at_++);
      if (shift == 63 && byte > 1) return false;
      bits |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) {
        value = bits;
        return true;
      }
    }
    return false;
  }
  // The next `n` bytes as they are; false if fewer are left.
  bool Take(uint64_t n, const std::byte*& bytes) {
    if (n > static_cast<uint64_t>(end_ - at_)) return false;
    bytes = at_;
    at_ += n;
    return true;
  }
  bool done() const { return at_ == end_; }
  // The payload position of the next byte.
  size_t position() const { return start_ + static_cast<size_t>(at_ - begin_); }

 private:
  const std::byte* at_ = nullptr;
  const std::byte* end_ = nullptr;
  size_t start_ = 0;
  const std::byte* begin_ = nullptr;
};

// The time column's values when split: the low bytes read in step with
// the high varints.
class SplitTimeReader {
 public:
  // False when the count or the low bytes do not fit the column.
  bool Open(ColumnReader column) {
    column_ = column;
    uint64_t count = 0;
    if (!column_.NextUnsigned(count) || !column_.Take(count, low_)) return false;
    left_ = count;
    return true;
  }
  bool Next(uint64_t& value) {
    uint64_t high = 0;
    if (left_ == 0 || !column_.NextUnsigned(high) || high > (~uint64_t{0} >> 8)) return false;
    const uint64_t zigzag = high << 8 | static_cast<uint8_t>(*low_++);
    --left_;
    value = (zigzag >> 1) ^ (0 - (zigzag & 1));
    return true;
  }
  bool done() const { return left_ == 0 && column_.done(); }
  size_t position() const { return column_.position(); }

 private:
  ColumnReader column_;
  const std::byte* low_ = nullptr;
  uint64_t left_ = 0;
};

// A tid's most recent distinct stack pointers, the latest first
// (kChunkFlagRecentStackPointers).
class RecentStackPointers {
 public:
  // The 1-based place of `sp` in the list, or 0.
  size_t Find(uint64_t sp) const {
    for (size_t i = 0; i < size_; ++i) {
      if (sps_[i] == sp) return i + 1;
    }
    return 0;
  }
  // The `k`-th, 1-based; k <= size().
  uint64_t At(size_t k) const { return sps_[k - 1]; }
  uint64_t latest() const { return size_ == 0 ? 0 : sps_[0]; }
  size_t size() const { return size_; }
  // Makes `sp`, at place `k` (0: in no place), the latest.
  void Use(size_t k, uint64_t sp) {
    if (k == 0 && size_ < kRecentStackPointers) {
      // Grown as used: a crafted chunk of a tid per sample costs a few
      // words each, not the whole list.
      sps_.insert(sps_.begin(), sp);
      ++size_;
      return;
    }
    const size_t moved = k != 0 ? k - 1 : size_ - 1;
    std::memmove(&sps_[1], &sps_[0], moved * sizeof(uint64_t));
    sps_[0] = sp;
  }

 private:
  std::vector<uint64_t> sps_;
  size_t size_ = 0;
};

uint64_t ZigZag(int64_t value) {
  return (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
}

std::string ColumnName(size_t column) {
  if (column == kTimeColumn) return "time";
  if (column == kIpColumn) return "ip";
  return fmt::format("user register {}", column - kFirstRegColumn);
}

}  // namespace

std::optional<SampleColumnParts> EncodeSampleColumns(std::vector<std::byte>& payload,
                                                     const EventTable& events,
                                                     ColumnCoding coding) {
  const bool split_time = coding.split_time;
  const std::vector<Layout> layouts = Layouts(events);
  std::array<std::vector<std::byte>, kSampleColumnCount> columns;
  std::vector<std::byte> time_low;                 // split_time: the low bytes; columns[0] the rest
  std::unordered_map<uint32_t, uint64_t> last_sp;  // by tid
  std::unordered_map<uint32_t, RecentStackPointers> recent;  // by tid, with coding.recent_sp
  uint64_t last_time = 0;
  ForEachColumnSample(
      payload, events, layouts,
      [&](std::byte* record, const Layout& layout, const SampleRecord& sample, uint64_t mask) {
        if (layout.time != 0) {
          const uint64_t time = LoadWord(record + layout.time);
          const auto delta =
              static_cast<int64_t>(time - last_time - (layout.ns_period ? sample.period : 0));
          if (split_time) {
            time_low.push_back(static_cast<std::byte>(ZigZag(delta) & 0xff));
            PutVarint(columns[kTimeColumn], ZigZag(delta) >> 8);
          } else {
            PutSigned(columns[kTimeColumn], delta);
          }
          last_time = time;
          StoreWord(record + layout.time, 0);
        }
        if (layout.ip != 0) {
          PutSigned(columns[kIpColumn],
                    static_cast<int64_t>(sample.ip - ChainFirst(sample.callchain)));
          StoreWord(record + layout.ip, 0);
        }
        if (sample.user_regs.empty()) return;
        auto* regs = const_cast<std::byte*>(sample.user_regs.bytes().data());
        const size_t bp_slot = BpSlot(mask);
        uint64_t deltas[3] = {};
        if (layout.reg_deltas) {
          const uint64_t bp = LoadWord(regs + 8 * bp_slot), sp = LoadWord(regs + 8 * (bp_slot + 1)),
                         ip = LoadWord(regs + 8 * (bp_slot + 2));
          uint64_t& last = last_sp[sample.tid];
          deltas[0] = bp - sp;
          deltas[1] = sp - last;
          deltas[2] = ip - UserPc(sample.callchain, sample.ip);
          last = sp;
        }
        size_t slot = 0;
        for (uint64_t bits = mask; bits != 0; bits &= bits - 1, ++slot) {
          const int reg = __builtin_ctzll(bits);
          std::vector<std::byte>& column = columns[kFirstRegColumn + static_cast<size_t>(reg)];
          const bool delta = layout.reg_deltas && slot >= bp_slot && slot < bp_slot + 3;
          if (delta && coding.recent_sp && slot == bp_slot + 1) {
            const uint64_t sp = LoadWord(regs + 8 * slot);
            RecentStackPointers& sps = recent[sample.tid];
            const size_t k = sps.Find(sp);
            PutVarint(column, k);
            if (k == 0) PutSigned(column, static_cast<int64_t>(sp - sps.latest()));
            sps.Use(k, sp);
            continue;
          }
          PutSigned(column, static_cast<int64_t>(delta ? deltas[slot - bp_slot]
                                                       : LoadWord(regs + 8 * slot)));
        }
        std::memset(regs, 0, 8 * slot);
      });
  std::vector<std::byte> time_head;  // split_time: the count and the low bytes
  if (split_time && !time_low.empty()) {
    PutVarint(time_head, time_low.size());
    time_head.insert(time_head.end(), time_low.begin(), time_low.end());
  }
  std::array<uint32_t, kSampleColumnCount> sizes{};
  size_t total = time_head.size();
  for (size_t i = 0; i < kSampleColumnCount; ++i) {
    sizes[i] = static_cast<uint32_t>(columns[i].size());
    total += columns[i].size();
  }
  if (total == 0) return std::nullopt;  // no sample moved a field
  sizes[kTimeColumn] += static_cast<uint32_t>(time_head.size());
  SampleColumnParts parts;
  parts.time_low = payload.size();
  payload.reserve(payload.size() + total + kSampleColumnFooterSize);
  payload.insert(payload.end(), time_head.begin(), time_head.end());
  parts.time_high = payload.size();
  payload.insert(payload.end(), columns[kTimeColumn].begin(), columns[kTimeColumn].end());
  parts.rest = payload.size();
  for (size_t i = kTimeColumn + 1; i < kSampleColumnCount; ++i) {
    payload.insert(payload.end(), columns[i].begin(), columns[i].end());
  }
  const auto* footer = reinterpret_cast<const std::byte*>(sizes.data());
  payload.insert(payload.end(), footer, footer + kSampleColumnFooterSize);
  return parts;
}

Result<size_t> DecodeSampleColumns(std::span<std::byte> payload, const EventTable& events,
                                   ColumnCoding coding) {
  const bool split_time = coding.split_time;
  if (payload.size() < kSampleColumnFooterSize) {
    return Fail(fmt::format("sample columns: {} bytes cannot hold the {}-byte column sizes",
                            payload.size(), kSampleColumnFooterSize));
  }
  const size_t footer = payload.size() - kSampleColumnFooterSize;
  std::array<uint32_t, kSampleColumnCount> sizes;
  std::memcpy(sizes.data(), payload.data() + footer, kSampleColumnFooterSize);
  uint64_t total = 0;
  for (const uint32_t size : sizes) total += size;
  if (total > footer) {
    return Fail(
        fmt::format("sample columns: the column sizes at byte {} add up to {}, over the "
                    "{} bytes before them",
                    footer, total, footer));
  }
  const size_t records_size = footer - static_cast<size_t>(total);
  std::array<ColumnReader, kSampleColumnCount> columns;
  size_t at = records_size;
  for (size_t i = 0; i < kSampleColumnCount; ++i) {
    columns[i] = ColumnReader(payload.data() + at, payload.data() + at + sizes[i], at);
    at += sizes[i];
  }
  SplitTimeReader split;
  if (split_time && sizes[kTimeColumn] != 0 && !split.Open(columns[kTimeColumn])) {
    return Fail(
        fmt::format("sample columns: the time column at byte {} does not hold the low bytes "
                    "its count says",
                    records_size));
  }

  const std::vector<Layout> layouts = Layouts(events);
  std::unordered_map<uint32_t, uint64_t> last_sp;
  std::unordered_map<uint32_t, RecentStackPointers> recent;
  uint64_t time = 0;
  size_t short_column = kSampleColumnCount;  // the first column to run out
  uint64_t samples = 0;
  ForEachColumnSample(
      payload.first(records_size), events, layouts,
      [&](std::byte* record, const Layout& layout, const SampleRecord& sample, uint64_t mask) {
        if (short_column != kSampleColumnCount) return;
        auto next = [&](size_t column, uint64_t& value) {
          if (split_time && column == kTimeColumn ? split.Next(value)
                                                  : columns[column].Next(value)) {
            return true;
          }
          short_column = column;
          return false;
        };
        uint64_t value = 0;
        if (layout.time != 0) {
          if (!next(kTimeColumn, value)) return;
          time += value + (layout.ns_period ? sample.period : 0);
          StoreWord(record + layout.time, time);
        }
        uint64_t ip = sample.ip;
        if (layout.ip != 0) {
          if (!next(kIpColumn, value)) return;
          ip = value + ChainFirst(sample.callchain);
          StoreWord(record + layout.ip, ip);
        }
        if (sample.user_regs.empty()) {
          ++samples;
          return;
        }
        auto* regs = const_cast<std::byte*>(sample.user_regs.bytes().data());
        const size_t bp_slot = BpSlot(mask);
        const bool recent_sp = layout.reg_deltas && coding.recent_sp;
        size_t slot = 0;
        for (uint64_t bits = mask; bits != 0; bits &= bits - 1, ++slot) {
          const size_t column = kFirstRegColumn + static_cast<size_t>(__builtin_ctzll(bits));
          if (recent_sp && slot == bp_slot + 1) {
            // The place among the recent ones, or 0 and the difference.
            RecentStackPointers& sps = recent[sample.tid];
            uint64_t k = 0;
            if (!columns[column].NextUnsigned(k) || k > sps.size() ||
                (k == 0 && !columns[column].Next(value))) {
              short_column = column;
              return;
            }
            const uint64_t sp = k != 0 ? sps.At(k) : sps.latest() + value;
            sps.Use(k, sp);
            StoreWord(regs + 8 * slot, sp);
            continue;
          }
          if (!next(column, value)) return;
          StoreWord(regs + 8 * slot, value);
        }
        if (layout.reg_deltas) {
          uint64_t& last = last_sp[sample.tid];
          const uint64_t sp = LoadWord(regs + 8 * (bp_slot + 1)) + (recent_sp ? 0 : last);
          StoreWord(regs + 8 * (bp_slot + 1), sp);
          StoreWord(regs + 8 * bp_slot, LoadWord(regs + 8 * bp_slot) + sp);
          StoreWord(regs + 8 * (bp_slot + 2),
                    LoadWord(regs + 8 * (bp_slot + 2)) + UserPc(sample.callchain, ip));
          last = sp;
        }
        ++samples;
      });
  const bool split_column = split_time && sizes[kTimeColumn] != 0;
  const auto position = [&](size_t i) {
    return split_column && i == kTimeColumn ? split.position() : columns[i].position();
  };
  if (short_column != kSampleColumnCount) {
    return Fail(
        fmt::format("sample columns: the {} column ends or breaks at byte {}, before "
                    "sample {} has its value",
                    ColumnName(short_column), position(short_column), samples + 1));
  }
  for (size_t i = 0; i < kSampleColumnCount; ++i) {
    if (split_column && i == kTimeColumn ? !split.done() : !columns[i].done()) {
      return Fail(
          fmt::format("sample columns: the {} column holds bytes past the last "
                      "sample's value, from byte {}",
                      ColumnName(i), position(i)));
    }
  }
  return records_size;
}

}  // namespace sample::format
