// CallGate: the one place every farm RPC passes before its handler runs
// (worker_service.cc, job_service.cc, farm_service.cc call Admit first). It
// refuses calls once the coordinator is shutting down, authenticates the
// caller's bearer token against the principals of the auth file
// (rpc/farm/auth_file.h) and checks that the principal's role may make the
// call. It also keeps the long-lived streams (workers, job watchers) it
// admitted, so that a reloaded auth file (SIGHUP) ends the streams of
// principals it removed or demoted and leaves the others connected.
//
// Without an auth table (no --auth) every caller is the principal
// "anonymous" with the admin role; the coordinator allows that only on a
// loopback address (rpc/farm/coordinator.cc).
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "rpc/farm/auth_file.h"

namespace kiln::rpc::farm {

class FarmMetrics;

// What a caller asks to do; the role a call needs is decided per kind.
enum class CallKind {
  kWork,         // a worker's lease stream
  kSubmit,       // start a job
  kWatch,        // follow a job (submit: its own only)
  kListJobs,
  kCancelJob,    // submit: its own only; admin: any
  kStatus,       // workers and pools
  kQuery,        // read records
};
const char* CallKindName(CallKind k);
// Whether a role may make a kind of call at all (ownership is the handler's).
bool RoleMay(Role role, CallKind kind);

struct Caller {
  std::string principal = "anonymous";
  Role role = Role::kAdmin;
  TokenDigest digest{};
  bool authenticated = false;  // false when the coordinator runs without --auth
};

// The metadata key clients send the token under: "authorization: Bearer T".
inline constexpr const char* kAuthMetadataKey = "authorization";

class CallGate {
 public:
  explicit CallGate(FarmMetrics* metrics = nullptr) : metrics_(metrics) {}

  // OK to proceed (with *caller filled), or the status the handler returns
  // as is: UNAVAILABLE (shutting down), UNAUTHENTICATED (no or unknown
  // token), PERMISSION_DENIED (the role may not make this call).
  grpc::Status Admit(grpc::ServerContext* context, CallKind kind, Caller* caller) const;

  // Installs a new table (nullptr: no authentication). Streams whose
  // principal's token is gone, or whose role may no longer make their call,
  // are cancelled; returns how many.
  int SetAuth(std::shared_ptr<const AuthTable> table);
  bool auth_enabled() const;

  // Long-lived streams: registered after Admit, unregistered before the
  // handler returns (StreamTicket does both).
  int64_t RegisterStream(grpc::ServerContext* context, CallKind kind, const Caller& caller);
  void UnregisterStream(int64_t id);

  void BeginShutdown() { shutting_down_.store(true); }

 private:
  struct Stream {
    grpc::ServerContext* context;
    CallKind kind;
    Caller caller;
  };
  bool StillAdmitted(const Stream& s) const;  // mu_ held

  FarmMetrics* metrics_;
  std::atomic<bool> shutting_down_{false};
  mutable std::mutex mu_;
  std::shared_ptr<const AuthTable> table_;
  int64_t next_stream_ = 1;
  std::map<int64_t, Stream> streams_;
};

// RAII registration of a stream with the gate.
class StreamTicket {
 public:
  StreamTicket(CallGate& gate, grpc::ServerContext* context, CallKind kind, const Caller& caller)
      : gate_(gate), id_(gate.RegisterStream(context, kind, caller)) {}
  ~StreamTicket() { gate_.UnregisterStream(id_); }
  StreamTicket(const StreamTicket&) = delete;
  StreamTicket& operator=(const StreamTicket&) = delete;

 private:
  CallGate& gate_;
  int64_t id_;
};

}  // namespace kiln::rpc::farm
