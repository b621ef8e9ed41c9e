#include "tests/unit/synthetic_records.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace sample::testing {
namespace {

// Accumulates one record's bytes after a placeholder header; Finish() fills
// the header in once the size is known.
class RecordBuilder {
 public:
  RecordBuilder() : bytes_(sizeof(perf_event_header)) {}

  template <typename T>
  void Put(const T& value) {
    const size_t old = bytes_.size();
    bytes_.resize(old + sizeof(T));
    std::memcpy(bytes_.data() + old, &value, sizeof(T));
  }

  void PutBytes(std::span<const std::byte> data) {
    bytes_.insert(bytes_.end(), data.begin(), data.end());
  }

  // NUL-terminated, zero-padded to a multiple of 8, like the kernel's
  // comm and mmap filename fields.
  void PutString(const std::string& s) {
    const size_t padded = (s.size() + 1 + 7) & ~size_t{7};
    const size_t old = bytes_.size();
    bytes_.resize(old + padded);  // zero-filled
    std::memcpy(bytes_.data() + old, s.data(), s.size());
  }

  void PutSampleId(const perf_event_attr& attr, const SampleIdFields& id) {
    if (!attr.sample_id_all) return;
    const uint64_t t = attr.sample_type;
    if (t & PERF_SAMPLE_TID) {
      Put(id.pid);
      Put(id.tid);
    }
    if (t & PERF_SAMPLE_TIME) Put(id.time);
    if (t & PERF_SAMPLE_ID) Put(id.id);
    if (t & PERF_SAMPLE_STREAM_ID) Put(id.stream_id);
    if (t & PERF_SAMPLE_CPU) {
      Put(id.cpu);
      Put(uint32_t{0});
    }
    if (t & PERF_SAMPLE_IDENTIFIER) Put(id.id);
  }

  Bytes Finish(uint32_t type, uint16_t misc) {
    if (bytes_.size() > 0xffff || bytes_.size() % 8 != 0) {
      throw std::length_error("synthetic record size " + std::to_string(bytes_.size()) +
                              " is not a u16 multiple of 8");
    }
    perf_event_header header{};
    header.type = type;
    header.misc = misc;
    header.size = static_cast<uint16_t>(bytes_.size());
    std::memcpy(bytes_.data(), &header, sizeof(header));
    return std::move(bytes_);
  }

 private:
  Bytes bytes_;
};

Bytes MakeTask(uint32_t type, const perf_event_attr& attr, uint32_t pid, uint32_t ppid,
               uint32_t tid, uint32_t ptid, uint64_t time, const SampleIdFields& sample_id) {
  RecordBuilder b;
  b.Put(pid);
  b.Put(ppid);
  b.Put(tid);
  b.Put(ptid);
  b.Put(time);
  b.PutSampleId(attr, sample_id);
  return b.Finish(type, 0);
}

}  // namespace

perf_event_attr MakeAttr(uint64_t sample_type, bool sample_id_all, uint64_t read_format) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = 1000000;
  attr.sample_type = sample_type;
  attr.read_format = read_format;
  attr.sample_id_all = sample_id_all ? 1 : 0;
  return attr;
}

Bytes RegsUserBlock(uint64_t abi, const std::vector<uint64_t>& regs) {
  Bytes out(sizeof(uint64_t) * (1 + regs.size()));
  std::memcpy(out.data(), &abi, sizeof(abi));
  if (!regs.empty()) std::memcpy(out.data() + 8, regs.data(), regs.size() * sizeof(uint64_t));
  return out;
}

Bytes StackUserBlock(std::span<const std::byte> stack, uint64_t size) {
  Bytes out(sizeof(uint64_t));
  std::memcpy(out.data(), &size, sizeof(size));
  if (size == 0) return out;
  const size_t data_at = out.size();
  out.resize(data_at + size + sizeof(uint64_t));
  if (!stack.empty()) {
    std::memcpy(out.data() + data_at, stack.data(), std::min<size_t>(stack.size(), size));
  }
  const uint64_t dyn_size = stack.size();
  std::memcpy(out.data() + data_at + size, &dyn_size, sizeof(dyn_size));
  return out;
}

Bytes MakeSample(const perf_event_attr& attr, const SampleFields& f) {
  const uint64_t t = attr.sample_type;
  RecordBuilder b;
  if (t & PERF_SAMPLE_IDENTIFIER) b.Put(f.id);
  if (t & PERF_SAMPLE_IP) b.Put(f.ip);
  if (t & PERF_SAMPLE_TID) {
    b.Put(f.pid);
    b.Put(f.tid);
  }
  if (t & PERF_SAMPLE_TIME) b.Put(f.time);
  if (t & PERF_SAMPLE_ADDR) b.Put(f.addr);
  if (t & PERF_SAMPLE_ID) b.Put(f.id);
  if (t & PERF_SAMPLE_STREAM_ID) b.Put(f.stream_id);
  if (t & PERF_SAMPLE_CPU) {
    b.Put(f.cpu);
    b.Put(uint32_t{0});
  }
  if (t & PERF_SAMPLE_PERIOD) b.Put(f.period);
  if (t & PERF_SAMPLE_READ) {
    for (uint64_t v : f.read_values) b.Put(v);
  }
  if (t & PERF_SAMPLE_CALLCHAIN) {
    b.Put(static_cast<uint64_t>(f.callchain.size()));
    for (uint64_t ip : f.callchain) b.Put(ip);
  }
  b.PutBytes(f.extra);
  return b.Finish(PERF_RECORD_SAMPLE, f.misc);
}

