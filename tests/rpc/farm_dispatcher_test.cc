// The farm's dispatch rules without a network: leases, deadlines, requeue,
// late results (a candidate takes one result, ever), pools, priorities and
// fair sharing, cancel. Threads stand in for the job's Tune loop.
#include "rpc/farm/dispatcher.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>

namespace kiln::rpc::farm {
namespace {

using namespace std::chrono_literals;

const std::string kTarget = "llvm -num-cores=1";
const std::string kPool = PoolKey(kTarget, "fp");

v1::WorkerInfo Info(const std::string& target = kTarget, int slots = 1, const std::string& fp = "fp") {
  v1::WorkerInfo i;
  i.add_targets()->set_spec(target);
  i.set_fingerprint(fp);
  i.set_slots(slots);
  return i;
}

std::vector<v1::MeasureCandidate> Candidates(int n) {
  std::vector<v1::MeasureCandidate> out(n);
  for (int i = 0; i < n; ++i) out[i].mutable_trace()->set_json("{\"i\":" + std::to_string(i) + "}");
  return out;
}

search::MeasureResult Ok(double secs) {
  search::MeasureResult r;
  r.status = search::MeasureStatus::kOk;
  r.run_secs = {secs};
  r.verified = true;
  return r;
}

std::future<std::vector<search::MeasureResult>> Batch(Dispatcher& d, int64_t job, int n, int priority = 0,
                                                      const std::string& pool = kPool) {
  return std::async(std::launch::async,
                    [&d, job, n, priority, pool] { return d.MeasureBatch(job, priority, pool, Candidates(n)); });
}

// Waits until `n` candidates are queued (the batches run on other threads).
void WaitQueued(const Dispatcher& d, int n) {
  for (int i = 0; i < 1000; ++i) {
    int queued = 0;
    const v1::FarmStatusResponse status = d.Status();
    for (const auto& p : status.pools()) queued += p.queued();
    if (queued >= n) return;
    std::this_thread::sleep_for(10ms);
  }
  ADD_FAILURE() << "fewer than " << n << " candidates queued";
}

TEST(FarmDispatcher, LeasesCandidatesAndReturnsResultsInOrder) {
  Dispatcher d;
  const std::string w = d.AddWorker(Info(kTarget, 2));
  auto batch = Batch(d, 1, 3);
  std::vector<LeaseGrant> grants;
  while (grants.size() < 2) {
    if (auto g = d.NextLease(w, 2s)) grants.push_back(*g);
  }
  // Two slots: a third lease waits for a result.
  EXPECT_FALSE(d.NextLease(w, 50ms).has_value());
  EXPECT_EQ(d.PostResult(w, grants[1].lease_id, Ok(2)), ResultFate::kAccepted);
  auto third = d.NextLease(w, 2s);
  ASSERT_TRUE(third.has_value());
  EXPECT_EQ(d.PostResult(w, grants[0].lease_id, Ok(1)), ResultFate::kAccepted);
  EXPECT_EQ(d.PostResult(w, third->lease_id, Ok(3)), ResultFate::kAccepted);
  auto results = batch.get();
  ASSERT_EQ(results.size(), 3u);
  // Candidate order, whatever order the results came in.
  EXPECT_EQ(results[0].run_secs[0], 1);
  EXPECT_EQ(results[1].run_secs[0], 2);
  EXPECT_EQ(results[2].run_secs[0], 3);
  EXPECT_EQ(grants[0].candidate.trace().json(), "{\"i\":0}");
}

TEST(FarmDispatcher, AnExpiredLeaseIsRequeuedAndItsLateResultCountsOnce) {
  DispatcherOptions o;
  o.lease_seconds = 0.2;
  o.reap_interval_seconds = 0.05;
  Dispatcher d(o);
  const std::string stalled = d.AddWorker(Info());
  auto batch = Batch(d, 1, 1);
  auto first = d.NextLease(stalled, 2s);
  ASSERT_TRUE(first.has_value());
  // No heartbeat: the lease expires; the silent worker is not handed its
  // candidate back, another worker gets it.
  for (int i = 0; i < 200 && d.Status().leases_expired() == 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(d.NextLease(stalled, 100ms).has_value());
  const std::string other = d.AddWorker(Info());
  auto second = d.NextLease(other, 5s);
  ASSERT_TRUE(second.has_value());
  EXPECT_NE(second->lease_id, first->lease_id);
  EXPECT_EQ(second->candidate.trace().json(), first->candidate.trace().json());
  EXPECT_EQ(d.Status().leases_expired(), 1);
  EXPECT_EQ(d.PostResult(other, second->lease_id, Ok(2)), ResultFate::kAccepted);
  // The stalled worker wakes and answers: too late, not counted again.
  EXPECT_EQ(d.PostResult(stalled, first->lease_id, Ok(1)), ResultFate::kLate);
  auto results = batch.get();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].run_secs[0], 2);
  EXPECT_EQ(d.Status().late_results_dropped(), 1);
}

TEST(FarmDispatcher, ALateResultStillFillsACandidateNobodyElseAnswered) {
  DispatcherOptions o;
  o.lease_seconds = 0.2;
  o.reap_interval_seconds = 0.05;
  Dispatcher d(o);
  const std::string stalled = d.AddWorker(Info());
  auto batch = Batch(d, 1, 1);
  auto first = d.NextLease(stalled, 2s);
  ASSERT_TRUE(first.has_value());
  const std::string other = d.AddWorker(Info());
  auto second = d.NextLease(other, 5s);
  ASSERT_TRUE(second.has_value());
  // The first (expired) lease answers first: it fills the candidate, and the
  // re-queued lease's result is the late one.
  EXPECT_EQ(d.PostResult(stalled, first->lease_id, Ok(1)), ResultFate::kAccepted);
  EXPECT_EQ(d.PostResult(other, second->lease_id, Ok(2)), ResultFate::kLate);
  EXPECT_EQ(batch.get()[0].run_secs[0], 1);
}

TEST(FarmDispatcher, HeartbeatsKeepALeaseAlive) {
  DispatcherOptions o;
  o.lease_seconds = 2;
  o.reap_interval_seconds = 0.05;
  Dispatcher d(o);
  const std::string w = d.AddWorker(Info());
  auto batch = Batch(d, 1, 1);
  auto g = d.NextLease(w, 2s);
  ASSERT_TRUE(g.has_value());
  // Renewed every 0.1 s for longer than the lease lasts.
  for (int i = 0; i < 30; ++i) {
    std::this_thread::sleep_for(100ms);
    d.Heartbeat(w, {g->lease_id});
  }
  EXPECT_EQ(d.Status().leases_expired(), 0);
  EXPECT_EQ(d.PostResult(w, g->lease_id, Ok(1)), ResultFate::kAccepted);
  batch.get();
}

TEST(FarmDispatcher, ALostWorkersLeasesGoToAnotherAtOnce) {
  Dispatcher d;  // 60 s leases: requeue comes from RemoveWorker, not the deadline
  const std::string dead = d.AddWorker(Info());
  auto batch = Batch(d, 1, 1);
  auto g = d.NextLease(dead, 2s);
  ASSERT_TRUE(g.has_value());
  const std::string alive = d.AddWorker(Info());
  EXPECT_FALSE(d.NextLease(alive, 50ms).has_value());
  d.RemoveWorker(dead);
  auto again = d.NextLease(alive, 2s);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(d.PostResult(dead, g->lease_id, Ok(1)), ResultFate::kStale);
  EXPECT_EQ(d.PostResult(alive, again->lease_id, Ok(2)), ResultFate::kAccepted);
  EXPECT_EQ(batch.get()[0].run_secs[0], 2);
}

TEST(FarmDispatcher, AWorkerMayAnswerOnlyItsOwnLeases) {
  Dispatcher d;
  const std::string a = d.AddWorker(Info());
  const std::string b = d.AddWorker(Info());
  auto batch = Batch(d, 1, 1);
  std::optional<LeaseGrant> g = d.NextLease(a, 1s);
  std::string holder = a;
  if (!g) {
    g = d.NextLease(b, 1s);
    holder = b;
  }
  ASSERT_TRUE(g.has_value());
  const std::string thief = holder == a ? b : a;
  EXPECT_EQ(d.PostResult(thief, g->lease_id, Ok(9)), ResultFate::kForeign);
  EXPECT_EQ(d.PostResult(holder, 12345, Ok(9)), ResultFate::kUnknown);
  EXPECT_EQ(d.PostResult(holder, g->lease_id, Ok(1)), ResultFate::kAccepted);
  EXPECT_EQ(batch.get()[0].run_secs[0], 1);
}

TEST(FarmDispatcher, CandidatesGoOnlyToTheirPool) {
  Dispatcher d;
  const std::string other_target = d.AddWorker(Info("llvm -num-cores=2"));
  const std::string other_machine = d.AddWorker(Info(kTarget, 1, "another machine"));
  auto batch = Batch(d, 1, 1);
  EXPECT_FALSE(d.NextLease(other_target, 100ms).has_value());
  EXPECT_FALSE(d.NextLease(other_machine, 100ms).has_value());
  const std::string right = d.AddWorker(Info(kTarget, 2));
  auto g = d.NextLease(right, 1s);
  ASSERT_TRUE(g.has_value());
  d.PostResult(right, g->lease_id, Ok(1));
  batch.get();
  // A job for the target binds to its pool with the most slots.
  std::atomic<bool> stop{false};
  EXPECT_EQ(d.WaitForPool(kTarget, &stop), kPool);
}

TEST(FarmDispatcher, HigherPriorityFirstThenFairShares) {
  Dispatcher d;
  const std::string w = d.AddWorker(Info(kTarget, 1));
  auto low = Batch(d, 1, 2, /*priority=*/0);
  auto high = Batch(d, 2, 2, /*priority=*/5);
  WaitQueued(d, 4);
  std::vector<int64_t> order;
  for (int i = 0; i < 4; ++i) {
    auto g = d.NextLease(w, 2s);
    ASSERT_TRUE(g.has_value());
    order.push_back(g->job_id);
    d.PostResult(w, g->lease_id, Ok(1));
  }
  EXPECT_EQ(order, (std::vector<int64_t>{2, 2, 1, 1}));
  low.get();
  high.get();

  // Equal priorities: two slots, one lease to each job (fewest in flight).
  Dispatcher fair;
  const std::string two = fair.AddWorker(Info(kTarget, 2));
  auto a = Batch(fair, 7, 4);
  auto b = Batch(fair, 8, 4);
  WaitQueued(fair, 8);
  auto g1 = fair.NextLease(two, 2s);
  auto g2 = fair.NextLease(two, 2s);
  ASSERT_TRUE(g1 && g2);
  EXPECT_NE(g1->job_id, g2->job_id);
  fair.CancelJob(7, "done");
  fair.CancelJob(8, "done");
  a.get();
  b.get();
}

TEST(FarmDispatcher, CancelEndsTheBatchWithInfraErrors) {
  Dispatcher d;
  const std::string w = d.AddWorker(Info());
  auto batch = Batch(d, 3, 3);
  auto g = d.NextLease(w, 2s);
  ASSERT_TRUE(g.has_value());
  d.CancelJob(3, "job 3 was cancelled");
  auto results = batch.get();
  ASSERT_EQ(results.size(), 3u);
  for (const auto& r : results) {
    EXPECT_EQ(r.status, search::MeasureStatus::kInfraError);
    EXPECT_EQ(r.message, "job 3 was cancelled");
  }
  EXPECT_EQ(d.PostResult(w, g->lease_id, Ok(1)), ResultFate::kLate);
  // Later batches of a cancelled job return at once.
  auto after = d.MeasureBatch(3, 0, kPool, Candidates(2));
  EXPECT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0].status, search::MeasureStatus::kInfraError);
}

TEST(FarmDispatcher, CloseReleasesEveryWait) {
  Dispatcher d;
  auto batch = Batch(d, 1, 2);
  WaitQueued(d, 2);
  d.Close();
  auto results = batch.get();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].status, search::MeasureStatus::kInfraError);
  std::atomic<bool> stop{false};
  EXPECT_FALSE(d.WaitForPool(kTarget, &stop).has_value());
}

}  // namespace
}  // namespace kiln::rpc::farm
