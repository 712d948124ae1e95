// A deliberate bug for each sanitizer, so that a sanitizer tree proves it
// catches what it is there to catch (scripts/sanitize.sh runs it first and
// fails the stage when the expected report does not come). Built only in a
// KILN_SANITIZE tree (tests/CMakeLists.txt); never part of ctest.
//
//   sanitizer_canary heap-overflow   one float written past an ir::NDArray's
//                                    storage (AddressSanitizer:
//                                    heap-buffer-overflow)
//   sanitizer_canary signed-overflow INT64_MAX + 1 (UndefinedBehaviorSanitizer)
//   sanitizer_canary race            two threads write one int unsynchronized
//                                    (ThreadSanitizer: data race)
//
// Each exits 0 only if the bug went unnoticed, which the script treats as a
// failure of the tree.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <thread>

#include "ir/ndarray.h"

namespace {

// Opaque to the optimizer, so that it neither folds the bug away nor warns.
volatile int64_t g_one = 1;

int HeapOverflow() {
  // 3 floats: outside ASan, NDArray rounds its storage up to 64 bytes, and
  // element 3 would land in that padding; under ASan the storage is exact
  // (ir/ndarray.cc), so the write hits the redzone.
  kiln::ir::NDArray a(kiln::ir::DataType::Float32(), {3});
  float* data = a.data_as<float>();
  const int64_t past_end = a.size() - 1 + g_one;
  data[past_end] = 1.0f;
  std::printf("heap-overflow: wrote element %lld of %lld unnoticed\n", static_cast<long long>(past_end),
              static_cast<long long>(a.size()));
  return 0;
}

int SignedOverflow() {
  volatile int64_t big = std::numeric_limits<int64_t>::max();
  const int64_t sum = big + g_one;
  std::printf("signed-overflow: %lld unnoticed\n", static_cast<long long>(sum));
  return 0;
}

int Race() {
  static int shared = 0;
  // The thread's write and main's write after starting it are ordered by
  // nothing: TSan reports them whichever runs first.
  std::thread t([] { shared = shared + 1; });
  shared = shared + 1;
  t.join();
  std::printf("race: %d unnoticed\n", shared);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "heap-overflow") == 0) return HeapOverflow();
  if (argc == 2 && std::strcmp(argv[1], "signed-overflow") == 0) return SignedOverflow();
  if (argc == 2 && std::strcmp(argv[1], "race") == 0) return Race();
  std::fprintf(stderr, "usage: sanitizer_canary heap-overflow|signed-overflow|race\n");
  return 2;
}
