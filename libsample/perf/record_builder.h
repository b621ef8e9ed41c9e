// RecordBuilder: writes perf records in the kernel's layout, for records we
// synthesize ourselves (processes that existed before recording started).
// The sample_id trailer is laid out for `attr` exactly as the kernel would,
// so readers cannot tell synthesized records from kernel ones. Appends to a
// caller-owned byte vector.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <string_view>
#include <vector>

namespace sample {

struct SyntheticMmap {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t addr = 0;
  uint64_t len = 0;
  uint64_t pgoff = 0;
  uint32_t major = 0;
  uint32_t minor = 0;
  uint64_t inode = 0;
  uint32_t prot = 0;
  uint32_t flags = 0;
  std::string_view filename;
};

class RecordBuilder {
 public:
  // `id` is the event id the trailer names; `time` and `cpu` fill the
  // trailer's TIME and CPU fields.
  RecordBuilder(const perf_event_attr& attr, uint64_t id, uint64_t time, uint32_t cpu = 0)
      : attr_(attr), id_(id), time_(time), cpu_(cpu) {}

  void AppendComm(std::vector<std::byte>& out, uint32_t pid, uint32_t tid,
                  std::string_view comm) const;
  void AppendMmap2(std::vector<std::byte>& out, const SyntheticMmap& mmap) const;
  void AppendFork(std::vector<std::byte>& out, uint32_t pid, uint32_t ppid, uint32_t tid,
                  uint32_t ptid) const;

 private:
  void AppendTrailer(std::vector<std::byte>& out, uint32_t pid, uint32_t tid) const;

  perf_event_attr attr_;
  uint64_t id_;
  uint64_t time_;
  uint32_t cpu_;
};

}  // namespace sample
