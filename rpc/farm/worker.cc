#include "rpc/farm/worker.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "ir/text/parser.h"
#include "ir/schedule/schedule.h"
#include "ir/schedule/trace.h"
#include "ir/structural_hash.h"
#include "ir/target.h"
#include "kiln/v1/farm.grpc.pb.h"
#include "rpc/farm/simulated_timing.h"
#include "rpc/proto_convert.h"

namespace kiln::rpc::farm {
namespace {

using Stream = grpc::ClientReaderWriter<v1::WorkerMessage, v1::CoordinatorMessage>;

search::MeasureResult InfraError(const std::string& why) {
  search::MeasureResult r;
  r.status = search::MeasureStatus::kInfraError;
  r.message = why;
  return r;
}

// One connection's shared state: the leases received and not yet answered,
// and the stream they are answered on. A new connection gets a new one, so
// results of an old connection's leases are dropped (the coordinator
// re-queued them when it lost the stream).
struct Session {
  Stream* stream = nullptr;
  std::mutex write_mu;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<v1::Lease> queue;
  std::set<int64_t> held;  // queued or being measured
  bool closed = false;

  bool Write(const v1::WorkerMessage& m) {
    std::lock_guard<std::mutex> lock(write_mu);
    return stream->Write(m);
  }
};

// Measures one lease with this slot's runner (or simulates it).
class Slot {
 public:
  Slot(const WorkerOptions& o) : options_(o), runner_(o.runner) {
    if (!o.simulate.empty()) simulated_ = SimulatedTiming::Parse(o.simulate);
  }

  search::MeasureResult Measure(const v1::MeasureCandidate& c) {
    try {
      if (c.target().spec() != options_.target) {
        return InfraError("lease for target '" + c.target().spec() + "' on a worker for '" + options_.target + "'");
      }
      if (simulated_) return Simulate(c);
      const ir::PrimFunc& workload = Workload(c.workload());
      search::MeasureTask task{workload, ir::Target::Parse(c.target().spec()), FromProto(c.timing()),
                               c.input_seed()};
      ir::Schedule sch(workload);
      ir::Trace::FromJSONString(c.trace().json()).ApplyToSchedule(&sch, /*remove_postproc=*/false);
      std::vector<search::MeasureResult> r = runner_.Measure(task, {{sch.func(), c.trace().json()}});
      if (r.size() != 1) return InfraError("the local runner returned " + std::to_string(r.size()) + " results");
      return r[0];
    } catch (const std::exception& e) {
      return InfraError(std::string("worker cannot measure the lease: ") + e.what());
    }
  }

 private:
  // Parsed workloads by hash; the text must hash to what the lease says.
  const ir::PrimFunc& Workload(const v1::Workload& w) {
    auto it = workloads_.find(w.structural_hash());
    if (it != workloads_.end()) return it->second;
    ir::PrimFunc f = ir::ParseFunc(w.text(), w.name().empty() ? "lease workload" : w.name());
    if (ir::StructuralHashHex(f) != w.structural_hash()) {
      throw std::runtime_error("workload text hashes to " + ir::StructuralHashHex(f) + ", the lease says " +
                               w.structural_hash());
    }
    if (workloads_.size() > 64) workloads_.clear();
    return workloads_.emplace(w.structural_hash(), std::move(f)).first->second;
  }
  search::MeasureResult Simulate(const v1::MeasureCandidate& c) {
    const double secs = simulated_->Sample(c.trace().json());
    std::this_thread::sleep_for(std::chrono::duration<double>(secs));
    search::MeasureResult r;
    r.status = search::MeasureStatus::kOk;
    r.run_secs = {secs};
    r.verified = false;  // nothing ran: such a record never counts as best
    r.message = "simulated (" + simulated_->model() + ")";
    return r;
  }

  const WorkerOptions& options_;
  LocalRunner runner_;
  std::optional<SimulatedTiming> simulated_;
  std::map<std::string, ir::PrimFunc> workloads_;
};

bool Stopped(const WorkerOptions& o) { return o.stop && o.stop->load(); }

// Refusals that a retry cannot fix.
bool Permanent(grpc::StatusCode code) {
  return code == grpc::StatusCode::UNAUTHENTICATED || code == grpc::StatusCode::PERMISSION_DENIED ||
         code == grpc::StatusCode::FAILED_PRECONDITION || code == grpc::StatusCode::INVALID_ARGUMENT;
}

// Cancels a call unless Stop() comes within `seconds` (a deadline for the
// first answer of a stream that then lives on without one).
class FirstAnswerTimer {
 public:
  FirstAnswerTimer(grpc::ClientContext* context, double seconds)
      : thread_([this, context, seconds] {
          std::unique_lock<std::mutex> lock(mu_);
          if (!cv_.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return done_; })) {
            fired_ = true;
            context->TryCancel();
          }
        }) {}
  ~FirstAnswerTimer() { Stop(); }
  // True when the timer fired.
  bool Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    return fired_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  bool fired_ = false;
  std::thread thread_;
};

