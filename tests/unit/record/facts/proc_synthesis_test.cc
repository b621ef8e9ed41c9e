#include "record/facts/proc_synthesis.h"

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "libsample/model/process_table.h"
#include "libsample/perf/perf_record.h"
#include "libsample/perf/record_walker.h"

namespace sample::record {
namespace {

perf_event_attr RecorderAttr() {
  perf_event_attr attr{};
  attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                     PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
  attr.sample_id_all = 1;
  return attr;
}

__attribute__((noinline)) int FunctionInThisBinary() { return 42; }

void* Sleeper(void*) {
  pause();
  return nullptr;
}

// A live child with a second thread named "synth-worker", stopped in pause().
pid_t StartChild(int ready_fd) {
  const pid_t pid = fork();
  if (pid == 0) {
    pthread_t thread;
    pthread_create(&thread, nullptr, Sleeper, nullptr);
    pthread_setname_np(thread, "synth-worker");
    char byte = 1;
    (void)!write(ready_fd, &byte, 1);
    pause();
    _exit(0);
  }
  return pid;
}

TEST(ProcSynthesisTest, DescribesALiveProcessAsTheKernelWould) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = StartChild(ready[1]);
  char byte;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);

  const perf_event_attr attr = RecorderAttr();
  std::vector<std::byte> out;
  ProcSynthesizer synthesizer(attr, 77, 123456789, false);
  synthesizer.AddProcess(child, out);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);

  EXPECT_EQ(synthesizer.counts().processes, 1u);
  EXPECT_EQ(synthesizer.counts().threads, 2u);
  EXPECT_GT(synthesizer.counts().mappings, 2u);  // the test binary, libc, ld.so, vdso...

  // Feed the records to the same process model the reporter uses.
  ProcessTable table;
  size_t records = 0;
  bool worker_named = false;
  const size_t walked = ForEachRecord(out, [&](const perf_event_header& h, auto record) {
    ++records;
    EXPECT_EQ(RecordTime(record, attr), 123456789u);
    if (h.type == PERF_RECORD_COMM) {
      auto comm = ParseComm(record, attr);
      ASSERT_TRUE(comm);
      EXPECT_EQ(comm->pid, static_cast<uint32_t>(child));
      EXPECT_EQ(comm->sample_id.id, 77u);
      if (comm->comm == "synth-worker") worker_named = comm->tid != comm->pid;
      table.ApplyComm(comm->pid, comm->tid, comm->comm, false);
    } else if (h.type == PERF_RECORD_MMAP2) {
      auto m = ParseMmap2(record, attr);
      ASSERT_TRUE(m);
      EXPECT_TRUE(m->prot & 0x4);
      table.ApplyMmap(m->pid, m->addr, m->len, m->pgoff, m->filename);
    } else {
      ADD_FAILURE() << "unexpected record type " << h.type;
    }
  });
  EXPECT_EQ(walked, out.size());
  EXPECT_EQ(records, synthesizer.counts().threads + synthesizer.counts().mappings);
  EXPECT_TRUE(worker_named);

  // The child is a fork of us: our code sits at the same address there, in
  // a mapping of this very executable.
  char exe[4096] = {};
  ASSERT_GT(readlink("/proc/self/exe", exe, sizeof(exe) - 1), 0);
  const auto addr = reinterpret_cast<uint64_t>(&FunctionInThisBinary);
  const Mapping* mapping = table.FindMapping(static_cast<uint32_t>(child), addr);
  ASSERT_NE(mapping, nullptr);
  EXPECT_EQ(table.DsoPath(mapping->dso), exe);
  EXPECT_LE(mapping->start, addr);
  EXPECT_GT(mapping->end, addr);
}

// -d: the mappings of data too (the stack, the heap, anonymous memory),
// without PROT_EXEC; executable ones only otherwise.
TEST(ProcSynthesisTest, DataMappingsForDataAddresses) {
  for (bool data : {false, true}) {
    std::vector<std::byte> out;
    ProcSynthesizer synthesizer(RecorderAttr(), 1, 1, data);
    synthesizer.AddProcess(getpid(), out);
    size_t executable = 0, other = 0;
    bool stack = false;
    ForEachRecord(out, [&](const perf_event_header& h, auto record) {
      if (h.type != PERF_RECORD_MMAP2) return;
      const auto m = ParseMmap2(record, RecorderAttr());
      ASSERT_TRUE(m);
      (m->prot & PROT_EXEC ? executable : other) += 1;
      if (m->filename == "[stack]") stack = !(m->prot & PROT_EXEC) && (m->prot & PROT_WRITE);
    });
    EXPECT_GT(executable, 0u) << data;
    EXPECT_EQ(other != 0, data);
    EXPECT_EQ(stack, data);
  }
}

TEST(ProcSynthesisTest, VanishedProcessIsSkipped) {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  std::vector<std::byte> out;
  ProcSynthesizer synthesizer(RecorderAttr(), 1, 1, false);
  synthesizer.AddProcess(child, out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(synthesizer.counts().processes, 0u);
}

TEST(ProcSynthesisTest, AllProcessesIncludesOurselves) {
  std::vector<std::byte> out;
  ProcSynthesizer synthesizer(RecorderAttr(), 1, 1, false);
  synthesizer.AddAllProcesses(out);
  EXPECT_GT(synthesizer.counts().processes, 1u);
  bool found_self = false;
  ForEachRecord(out, [&](const perf_event_header& h, auto record) {
    if (h.type != PERF_RECORD_COMM) return;
    auto comm = ParseComm(record, RecorderAttr());
    if (comm && comm->pid == static_cast<uint32_t>(getpid())) found_self = true;
  });
  EXPECT_TRUE(found_self);
}

}  // namespace
}  // namespace sample::record
