// Synthetic perf records for tests: each builder returns the bytes of one
// record laid out exactly as the kernel writes it into the ring buffer
// (perf_event_open(2), "MMAP layout"), for the given perf_event_attr.
//
// - Sample fields are written in kernel order and only when their
//   PERF_SAMPLE_* bit is in attr.sample_type.
// - Non-sample records get the sample_id trailer (pid/tid, time, id,
//   stream_id, cpu/res, identifier, each when its bit is set) appended after
//   the padded body when attr.sample_id_all is set.
// - Strings (comm, filename) are NUL-terminated and zero-padded to a multiple
//   of 8 bytes like the kernel does (ALIGN(strlen + 1, sizeof(u64))), so every
//   record's size is a multiple of 8.
//
// Builders own nothing; they return fresh vectors.
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sample::testing {

using Bytes = std::vector<std::byte>;

// An attr with just the fields the parsers look at.
perf_event_attr MakeAttr(uint64_t sample_type, bool sample_id_all, uint64_t read_format = 0);

// The sample_id trailer of a non-sample record (see SampleId in
// libsample/perf/perf_record.h); `id` is written both for PERF_SAMPLE_ID and
// PERF_SAMPLE_IDENTIFIER, as the kernel does.
struct SampleIdFields {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t time = 0;
  uint64_t id = 0;
  uint64_t stream_id = 0;
  uint32_t cpu = 0;
};

struct SampleFields {
  uint16_t misc = PERF_RECORD_MISC_USER;
  uint64_t id = 0;  // PERF_SAMPLE_IDENTIFIER and PERF_SAMPLE_ID
  uint64_t ip = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t time = 0;
  uint64_t addr = 0;
  uint64_t stream_id = 0;
  uint32_t cpu = 0;
  uint64_t period = 0;
  // PERF_SAMPLE_READ: the read_format struct as u64 words, written verbatim
  // (the caller lays it out for attr.read_format).
  std::vector<uint64_t> read_values;
  // PERF_SAMPLE_CALLCHAIN: nr is written first, then these, markers included.
  std::vector<uint64_t> callchain;
  // Bytes of later fields (RAW, REGS_USER, STACK_USER, ...), written
  // verbatim after the callchain; must keep the size a multiple of 8.
  Bytes extra;
};

Bytes MakeSample(const perf_event_attr& attr, const SampleFields& fields);

// The PERF_SAMPLE_REGS_USER block (abi, then the values; none for
// PERF_SAMPLE_REGS_ABI_NONE) and the PERF_SAMPLE_STACK_USER block (size,
// the bytes padded to `size`, dyn_size), for SampleFields::extra.
Bytes RegsUserBlock(uint64_t abi, const std::vector<uint64_t>& regs);
Bytes StackUserBlock(std::span<const std::byte> stack, uint64_t size);

struct Mmap2Fields {
  uint16_t misc = PERF_RECORD_MISC_USER;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t addr = 0;
  uint64_t len = 0;
  uint64_t pgoff = 0;
  uint32_t maj = 0;
  uint32_t min = 0;
  uint64_t ino = 0;
  uint64_t ino_generation = 0;
  // When non-empty (at most 20 bytes) the record carries a build-id instead of
  // maj/min/ino/ino_generation and PERF_RECORD_MISC_MMAP_BUILD_ID is set.
  std::vector<uint8_t> build_id;
  uint32_t prot = 0;
  uint32_t flags = 0;
  std::string filename;
};

// Fields of a typical executable mapping; the rest are zero.
Mmap2Fields MakeMmap2Fields(std::string filename, uint32_t pid = 0, uint32_t tid = 0,
                            uint64_t addr = 0, uint64_t len = 0, uint64_t pgoff = 0);

Bytes MakeMmap2(const perf_event_attr& attr, const Mmap2Fields& fields,
                const SampleIdFields& sample_id = {});
Bytes MakeComm(const perf_event_attr& attr, uint32_t pid, uint32_t tid, const std::string& comm,
               bool exec, const SampleIdFields& sample_id = {});
Bytes MakeFork(const perf_event_attr& attr, uint32_t pid, uint32_t ppid, uint32_t tid,
               uint32_t ptid, uint64_t time, const SampleIdFields& sample_id = {});
Bytes MakeExit(const perf_event_attr& attr, uint32_t pid, uint32_t ppid, uint32_t tid,
               uint32_t ptid, uint64_t time, const SampleIdFields& sample_id = {});
Bytes MakeLost(const perf_event_attr& attr, uint64_t id, uint64_t lost,
               const SampleIdFields& sample_id = {});
Bytes MakeLostSamples(const perf_event_attr& attr, uint64_t lost,
                      const SampleIdFields& sample_id = {});
// PERF_RECORD_THROTTLE, or PERF_RECORD_UNTHROTTLE when `unthrottle`.
Bytes MakeThrottle(const perf_event_attr& attr, bool unthrottle, uint64_t time, uint64_t id,
                   uint64_t stream_id, const SampleIdFields& sample_id = {});
// PERF_RECORD_SWITCH: a switch-out when `out` (preempted: still runnable),
// else a switch-in; the task is sample_id's.
Bytes MakeSwitch(const perf_event_attr& attr, bool out, const SampleIdFields& sample_id,
                 bool preempted = false);
// PERF_RECORD_SWITCH_CPU_WIDE naming the other task.
Bytes MakeSwitchCpuWide(const perf_event_attr& attr, bool out, uint32_t other_pid,
                        uint32_t other_tid, const SampleIdFields& sample_id);

// Appends `record` to `stream`.
void Append(Bytes& stream, std::span<const std::byte> record);

}  // namespace sample::testing
