// The CPU runtime's thread pool (codegen/runtime/parallel_for.cc), called the
// way generated kernels call it: kiln_parallel_for back to back, with fewer
// iterations than threads, after pauses long enough for its workers to stop
// polling and sleep, with a failing chunk, and from inside a chunk. The test
// names say "Thread" so that the TSan stage (scripts/sanitize.sh) runs them.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "codegen/kernel_abi.h"

namespace {

struct Counts {
  std::vector<std::atomic<int>> hits;
  explicit Counts(size_t n) : hits(n) {}
};

int32_t CountRange(int64_t begin, int64_t end, void* closure) {
  auto* c = static_cast<Counts*>(closure);
  for (int64_t i = begin; i < end; ++i) c->hits[static_cast<size_t>(i)].fetch_add(1);
  return 0;
}

// Runs one call over n and checks that every index ran exactly once.
void ExpectEachIndexOnce(int64_t n) {
  Counts c(static_cast<size_t>(n));
  ASSERT_EQ(kiln_parallel_for(n, CountRange, &c), 0);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(c.hits[static_cast<size_t>(i)].load(), 1) << "index " << i << " of " << n;
  }
}

class ParallelRuntime : public ::testing::Test {
 protected:
  void TearDown() override { kiln_runtime_set_num_threads(0); }
};

TEST_F(ParallelRuntime, ThreadsCoverEveryIndexOnceBackToBackAndAfterSleeping) {
  for (int threads : {2, 3, 5}) {
    kiln_runtime_set_num_threads(threads);
    for (int call = 0; call < 1500; ++call) {
      // 1 to 9 iterations: some calls have fewer chunks than threads.
      ExpectEachIndexOnce(1 + call % 9);
      if (call % 500 == 499) {
        // Long past the polling window: the workers sleep, and the next
        // call must wake them.
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
    ExpectEachIndexOnce(100000);
  }
}

int32_t FailInLastChunk(int64_t /*begin*/, int64_t end, void* closure) {
  return end == *static_cast<int64_t*>(closure) ? 7 : 0;
}

TEST_F(ParallelRuntime, ThreadsReportAFailingChunkAndGoOn) {
  kiln_runtime_set_num_threads(3);
  int64_t n = 30;
  for (int call = 0; call < 200; ++call) {
    // The last chunk runs on a worker: its code reaches the caller.
    ASSERT_EQ(kiln_parallel_for(n, FailInLastChunk, &n), 7);
    // The next call does not see the earlier failure.
    ExpectEachIndexOnce(30);
  }
}

struct Nested {
  std::atomic<int> inner_calls{0};
  std::atomic<int64_t> inner_iterations{0};
};

int32_t InnerBody(int64_t begin, int64_t end, void* closure) {
  static_cast<Nested*>(closure)->inner_iterations.fetch_add(end - begin);
  return 0;
}

int32_t OuterBody(int64_t begin, int64_t end, void* closure) {
  auto* nested = static_cast<Nested*>(closure);
  for (int64_t i = begin; i < end; ++i) {
    // Reached from inside a chunk: runs serially on this thread.
    if (kiln_parallel_for(10, InnerBody, nested) != 0) return 1;
    nested->inner_calls.fetch_add(1);
  }
  return 0;
}

TEST_F(ParallelRuntime, ThreadsRunANestedCallSerially) {
  kiln_runtime_set_num_threads(2);
  Nested nested;
  ASSERT_EQ(kiln_parallel_for(8, OuterBody, &nested), 0);
  EXPECT_EQ(nested.inner_calls.load(), 8);
  EXPECT_EQ(nested.inner_iterations.load(), 80);
}

}  // namespace
