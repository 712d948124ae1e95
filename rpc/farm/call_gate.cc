#include "rpc/farm/call_gate.h"

#include <spdlog/spdlog.h>

#include "rpc/farm/farm_metrics.h"

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

bool RoleMay(Role role, CallKind kind) {
  switch (role) {
    case Role::kAdmin: return true;
    case Role::kWorker: return kind == CallKind::kWork;
    case Role::kSubmit:
      return kind == CallKind::kSubmit || kind == CallKind::kWatch || kind == CallKind::kCancelJob ||
             kind == CallKind::kListJobs || kind == CallKind::kStatus;
    case Role::kRead: return kind == CallKind::kQuery || kind == CallKind::kListJobs || kind == CallKind::kStatus;
  }
  return false;
}

namespace {

// The token of "authorization: Bearer TOKEN"; empty when absent or malformed.
std::string_view BearerToken(const grpc::ServerContext* context) {
  const auto& md = context->client_metadata();
  auto it = md.find(kAuthMetadataKey);
  if (it == md.end()) return {};
  std::string_view v(it->second.data(), it->second.size());
  constexpr std::string_view kPrefix = "Bearer ";
  if (v.substr(0, kPrefix.size()) != kPrefix) return {};
  return v.substr(kPrefix.size());
}

}  // namespace

grpc::Status CallGate::Admit(grpc::ServerContext* context, CallKind kind, Caller* caller) const {
  if (shutting_down_.load()) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the coordinator is shutting down");
  }
  std::shared_ptr<const AuthTable> table;
  {
    std::lock_guard<std::mutex> lock(mu_);
    table = table_;
  }
  Caller c;
  if (table) {
    const std::string_view token = BearerToken(context);
    if (token.empty()) {
      if (metrics_) metrics_->Refused("no_token");
      spdlog::info("farm: {} from {} refused: no bearer token", CallKindName(kind), context->peer());
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          "no bearer token (give --token-file or set KILN_TOKEN)");
    }
    std::optional<Principal> p = table->Find(token);
    if (!p) {
      if (metrics_) metrics_->Refused("bad_token");
      spdlog::info("farm: {} from {} refused: unknown token", CallKindName(kind), context->peer());
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "the bearer token is not one of this farm's");
    }
    c.principal = p->name;
    c.role = p->role;
    c.digest = p->digest;
    c.authenticated = true;
  }
  if (!RoleMay(c.role, kind)) {
    if (metrics_) metrics_->Refused("role");
    spdlog::info("farm: {} by '{}' ({}) refused", CallKindName(kind), c.principal, RoleName(c.role));
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, std::string("principal '") + c.principal +
                                                                 "' has the role " + RoleName(c.role) +
                                                                 ", which may not " + CallKindName(kind));
  }
  spdlog::debug("farm: {} by '{}' from {}", CallKindName(kind), c.principal, context->peer());
  if (caller) *caller = std::move(c);
  return grpc::Status::OK;
}

bool CallGate::StillAdmitted(const Stream& s) const {
  if (!table_) return true;
  if (!s.caller.authenticated) return false;  // admitted while the farm ran without --auth
  std::optional<Principal> p = table_->FindDigest(s.caller.digest);
  return p && p->name == s.caller.principal && RoleMay(p->role, s.kind);
}

int CallGate::SetAuth(std::shared_ptr<const AuthTable> table) {
  std::lock_guard<std::mutex> lock(mu_);
  table_ = std::move(table);
  int dropped = 0;
  for (auto& [id, s] : streams_) {
    if (StillAdmitted(s)) continue;
    spdlog::warn("farm: ending the {} stream of '{}': its token is no longer admitted", CallKindName(s.kind),
                 s.caller.principal);
    s.context->TryCancel();
    ++dropped;
  }
  return dropped;
}

bool CallGate::auth_enabled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return table_ != nullptr;
}

int64_t CallGate::RegisterStream(grpc::ServerContext* context, CallKind kind, const Caller& caller) {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t id = next_stream_++;
  streams_[id] = Stream{context, kind, caller};
  // A reload between Admit and here must not be missed.
  if (!StillAdmitted(streams_[id])) context->TryCancel();
  return id;
}

void CallGate::UnregisterStream(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  streams_.erase(id);
}

}  // namespace kiln::rpc::farm
