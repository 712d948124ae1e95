// kiln.v1.WorkerService: a worker's one bidirectional stream. The worker
// says hello (WorkerInfo), is registered into its pools, then receives
// leases as slots free up and sends heartbeats and results; when the stream
// ends (the worker quit, died or lost the network) its leases are re-queued.
#pragma once

#include "kiln/v1/farm.grpc.pb.h"

namespace kiln::rpc::farm {

class Coordinator;

class WorkerServiceImpl final : public v1::WorkerService::Service {
 public:
  explicit WorkerServiceImpl(Coordinator& c) : c_(c) {}
  grpc::Status Work(grpc::ServerContext* context,
                    grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::WorkerMessage>* stream) override;

 private:
  Coordinator& c_;
};

// Checks and normalizes a hello: targets parse (and are rewritten in their
// normalized form), a fingerprint, 1 to 1024 slots. Throws
// std::invalid_argument naming the field.
void ValidateWorkerInfo(v1::WorkerInfo* info);

}  // namespace kiln::rpc::farm
