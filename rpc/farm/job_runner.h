// One farm job from start to end, on its own thread: binds the job to a
// device pool, then tunes each of its workloads with the same Tune loop as
// `kiln tune` (search/tune.h) and a FarmRunner, committing to the
// coordinator's database, and publishes JobEvents for watchers. Job state in
// the database moves queued -> running -> done | failed | cancelled; a job
// interrupted by a coordinator shutdown or crash stays `running` and is
// resumed from its committed records by the next coordinator.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kiln/v1/job.pb.h"
#include "rpc/farm/dispatcher.h"
#include "rpc/farm/farm_metrics.h"

namespace kiln::rpc::farm {

const char* JobStateName(v1::JobState s);  // "queued", "running", ...
v1::JobState ParseJobState(const std::string& name);  // UNSPECIFIED when unknown

// Shared between the job's thread and the RPCs that watch or cancel it.
class JobHandle {
 public:
  JobHandle(int64_t id, v1::TuningJob spec) : id_(id), spec_(std::move(spec)) {}
  int64_t id() const { return id_; }
  const v1::TuningJob& spec() const { return spec_; }

  // Stops the job after the batch in flight (cancel or shutdown).
  std::atomic<bool> stop{false};
  std::atomic<bool> cancelled{false};

  // Every status event (a state or message without progress) is kept, in
  // order, so each watcher sees each of them however late it reads or joins
  // (`kiln submit` prints them: tools/farm_commands.cc). Progress events
  // replace the progress event just before them: a watcher needs only the
  // latest count, and a long job publishes one per batch.
  void Publish(const v1::JobEvent& e);
  // Waits up to `wait_ms` for a kept event newer than *version; returns true
  // and fills *out (and *version) with the oldest such one.
  bool NextEvent(int64_t* version, v1::JobEvent* out, int wait_ms);
  bool finished() const;

  // At most this many events are kept; past it the oldest go first.
  static constexpr size_t kMaxKeptEvents = 256;

  std::thread thread;

 private:
  const int64_t id_;
  const v1::TuningJob spec_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<int64_t, v1::JobEvent>> events_;  // (version, event), oldest first
  int64_t version_ = 0;
};

struct JobRunContext {
  Dispatcher* dispatcher = nullptr;
  std::string db_path;
  int search_threads = 1;  // candidate sampling; results never depend on it
  // Set when the coordinator shuts down: the job stays `running`.
  const std::atomic<bool>* shutting_down = nullptr;
  std::string principal;  // stored with the job's records (records.principal)
  FarmMetrics* metrics = nullptr;  // commit latency; may be null
  // Cost model files an evolutionary job's model may start from: the first
  // trained on a CPU with the job target's vector units, as `kiln tune
  // --prior-model auto` chooses (search/prior_model.h). Empty: none.
  std::vector<std::string> prior_model_files;
};

// The job's thread body; never throws (a failure is the job's `failed` state).
void RunJob(JobHandle& job, const JobRunContext& ctx);

// Trials of each workload: the job's trials split by weight (0 counts as 1),
// each at least 1, summing to the job's trials.
std::vector<int64_t> SplitTrials(const v1::TuningJob& job);

}  // namespace kiln::rpc::farm
