#include "rpc/farm/dispatcher.h"

#include <algorithm>

namespace kiln::rpc::farm {

std::string PoolKey(const std::string& normalized_target, const std::string& fingerprint) {
  return normalized_target + " | " + fingerprint;
}

struct Dispatcher::Slot {
  int64_t job_id = 0;
  std::string pool;
  v1::MeasureCandidate candidate;
  bool done = false;
  search::MeasureResult result;
  std::set<int64_t> leases;  // in flight on this candidate
};

struct Dispatcher::Job {
  int64_t id = 0;
  int priority = 0;
  std::deque<std::shared_ptr<Slot>> pending;
  int64_t in_flight = 0;
  bool cancelled = false;
  std::string cancel_reason;
};

struct Dispatcher::Lease {
  std::shared_ptr<Slot> slot;
  std::string worker;
  Clock::time_point deadline;
};

struct Dispatcher::Worker {
  v1::WorkerInfo info;
  std::set<std::string> pools;
  std::set<int64_t> leases;
  int64_t results = 0;
  // Let a lease expire (hung, stopped, cut off): it gets no new lease until
  // it is heard from again, or the re-queued candidate could go straight
  // back to it.
  bool suspended = false;
};

namespace {

search::MeasureResult InfraError(const std::string& why) {
  search::MeasureResult r;
  r.status = search::MeasureStatus::kInfraError;
  r.message = why;
  return r;
}

}  // namespace

Dispatcher::Dispatcher(DispatcherOptions options) : options_(options) {
  reaper_ = std::thread([this] { ReapLoop(); });
}

Dispatcher::~Dispatcher() {
  Close();
  if (reaper_.joinable()) reaper_.join();
}

void Dispatcher::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

void Dispatcher::ReapLoop() {
  const auto interval = std::chrono::duration<double>(options_.reap_interval_seconds);
  std::unique_lock<std::mutex> lock(mu_);
  while (!closed_) {
    cv_.wait_for(lock, interval);
    if (closed_) break;
    lock.unlock();
    ExpireLeases();
    lock.lock();
  }
}

std::string Dispatcher::AddWorker(const v1::WorkerInfo& info) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string id = "w" + std::to_string(next_worker_++);
  Worker& w = workers_[id];
  w.info = info;
  for (const v1::Target& t : info.targets()) w.pools.insert(PoolKey(t.spec(), info.fingerprint()));
  cv_.notify_all();
  return id;
}

void Dispatcher::RemoveWorker(const std::string& worker_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) return;
  const std::set<int64_t> leases = it->second.leases;
  for (int64_t id : leases) EndLease(id, /*requeue=*/true);
  // Its stream is gone, so it will not answer them: a result under its id
  // is refused.
  for (auto e = expired_.begin(); e != expired_.end();) {
    e = e->second.first == worker_id ? expired_.erase(e) : std::next(e);
  }
  workers_.erase(it);
  cv_.notify_all();
}

// Removes a lease from the books; with requeue, its candidate (if still
// without a result) goes back to the front of its job's queue and the lease
// is remembered, so that its late result can still fill the candidate.
void Dispatcher::EndLease(int64_t lease_id, bool requeue) {
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) return;
  Lease lease = std::move(it->second);
  leases_.erase(it);
  lease.slot->leases.erase(lease_id);
  if (auto w = workers_.find(lease.worker); w != workers_.end()) w->second.leases.erase(lease_id);
  auto job = jobs_.find(lease.slot->job_id);
  if (job != jobs_.end()) --job->second->in_flight;
  if (!requeue) return;
  expired_[lease_id] = {lease.worker, lease.slot};
  if (!lease.slot->done && lease.slot->leases.empty() && job != jobs_.end() && !job->second->cancelled) {
    job->second->pending.push_front(lease.slot);
  }
}

int64_t Dispatcher::ExpireLeases() {
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = Clock::now();
  std::vector<int64_t> late;
  for (const auto& [id, lease] : leases_) {
    if (lease.deadline <= now) late.push_back(id);
  }
  for (int64_t id : late) {
    if (auto w = workers_.find(leases_[id].worker); w != workers_.end()) w->second.suspended = true;
    EndLease(id, /*requeue=*/true);
  }
  leases_expired_ += static_cast<int64_t>(late.size());
  // Forget expired leases whose candidates are settled; a result for them
  // is then refused, which is what it would be worth anyway.
  for (auto it = expired_.begin(); it != expired_.end();) {
    it = it->second.second->done && jobs_.count(it->second.second->job_id) == 0 ? expired_.erase(it) : std::next(it);
  }
  if (!late.empty()) cv_.notify_all();
  return static_cast<int64_t>(late.size());
}

