// kiln.v1.FarmService: the farm's state (workers and pools) and record
// queries against the coordinator's database, for build pipelines without a
// copy of it.
#pragma once

#include <string>

#include "ir/prim_func.h"
#include "kiln/v1/farm.grpc.pb.h"

namespace kiln::rpc::farm {

class Coordinator;

class FarmServiceImpl final : public v1::FarmService::Service {
 public:
  explicit FarmServiceImpl(Coordinator& c) : c_(c) {}
  grpc::Status Status(grpc::ServerContext* context, const v1::FarmStatusRequest* request,
                      v1::FarmStatusResponse* response) override;
  grpc::Status Query(grpc::ServerContext* context, const v1::QueryRequest* request,
                     v1::QueryResponse* response) override;

 private:
  Coordinator& c_;
};

struct ParsedQuery {
  ir::PrimFunc workload;
  std::string target;  // normalized
};
// Parses a query's workload text and target; throws std::invalid_argument
// naming the field.
ParsedQuery ParseQueryRequest(const v1::QueryRequest& request);

}  // namespace kiln::rpc::farm
