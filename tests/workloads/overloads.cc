// overloads: a C++ workload whose hot functions read alike without their
// parameter lists: two overloads of acc::twice (long and double) and a
// member function template of a class template,
// acc::Box<unsigned long>::fold<int>(int). For the names a report prints
// (built -O2 -g, frame pointers): acc::twice(long) takes about 40% of the
// CPU time, acc::twice(double) 30%, the template 30%.
//
// Usage: overloads [CPU_SECONDS]   (default 1.0)
#include <cstdint>
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

// Each spins until the thread's CPU clock reaches `deadline_ns`.
__attribute__((noinline)) long twice(long x, int64_t deadline_ns) {
  while (ThreadCpuNs() < deadline_ns) {
    for (int i = 0; i < 65536; ++i) x = x * 2 + (x >> 3) + i;
    asm volatile("" : "+r"(x));
  }
  return x;
}

__attribute__((noinline)) double twice(double x, int64_t deadline_ns) {
  while (ThreadCpuNs() < deadline_ns) {
    for (int i = 0; i < 65536; ++i) x = x * 2.0 - x * 0.999 + 1e-9;
    asm volatile("" : "+x"(x));
  }
  return x;
}

template <typename T>
class Box {
 public:
  template <typename U>
  __attribute__((noinline)) T fold(U seed, int64_t deadline_ns) {
    T x = state_ + static_cast<T>(seed);
    while (ThreadCpuNs() < deadline_ns) {
      for (int i = 0; i < 65536; ++i) x = (x << 7 | x >> (sizeof(T) * 8 - 7)) ^ T(i);
      state_ ^= x;
    }
    return x;
  }

 private:
  T state_ = 12345;
};

}  // namespace acc

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::strtod(argv[1], nullptr) : 1.0;
  if (!(seconds >= 0)) return 2;
  const int64_t start = ThreadCpuNs();
  volatile long a = acc::twice(static_cast<long>(argc), start + int64_t(seconds * 0.4e9));
  volatile double b = acc::twice(1.0 * argc, start + int64_t(seconds * 0.7e9));
  acc::Box<unsigned long> box;
  volatile unsigned long c = box.fold(argc, start + int64_t(seconds * 1e9));
  return static_cast<int>((a + static_cast<long>(b) + c) & 0);
}