void SleepUnlessStopped(const WorkerOptions& o, double secs) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(secs);
  while (!Stopped(o) && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

int RunWorker(const WorkerOptions& o) {
  const std::string name = o.name.empty() ? [] {
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    return std::string(host) + ":" + std::to_string(getpid());
  }() : o.name;
  std::vector<std::unique_ptr<Slot>> slots;
  for (int i = 0; i < std::max(1, o.slots); ++i) slots.push_back(std::make_unique<Slot>(o));

  grpc::ChannelArguments args;
  // gRPC's own reconnect backoff grows to two minutes by default; a worker
  // should find a restarted coordinator within its own backoff.
  const int max_backoff_ms = static_cast<int>(o.max_backoff_seconds * 1000);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 250);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 250);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, std::max(250, max_backoff_ms));
  auto channel = DialFarm(o.client, args);
  auto stub = v1::WorkerService::NewStub(channel);
  const std::string& farm = o.client.farm;
  double backoff = 0.25;
  while (!Stopped(o)) {
    grpc::ClientContext context;
    PrepareCall(o.client, &context, /*deadline=*/false);
    std::unique_ptr<Stream> stream = stub->Work(&context);
    auto session = std::make_shared<Session>();
    session->stream = stream.get();
    v1::WorkerMessage hello;
    v1::WorkerInfo* info = hello.mutable_hello();
    info->set_name(name);
    info->add_targets()->set_spec(o.target);
    info->set_fingerprint(o.fingerprint);
    info->set_slots(static_cast<int32_t>(slots.size()));
    info->set_version(KILN_VERSION_STRING);
    info->set_simulated(o.simulate);
    v1::CoordinatorMessage first;
    FirstAnswerTimer timer(&context, o.client.rpc_timeout_seconds);
    const bool registered = session->Write(hello) && stream->Read(&first) && first.has_registered();
    const bool timed_out = timer.Stop();
    if (!registered) {
      grpc::Status s = stream->Finish();
      if (Permanent(s.error_code())) {
        spdlog::error("worker: {}", DescribeFailure(farm, s));
        return 1;
      }
      spdlog::warn("worker: cannot register with {}: {}; retrying in {:.1f} s", farm,
                   timed_out ? "no answer in time" : s.ok() ? "no answer" : DescribeFailure(farm, s), backoff);
      SleepUnlessStopped(o, backoff);
      backoff = std::min(o.max_backoff_seconds, backoff * 2);
      continue;
    }
    backoff = 0.25;
    const v1::Registered reg = first.registered();
    spdlog::info("worker: registered with {} as {} in pool '{}'{}", farm, reg.worker_id(), reg.pool(),
                 o.simulate.empty() ? "" : " (SIMULATED: " + o.simulate + ", nothing is built or run)");

    std::vector<std::thread> threads;
    for (auto& slot : slots) {
      threads.emplace_back([&, s = slot.get()] {
        while (true) {
          v1::Lease lease;
          {
            std::unique_lock<std::mutex> lock(session->mu);
            session->cv.wait(lock, [&] { return session->closed || !session->queue.empty(); });
            if (session->closed) return;
            lease = std::move(session->queue.front());
            session->queue.pop_front();
          }
          search::MeasureResult r = s->Measure(lease.candidate());
          v1::WorkerMessage m;
          m.mutable_result()->set_lease_id(lease.lease_id());
          *m.mutable_result()->mutable_result() = ToProto(r);
          {
            std::lock_guard<std::mutex> lock(session->mu);
            session->held.erase(lease.lease_id());
            if (session->closed) return;
          }
          session->Write(m);
        }
      });
    }
    threads.emplace_back([&] {
      const auto period = std::chrono::duration<double>(std::max(0.05, reg.heartbeat_seconds()));
      std::unique_lock<std::mutex> lock(session->mu);
      while (!session->closed) {
        session->cv.wait_for(lock, period);
        if (session->closed) return;
        v1::WorkerMessage m;
        v1::Heartbeat* beat = m.mutable_heartbeat();  // sent when empty too: it says "alive"
        for (int64_t id : session->held) beat->add_lease_ids(id);
        lock.unlock();
        session->Write(m);
        lock.lock();
      }
    });
    // Ctrl-C ends the stream from here, so that the reader below wakes.
    std::thread stopper([&] {
      while (true) {
        {
          std::lock_guard<std::mutex> lock(session->mu);
          if (session->closed) return;
        }
        if (Stopped(o)) {
          context.TryCancel();
          return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });

    v1::CoordinatorMessage m;
    while (stream->Read(&m)) {
      if (m.has_lease()) {
        std::lock_guard<std::mutex> lock(session->mu);
        session->held.insert(m.lease().lease_id());
        session->queue.push_back(std::move(*m.mutable_lease()));
        session->cv.notify_all();
      }
      // Revoke: the candidate has its result elsewhere; a measurement in
      // progress cannot be cut short, and its result will be counted late.
    }
    {
      std::lock_guard<std::mutex> lock(session->mu);
      session->closed = true;
      session->cv.notify_all();
    }
    stopper.join();
    // Slots finish the measurement in progress (bounded by the timing
    // timeout) before the worker reconnects.
    for (auto& t : threads) t.join();
    grpc::Status s = stream->Finish();
    if (Stopped(o)) break;
    if (Permanent(s.error_code())) {
      spdlog::error("worker: {}", DescribeFailure(farm, s));
      return 1;
    }
    spdlog::warn("worker: lost the coordinator {} ({}); reconnecting in {:.1f} s", farm,
                 s.ok() ? "stream ended" : DescribeFailure(farm, s), backoff);
    SleepUnlessStopped(o, backoff);
    backoff = std::min(o.max_backoff_seconds, backoff * 2);
  }
  return 0;
}

}  // namespace kiln::rpc::farm
