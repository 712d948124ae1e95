// Node memory from per-thread free lists: nodes made on one thread and
// dropped on another, threads that exit with blocks kept, and sizes past the
// kept classes all behave as plain new/delete would.
#include "ir/node_alloc.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "ir/expr.h"
#include "ir/op.h"
#include "ir/structural_equal.h"

namespace kiln::ir {
namespace {

// Under AddressSanitizer node_alloc hands every request to operator new.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kPooled = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kPooled = false;
#else
constexpr bool kPooled = true;
#endif
#else
constexpr bool kPooled = true;
#endif

struct Big {
  char bytes[2000];  // past the largest kept size class
};

TEST(NodeAlloc, FreedBlockOfASizeIsReusedForThatSize) {
  if (!kPooled) GTEST_SKIP() << "no reuse under AddressSanitizer";
  void* p = node_alloc::Allocate(40);
  node_alloc::Deallocate(p, 40);
  // Same class (33..48 bytes): the block just freed comes back.
  void* q = node_alloc::Allocate(48);
  EXPECT_EQ(p, q);
  node_alloc::Deallocate(q, 48);
}

TEST(NodeAlloc, LargeRequestsAreNotKept) {
  auto big = MakeNode<Big>();
  big->bytes[0] = 'x';
  big->bytes[sizeof(big->bytes) - 1] = 'y';
  EXPECT_EQ(big->bytes[0], 'x');
  big.reset();
}

TEST(NodeAlloc, NodesMadeOnOneThreadAndDroppedOnAnother) {
  Var x("x");
  std::vector<Expr> made;
  std::thread maker([&] {
    for (int i = 0; i < 5000; ++i) made.push_back(x * IntImm(i) + IntImm(i + 1));
  });
  maker.join();  // the maker's kept blocks are released at its exit
  std::thread dropper([&] {
    // Dropping keeps some of the maker's memory on this thread's lists, and
    // making new nodes here reuses it.
    made.resize(2500);
    std::vector<Expr> again;
    for (int i = 0; i < 2500; ++i) again.push_back(x - IntImm(i));
    for (int i = 0; i < 2500; ++i) {
      ASSERT_TRUE(StructuralEqual(again[static_cast<size_t>(i)], x - IntImm(i)));
    }
  });
  dropper.join();
  for (int i = 0; i < 2500; ++i) {
    EXPECT_TRUE(StructuralEqual(made[static_cast<size_t>(i)], x * IntImm(i) + IntImm(i + 1)));
  }
  made.clear();  // and the rest on the main thread
}

TEST(NodeAlloc, ManyThreadsMakeAndDropAtOnce) {
  std::vector<std::thread> threads;
  std::vector<int64_t> sums(8, 0);
  for (size_t t = 0; t < sums.size(); ++t) {
    threads.emplace_back([t, &sums] {
      Var v("v" + std::to_string(t));
      for (int round = 0; round < 20; ++round) {
        std::vector<Expr> es;
        for (int i = 0; i < 2000; ++i) es.push_back(v + IntImm(i));
        for (const Expr& e : es) {
          int64_t c = 0;
          if (AsConstInt(e.as<BinaryNode>()->b, &c)) sums[t] += c;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int64_t s : sums) EXPECT_EQ(s, int64_t{20} * (1999 * 2000 / 2));
}

}  // namespace
}  // namespace kiln::ir
