#include "libsample/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace sample {

size_t ParallelThreads(size_t count, size_t threads) {
  return std::max<size_t>(1, std::min(threads, count));
}

void ParallelFor(size_t count, size_t threads,
                 const std::function<void(size_t worker, size_t index)>& body) {
  if (count == 0) return;
  std::atomic<size_t> next{0};
  const auto run = [&](size_t worker) {
    for (size_t i = next++; i < count; i = next++) body(worker, i);
  };
  const size_t used = ParallelThreads(count, threads);
  std::vector<std::jthread> helpers;
  helpers.reserve(used - 1);
  for (size_t worker = 1; worker < used; ++worker) helpers.emplace_back(run, worker);
  run(0);
  // The helpers join as they go out of scope.
}

}  // namespace sample
