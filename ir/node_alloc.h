// Memory for IR nodes, reused through per-thread free lists.
//
// Schedules and the arithmetic make and drop thousands of small nodes per
// trace replay. Most node sizes overflow glibc's small per-thread cache, so a
// node's malloc and free each cost around a hundred instructions in its
// general bins; here they are a list push and pop. Freed memory goes to the
// free list of the freeing thread (nodes are shared across threads), one list
// per 16-byte size class, each holding a bounded number of blocks; anything
// larger or beyond the bound goes back to operator delete.
//
// Kiln's programs link jemalloc where it is installed (cmake/Dependencies.cmake);
// with it these lists make no measurable difference (search_overhead_bench
// C2D:0: 15.91 ms per trial with them, 15.95 without), but without it (glibc,
// e.g. on a machine without libjemalloc-dev, or in a program that loads the C
// API) they save about 6% of the search (18.11 against 19.19 ms).
//
// MakeNode is std::make_shared with this memory: the node and its reference
// counts in one block, as before.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <utility>

namespace kiln::ir {

namespace node_alloc {

void* Allocate(std::size_t bytes);
void Deallocate(void* p, std::size_t bytes) noexcept;

}  // namespace node_alloc

// A stateless allocator over node_alloc, for std::allocate_shared.
template <typename T>
class NodeAllocator {
 public:
  using value_type = T;

  NodeAllocator() = default;
  template <typename U>
  NodeAllocator(const NodeAllocator<U>&) noexcept {}  // NOLINT: rebinding is implicit

  T* allocate(std::size_t n) {
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__,
                  "node_alloc returns operator new's default alignment");
    return static_cast<T*>(node_alloc::Allocate(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { node_alloc::Deallocate(p, n * sizeof(T)); }

  template <typename U>
  bool operator==(const NodeAllocator<U>&) const noexcept {
    return true;
  }
};

template <typename T, typename... Args>
std::shared_ptr<T> MakeNode(Args&&... args) {
  return std::allocate_shared<T>(NodeAllocator<T>(), std::forward<Args>(args)...);
}

}  // namespace kiln::ir