Dispatcher::Job* Dispatcher::PickJob(const Worker& w) {
  Job* best = nullptr;
  for (auto& [id, job] : jobs_) {
    if (job->cancelled || job->pending.empty()) continue;
    if (w.pools.count(job->pending.front()->pool) == 0) continue;
    if (best == nullptr || job->priority > best->priority ||
        (job->priority == best->priority && job->in_flight < best->in_flight)) {
      best = job.get();
    }
  }
  return best;
}

std::optional<LeaseGrant> Dispatcher::NextLease(const std::string& worker_id, std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mu_);
  const auto until = Clock::now() + wait;
  while (true) {
    if (closed_) return std::nullopt;
    auto wit = workers_.find(worker_id);
    if (wit == workers_.end()) return std::nullopt;
    Worker& w = wit->second;
    const int slots = std::max(1, w.info.slots());
    if (!w.suspended && static_cast<int>(w.leases.size()) < slots) {
      if (Job* job = PickJob(w)) {
        std::shared_ptr<Slot> slot = job->pending.front();
        job->pending.pop_front();
        const int64_t id = next_lease_++;
        const auto deadline =
            Clock::now() + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(options_.lease_seconds));
        leases_[id] = Lease{slot, worker_id, deadline};
        slot->leases.insert(id);
        w.leases.insert(id);
        ++job->in_flight;
        return LeaseGrant{id, job->id, slot->candidate};
      }
    }
    if (cv_.wait_until(lock, until) == std::cv_status::timeout) return std::nullopt;
  }
}

void Dispatcher::Heartbeat(const std::string& worker_id, const std::vector<int64_t>& lease_ids) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(options_.lease_seconds));
  if (auto w = workers_.find(worker_id); w != workers_.end() && w->second.suspended) {
    w->second.suspended = false;
    cv_.notify_all();
  }
  for (int64_t id : lease_ids) {
    auto it = leases_.find(id);
    if (it != leases_.end() && it->second.worker == worker_id) it->second.deadline = deadline;
  }
}

void Dispatcher::Fill(const std::shared_ptr<Slot>& slot, const search::MeasureResult& result) {
  slot->done = true;
  slot->result = result;
  // Other leases on this candidate (it was re-queued and taken again) are
  // over: their results will be late.
  const std::set<int64_t> others = slot->leases;
  for (int64_t id : others) EndLease(id, /*requeue=*/true);
  auto job = jobs_.find(slot->job_id);
  if (job != jobs_.end()) {
    auto& q = job->second->pending;
    q.erase(std::remove(q.begin(), q.end(), slot), q.end());
  }
  cv_.notify_all();
}

ResultFate Dispatcher::PostResult(const std::string& worker_id, int64_t lease_id,
                                  const search::MeasureResult& result) {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<Slot> slot;
  if (auto it = leases_.find(lease_id); it != leases_.end()) {
    if (it->second.worker != worker_id) return ResultFate::kForeign;
    slot = it->second.slot;
    EndLease(lease_id, /*requeue=*/false);
  } else if (auto ex = expired_.find(lease_id); ex != expired_.end()) {
    if (ex->second.first != worker_id) return ResultFate::kForeign;
    slot = ex->second.second;
    expired_.erase(ex);
  } else {
    return lease_id > 0 && lease_id < next_lease_ ? ResultFate::kStale : ResultFate::kUnknown;
  }
  if (auto w = workers_.find(worker_id); w != workers_.end()) {
    ++w->second.results;
    w->second.suspended = false;
  }
  if (slot->done) {
    ++late_results_;
    cv_.notify_all();
    return ResultFate::kLate;
  }
  Fill(slot, result);
  return ResultFate::kAccepted;
}

