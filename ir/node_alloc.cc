#include "ir/node_alloc.h"

#include <cstdint>

// Under AddressSanitizer every node gets its own operator new, so that a use
// after free is still reported rather than hidden by reuse.
#if defined(__SANITIZE_ADDRESS__)
#define KILN_NODE_POOL 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_NODE_POOL 0
#endif
#endif
#ifndef KILN_NODE_POOL
#define KILN_NODE_POOL 1
#endif

namespace kiln::ir::node_alloc {

#if KILN_NODE_POOL

namespace {

constexpr std::size_t kGranule = 16;
constexpr std::size_t kClasses = 32;  // blocks up to 512 bytes are kept
// Per class and thread: a replayed tuning trace never has more than a few
// hundred nodes of one size free at once (replay_bench runs the same with a
// bound of 256), and the bound keeps an idle thread's hoard small: in
// practice a few node sizes are used, under 1 MiB in all.
constexpr std::uint32_t kMaxKept = 1024;

struct FreeBlock {
  FreeBlock* next;
};

// Trivially destructible, so that it stays usable while other thread-local
// objects (which may hold nodes) are destroyed at thread exit.
struct FreeLists {
  FreeBlock* head[kClasses];
  std::uint32_t count[kClasses];
  bool armed;   // the releaser below is registered for this thread
  bool closed;  // the thread is exiting: plain operator new / delete
};

thread_local FreeLists lists;

// Hands the kept blocks back to operator delete when its thread exits.
struct Releaser {
  bool registered = false;
  ~Releaser() {
    lists.closed = true;
    for (std::size_t c = 0; c < kClasses; ++c) {
      while (FreeBlock* b = lists.head[c]) {
        lists.head[c] = b->next;
        ::operator delete(b);
      }
      lists.count[c] = 0;
    }
  }
};

thread_local Releaser releaser;

// Size class of a request (bytes > 0); kClasses or more is not kept.
inline std::size_t ClassOf(std::size_t bytes) { return (bytes - 1) / kGranule; }

}  // namespace

void* Allocate(std::size_t bytes) {
  std::size_t c = ClassOf(bytes);
  if (c >= kClasses) return ::operator new(bytes);
  FreeLists& l = lists;
  if (FreeBlock* b = l.head[c]) {
    l.head[c] = b->next;
    --l.count[c];
    return b;
  }
  // The whole class size, so that the block can serve any request of it.
  return ::operator new((c + 1) * kGranule);
}

void Deallocate(void* p, std::size_t bytes) noexcept {
  std::size_t c = ClassOf(bytes);
  FreeLists& l = lists;
  if (c >= kClasses || l.closed || l.count[c] >= kMaxKept) {
    ::operator delete(p);
    return;
  }
  if (!l.armed) {
    l.armed = true;
    releaser.registered = true;  // first use constructs it and registers its destructor
  }
  auto* b = static_cast<FreeBlock*>(p);
  b->next = l.head[c];
  l.head[c] = b;
  ++l.count[c];
}

#else  // !KILN_NODE_POOL

void* Allocate(std::size_t bytes) { return ::operator new(bytes); }
void Deallocate(void* p, std::size_t) noexcept { ::operator delete(p); }

#endif

}  // namespace kiln::ir::node_alloc
