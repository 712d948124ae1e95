// The coordinator's dispatch state: device pools, the candidates each job
// waits on, and the leases that hand them to workers (docs/ARCHITECTURE.md §10:
// TVM's RPC tracker matches requests to devices by key; Kiln adds deadlines).
//
// A pool is a normalized target plus the measuring machine's fingerprint; a
// candidate goes only to a worker of its job's pool. A lease has a deadline
// that the worker's heartbeat renews; a lease past it (worker killed, hung,
// cut off) is re-queued for another worker, and its worker gets no new lease
// until it is heard from again. Each candidate takes the first
// result that comes back for any of its leases, so a late result of a
// re-queued lease fills it at most once: the search commits every candidate
// once, and the database's (workload, target, trace hash) key keeps records
// unique besides.
//
// Scheduling: a free worker slot takes the next candidate of the job with
// the highest priority; among equal priorities, the job with the fewest
// leases in flight (fair sharing), then the oldest job.
//
// Thread safe: every method takes one mutex. A reaper thread expires leases.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kiln/v1/farm.pb.h"
#include "search/measure.h"

namespace kiln::rpc::farm {

// "TARGET | FINGERPRINT": the name of a device pool.
std::string PoolKey(const std::string& normalized_target, const std::string& fingerprint);

struct DispatcherOptions {
  double lease_seconds = 60;  // a lease not renewed this long is re-queued
  double reap_interval_seconds = 0.2;
};

struct LeaseGrant {
  int64_t lease_id = 0;
  int64_t job_id = 0;
  v1::MeasureCandidate candidate;
};

enum class ResultFate {
  kAccepted,  // filled its candidate
  kLate,      // its candidate had a result already (or its job was cancelled)
  kStale,     // a lease this dispatcher issued but no longer tracks for this
              // worker (expired and settled, or its worker re-registered): dropped
  kForeign,   // a lease another worker holds or held: refused (PERMISSION_DENIED)
  kUnknown,   // never issued: refused (PERMISSION_DENIED)
};

class Dispatcher {
 public:
  explicit Dispatcher(DispatcherOptions options = {});
  ~Dispatcher();
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  const DispatcherOptions& options() const { return options_; }

  // Workers. AddWorker returns the worker's id; its pools are its targets
  // (normalized by the caller) with its fingerprint.
  std::string AddWorker(const v1::WorkerInfo& info);
  // The worker is gone: its leases are re-queued now, not at their deadline.
  void RemoveWorker(const std::string& worker_id);
  // Blocks up to `wait` for a candidate this worker may take (it has a free
  // slot and one of its pools has work); nullopt on timeout, when the worker
  // was removed, or after Close.
  std::optional<LeaseGrant> NextLease(const std::string& worker_id, std::chrono::milliseconds wait);
  // Renews the deadlines of the listed leases this worker holds; others are ignored.
  void Heartbeat(const std::string& worker_id, const std::vector<int64_t>& lease_ids);
  ResultFate PostResult(const std::string& worker_id, int64_t lease_id, const search::MeasureResult& result);
  // Re-queues every lease past its deadline; returns how many. The reaper
  // thread calls it; tests may too.
  int64_t ExpireLeases();

  // Jobs. Queues a batch for `pool` and blocks until every candidate has a
  // result, the job is cancelled, or Close; results come in candidate order,
  // with infra_error for those a cancel or Close cut off.
  std::vector<search::MeasureResult> MeasureBatch(int64_t job_id, int priority, const std::string& pool,
                                                  std::vector<v1::MeasureCandidate> candidates);
  // Ends the job's pending and leased candidates with infra_error `why`;
  // later batches of the job return at once the same way.
  void CancelJob(int64_t job_id, const std::string& why);
  // Forgets a finished job's bookkeeping.
  void ForgetJob(int64_t job_id);
  // Blocks until a pool serves `normalized_target` (the one with the most
  // slots), *stop is set, or Close; nullopt for the latter two.
  std::optional<std::string> WaitForPool(const std::string& normalized_target, const std::atomic<bool>* stop);

  v1::FarmStatusResponse Status() const;
  int WorkerCount() const;
  // Wakes and ends every wait (coordinator shutdown).
  void Close();

 private:
  struct Slot;
  struct Job;
  struct Lease;
  struct Worker;
  using Clock = std::chrono::steady_clock;

  // All take mu_ held.
  void EndLease(int64_t lease_id, bool requeue);
  void Fill(const std::shared_ptr<Slot>& slot, const search::MeasureResult& result);
  Job* PickJob(const Worker& w);
  void ReapLoop();

  const DispatcherOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;
  int64_t next_lease_ = 1;
  int64_t next_worker_ = 1;
  std::map<int64_t, std::unique_ptr<Job>> jobs_;
  std::map<int64_t, Lease> leases_;                      // leases in flight
  std::map<int64_t, std::pair<std::string, std::shared_ptr<Slot>>> expired_;  // worker, slot
  std::map<std::string, Worker> workers_;
  int64_t leases_expired_ = 0;
  int64_t late_results_ = 0;
  std::thread reaper_;
};

}  // namespace kiln::rpc::farm
