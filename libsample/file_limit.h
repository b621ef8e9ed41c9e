// RaiseOpenFileLimit: lets the recorder hold as many files as the hard
// limit allows.
//
// A recording holds an fd per event and CPU (or thread), a pinned mount
// namespace per container, a jitdump per JIT process (up to 64 at once)
// and a perf map per JIT process that exited, and at the close it opens
// every binary the samples hit to embed its tables. The usual soft limit
// of 1024 runs out on a system-wide recording of a busy machine long
// before the hard one (often 524288), and EMFILE at the close would cost
// the file its names. perf raises its soft limit when an open fails with
// EMFILE; we raise it once, up front, after the profiled command was
// forked, so the command keeps the limit it was given.
#pragma once

namespace sample {

// Sets the soft RLIMIT_NOFILE to the hard one; best effort (the limit
// stays as it was if the kernel refuses).
void RaiseOpenFileLimit();

}  // namespace sample
