#include "rpc/farm/worker_service.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "ir/target.h"
#include "rpc/farm/coordinator.h"
#include "rpc/proto_convert.h"

namespace kiln::rpc::farm {

void ValidateWorkerInfo(v1::WorkerInfo* info) {
  if (info->targets_size() == 0) throw std::invalid_argument("hello.targets: none");
  if (info->targets_size() > 64) throw std::invalid_argument("hello.targets: more than 64");
  for (int i = 0; i < info->targets_size(); ++i) {
    try {
      info->mutable_targets(i)->set_spec(ir::Target::Parse(info->targets(i).spec()).ToString());
    } catch (const std::exception& e) {
      throw std::invalid_argument("hello.targets[" + std::to_string(i) + "]: " + e.what());
    }
  }
  if (info->fingerprint().empty()) throw std::invalid_argument("hello.fingerprint: empty");
  if (info->fingerprint().size() > 4096) throw std::invalid_argument("hello.fingerprint: longer than 4096 bytes");
  if (info->slots() < 1 || info->slots() > 1024) {
    throw std::invalid_argument("hello.slots: " + std::to_string(info->slots()) + " (1 to 1024)");
  }
  if (info->name().size() > 256) throw std::invalid_argument("hello.name: longer than 256 bytes");
  if (info->simulated().size() > 256) throw std::invalid_argument("hello.simulated: longer than 256 bytes");
}

namespace {

// Ends a stream whose peer does not say hello in time: a connection that
// only holds a handler thread is dropped.
class HelloTimer {
 public:
  HelloTimer(grpc::ServerContext* context, double seconds)
      : thread_([this, context, seconds] {
          std::unique_lock<std::mutex> lock(mu_);
          if (!cv_.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return done_; })) {
            context->TryCancel();
          }
        }) {}
  ~HelloTimer() { Stop(); }
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace

grpc::Status WorkerServiceImpl::Work(
    grpc::ServerContext* context, grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::WorkerMessage>* stream) {
  Caller caller;
  if (grpc::Status s = c_.gate().Admit(context, CallKind::kWork, &caller); !s.ok()) return s;
  StreamTicket ticket(c_.gate(), context, CallKind::kWork, caller);
  FarmMetrics& metrics = c_.metrics();
  const size_t max_bytes = static_cast<size_t>(c_.options().max_worker_message_bytes);
  auto too_large = [&](const v1::WorkerMessage& m) {
    if (m.ByteSizeLong() <= max_bytes) return false;
    metrics.Refused("too_large");
    return true;
  };
  v1::WorkerMessage hello;
  {
    HelloTimer timer(context, c_.options().hello_seconds);
    if (!stream->Read(&hello)) return grpc::Status(grpc::StatusCode::CANCELLED, "no hello");
  }
  if (too_large(hello)) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "the hello is larger than " + std::to_string(max_bytes) + " bytes");
  }
  if (!hello.has_hello()) {
    metrics.Refused("invalid");
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the first message must be a hello (WorkerInfo)");
  }
  v1::WorkerInfo info = hello.hello();
  try {
    ValidateWorkerInfo(&info);
  } catch (const std::invalid_argument& e) {
    metrics.Refused("invalid");
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, e.what());
  }
  if (!info.simulated().empty() && !c_.options().allow_simulated) {
    metrics.Refused("simulated");
    spdlog::warn("worker {} ('{}') refused: it simulates ({})", info.name(), caller.principal, info.simulated());
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "this worker simulates its timings (" + info.simulated() +
                            "); the coordinator accepts simulated results only with --allow-simulated");
  }
  Dispatcher& d = c_.dispatcher();
  if (d.WorkerCount() >= c_.options().max_workers) {
    metrics.Refused("too_many");
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "the farm has its maximum of " + std::to_string(c_.options().max_workers) + " workers");
  }
  const std::string id = d.AddWorker(info);
  spdlog::info("worker {} ({}, principal '{}') joined: {} slot(s), {}{}", id, info.name(), caller.principal,
               info.slots(), info.targets(0).spec(),
               info.simulated().empty() ? "" : ", SIMULATED " + info.simulated());
  v1::CoordinatorMessage registered;
  registered.mutable_registered()->set_worker_id(id);
  registered.mutable_registered()->set_lease_seconds(c_.options().lease_seconds);
  registered.mutable_registered()->set_heartbeat_seconds(c_.options().heartbeat_seconds);
  registered.mutable_registered()->set_pool(PoolKey(info.targets(0).spec(), info.fingerprint()));
  if (!stream->Write(registered)) {
    d.RemoveWorker(id);
    return grpc::Status(grpc::StatusCode::CANCELLED, "the worker left");
  }

  // Leases go out on this thread while the handler's thread reads.
  std::atomic<bool> done{false};
  std::thread sender([&] {
    while (!done.load() && !context->IsCancelled()) {
      std::optional<LeaseGrant> g = d.NextLease(id, std::chrono::milliseconds(200));
      if (!g) continue;
      v1::CoordinatorMessage m;
      v1::Lease* lease = m.mutable_lease();
      lease->set_lease_id(g->lease_id);
      lease->set_job_id(g->job_id);
      *lease->mutable_candidate() = std::move(g->candidate);
      if (!stream->Write(m)) break;  // RemoveWorker below re-queues the lease
    }
  });

  grpc::Status status = grpc::Status::OK;
  v1::WorkerMessage m;
  while (stream->Read(&m)) {
    if (too_large(m)) {
      status = grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                            "a message larger than " + std::to_string(max_bytes) + " bytes");
      break;
    }
    if (m.has_heartbeat()) {
      d.Heartbeat(id, {m.heartbeat().lease_ids().begin(), m.heartbeat().lease_ids().end()});
    } else if (m.has_result()) {
      const int64_t lease_id = m.result().lease_id();
      search::MeasureResult r;
      try {
        r = FromProto(m.result().result());
      } catch (const std::invalid_argument& e) {
        // A malformed result ends the stream; its lease is re-queued.
        metrics.Refused("invalid");
        status = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                              "result for lease " + std::to_string(lease_id) + ": " + e.what());
        break;
      }
      const ResultFate fate = d.PostResult(id, lease_id, r);
      if (fate == ResultFate::kForeign || fate == ResultFate::kUnknown) {
        // Not this worker's lease: a forged or confused result. Nothing is
        // committed; the stream ends so that its leases go to others.
        const bool foreign = fate == ResultFate::kForeign;
        metrics.Refused(foreign ? "foreign_lease" : "unknown_lease");
        spdlog::warn("worker {} (principal '{}'): result for lease {} refused: {}", id, caller.principal, lease_id,
                     foreign ? "another worker's lease" : "no such lease");
        status = grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                              "lease " + std::to_string(lease_id) +
                                  (foreign ? " is another worker's" : " was never issued"));
        break;
      }
      metrics.Result(search::MeasureStatusName(r.status));
      if (fate != ResultFate::kAccepted) {
        spdlog::info("worker {}: result for lease {} {}", id, lease_id,
                     fate == ResultFate::kLate ? "came late (its candidate has a result)"
                                               : "is stale (the lease was re-queued and settled)");
      }
    } else {
      metrics.Refused("invalid");
      status = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "expected a heartbeat or a result");
      break;
    }
  }
  done.store(true);
  d.RemoveWorker(id);
  sender.join();
  spdlog::info("worker {} left", id);
  if (status.ok() && context->IsCancelled()) {
    status = grpc::Status(grpc::StatusCode::CANCELLED, "the stream was ended by the coordinator");
  }
  return status;
}

}  // namespace kiln::rpc::farm
