#include "libsample/model/process_table.h"

#include <fmt/format.h>

namespace sample {

ProcessTable::ProcessTable() {
  InternDso("[unknown]");
  InternDso("[kernel.kallsyms]");
}

uint32_t ProcessTable::InternDso(std::string_view path) {
  auto it = dso_ids_.find(std::string(path));
  if (it != dso_ids_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(dsos_.size());
  dsos_.emplace_back(path);
  dso_ids_.emplace(std::string(path), id);
  return id;
}

ProcessTable::Process& ProcessTable::GetProcess(uint32_t pid) {
  auto [it, inserted] = processes_.try_emplace(pid);
  if (inserted) it->second.maps_version = ++last_maps_version_;
  return it->second;
}

uint64_t ProcessTable::MappingsVersion(uint32_t pid) const {
  auto it = processes_.find(pid);
  return it == processes_.end() ? 0 : it->second.maps_version;
}

void ProcessTable::ApplyComm(uint32_t pid, uint32_t tid, std::string_view comm, bool exec) {
  Process& process = GetProcess(pid);
  if (exec) {
    // exec replaced the address space; the new binary's MMAP2 records
    // follow this COMM.
    process.maps.clear();
    process.jit.clear();
    process.data.clear();
    process.maps_version = ++last_maps_version_;
  }
  if (pid == tid || process.comm.empty()) process.comm = comm;
  thread_comms_[tid] = comm;
  ++comms_version_;
}

void ProcessTable::ApplyFork(uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid) {
  // A new thread takes its creator's name; a reused tid must not keep the
  // name of the thread that had it before.
  ++comms_version_;
  auto parent_comm = thread_comms_.find(ptid);
  if (parent_comm != thread_comms_.end()) {
    thread_comms_[tid] = parent_comm->second;
  } else {
    thread_comms_.erase(tid);
  }
  if (pid != ppid) {
    // A new process: it starts as a copy of its parent.
    auto parent = processes_.find(ppid);
    Process child = parent != processes_.end() ? parent->second : Process{};
    child.maps_version = ++last_maps_version_;
    processes_[pid] = std::move(child);
  } else {
    GetProcess(pid);
  }
}

void ProcessTable::ApplyExit(uint32_t pid, uint32_t tid) {
  // Samples can still arrive for a thread after its EXIT record was
  // ordered before them (same timestamp); keep names and maps, which is
  // what perf does too. A reused pid is reset by its FORK.
  (void)pid;
  (void)tid;
}

void ProcessTable::RemoveRange(std::map<uint64_t, Mapping>& maps, uint64_t start, uint64_t end) {
  auto it = maps.lower_bound(start);
  if (it != maps.begin()) --it;
  while (it != maps.end() && it->second.start < end) {
    Mapping m = it->second;
    if (m.end <= start) {
      ++it;
      continue;
    }
    it = maps.erase(it);
    if (m.start < start) {
      Mapping left = m;
      left.end = start;
      maps.emplace(left.start, left);
    }
    if (m.end > end) {
      Mapping right = m;
      right.pgoff += end - m.start;
      right.start = end;
      it = maps.emplace(right.start, right).first;
      ++it;
    }
  }
}

void ProcessTable::ApplyMmap(uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
                             std::string_view filename) {
  if (len == 0 || start + len < start) return;
  Process& process = GetProcess(pid);
  RemoveRange(process.maps, start, start + len);
  RemoveRange(process.data, start, start + len);
  Mapping m;
  m.start = start;
  m.end = start + len;
  m.pgoff = pgoff;
  m.dso = InternDso(filename);
  process.maps.emplace(start, m);
  process.maps_version = ++last_maps_version_;
}

void ProcessTable::ApplyDataMmap(uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
                                 std::string_view filename) {
  if (len == 0 || start + len < start) return;
  Process& process = GetProcess(pid);
  RemoveRange(process.data, start, start + len);
  process.data.emplace(start, Mapping{start, start + len, pgoff, InternDso(filename)});
}

const Mapping* ProcessTable::FindDataMapping(uint32_t pid, uint64_t addr) const {
  auto process = processes_.find(pid);
  if (process == processes_.end()) return nullptr;
  const Mapping* data = Find(process->second.data, addr);
  return data != nullptr ? data : Find(process->second.maps, addr);
}

std::string_view ProcessTable::CommOf(uint32_t pid, uint32_t tid) {
  auto thread = thread_comms_.find(tid);
  if (thread != thread_comms_.end()) return thread->second;
  auto process = processes_.find(pid);
  if (process != processes_.end() && !process->second.comm.empty()) return process->second.comm;
  scratch_ = fmt::format(":{}", tid);
  return scratch_;
}

const std::map<uint64_t, Mapping>* ProcessTable::MappingsOf(uint32_t pid) const {
  auto it = processes_.find(pid);
  return it == processes_.end() ? nullptr : &it->second.maps;
}

const Mapping* ProcessTable::Find(const std::map<uint64_t, Mapping>& maps, uint64_t addr) {
  auto it = maps.upper_bound(addr);
  if (it == maps.begin()) return nullptr;
  --it;
  return addr < it->second.end ? &it->second : nullptr;
}

const Mapping* ProcessTable::FindMapping(uint32_t pid, uint64_t addr) const {
  auto process = processes_.find(pid);
  return process == processes_.end() ? nullptr : Find(process->second.maps, addr);
}

void ProcessTable::ApplyJitCode(uint32_t pid, uint64_t start, uint64_t len, uint32_t dso,
                                uint64_t offset) {
  if (len == 0 || start + len < start) return;
  Process& process = GetProcess(pid);
  RemoveRange(process.jit, start, start + len);
  process.jit.emplace(start, Mapping{start, start + len, offset, dso});
  process.maps_version = ++last_maps_version_;
}

void ProcessTable::RemoveJitCode(uint32_t pid, uint64_t start, uint64_t len) {
  if (len == 0 || start + len < start) return;
  Process& process = GetProcess(pid);
  RemoveRange(process.jit, start, start + len);
  process.maps_version = ++last_maps_version_;
}

const Mapping* ProcessTable::FindJitCode(uint32_t pid, uint64_t addr) const {
  auto process = processes_.find(pid);
  return process == processes_.end() ? nullptr : Find(process->second.jit, addr);
}

}  // namespace sample
