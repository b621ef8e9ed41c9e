// Tests that kernel errors become advice naming what to change.
#include "libsample/perf/perf_event_advice.h"

#include <linux/perf_event.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <fstream>
#include <string>

#include "libsample/perf/perf_event.h"
#include "libsample/perf/user_regs.h"

namespace sample {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

perf_event_attr Attr(uint32_t type) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = type;
  return attr;
}

long ProcNumber(const char* path) {
  std::ifstream in(path);
  long value = -999;
  in >> value;
  return value;
}

TEST(PerfEventAdviceTest, PermissionNamesParanoidLevelAndWaysOut) {
  const std::string level = std::to_string(ProcNumber("/proc/sys/kernel/perf_event_paranoid"));
  const std::string text = ExplainPerfEventOpenError(EACCES, Attr(PERF_TYPE_SOFTWARE), -1, 0);
  // System-wide: level 0 is the only sysctl that helps, even for user space.
  EXPECT_THAT(text, AllOf(HasSubstr("perf_event_open (software event, pid -1, cpu 0)"),
                          HasSubstr("kernel.perf_event_paranoid is " + level),
                          HasSubstr("every process (-a, -C) needs level 0"),
                          HasSubstr("sysctl -w kernel.perf_event_paranoid=0"),
                          HasSubstr("CAP_PERFMON"), HasSubstr("-p PID")));
  EXPECT_THAT(text, ::testing::Not(HasSubstr(":u")));
  EXPECT_THAT(ExplainPerfEventOpenError(EPERM, Attr(PERF_TYPE_SOFTWARE), 1234, -1),
              AllOf(HasSubstr("Profiling the kernel needs"),
                    HasSubstr("sysctl -w kernel.perf_event_paranoid=1"), HasSubstr(":u")));
}

TEST(PerfEventAdviceTest, MissingHardwareSuggestsASoftwareEvent) {
  for (uint32_t type : {PERF_TYPE_HARDWARE, PERF_TYPE_HW_CACHE, PERF_TYPE_RAW}) {
    EXPECT_THAT(ExplainPerfEventOpenError(ENOENT, Attr(type), 0, -1),
                AllOf(HasSubstr("no hardware PMU"), HasSubstr("-e cpu-clock")));
  }
  EXPECT_THAT(ExplainPerfEventOpenError(EOPNOTSUPP, Attr(PERF_TYPE_TRACEPOINT), 0, -1),
              AllOf(HasSubstr("tracepoint"), HasSubstr("does not support this event")));
}

TEST(PerfEventAdviceTest, FrequencyAboveTheMaximumNamesTheSysctl) {
  perf_event_attr attr = Attr(PERF_TYPE_SOFTWARE);
  attr.freq = 1;
  const long max_rate = ProcNumber("/proc/sys/kernel/perf_event_max_sample_rate");
  ASSERT_GT(max_rate, 0);
  attr.sample_freq = static_cast<uint64_t>(max_rate) + 1;
  EXPECT_THAT(ExplainPerfEventOpenError(EINVAL, attr, 0, -1),
              AllOf(HasSubstr(std::to_string(max_rate + 1) + " Hz"),
                    HasSubstr("perf_event_max_sample_rate (" + std::to_string(max_rate) + ")"),
                    HasSubstr("lower -F")));
  attr.sample_freq = 1000;
  EXPECT_THAT(ExplainPerfEventOpenError(EINVAL, attr, 0, -1),
              HasSubstr("rejected the event's attributes"));
}

TEST(PerfEventAdviceTest, OtherErrorsSayWhatToDo) {
  const perf_event_attr attr = Attr(PERF_TYPE_SOFTWARE);
  EXPECT_THAT(ExplainPerfEventOpenError(ESRCH, attr, 77, -1), HasSubstr("did it exit"));
  EXPECT_THAT(ExplainPerfEventOpenError(EMFILE, attr, 0, 1), HasSubstr("ulimit -n"));
  EXPECT_THAT(ExplainPerfEventOpenError(ENODEV, attr, -1, 5), HasSubstr("CPU 5 is offline"));
  EXPECT_THAT(ExplainPerfEventOpenError(EBUSY, attr, -1, 0), HasSubstr("exclusively"));
  // Unknown errors still name the call and the errno text.
  EXPECT_THAT(ExplainPerfEventOpenError(EIO, attr, 3, 1),
              AllOf(HasSubstr("pid 3, cpu 1"), HasSubstr(strerror(EIO))));
}

perf_event_attr CallGraphAttr(uint32_t stack_size) {
  perf_event_attr attr = Attr(PERF_TYPE_SOFTWARE);
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = 1000000;
  attr.sample_type =
      PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
  attr.sample_regs_user = LeafRegsMask(HostArch());
  attr.sample_stack_user = stack_size;
  attr.disabled = 1;
  return attr;
}

TEST(PerfEventAdviceTest, CallGraphAttrsTheKernelRejects) {
  for (uint32_t size : {100u, 65535u, 65536u}) {
    EXPECT_THAT(ExplainPerfEventOpenError(EINVAL, CallGraphAttr(size), 0, -1),
                AllOf(HasSubstr("user stack size " + std::to_string(size)),
                      HasSubstr("a multiple of 8 below 65535"), HasSubstr("at most 65528")));
  }
  EXPECT_THAT(ExplainPerfEventOpenError(EINVAL, CallGraphAttr(8192), 0, -1),
              AllOf(HasSubstr("rejected the call-graph attributes"), HasSubstr("--call-graph fp")));
  EXPECT_THAT(ExplainPerfEventOpenError(ENOSYS, CallGraphAttr(8192), 0, -1),
              AllOf(HasSubstr("cannot sample user registers or copy user stacks"),
                    HasSubstr("--call-graph fp")));
}

// The rules the advice and --call-graph's rounding rely on, checked against
// this kernel: unaligned sizes and sizes of 65535 or more are refused, 65528
// is taken.
TEST(PerfEventAdviceTest, KernelTakesOnlyAlignedStackSizesBelow65535) {
  if (HostArch() == Arch::kUnknown) GTEST_SKIP() << "no register mask for this architecture";
  auto taken = PerfEvent::Open(CallGraphAttr(65528), 0, -1, -1, 0);
  if (!taken && (taken.error().sys_errno == EACCES || taken.error().sys_errno == EPERM)) {
    GTEST_SKIP() << "perf_event_open is not allowed here: " << taken.error().message;
  }
  ASSERT_TRUE(taken) << taken.error().message;
  for (uint32_t size : {100u, 65535u, 65536u}) {
    auto refused = PerfEvent::Open(CallGraphAttr(size), 0, -1, -1, 0);
    ASSERT_FALSE(refused) << size;
    EXPECT_EQ(refused.error().sys_errno, EINVAL) << size;
    EXPECT_THAT(refused.error().message, HasSubstr("not one the kernel takes")) << size;
  }
}

TEST(PerfEventAdviceTest, MmapFailureNamesTheLimitsAndDashM) {
  const std::string mlock_kb = std::to_string(ProcNumber("/proc/sys/kernel/perf_event_mlock_kb"));
  EXPECT_THAT(ExplainPerfMmapError(EPERM, 256),
              AllOf(HasSubstr("1024 KiB perf ring buffer"),
                    HasSubstr("perf_event_mlock_kb (" + mlock_kb + " KiB per user)"),
                    HasSubstr("ulimit -l"), HasSubstr("-m"), HasSubstr("CAP_IPC_LOCK")));
  EXPECT_THAT(ExplainPerfMmapError(EINVAL, 3), HasSubstr(strerror(EINVAL)));
}

}  // namespace
}  // namespace sample
