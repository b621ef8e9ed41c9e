// C++ allocations for --alloc: a program with its own operator new and
// delete (which call malloc and free, so each new is one call inside
// another), and allocations through the standard library.
//
//   alloc_cxx [ROUNDS]
//
// Each round, make_nodes allocates 3 Nodes of 64 bytes with new and
// deletes them, and fill_vector grows a std::vector<int> to 100 elements
// after reserving them (one new of 400 bytes); keep_some keeps 5 Nodes
// (320 bytes) to the end: leaked.
#include <cstdlib>
#include <new>
#include <vector>

struct Node {
  char bytes[64];
};

static Node* volatile kept[5];

void* operator new(std::size_t size) {
  if (void* p = std::malloc(size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

__attribute__((noinline)) void make_nodes() {
  Node* volatile nodes[3];
  for (auto& n : nodes) n = new Node;
  for (auto& n : nodes) delete n;
}

__attribute__((noinline)) void fill_vector() {
  std::vector<int> v;
  v.reserve(100);
  for (int i = 0; i < 100; ++i) v.push_back(i);
  asm volatile("" : : "r"(v.data()) : "memory");
}

__attribute__((noinline)) void keep_some() {
  for (auto& k : kept) k = new Node;
}

int main(int argc, char** argv) {
  const long rounds = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 1000;
  for (long r = 0; r < rounds; ++r) {
    make_nodes();
    fill_vector();
  }
  keep_some();
  return 0;
}
