// Internal to the interpreter: one GPU thread block of a lowered kernel, run
// with CUDA's semantics for what threads share.
//
// A lowered GPU kernel (ir/transform/lower.h) relies on its threads running
// side by side: one thread reads from shared memory what others wrote before
// a barrier (T.tvm_storage_sync), and a warp shuffle
// (T.tvm_warp_shuffle_down) takes values from other lanes. Running the
// threads one after another, as the interpreter runs every other loop, would
// give such a kernel no meaning, so ThreadBlock runs each GPU thread as a
// thread of its own, but only one at a time, in a fixed order: thread 0 runs
// until it finishes or waits (at a barrier, or at a shuffle its segment's
// other lanes have not reached yet), then the next runnable thread in order
// of linear index, and so on around. The order is the same every run, so a
// result is reproducible, and it is the order in which a missing barrier
// shows: thread 0 runs ahead of every other and reads what they have not
// written yet (shared memory starts filled with NaN) or overwrites what they
// have not read yet.
//
// A barrier that some thread never reaches (or threads waiting at different
// barriers: a barrier in code that only some threads run), a shuffle whose segment's lanes
// do not all reach it, or lanes of one segment at different shuffles are
// InterpreterErrors (on a GPU they hang or are undefined).
#pragma once

#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/buffer.h"
#include "ir/ndarray.h"

namespace kiln::ir::interp {

union Slot;
class ThreadBlock;

// What a GPU thread's Frame knows of it.
struct GpuThread {
  ThreadBlock* block = nullptr;
  int64_t linear = 0;                // x + X * (y + Y * z)
  std::array<int64_t, 3> index{};    // threadIdx.x, .y, .z
};

class ThreadBlock {
 public:
  // dims: the block's extent along threadIdx.x, .y and .z.
  explicit ThreadBlock(std::array<int64_t, 3> dims);

  // Runs body(thread) for every thread of the block as described above;
  // rethrows the first error a thread threw, or reports a deadlock.
  void Run(const std::function<void(GpuThread&)>& body);

  // __syncthreads(): returns when every thread of the block waits at it.
  // `site` tells barriers apart (one per compiled barrier statement, so
  // unrolled copies differ): threads at different ones are an error.
  void Barrier(GpuThread& t, const void* site);

  // __shfl_down_sync over the caller's segment of `width` lanes: returns the
  // value passed by the lane `offset` places further down the segment, or
  // `value` itself past its end. `site` tells compiled shuffle calls apart.
  int64_t ShuffleDown(GpuThread& t, int64_t value_bits, int64_t offset, int64_t width,
                      const void* site);

  // The block's storage of a shared-memory buffer: made (filled with NaN or
  // 0xA5 bytes) the first time a thread of the block allocates it, then the
  // same for every thread, as __shared__ memory is.
  std::byte* Shared(const BufferNode* buffer, DataType dtype, int64_t elements);

  int64_t size() const { return static_cast<int64_t>(threads_.size()); }

 private:
  enum class State { kRunnable, kBarrier, kShuffle, kDone };
  struct Lane {
    State state = State::kRunnable;
    const void* site = nullptr;
    int64_t value = 0, offset = 0, width = 0, result = 0;
  };

  // The caller holds mu_. Hands the turn to the next runnable thread after
  // `from`; with none, all threads are done or the block is deadlocked.
  void PassTurn(int64_t from);
  // Waits (releasing mu_) until it is `me`'s turn; throws to unwind a thread
  // when the run is aborted.
  void AwaitTurn(std::unique_lock<std::mutex>& lock, int64_t me);
  // Records the first error and wakes every thread to unwind.
  void Abort(std::exception_ptr error);
  std::string Describe(int64_t linear) const;

  std::array<int64_t, 3> dims_;
  std::vector<GpuThread> threads_;
  std::vector<Lane> lanes_;
  std::mutex mu_;
  std::vector<std::condition_variable> turn_cv_;  // one per thread
  int64_t turn_ = -1;
  bool aborted_ = false;
  std::exception_ptr error_;
  std::unordered_map<const BufferNode*, NDArray> shared_;
};

}  // namespace kiln::ir::interp
