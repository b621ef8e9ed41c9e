// What the kernel lets this process do with perf events, as it decides it:
// from the effective capabilities, not from the user id. A user given
// CAP_PERFMON (or CAP_SYS_ADMIN) profiles the kernel like root, and a root
// process that dropped them does not.
#pragma once

namespace sample {

// Whether `capability` (CAP_* from linux/capability.h) is in this
// process's effective set.
bool HasEffectiveCapability(int capability);

// The kernel's perfmon_capable(): CAP_PERFMON (Linux 5.8+) or CAP_SYS_ADMIN.
// Such a process may profile the kernel and other users' processes
// whatever kernel.perf_event_paranoid says.
bool PerfmonCapable();

}  // namespace sample
