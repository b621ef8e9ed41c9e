// Turns perf_event_open(2) and ring-buffer mmap failures into advice a user
// can act on: which sysctl, capability or limit is in the way and how to
// change it. Reads /proc/sys/kernel/perf_event_* to be specific.
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>

namespace sample {

std::string ExplainPerfEventOpenError(int err, const perf_event_attr& attr, pid_t pid, int cpu);
std::string ExplainPerfMmapError(int err, size_t data_pages);

// /proc/sys/kernel/perf_event_paranoid, or nullopt if unreadable.
std::optional<int> ReadPerfEventParanoid();
// Whether events given without u/k/h must leave the kernel out: the
// kernel's own test (perf_allow_kernel), paranoid above 1 with neither
// CAP_PERFMON nor CAP_SYS_ADMIN in effect, whoever the user is.
bool KernelExcludedByParanoia(std::optional<int> paranoid);
// The note for that case: "sample-record: kernel.perf_event_paranoid is N:
// DOING user space only (sysctl ... or CAP_PERFMON to include the kernel)."
std::string UserSpaceOnlyNote(int paranoid, const char* doing);

// /proc/sys/kernel/perf_event_max_stack (the deepest call chain the kernel
// writes when attr.sample_max_stack is 0), or nullopt if unreadable.
std::optional<int> ReadPerfEventMaxStack();

}  // namespace sample
