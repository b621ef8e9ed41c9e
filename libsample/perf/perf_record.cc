#include "libsample/perf/perf_record.h"

#include <algorithm>
#include <bit>
#include <cstddef>

#include "libsample/byte_reader.h"
#include "libsample/count_bits.h"
#include "libsample/perf/record_walker.h"

namespace sample {
namespace {

size_t SampleIdTrailerSize(const perf_event_attr& attr) {
  if (!attr.sample_id_all) return 0;
  const uint64_t t = attr.sample_type;
  size_t size = 0;
  if (t & PERF_SAMPLE_TID) size += 8;
  if (t & PERF_SAMPLE_TIME) size += 8;
  if (t & PERF_SAMPLE_ID) size += 8;
  if (t & PERF_SAMPLE_STREAM_ID) size += 8;
  if (t & PERF_SAMPLE_CPU) size += 8;
  if (t & PERF_SAMPLE_IDENTIFIER) size += 8;
  return size;
}

// Reads the trailer fields in the order the kernel writes them.
bool ReadSampleIdFields(ByteReader& in, const perf_event_attr& attr, SampleId* out) {
  const uint64_t t = attr.sample_type;
  uint64_t scratch;
  if (t & PERF_SAMPLE_TID && !(in.Read(&out->pid) && in.Read(&out->tid))) return false;
  if (t & PERF_SAMPLE_TIME && !in.Read(&out->time)) return false;
  if (t & PERF_SAMPLE_ID && !in.Read(&out->id)) return false;
  if (t & PERF_SAMPLE_STREAM_ID && !in.Read(&scratch)) return false;
  if (t & PERF_SAMPLE_CPU) {
    uint32_t reserved;
    if (!(in.Read(&out->cpu) && in.Read(&reserved))) return false;
  }
  if (t & PERF_SAMPLE_IDENTIFIER && !in.Read(&out->id)) return false;
  return true;
}

// Splits a non-sample record into its body (after the header, before the
// trailer) and its parsed trailer.
bool SplitBody(std::span<const std::byte> record, const perf_event_attr& attr,
               std::span<const std::byte>* body, SampleId* sample_id) {
  const size_t trailer = SampleIdTrailerSize(attr);
  if (record.size() < sizeof(perf_event_header) + trailer) return false;
  const size_t body_size = record.size() - sizeof(perf_event_header) - trailer;
  *body = record.subspan(sizeof(perf_event_header), body_size);
  if (trailer != 0) {
    ByteReader in(record.subspan(record.size() - trailer));
    if (!ReadSampleIdFields(in, attr, sample_id)) return false;
  }
  return true;
}

// A non-sample record of type R: its trailer into r.sample_id, then its
// body read by `read(ByteReader&, R&)`, false when the body is short.
template <typename R, typename Read>
std::optional<R> ParseBody(std::span<const std::byte> record, const perf_event_attr& attr,
                           Read read) {
  std::span<const std::byte> body;
  R r;
  if (!SplitBody(record, attr, &body, &r.sample_id)) return std::nullopt;
  ByteReader in(body);
  if (!read(in, r)) return std::nullopt;
  return r;
}

// Reads the read_format block (perf_event_open(2), "read_format") into `s`.
// A group read is nr, the times, then {value, id, lost} per member; a
// single read is value, the times, id, lost.
bool ReadReadFormat(const perf_event_attr& attr, ByteReader& in, SampleRecord* s) {
  const uint64_t f = attr.read_format;
  const size_t times = ((f & PERF_FORMAT_TOTAL_TIME_ENABLED) ? 1 : 0) +
                       ((f & PERF_FORMAT_TOTAL_TIME_RUNNING) ? 1 : 0);
  const size_t extra = ((f & PERF_FORMAT_ID) ? 1 : 0) + ((f & PERF_FORMAT_LOST) ? 1 : 0);
  ReadValues::Layout layout;
  uint64_t nr = 1;
  size_t words_per_read;
  const std::byte* start = nullptr;
  if (f & PERF_FORMAT_GROUP) {
    if (!in.Read(&nr)) return false;
    if (f & PERF_FORMAT_TOTAL_TIME_ENABLED && !in.Read(&s->time_enabled)) return false;
    if (f & PERF_FORMAT_TOTAL_TIME_RUNNING && !in.Read(&s->time_running)) return false;
    layout.stride = 1 + extra;
    layout.id = (f & PERF_FORMAT_ID) ? 1 : 0;
    layout.lost = (f & PERF_FORMAT_LOST) ? layout.id + 1 : 0;
    if (nr > in.remaining() / (layout.stride * sizeof(uint64_t))) return false;
    words_per_read = nr * layout.stride;
  } else {
    layout.stride = 1 + times + extra;
    layout.id = (f & PERF_FORMAT_ID) ? 1 + times : 0;
    layout.lost = (f & PERF_FORMAT_LOST) ? 1 + times + ((f & PERF_FORMAT_ID) ? 1 : 0) : 0;
    words_per_read = layout.stride;
  }
  std::span<const std::byte> words;
  if (!in.ReadBytes(words_per_read * sizeof(uint64_t), &words)) return false;
  start = words.data();
  if (!(f & PERF_FORMAT_GROUP)) {
    ByteReader times_in(words.subspan(sizeof(uint64_t), times * sizeof(uint64_t)));
    if (f & PERF_FORMAT_TOTAL_TIME_ENABLED) times_in.Read(&s->time_enabled);
    if (f & PERF_FORMAT_TOTAL_TIME_RUNNING) times_in.Read(&s->time_running);
  }
  s->read = ReadValues(U64List(start, words_per_read), nr, layout);
  return true;
}

// The fields MMAP and MMAP2 start with: pid, tid, addr, len, pgoff.
bool ReadMappingStart(ByteReader& in, Mmap2Record* m) {
  return in.Read(&m->pid) && in.Read(&m->tid) && in.Read(&m->addr) && in.Read(&m->len) &&
         in.Read(&m->pgoff);
}

}  // namespace

perf_event_header ReadRecordHeader(std::span<const std::byte> record) {
  perf_event_header header{};
  if (record.size() >= sizeof(header)) std::memcpy(&header, record.data(), sizeof(header));
  return header;
}

namespace {

// ParseSample's parse, into a record the caller made: returned through
// an optional, the record was built here and copied there.
bool ParseSampleInto(std::span<const std::byte> record, const perf_event_attr& attr,
                     SampleRecord& s) {
  ByteReader in(record);
  if (!in.Skip(sizeof(perf_event_header))) return false;
  const uint64_t t = attr.sample_type;
  uint64_t scratch;
  if (t & PERF_SAMPLE_IDENTIFIER && !in.Read(&s.id)) return false;
  if (t & PERF_SAMPLE_IP && !in.Read(&s.ip)) return false;
  if (t & PERF_SAMPLE_TID && !(in.Read(&s.pid) && in.Read(&s.tid))) return false;
  if (t & PERF_SAMPLE_TIME && !in.Read(&s.time)) return false;
  if (t & PERF_SAMPLE_ADDR && !in.Read(&s.addr)) return false;
  if (t & PERF_SAMPLE_ID && !in.Read(&s.id)) return false;
  if (t & PERF_SAMPLE_STREAM_ID && !in.Read(&scratch)) return false;
  if (t & PERF_SAMPLE_CPU) {
    uint32_t reserved;
    if (!(in.Read(&s.cpu) && in.Read(&reserved))) return false;
  }
  if (t & PERF_SAMPLE_PERIOD) {
    if (!in.Read(&s.period)) return false;
  } else if (!attr.freq && attr.sample_period > 1) {
    s.period = attr.sample_period;  // every Nth hit kept, as perf reads it
  }
  if (t & PERF_SAMPLE_READ && !ReadReadFormat(attr, in, &s)) return false;
  if (t & PERF_SAMPLE_CALLCHAIN) {
    uint64_t nr;
    if (!in.Read(&nr) || nr > in.remaining() / sizeof(uint64_t)) return false;
    std::span<const std::byte> ips;
    in.ReadBytes(nr * sizeof(uint64_t), &ips);
    s.callchain = U64List(ips.data(), nr);
  }
  if (t & PERF_SAMPLE_RAW) {
    uint32_t size;
    if (!in.Read(&size) || !in.ReadBytes(size, &s.raw)) return false;
  }
  if (t & PERF_SAMPLE_BRANCH_STACK) {
    // nr, then hw_idx when branch_sample_type asks, then 24-byte entries.
    uint64_t nr;
    if (!in.Read(&nr)) return false;
    if (attr.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX && !in.Read(&scratch)) {
      return false;
    }
    if (nr > in.remaining() / 24 || !in.Skip(nr * 24)) return false;
  }
  if (t & PERF_SAMPLE_REGS_USER) {
    if (!in.Read(&s.regs_abi)) return false;
    if (s.regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
      const size_t count = CountBits(attr.sample_regs_user);
      std::span<const std::byte> regs;
      if (!in.ReadBytes(count * sizeof(uint64_t), &regs)) return false;
      s.user_regs = U64List(regs.data(), count);
    }
  }
  if (t & PERF_SAMPLE_STACK_USER) {
    // size, data[size], then dyn_size only when size is not zero.
    uint64_t size;
    if (!in.Read(&size) || size > in.remaining()) return false;
    if (size != 0) {
      std::span<const std::byte> data;
      uint64_t dyn_size;
      if (!in.ReadBytes(size, &data) || !in.Read(&dyn_size)) return false;
      s.user_stack = data.first(std::min(size, dyn_size));
    }
  }
  // Fields past the stack, in the kernel's order; read only when one kept
  // is there, so that records of layouts not parsed here still read.
  if ((t & (PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_DATA_PAGE_SIZE)) == 0) return true;
  for (uint64_t field : {uint64_t{PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT},
                         uint64_t{PERF_SAMPLE_DATA_SRC}, uint64_t{PERF_SAMPLE_TRANSACTION}}) {
    if (t & field && !in.Read(&scratch)) return false;
  }
  if (t & PERF_SAMPLE_REGS_INTR) {
    uint64_t abi;
    if (!in.Read(&abi)) return false;
    const size_t count = CountBits(attr.sample_regs_intr);
    if (abi != PERF_SAMPLE_REGS_ABI_NONE && !in.Skip(count * sizeof(uint64_t))) {
      return false;
    }
  }
  if (t & PERF_SAMPLE_PHYS_ADDR && !in.Read(&s.phys_addr)) return false;
  if (t & PERF_SAMPLE_CGROUP && !in.Read(&scratch)) return false;
  if (t & PERF_SAMPLE_DATA_PAGE_SIZE && !in.Read(&s.data_page_size)) return false;
  return true;
}

}  // namespace

std::optional<SampleRecord> ParseSample(std::span<const std::byte> record,
                                        const perf_event_attr& attr) {
  std::optional<SampleRecord> out(std::in_place);
  if (!ParseSampleInto(record, attr, *out)) out.reset();
  return out;
}

std::optional<Mmap2Record> ParseMmap2(std::span<const std::byte> record,
                                      const perf_event_attr& attr) {
  const bool build_id = (ReadRecordHeader(record).misc & PERF_RECORD_MISC_MMAP_BUILD_ID) != 0;
  return ParseBody<Mmap2Record>(record, attr, [build_id](ByteReader& in, Mmap2Record& m) {
    if (!ReadMappingStart(in, &m)) return false;
    // 24 bytes: either maj, min, ino, ino_generation or a build-id.
    std::span<const std::byte> ident;
    if (!in.ReadBytes(24, &ident)) return false;
    if (build_id) {
      const size_t size = std::min<size_t>(static_cast<uint8_t>(ident[0]), 20);
      m.build_id = ident.subspan(4, size);
    } else {
      std::memcpy(&m.maj, ident.data(), 4);
      std::memcpy(&m.min, ident.data() + 4, 4);
      std::memcpy(&m.ino, ident.data() + 8, 8);
    }
    if (!(in.Read(&m.prot) && in.Read(&m.flags))) return false;
    in.ReadString(in.remaining(), &m.filename);
    return true;
  });
}

std::optional<Mmap2Record> ParseMmap(std::span<const std::byte> record,
                                     const perf_event_attr& attr) {
  constexpr uint32_t kProtRead = 0x1, kProtExec = 0x4;
  const uint32_t prot = (ReadRecordHeader(record).misc & PERF_RECORD_MISC_MMAP_DATA)
                            ? kProtRead
                            : kProtRead | kProtExec;
  return ParseBody<Mmap2Record>(record, attr, [prot](ByteReader& in, Mmap2Record& m) {
    if (!ReadMappingStart(in, &m)) return false;
    m.prot = prot;
    in.ReadString(in.remaining(), &m.filename);
    return true;
  });
}

std::optional<CommRecord> ParseComm(std::span<const std::byte> record,
                                    const perf_event_attr& attr) {
  const bool exec = (ReadRecordHeader(record).misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
  return ParseBody<CommRecord>(record, attr, [exec](ByteReader& in, CommRecord& c) {
    if (!(in.Read(&c.pid) && in.Read(&c.tid))) return false;
    in.ReadString(in.remaining(), &c.comm);
    c.exec = exec;
    return true;
  });
}

std::optional<TaskRecord> ParseTask(std::span<const std::byte> record,
                                    const perf_event_attr& attr) {
  return ParseBody<TaskRecord>(record, attr, [](ByteReader& in, TaskRecord& r) {
    return in.Read(&r.pid) && in.Read(&r.ppid) && in.Read(&r.tid) && in.Read(&r.ptid) &&
           in.Read(&r.time);
  });
}

std::optional<LostRecord> ParseLost(std::span<const std::byte> record,
                                    const perf_event_attr& attr) {
  return ParseBody<LostRecord>(record, attr, [](ByteReader& in, LostRecord& r) {
    return in.Read(&r.id) && in.Read(&r.lost);
  });
}

std::optional<LostSamplesRecord> ParseLostSamples(std::span<const std::byte> record,
                                                  const perf_event_attr& attr) {
  return ParseBody<LostSamplesRecord>(
      record, attr, [](ByteReader& in, LostSamplesRecord& r) { return in.Read(&r.lost); });
}

std::optional<ThrottleRecord> ParseThrottle(std::span<const std::byte> record,
                                            const perf_event_attr& attr) {
  return ParseBody<ThrottleRecord>(record, attr, [](ByteReader& in, ThrottleRecord& r) {
    return in.Read(&r.time) && in.Read(&r.id) && in.Read(&r.stream_id);
  });
}

std::optional<SwitchRecord> ParseSwitch(std::span<const std::byte> record,
                                        const perf_event_attr& attr) {
  const perf_event_header header = ReadRecordHeader(record);
  if (header.type != PERF_RECORD_SWITCH && header.type != PERF_RECORD_SWITCH_CPU_WIDE) {
    return std::nullopt;
  }
  return ParseBody<SwitchRecord>(record, attr, [header](ByteReader& in, SwitchRecord& r) {
    r.out = (header.misc & PERF_RECORD_MISC_SWITCH_OUT) != 0;
    r.preempted = r.out && (header.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) != 0;
    r.cpu_wide = header.type == PERF_RECORD_SWITCH_CPU_WIDE;
    return !r.cpu_wide || (in.Read(&r.other_pid) && in.Read(&r.other_tid));
  });
}

std::optional<SampleId> ParseSampleIdTrailer(std::span<const std::byte> record,
                                             const perf_event_attr& attr) {
  std::span<const std::byte> body;
  SampleId id;
  if (!SplitBody(record, attr, &body, &id)) return std::nullopt;
  return id;
}

uint32_t SampleTimeOffset(const perf_event_attr& attr) {
  if (!(attr.sample_type & PERF_SAMPLE_TIME)) return 0;
  uint32_t offset = sizeof(perf_event_header);
  if (attr.sample_type & PERF_SAMPLE_IDENTIFIER) offset += 8;
  if (attr.sample_type & PERF_SAMPLE_IP) offset += 8;
  if (attr.sample_type & PERF_SAMPLE_TID) offset += 8;
  return offset;
}

CpuFieldPlace CpuFieldPlaceOf(const perf_event_attr& attr) {
  const uint64_t t = attr.sample_type;
  CpuFieldPlace place;
  place.sample_offset = sizeof(perf_event_header);
  for (uint64_t before : {PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME,
                          PERF_SAMPLE_ADDR, PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID}) {
    if (t & before) place.sample_offset += 8;
  }
  if (attr.sample_id_all && (t & PERF_SAMPLE_CPU)) {
    place.trailers = true;
    place.from_trailer_end = (t & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
    place.trailer_size = static_cast<uint32_t>(SampleIdTrailerSize(attr) - 8);
  }
  return place;
}

void InsertCpuField(std::span<const std::byte> records, uint32_t cpu, const CpuFieldPlace& place,
                    std::vector<std::byte>& out) {
  const uint32_t field[2] = {cpu, 0};
  const size_t walked =
      ForEachRecord(records, [&](const perf_event_header& header, std::span<const std::byte> r) {
        size_t at = r.size() + 1;  // none
        if (header.type == PERF_RECORD_SAMPLE) {
          if (r.size() >= place.sample_offset) at = place.sample_offset;
        } else if (place.trailers && r.size() >= sizeof(perf_event_header) + place.trailer_size) {
          at = r.size() - place.from_trailer_end;
        }
        const size_t old = out.size();
        if (at > r.size() || r.size() + 8 > UINT16_MAX) {
          out.resize(old + r.size());
          std::memcpy(out.data() + old, r.data(), r.size());
          return;
        }
        out.resize(old + r.size() + 8);
        std::byte* dst = out.data() + old;
        std::memcpy(dst, r.data(), at);
        std::memcpy(dst + at, field, 8);
        std::memcpy(dst + at + 8, r.data() + at, r.size() - at);
        const uint16_t size = static_cast<uint16_t>(r.size() + 8);
        std::memcpy(dst + offsetof(perf_event_header, size), &size, sizeof(size));
      });
  const size_t old = out.size();
  if (records.size() > walked) {
    out.resize(old + records.size() - walked);
    std::memcpy(out.data() + old, records.data() + walked, records.size() - walked);
  }
}

uint64_t RecordTime(std::span<const std::byte> record, const perf_event_attr& attr) {
  if (!(attr.sample_type & PERF_SAMPLE_TIME)) return 0;
  const perf_event_header header = ReadRecordHeader(record);
  if (header.type == PERF_RECORD_SAMPLE) {
    const size_t offset = SampleTimeOffset(attr);
    uint64_t time = 0;
    if (record.size() >= offset + 8) std::memcpy(&time, record.data() + offset, 8);
    return time;
  }
  if (!attr.sample_id_all) return 0;
  const size_t trailer = SampleIdTrailerSize(attr);
  if (record.size() < sizeof(perf_event_header) + trailer) return 0;
  size_t offset = record.size() - trailer;
  if (attr.sample_type & PERF_SAMPLE_TID) offset += 8;
  uint64_t time;
  std::memcpy(&time, record.data() + offset, 8);
  return time;
}

uint32_t ChainFrameLimit(const perf_event_attr& attr, uint32_t host_max_stack) {
  return attr.sample_max_stack != 0 ? attr.sample_max_stack : host_max_stack;
}

bool ChainAtFrameLimit(const U64List& chain, uint32_t limit) {
  size_t frames = 0;
  for (size_t i = 0; i < chain.size(); ++i) frames += !IsContextMarker(chain[i]);
  return frames >= limit;
}

}  // namespace sample
