// CallGate: the one place every farm RPC passes before its handler runs
// (worker_service.cc, job_service.cc, farm_service.cc call Admit first), so
// that checking who calls (tokens and roles, issue 20) is added here and
// nowhere else. Today it refuses calls once the coordinator is shutting down
// and logs who called what.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <string_view>

namespace kiln::rpc::farm {

// What a caller asks to do; the role a call needs is decided per kind.
enum class CallKind {
  kWork,         // a worker's lease stream
  kSubmit,       // start a job
  kWatch,        // follow a job
  kListJobs,
  kCancelJob,
  kStatus,       // workers and pools
  kQuery,        // read records
};
const char* CallKindName(CallKind k);

class CallGate {
 public:
  // OK to proceed, or the status the handler returns as is.
  grpc::Status Admit(grpc::ServerContext* context, CallKind kind) const;
  void BeginShutdown() { shutting_down_.store(true); }

 private:
  std::atomic<bool> shutting_down_{false};
};

}  // namespace kiln::rpc::farm
