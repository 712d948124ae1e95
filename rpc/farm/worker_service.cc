#include "rpc/farm/worker_service.h"

#include <spdlog/spdlog.h>

#include <atomic>
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
}

grpc::Status WorkerServiceImpl::Work(
    grpc::ServerContext* context, grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::WorkerMessage>* stream) {
  if (grpc::Status s = c_.gate().Admit(context, CallKind::kWork); !s.ok()) return s;
  v1::WorkerMessage hello;
  if (!stream->Read(&hello)) return grpc::Status(grpc::StatusCode::CANCELLED, "no hello");
  if (!hello.has_hello()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the first message must be a hello (WorkerInfo)");
  }
  v1::WorkerInfo info = hello.hello();
  try {
    ValidateWorkerInfo(&info);
  } catch (const std::invalid_argument& e) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, e.what());
  }
  Dispatcher& d = c_.dispatcher();
  const std::string id = d.AddWorker(info);
  spdlog::info("worker {} ({}) joined: {} slot(s), {}", id, info.name(), info.slots(), info.targets(0).spec());
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
    if (m.has_heartbeat()) {
      d.Heartbeat(id, {m.heartbeat().lease_ids().begin(), m.heartbeat().lease_ids().end()});
    } else if (m.has_result()) {
      search::MeasureResult r;
      try {
        r = FromProto(m.result().result());
      } catch (const std::invalid_argument& e) {
        // A malformed result ends the stream; its lease is re-queued.
        status = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                              "result for lease " + std::to_string(m.result().lease_id()) + ": " + e.what());
        break;
      }
      ResultFate fate = d.PostResult(id, m.result().lease_id(), r);
      if (fate != ResultFate::kAccepted) {
        spdlog::info("worker {}: result for lease {} {}", id, m.result().lease_id(),
                     fate == ResultFate::kLate ? "came late (its candidate has a result)" : "refused");
      }
    } else {
      status = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "expected a heartbeat or a result");
      break;
    }
  }
  done.store(true);
  d.RemoveWorker(id);
  sender.join();
  spdlog::info("worker {} left", id);
  return status;
}

}  // namespace kiln::rpc::farm