Mmap2Fields MakeMmap2Fields(std::string filename, uint32_t pid, uint32_t tid, uint64_t addr,
                            uint64_t len, uint64_t pgoff) {
  Mmap2Fields f;
  f.pid = pid;
  f.tid = tid;
  f.addr = addr;
  f.len = len;
  f.pgoff = pgoff;
  f.prot = PROT_READ | PROT_EXEC;
  f.flags = MAP_PRIVATE;
  f.filename = std::move(filename);
  return f;
}

Bytes MakeMmap2(const perf_event_attr& attr, const Mmap2Fields& f,
                const SampleIdFields& sample_id) {
  RecordBuilder b;
  b.Put(f.pid);
  b.Put(f.tid);
  b.Put(f.addr);
  b.Put(f.len);
  b.Put(f.pgoff);
  uint16_t misc = f.misc;
  if (!f.build_id.empty()) {
    if (f.build_id.size() > 20) throw std::length_error("build-id longer than 20 bytes");
    // union { ...; struct { u8 build_id_size; u8 __reserved_1; u16 __reserved_2;
    //                       u8 build_id[20]; }; }
    uint8_t ident[24] = {};
    ident[0] = static_cast<uint8_t>(f.build_id.size());
    std::memcpy(ident + 4, f.build_id.data(), f.build_id.size());
    b.Put(ident);
    misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
  } else {
    b.Put(f.maj);
    b.Put(f.min);
    b.Put(f.ino);
    b.Put(f.ino_generation);
  }
  b.Put(f.prot);
  b.Put(f.flags);
  b.PutString(f.filename);
  b.PutSampleId(attr, sample_id);
  return b.Finish(PERF_RECORD_MMAP2, misc);
}

Bytes MakeComm(const perf_event_attr& attr, uint32_t pid, uint32_t tid, const std::string& comm,
               bool exec, const SampleIdFields& sample_id) {
  RecordBuilder b;
  b.Put(pid);
  b.Put(tid);
  b.PutString(comm);
  b.PutSampleId(attr, sample_id);
  return b.Finish(PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
}

Bytes MakeFork(const perf_event_attr& attr, uint32_t pid, uint32_t ppid, uint32_t tid,
               uint32_t ptid, uint64_t time, const SampleIdFields& sample_id) {
  return MakeTask(PERF_RECORD_FORK, attr, pid, ppid, tid, ptid, time, sample_id);
}

Bytes MakeExit(const perf_event_attr& attr, uint32_t pid, uint32_t ppid, uint32_t tid,
               uint32_t ptid, uint64_t time, const SampleIdFields& sample_id) {
  return MakeTask(PERF_RECORD_EXIT, attr, pid, ppid, tid, ptid, time, sample_id);
}

Bytes MakeLost(const perf_event_attr& attr, uint64_t id, uint64_t lost,
               const SampleIdFields& sample_id) {
  RecordBuilder b;
  b.Put(id);
  b.Put(lost);
  b.PutSampleId(attr, sample_id);
  return b.Finish(PERF_RECORD_LOST, 0);
}

Bytes MakeLostSamples(const perf_event_attr& attr, uint64_t lost, const SampleIdFields& sample_id) {
  RecordBuilder b;
  b.Put(lost);
  b.PutSampleId(attr, sample_id);
  return b.Finish(PERF_RECORD_LOST_SAMPLES, 0);
}

Bytes MakeThrottle(const perf_event_attr& attr, bool unthrottle, uint64_t time, uint64_t id,
                   uint64_t stream_id, const SampleIdFields& sample_id) {
  RecordBuilder b;
  b.Put(time);
  b.Put(id);
  b.Put(stream_id);
  b.PutSampleId(attr, sample_id);
  return b.Finish(unthrottle ? PERF_RECORD_UNTHROTTLE : PERF_RECORD_THROTTLE, 0);
}

Bytes MakeSwitch(const perf_event_attr& attr, bool out, const SampleIdFields& sample_id,
                 bool preempted) {
  RecordBuilder b;
  b.PutSampleId(attr, sample_id);
  const uint16_t misc =
      static_cast<uint16_t>((out ? PERF_RECORD_MISC_SWITCH_OUT : 0) |
                            (preempted ? PERF_RECORD_MISC_SWITCH_OUT_PREEMPT : 0));
  return b.Finish(PERF_RECORD_SWITCH, misc);
}

Bytes MakeSwitchCpuWide(const perf_event_attr& attr, bool out, uint32_t other_pid,
                        uint32_t other_tid, const SampleIdFields& sample_id) {
  RecordBuilder b;
  b.Put(other_pid);
  b.Put(other_tid);
  b.PutSampleId(attr, sample_id);
  return b.Finish(PERF_RECORD_SWITCH_CPU_WIDE, out ? PERF_RECORD_MISC_SWITCH_OUT : 0);
}

void Append(Bytes& stream, std::span<const std::byte> record) {
  stream.insert(stream.end(), record.begin(), record.end());
}

}  // namespace sample::testing
