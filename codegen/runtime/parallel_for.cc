// The Kiln CPU runtime: the thread pool behind kiln_parallel_for.
//
// Generated kernels outline every parallel loop into a body function and
// call kiln_parallel_for(n, body, closure). The iterations are cut into one
// contiguous chunk per thread (static scheduling, as TVM's CPU runtime does
// for parallel loops): chunk 0 runs on the calling thread, the others on
// pool workers, and the call returns when every chunk is done.
//
// This file is its own static library (libkiln_runtime.a) so that users of
// `kiln compile` link exactly it and nothing else of Kiln. It depends only
// on the C++ standard library.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "codegen/kernel_abi.h"

namespace {

// How long a worker keeps polling for the next job, and the caller for the
// workers' last chunk, before sleeping on a condition variable. Kernels are
// called back to back (a model's layers, the runner's timed repeats), and a
// kernel with several parallel loops calls the pool once per loop: waking a
// sleeping thread through the kernel takes tens of microseconds on this
// kind of machine, several percent of a kernel of a millisecond. OpenMP
// runtimes poll the same way between parallel regions (and OMP_WAIT_POLICY
// turns it off); here KILN_RUNTIME_POLL_US sets the time, 0 to sleep at once.
constexpr int64_t kDefaultPollMicros = 200;
constexpr int64_t kMaxPollMicros = 1000000;

std::chrono::microseconds PollTime() {
  static const std::chrono::microseconds time = [] {
    const char* env = std::getenv("KILN_RUNTIME_POLL_US");
    if (env == nullptr || *env == '\0') return std::chrono::microseconds(kDefaultPollMicros);
    char* end = nullptr;
    const long long v = std::strtoll(env, &end, 10);
    // A malformed value keeps the default: a kernel has no way to report it.
    if (*end != '\0' || v < 0) return std::chrono::microseconds(kDefaultPollMicros);
    return std::chrono::microseconds(std::min<long long>(v, kMaxPollMicros));
  }();
  return time;
}

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// Polls `ready` for up to PollTime(); true if it became true meanwhile.
template <typename Ready>
bool SpinUntil(const Ready& ready) {
  if (ready()) return true;
  if (PollTime().count() == 0) return false;
  const auto until = std::chrono::steady_clock::now() + PollTime();
  for (int i = 0;; ++i) {
    if (ready()) return true;
    CpuRelax();
    if ((i & 63) == 63 && std::chrono::steady_clock::now() >= until) return false;
  }
}

class ThreadPool {
 public:
  static ThreadPool& Global() {
    static ThreadPool* pool = new ThreadPool();  // never destroyed: kernels may run at exit
    return *pool;
  }

  void SetNumThreads(int n) {
    std::lock_guard<std::mutex> call(call_mu_);
    StopWorkers();
    requested_ = n;
  }

  int32_t ParallelFor(int64_t n, kiln_parallel_body_fn body, void* closure) {
    if (n <= 0) return 0;
    // A parallel loop reached from inside a pool task (the backend never emits
    // one, but a kernel may be called from a task of another kernel) runs
    // serially rather than deadlock on the pool.
    if (in_task_) return body(0, n, closure);
    std::lock_guard<std::mutex> call(call_mu_);
    const int threads = static_cast<int>(std::min<int64_t>(NumThreads(), n));
    if (threads <= 1) return body(0, n, closure);
    StartWorkers(NumThreads() - 1);

    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = Job{n, threads, body, closure};
      pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
      first_error_.store(0, std::memory_order_relaxed);
      // Release: a worker that sees the new generation while polling sees
      // the job and the counters above.
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    int32_t rc = RunChunk(0);
    auto all_done = [&] { return pending_.load(std::memory_order_acquire) == 0; };
    if (!SpinUntil(all_done)) {
      std::unique_lock<std::mutex> lock(mu_);
      done_.wait(lock, all_done);
    }
    if (rc == 0) rc = first_error_.load(std::memory_order_relaxed);
    return rc;
  }

 private:
  struct Job {
    int64_t n = 0;
    int chunks = 0;
    kiln_parallel_body_fn body = nullptr;
    void* closure = nullptr;
  };

  int NumThreads() const {
    if (requested_ > 0) return requested_;
    // The same answer as support/cores.h's HardwareThreads, spelled here:
    // libkiln_runtime.a is what `kiln compile` users link, and it depends on
    // the C++ standard library alone, not on the rest of Kiln.
    return std::max(1u, std::thread::hardware_concurrency());
  }

  int32_t RunChunk(int chunk) const {
    // Balanced contiguous chunks: the first n % chunks get one extra.
    const int64_t base = job_.n / job_.chunks, extra = job_.n % job_.chunks;
    const int64_t begin = chunk * base + std::min<int64_t>(chunk, extra);
    const int64_t end = begin + base + (chunk < extra ? 1 : 0);
    if (begin >= end) return 0;
    in_task_ = true;
    const int32_t rc = job_.body(begin, end, job_.closure);
    in_task_ = false;
    return rc;
  }

  void StartWorkers(int count) {
    if (static_cast<int>(workers_.size()) == count) return;
    StopWorkers();
    uint64_t start_generation = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_.store(false, std::memory_order_relaxed);
      start_generation = generation_.load(std::memory_order_relaxed);
    }
    // Each worker starts from the generation current now, before the caller
    // posts its job: a worker that read generation_ only once it was running
    // could see the new job's number already and wait forever for "the next".
    for (int i = 0; i < count; ++i) {
      workers_.emplace_back([this, i, start_generation] { WorkerLoop(i + 1, start_generation); });
    }
  }

  void StopWorkers() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_.store(true, std::memory_order_release);
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
    workers_.clear();
  }

  void WorkerLoop(int chunk, uint64_t seen) {
    auto posted = [&] {
      return stop_.load(std::memory_order_acquire) ||
             generation_.load(std::memory_order_acquire) != seen;
    };
    for (;;) {
      if (!SpinUntil(posted)) {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, posted);
      }
      if (stop_.load(std::memory_order_acquire)) return;
      seen = generation_.load(std::memory_order_acquire);
      // Every worker answers every job, also one with fewer chunks than
      // threads, so the caller posts the next job only once no worker can
      // still be reading this one.
      const int32_t rc = chunk < job_.chunks ? RunChunk(chunk) : 0;
      if (rc != 0) {
        int32_t none = 0;
        first_error_.compare_exchange_strong(none, rc, std::memory_order_relaxed);
      }
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        // Under the lock, so that the notification cannot fall between the
        // caller's check of pending_ and its sleep.
        std::lock_guard<std::mutex> lock(mu_);
        done_.notify_one();
      }
    }
  }

  std::mutex call_mu_;  // one parallel loop at a time
  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  Job job_;  // written under mu_ before generation_ moves, read after
  std::atomic<int> pending_{0};
  std::atomic<int32_t> first_error_{0};
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  int requested_ = 0;
  static thread_local bool in_task_;
};

thread_local bool ThreadPool::in_task_ = false;

}  // namespace

extern "C" int32_t kiln_parallel_for(int64_t n, kiln_parallel_body_fn body, void* closure) {
  return ThreadPool::Global().ParallelFor(n, body, closure);
}

extern "C" void kiln_runtime_set_num_threads(int32_t n) {
  ThreadPool::Global().SetNumThreads(n < 0 ? 0 : n);
}
