// A client of the standard gRPC health service (grpc.health.v1.Health/Check)
// that the coordinator enables (grpc::EnableDefaultHealthCheckService), for
// `kiln farm health` and load balancers' probes. It goes through gRPC's
// generic stub with the two tiny messages encoded here by hand, so that no
// copy of health.proto is needed: HealthCheckRequest{service = 1} and
// HealthCheckResponse{status = 1: UNKNOWN 0, SERVING 1, NOT_SERVING 2}.
#pragma once

#include <grpcpp/grpcpp.h>

#include <string>

#include "rpc/farm/farm_client.h"

namespace kiln::rpc::farm {

struct HealthAnswer {
  grpc::Status status;      // the RPC's
  std::string serving;      // "SERVING", "NOT_SERVING", "UNKNOWN", ...
};

// Asks about `service` ("" for the server as a whole), with the client's
// TLS settings and deadline (the health service takes no token).
HealthAnswer CheckHealth(const FarmClientOptions& client, const std::string& service = "");

}  // namespace kiln::rpc::farm
