// ThreadBlock: the threads of one GPU thread block, run one at a time in a
// fixed order (ir/interpreter/thread_block.h).
#include "ir/interpreter/thread_block.h"

#include <bit>
#include <thread>

#include "ir/interpreter.h"
#include "ir/interpreter/compiler.h"

namespace kiln::ir::interp {

namespace {

// Thrown inside a waiting thread to unwind it once the run is aborted.
struct Unwind {};

}  // namespace

ThreadBlock::ThreadBlock(std::array<int64_t, 3> dims) : dims_(dims) {
  const int64_t n = dims[0] * dims[1] * dims[2];
  threads_.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    GpuThread& t = threads_[static_cast<size_t>(i)];
    t.block = this;
    t.linear = i;
    t.index = {i % dims[0], i / dims[0] % dims[1], i / (dims[0] * dims[1])};
  }
  lanes_.resize(threads_.size());
  turn_cv_ = std::vector<std::condition_variable>(threads_.size());
}

std::string ThreadBlock::Describe(int64_t linear) const {
  const auto& i = threads_[static_cast<size_t>(linear)].index;
  return "thread (" + std::to_string(i[0]) + ", " + std::to_string(i[1]) + ", " +
         std::to_string(i[2]) + ")";
}

void ThreadBlock::Run(const std::function<void(GpuThread&)>& body) {
  const int64_t n = size();
  std::vector<std::thread> workers;
  workers.reserve(static_cast<size_t>(n));
  auto join_all = [&] {
    for (auto& w : workers) w.join();
  };
  for (int64_t i = 0; i < n; ++i) {
    auto work = [this, i, &body] {
      std::unique_lock<std::mutex> lock(mu_);
      try {
        AwaitTurn(lock, i);
        lock.unlock();
        body(threads_[static_cast<size_t>(i)]);
        lock.lock();
        lanes_[static_cast<size_t>(i)].state = State::kDone;
        PassTurn(i);
      } catch (const Unwind&) {
        // Another thread failed; its error is the one reported.
      } catch (...) {
        if (!lock.owns_lock()) lock.lock();
        Abort(std::current_exception());
      }
    };
    try {
      workers.emplace_back(work);
    } catch (...) {  // std::system_error, or std::bad_alloc for the thread's state
      std::string why = "unknown error";
      try {
        throw;
      } catch (const std::exception& e) {
        why = e.what();
      } catch (...) {
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        Abort(std::make_exception_ptr(InterpreterError(
            "cannot start a thread for each of the block's " + std::to_string(n) +
            " GPU threads: " + why)));
      }
      join_all();
      std::rethrow_exception(error_);
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    turn_ = 0;
    turn_cv_[0].notify_one();
  }
  join_all();
  if (error_) std::rethrow_exception(error_);
}

void ThreadBlock::AwaitTurn(std::unique_lock<std::mutex>& lock, int64_t me) {
  turn_cv_[static_cast<size_t>(me)].wait(lock, [&] { return turn_ == me || aborted_; });
  if (aborted_) throw Unwind{};
}

void ThreadBlock::Abort(std::exception_ptr error) {
  if (aborted_) return;
  aborted_ = true;
  error_ = std::move(error);
  for (auto& cv : turn_cv_) cv.notify_one();
}

void ThreadBlock::PassTurn(int64_t from) {
  const int64_t n = size();
  for (int64_t k = 1; k <= n; ++k) {
    const int64_t j = (from + k) % n;
    if (lanes_[static_cast<size_t>(j)].state == State::kRunnable) {
      turn_ = j;
      turn_cv_[static_cast<size_t>(j)].notify_one();
      return;
    }
  }
  int64_t at_barrier = 0, at_shuffle = 0, done = 0, first_barrier = -1, first_shuffle = -1;
  for (int64_t j = 0; j < n; ++j) {
    switch (lanes_[static_cast<size_t>(j)].state) {
      case State::kBarrier:
        if (at_barrier++ == 0) first_barrier = j;
        break;
      case State::kShuffle:
        if (at_shuffle++ == 0) first_shuffle = j;
        break;
      default:
        ++done;
    }
  }
  turn_ = -1;
  if (done == n) return;
  std::string msg = "GPU thread block deadlock:";
  if (at_barrier > 0) {
    msg += " " + std::to_string(at_barrier) + " thread(s) wait at a barrier (the first: " +
           Describe(first_barrier) + ")";
  }
  if (at_shuffle > 0) {
    msg += std::string(at_barrier > 0 ? "," : "") + " " + std::to_string(at_shuffle) +
           " wait at a warp shuffle (the first: " + Describe(first_shuffle) + ")";
  }
  msg += " and " + std::to_string(done) + " have finished";
  Abort(std::make_exception_ptr(InterpreterError(msg)));
}

void ThreadBlock::Barrier(GpuThread& t, const void* site) {
  std::unique_lock<std::mutex> lock(mu_);
  const int64_t me = t.linear;
  lanes_[static_cast<size_t>(me)].state = State::kBarrier;
  lanes_[static_cast<size_t>(me)].site = site;
  bool all = true;
  for (size_t j = 0; j < lanes_.size(); ++j) {
    const Lane& o = lanes_[j];
    if (o.state == State::kDone) {
      Abort(std::make_exception_ptr(InterpreterError(
          Describe(static_cast<int64_t>(j)) + " finished without reaching the barrier " + Describe(me) +
          " waits at (a barrier must be reached by every thread of the block)")));
      break;
    }
    if (o.state == State::kBarrier && o.site != site) {
      Abort(std::make_exception_ptr(InterpreterError(
          Describe(static_cast<int64_t>(j)) + " and " + Describe(me) + " wait at different barriers (a barrier in code that "
          "only some threads of the block run)")));
      break;
    }
    all = all && o.state == State::kBarrier;
  }
  if (!aborted_ && all) {
    for (Lane& l : lanes_) l.state = State::kRunnable;
  }
  if (!aborted_) PassTurn(me);
  AwaitTurn(lock, me);
}

int64_t ThreadBlock::ShuffleDown(GpuThread& t, int64_t value_bits, int64_t offset,
                                 int64_t width, const void* site) {
  const int64_t me = t.linear;
  if (width < 1 || width > 32 || !std::has_single_bit(static_cast<uint64_t>(width)) || offset < 0) {
    throw InterpreterError("warp shuffle by " + Describe(me) + " with width " +
                           std::to_string(width) + " and offset " + std::to_string(offset) +
                           " (the width must be a power of two up to 32, the offset >= 0)");
  }
  const int64_t first = me / 32 * 32 + me % 32 / width * width;
  if (first + width > size()) {
    throw InterpreterError("warp shuffle by " + Describe(me) + ": its segment of " +
                           std::to_string(width) + " lanes reaches past the block's " +
                           std::to_string(size()) + " threads");
  }
  std::unique_lock<std::mutex> lock(mu_);
  Lane& mine = lanes_[static_cast<size_t>(me)];
  mine.state = State::kShuffle;
  mine.site = site;
  mine.value = value_bits;
  mine.offset = offset;
  mine.width = width;
  bool complete = true;
  for (int64_t j = first; j < first + width && !aborted_; ++j) {
    const Lane& o = lanes_[static_cast<size_t>(j)];
    if (o.state == State::kShuffle) {
      if (o.site != site || o.width != width) {
        Abort(std::make_exception_ptr(InterpreterError(
            Describe(j) + " and " + Describe(me) + " wait at different warp shuffles (every lane "
            "of a segment must make the same shuffle together)")));
      }
    } else if (o.state != State::kRunnable) {
      Abort(std::make_exception_ptr(InterpreterError(
          Describe(j) + (o.state == State::kDone ? " finished" : " waits at a barrier") +
          " while " + Describe(me) + " of its warp segment waits at a warp shuffle (every lane "
          "of a segment must make the shuffle)")));
    } else {
      complete = false;
    }
  }
  if (!aborted_ && complete) {
    for (int64_t j = first; j < first + width; ++j) {
      Lane& l = lanes_[static_cast<size_t>(j)];
      const int64_t src = j + l.offset;
      l.result = src < first + width ? lanes_[static_cast<size_t>(src)].value : l.value;
    }
    for (int64_t j = first; j < first + width; ++j) {
      lanes_[static_cast<size_t>(j)].state = State::kRunnable;
    }
  }
  if (!aborted_) PassTurn(me);
  AwaitTurn(lock, me);
  return mine.result;
}

std::byte* ThreadBlock::Shared(const BufferNode* buffer, DataType dtype, int64_t elements) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = shared_.find(buffer);
  if (it == shared_.end()) {
    NDArray a(dtype, {elements});
    FillGarbage(&a);
    it = shared_.emplace(buffer, std::move(a)).first;
  } else if (it->second.size() != elements) {
    throw InterpreterError("shared buffer '" + buffer->name + "' is allocated with " +
                           std::to_string(elements) + " elements after " +
                           std::to_string(it->second.size()));
  }
  return static_cast<std::byte*>(it->second.data());
}

}  // namespace kiln::ir::interp
