// mixer: a C++ workload with templates, a lambda and inlined helpers, for
// demangled names and inline frames in C++ (built -O2 -g, frame pointers).
// acc::Mixer<unsigned long>::churn takes about 60% of the CPU time and
// acc::Mixer<unsigned int>::churn 40%; both spin in inlined helpers.
//
// Usage: mixer [CPU_SECONDS]   (default 1.0)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace {

int64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

}  // namespace

namespace acc {

template <typename T>
class Mixer {
 public:
  // Spins until the thread's CPU clock reaches `deadline_ns`.
  __attribute__((noinline)) T churn(int64_t deadline_ns) {
    auto step = [this](T x) { return rotate(x) * T(2862933555777941757ull) + state_; };
    T x = state_;
    while (ThreadCpuNs() < deadline_ns) {
      for (int i = 0; i < 65536; ++i) x = step(x);
      state_ ^= x;
    }
    return x;
  }

 private:
  static inline __attribute__((always_inline)) T rotate(T x) {
    return (x << 7) | (x >> (sizeof(T) * 8 - 7));
  }
  T state_ = 12345;
};

}  // namespace acc

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::strtod(argv[1], nullptr) : 1.0;
  if (!(seconds >= 0)) {
    std::fprintf(stderr, "usage: %s [CPU_SECONDS]\n", argv[0]);
    return 2;
  }
  acc::Mixer<unsigned long> wide;
  acc::Mixer<unsigned int> narrow;
  const int64_t start = ThreadCpuNs();
  volatile uint64_t sink = wide.churn(start + int64_t(seconds * 0.6e9));
  sink = sink + narrow.churn(start + int64_t(seconds * 1e9));
  return static_cast<int>(sink & 0);
}