std::vector<search::MeasureResult> Dispatcher::MeasureBatch(int64_t job_id, int priority,
                                                            const std::string& pool,
                                                            std::vector<v1::MeasureCandidate> candidates) {
  std::unique_lock<std::mutex> lock(mu_);
  std::unique_ptr<Job>& job = jobs_[job_id];
  if (!job) {
    job = std::make_unique<Job>();
    job->id = job_id;
  }
  job->priority = priority;
  std::vector<std::shared_ptr<Slot>> slots;
  for (v1::MeasureCandidate& c : candidates) {
    auto slot = std::make_shared<Slot>();
    slot->job_id = job_id;
    slot->pool = pool;
    slot->candidate = std::move(c);
    if (job->cancelled) {
      slot->done = true;
      slot->result = InfraError(job->cancel_reason);
    } else {
      job->pending.push_back(slot);
    }
    slots.push_back(std::move(slot));
  }
  cv_.notify_all();
  cv_.wait(lock, [&] {
    return closed_ || std::all_of(slots.begin(), slots.end(), [](const auto& s) { return s->done; });
  });
  std::vector<search::MeasureResult> results;
  for (const auto& s : slots) {
    results.push_back(s->done ? s->result : InfraError("the coordinator is shutting down"));
  }
  return results;
}

void Dispatcher::CancelJob(int64_t job_id, const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  std::unique_ptr<Job>& job = jobs_[job_id];
  if (!job) {
    job = std::make_unique<Job>();
    job->id = job_id;
  }
  job->cancelled = true;
  job->cancel_reason = why;
  std::vector<std::shared_ptr<Slot>> open(job->pending.begin(), job->pending.end());
  job->pending.clear();
  for (const auto& [id, lease] : leases_) {
    if (lease.slot->job_id == job_id) open.push_back(lease.slot);
  }
  for (const auto& slot : open) {
    if (!slot->done) Fill(slot, InfraError(why));
  }
  cv_.notify_all();
}

void Dispatcher::ForgetJob(int64_t job_id) {
  std::lock_guard<std::mutex> lock(mu_);
  jobs_.erase(job_id);
}

std::optional<std::string> Dispatcher::WaitForPool(const std::string& normalized_target,
                                                   const std::atomic<bool>* stop) {
  std::unique_lock<std::mutex> lock(mu_);
  while (!closed_ && !(stop && stop->load())) {
    std::map<std::string, int> slots;
    for (const auto& [id, w] : workers_) {
      for (const v1::Target& t : w.info.targets()) {
        if (t.spec() == normalized_target) slots[PoolKey(t.spec(), w.info.fingerprint())] += w.info.slots();
      }
    }
    if (!slots.empty()) {
      return std::max_element(slots.begin(), slots.end(),
                              [](const auto& a, const auto& b) { return a.second < b.second; })
          ->first;
    }
    cv_.wait_for(lock, std::chrono::milliseconds(200));
  }
  return std::nullopt;
}

int Dispatcher::WorkerCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(workers_.size());
}

v1::FarmStatusResponse Dispatcher::Status() const {
  std::lock_guard<std::mutex> lock(mu_);
  v1::FarmStatusResponse out;
  std::map<std::string, v1::PoolStatus> pools;
  for (const auto& [id, w] : workers_) {
    v1::WorkerStatus* ws = out.add_workers();
    ws->set_worker_id(id);
    *ws->mutable_info() = w.info;
    ws->set_pool(w.pools.empty() ? "" : *w.pools.begin());
    ws->set_leases_in_flight(static_cast<int32_t>(w.leases.size()));
    ws->set_results(w.results);
    for (const v1::Target& t : w.info.targets()) {
      v1::PoolStatus& p = pools[PoolKey(t.spec(), w.info.fingerprint())];
      p.set_target(t.spec());
      p.set_fingerprint(w.info.fingerprint());
      p.set_workers(p.workers() + 1);
      p.set_slots(p.slots() + w.info.slots());
    }
  }
  for (const auto& [id, lease] : leases_) {
    if (auto it = pools.find(lease.slot->pool); it != pools.end()) {
      it->second.set_leases_in_flight(it->second.leases_in_flight() + 1);
    }
  }
  int32_t running = 0;
  for (const auto& [id, job] : jobs_) {
    if (!job->cancelled) ++running;
    for (const auto& slot : job->pending) {
      v1::PoolStatus& p = pools[slot->pool];
      if (p.target().empty()) p.set_target(slot->pool);
      p.set_queued(p.queued() + 1);
    }
  }
  for (auto& [key, p] : pools) *out.add_pools() = std::move(p);
  out.set_jobs_running(running);
  out.set_leases_expired(leases_expired_);
  out.set_late_results_dropped(late_results_);
  return out;
}

}  // namespace kiln::rpc::farm
