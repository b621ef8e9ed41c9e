#include "libsample/perf/record_builder.h"

#include <cstddef>
#include <cstring>

namespace sample {
namespace {

template <typename T>
void Put(std::vector<std::byte>& out, const T& value) {
  const size_t old = out.size();
  out.resize(old + sizeof(T));
  std::memcpy(out.data() + old, &value, sizeof(T));
}

// A NUL-terminated string padded with zeroes to a multiple of 8 bytes.
void PutString(std::vector<std::byte>& out, std::string_view s) {
  const size_t old = out.size();
  const size_t padded = (s.size() + 1 + 7) & ~size_t{7};
  out.resize(old + padded);  // zero-filled
  std::memcpy(out.data() + old, s.data(), s.size());
}

// Starts a record; returns the header's position for FinishRecord.
size_t BeginRecord(std::vector<std::byte>& out, uint32_t type, uint16_t misc) {
  const size_t start = out.size();
  perf_event_header header{type, misc, 0};
  Put(out, header);
  return start;
}

void FinishRecord(std::vector<std::byte>& out, size_t start) {
  const uint16_t size = static_cast<uint16_t>(out.size() - start);
  std::memcpy(out.data() + start + offsetof(perf_event_header, size), &size, sizeof(size));
}

}  // namespace

void RecordBuilder::AppendTrailer(std::vector<std::byte>& out, uint32_t pid, uint32_t tid) const {
  if (!attr_.sample_id_all) return;
  const uint64_t t = attr_.sample_type;
  if (t & PERF_SAMPLE_TID) {
    Put(out, pid);
    Put(out, tid);
  }
  if (t & PERF_SAMPLE_TIME) Put(out, time_);
  if (t & PERF_SAMPLE_ID) Put(out, id_);
  if (t & PERF_SAMPLE_STREAM_ID) Put(out, id_);
  if (t & PERF_SAMPLE_CPU) {
    Put(out, cpu_);
    Put(out, uint32_t{0});
  }
  if (t & PERF_SAMPLE_IDENTIFIER) Put(out, id_);
}

void RecordBuilder::AppendComm(std::vector<std::byte>& out, uint32_t pid, uint32_t tid,
                               std::string_view comm) const {
  const size_t start = BeginRecord(out, PERF_RECORD_COMM, 0);
  Put(out, pid);
  Put(out, tid);
  PutString(out, comm.substr(0, 15));  // TASK_COMM_LEN - 1, as the kernel stores it
  AppendTrailer(out, pid, tid);
  FinishRecord(out, start);
}

void RecordBuilder::AppendMmap2(std::vector<std::byte>& out, const SyntheticMmap& m) const {
  const size_t start = BeginRecord(out, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
  Put(out, m.pid);
  Put(out, m.tid);
  Put(out, m.addr);
  Put(out, m.len);
  Put(out, m.pgoff);
  Put(out, m.major);
  Put(out, m.minor);
  Put(out, m.inode);
  Put(out, uint64_t{0});  // ino_generation
  Put(out, m.prot);
  Put(out, m.flags);
  // A record's size is a u16: keep absurd paths from overflowing it.
  PutString(out, m.filename.substr(0, 4096));
  AppendTrailer(out, m.pid, m.tid);
  FinishRecord(out, start);
}

void RecordBuilder::AppendFork(std::vector<std::byte>& out, uint32_t pid, uint32_t ppid,
                               uint32_t tid, uint32_t ptid) const {
  const size_t start = BeginRecord(out, PERF_RECORD_FORK, 0);
  Put(out, pid);
  Put(out, ppid);
  Put(out, tid);
  Put(out, ptid);
  Put(out, time_);
  AppendTrailer(out, pid, tid);
  FinishRecord(out, start);
}

}  // namespace sample
