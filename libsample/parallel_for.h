// ParallelFor: runs body(worker, index) for every index below `count` on up
// to `threads` threads, the calling thread being worker 0. Indexes are
// handed out one at a time from a shared counter, so threads that draw
// cheap items take more of them: the work items this is for (one binary to
// symbolize, one stack to unwind) differ in cost by orders of magnitude.
// `worker` (below the number of threads used, which is at most `count`)
// lets each thread use state of its own, such as a not-thread-safe
// unwinder or file finder. Returns when every item is done. Owns nothing
// past the call; `body` must not throw.
#pragma once

#include <cstddef>
#include <functional>

namespace sample {

// How many threads ParallelFor(count, threads, ...) uses: `threads` at most,
// no more than there are items, and at least one.
size_t ParallelThreads(size_t count, size_t threads);

void ParallelFor(size_t count, size_t threads,
                 const std::function<void(size_t worker, size_t index)>& body);

}  // namespace sample
