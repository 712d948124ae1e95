#include "rpc/farm/call_gate.h"

#include <spdlog/spdlog.h>

namespace kiln::rpc::farm {

const char* CallKindName(CallKind k) {
  switch (k) {
    case CallKind::kWork: return "work";
    case CallKind::kSubmit: return "submit";
    case CallKind::kWatch: return "watch";
    case CallKind::kListJobs: return "list-jobs";
    case CallKind::kCancelJob: return "cancel-job";
    case CallKind::kStatus: return "status";
    case CallKind::kQuery: return "query";
  }
  return "unknown";
}

grpc::Status CallGate::Admit(grpc::ServerContext* context, CallKind kind) const {
  spdlog::debug("farm: {} from {}", CallKindName(kind), context->peer());
  if (shutting_down_.load()) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the coordinator is shutting down");
  }
  return grpc::Status::OK;
}

}  // namespace kiln::rpc::farm
