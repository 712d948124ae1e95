#include "rpc/farm/coordinator.h"

#include <google/protobuf/util/json_util.h>
#include <spdlog/spdlog.h>

#include <thread>

#include "database/record_json.h"
#include "rpc/farm/farm_client.h"
#include "rpc/farm/farm_service.h"
#include "rpc/farm/job_service.h"
#include "rpc/farm/worker_service.h"
#include "codegen/target_features.h"
#include "search/target_lookup.h"
#include "support/cores.h"

namespace kiln::rpc::farm {
namespace {

std::string SpecJson(const v1::TuningJob& job) {
  std::string out;
  auto status = google::protobuf::util::MessageToJsonString(job, &out);
  if (!status.ok()) throw std::runtime_error("cannot store the job: " + std::string(status.message()));
  return out;
}

v1::TuningJob SpecFromJson(const std::string& json, int64_t id) {
  v1::TuningJob job;
  auto status = google::protobuf::util::JsonStringToMessage(json, &job);
  if (!status.ok()) {
    throw std::runtime_error("job " + std::to_string(id) + " in the database: " + std::string(status.message()));
  }
  return job;
}

DispatcherOptions ToDispatcherOptions(const CoordinatorOptions& o) {
  DispatcherOptions d;
  d.lease_seconds = o.lease_seconds;
  d.reap_interval_seconds = std::min(0.2, o.lease_seconds / 4);
  return d;
}

std::string HostOf(const std::string& host_port) {
  const size_t colon = host_port.rfind(':');
  std::string host = colon == std::string::npos ? host_port : host_port.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return host;
}

}  // namespace

bool IsLoopbackAddress(const std::string& host_port) {
  const std::string host = HostOf(host_port);
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0 || host.rfind("ipv4:127.", 0) == 0;
}

std::vector<std::string> CheckSecurityOptions(const CoordinatorOptions& o) {
  std::vector<std::string> warnings;
  const bool tls = !o.tls_cert.empty() || !o.tls_key.empty();
  if (tls && (o.tls_cert.empty() || o.tls_key.empty())) {
    throw std::invalid_argument("--tls-cert and --tls-key go together (the certificate and its key)");
  }
  if (tls && o.insecure) throw std::invalid_argument("--insecure with --tls-cert: choose plaintext or TLS");
  if (!tls && !o.insecure) {
    throw std::invalid_argument("give --tls-cert and --tls-key (TLS), or --insecure for plaintext");
  }
  if (!o.client_ca.empty() && !tls) throw std::invalid_argument("--client-ca needs --tls-cert and --tls-key");
  if (o.insecure_any_address && !o.insecure && !o.auth_file.empty()) {
    throw std::invalid_argument("--insecure-any-address goes with --insecure or a farm without --auth");
  }
  const bool loopback = IsLoopbackAddress(o.listen);
  if (o.insecure) {
    if (!loopback && !o.insecure_any_address) {
      throw std::invalid_argument("--insecure serves plaintext, so it listens only on a loopback address (" +
                                  o.listen + " is not one); add --insecure-any-address to expose it anyway");
    }
    warnings.push_back("--insecure: plaintext gRPC; tokens and workloads cross the network unencrypted");
  }
  if (o.auth_file.empty()) {
    if (!loopback && !o.insecure_any_address) {
      throw std::invalid_argument("without --auth every caller is an admin, so the coordinator listens only on a "
                                  "loopback address (" + o.listen +
                                  " is not one); give --auth FILE, or add --insecure-any-address");
    }
    warnings.push_back("no --auth: every caller that reaches " + o.listen + " may submit jobs and work leases");
  }
  if (o.allow_simulated) {
    warnings.push_back("--allow-simulated: results of `kiln worker --simulate` are committed (for scale tests)");
  }
  return warnings;
}

Coordinator::Coordinator(CoordinatorOptions options)
    : options_(std::move(options)),
      dispatcher_(ToDispatcherOptions(options_)),
      gate_(&metrics_),
      db_(database::Database::Open(options_.db_path)) {
  if (options_.lease_seconds <= 0 || options_.heartbeat_seconds <= 0 ||
      options_.heartbeat_seconds >= options_.lease_seconds) {
    throw std::invalid_argument("the heartbeat (" + std::to_string(options_.heartbeat_seconds) +
                                " s) must be positive and shorter than the lease (" +
                                std::to_string(options_.lease_seconds) + " s)");
  }
  (void)CheckSecurityOptions(options_);
  if (!options_.auth_file.empty()) gate_.SetAuth(std::make_shared<AuthTable>(AuthTable::Load(options_.auth_file)));
}

std::string Coordinator::ReloadAuth() {
  if (options_.auth_file.empty()) return "the coordinator runs without --auth; nothing to reload";
  try {
    auto table = std::make_shared<AuthTable>(AuthTable::Load(options_.auth_file));
    const size_t n = table->principals().size();
    const int dropped = gate_.SetAuth(std::move(table));
    spdlog::warn("farm: reloaded {} ({} principal(s)); {} stream(s) ended", options_.auth_file, n, dropped);
    return "";
  } catch (const std::exception& e) {
    spdlog::error("farm: cannot reload the auth file, keeping the old one: {}", e.what());
    return e.what();
  }
}

std::string Coordinator::metrics_address() const {
  return metrics_server_ ? metrics_server_->address() : std::string();
}

Coordinator::~Coordinator() { Shutdown(); }

std::string Coordinator::Start() {
  // Jobs an earlier coordinator left unfinished resume first.
  // Stored targets in an older spelling are rewritten first, as `kiln tune`
  // does (search/target_lookup.h), so that resumed jobs count their records.
  std::vector<database::JobRow> rows;
  {
    std::lock_guard<std::mutex> lock(db_mu_);
    search::CanonicalizeStoredTargets(db_);
    rows = db_.Jobs();
  }
  for (const database::JobRow& row : rows) {
    if (row.state != "queued" && row.state != "running") continue;
    spdlog::info("resuming job {} ({})", row.id, row.state);
    v1::TuningJob spec = SpecFromJson(row.spec, row.id);
    try {
      spec.mutable_target()->set_spec(
          codegen::CanonicalTarget(ir::Target::Parse(spec.target().spec())).ToString());
    } catch (const std::exception& e) {
      spdlog::warn("job {}: its target '{}' has no canonical form here: {}", row.id,
                   spec.target().spec(), e.what());
    }
    StartJob(row.id, std::move(spec), row.principal);
  }

  services_.push_back(std::make_unique<WorkerServiceImpl>(*this));
  services_.push_back(std::make_unique<JobServiceImpl>(*this));
  services_.push_back(std::make_unique<FarmServiceImpl>(*this));
  std::shared_ptr<grpc::ServerCredentials> creds;
  if (options_.insecure) {
    creds = grpc::InsecureServerCredentials();
  } else {
    grpc::SslServerCredentialsOptions ssl(options_.client_ca.empty()
                                              ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                              : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    ssl.pem_key_cert_pairs.push_back({ReadFileOrThrow(options_.tls_key, "--tls-key"),
                                      ReadFileOrThrow(options_.tls_cert, "--tls-cert")});
    if (!options_.client_ca.empty()) ssl.pem_root_certs = ReadFileOrThrow(options_.client_ca, "--client-ca");
    creds = grpc::SslServerCredentials(ssl);
  }
  // grpc.health.v1.Health answers SERVING while the server runs.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(options_.listen, creds, &port);
  builder.SetMaxReceiveMessageSize(options_.max_message_bytes);
  // Workers hold a stream (and a handler thread) each; bound the threads so
  // that a flood of connections is refused rather than exhausting the host.
  grpc::ResourceQuota quota("kiln-farm");
  quota.SetMaxThreads(options_.max_workers + 256);
  builder.SetResourceQuota(quota);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 30000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 10000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  for (auto& s : services_) builder.RegisterService(s.get());
  server_ = builder.BuildAndStart();
  if (!server_ || port == 0) throw std::runtime_error("cannot listen on " + options_.listen);
  if (!options_.metrics_listen.empty()) {
    metrics_server_ = std::make_unique<MetricsServer>(options_.metrics_listen, [this] {
      v1::FarmStatusResponse st = dispatcher_.Status();
      st.set_jobs_running(JobsRunning());
      return metrics_.Render(st);
    });
  }
  const std::string host = options_.listen.substr(0, options_.listen.rfind(':'));
  return host + ":" + std::to_string(port);
}

void Coordinator::Shutdown() {
  if (shutting_down_.exchange(true)) return;
  gate_.BeginShutdown();
  {
    std::lock_guard<std::mutex> lock(jobs_mu_);
    for (auto& [id, job] : jobs_) job->stop.store(true);
  }
  dispatcher_.Close();
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  metrics_server_.reset();
  std::lock_guard<std::mutex> lock(jobs_mu_);
  for (auto& [id, job] : jobs_) {
    if (job->thread.joinable()) job->thread.join();
  }
}

void Coordinator::Wait() {
  if (server_) server_->Wait();
}

void Coordinator::StartJob(int64_t id, const v1::TuningJob& spec, const std::string& principal) {
  std::lock_guard<std::mutex> lock(jobs_mu_);
  auto handle = std::make_unique<JobHandle>(id, spec);
  v1::JobEvent first;
  first.set_job_id(id);
  first.set_state(v1::JOB_STATE_QUEUED);
  handle->Publish(first);
  JobRunContext ctx;
  ctx.dispatcher = &dispatcher_;
  ctx.db_path = options_.db_path;
  ctx.search_threads =
      options_.search_threads > 0 ? options_.search_threads : support::HardwareThreads();
  ctx.shutting_down = &shutting_down_;
  ctx.principal = principal;
  ctx.metrics = &metrics_;
  ctx.prior_model_files = options_.prior_model_files;
  JobHandle* h = handle.get();
  h->thread = std::thread([h, ctx, this] {
    RunJob(*h, ctx);
    dispatcher_.ForgetJob(h->id());
  });
  jobs_[id] = std::move(handle);
}

JobHandle* Coordinator::SubmitJob(const v1::TuningJob& job, const std::string& principal) {
  int64_t id;
  {
    std::lock_guard<std::mutex> lock(db_mu_);
    id = db_.CreateJob(SpecJson(job), job.priority(), JobStateName(v1::JOB_STATE_QUEUED), principal);
  }
  StartJob(id, job, principal);
  return FindJob(id);
}

std::optional<std::string> Coordinator::JobOwner(int64_t id) {
  std::lock_guard<std::mutex> lock(db_mu_);
  std::optional<database::JobRow> row = db_.Job(id);
  if (!row) return std::nullopt;
  return row->principal;
}

JobHandle* Coordinator::FindJob(int64_t id) {
  std::lock_guard<std::mutex> lock(jobs_mu_);
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second.get();
}

v1::JobInfo Coordinator::Info(const database::JobRow& row) {
  v1::JobInfo info;
  info.set_id(row.id);
  try {
    *info.mutable_job() = SpecFromJson(row.spec, row.id);
  } catch (const std::exception& e) {
    info.set_message(e.what());
  }
  info.set_state(ParseJobState(row.state));
  if (info.message().empty()) info.set_message(row.message);
  info.set_created_unix(row.created);
  info.set_pool(row.pool);
  // Records of its workloads on its target (the database's count, which a
  // job that shares them with another counts too).
  int64_t records = 0;
  try {
    const std::string target = database::NormalizeTarget(info.job().target().spec());
    for (const v1::JobWorkload& w : info.job().workloads()) {
      for (database::WorkloadId id : db_.FindWorkloadsByHash(w.workload().structural_hash())) {
        records += db_.CountRecords(id, target);
      }
    }
  } catch (const std::exception&) {
  }
  info.set_records(records);
  return info;
}

std::vector<v1::JobInfo> Coordinator::ListJobs(const std::string* owner) {
  std::lock_guard<std::mutex> lock(db_mu_);
  std::vector<v1::JobInfo> out;
  for (const database::JobRow& row : db_.Jobs()) {
    if (owner != nullptr && row.principal != *owner) continue;
    out.push_back(Info(row));
  }
  return out;
}

std::optional<v1::JobInfo> Coordinator::CancelJob(int64_t id) {
  std::optional<database::JobRow> row;
  {
    std::lock_guard<std::mutex> lock(db_mu_);
    row = db_.Job(id);
  }
  if (!row) return std::nullopt;
  if (JobHandle* h = FindJob(id); h != nullptr && !h->finished()) {
    h->cancelled.store(true);
    h->stop.store(true);
    dispatcher_.CancelJob(id, "job " + std::to_string(id) + " was cancelled");
    // The job's thread records the state once its batch has returned.
    for (int i = 0; i < 100 && !h->finished(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  } else if (row->state == "queued" || row->state == "running") {
    std::lock_guard<std::mutex> lock(db_mu_);
    db_.UpdateJob(id, JobStateName(v1::JOB_STATE_CANCELLED), "cancelled");
  }
  std::lock_guard<std::mutex> lock(db_mu_);
  return Info(*db_.Job(id));
}

int32_t Coordinator::JobsRunning() {
  std::lock_guard<std::mutex> lock(jobs_mu_);
  int32_t n = 0;
  for (const auto& [id, job] : jobs_) n += job->finished() ? 0 : 1;
  return n;
}

v1::QueryResponse Coordinator::Query(const v1::QueryRequest& request) {
  const ParsedQuery q = ParseQueryRequest(request);
  const ir::PrimFunc& func = q.workload;
  const std::string& target = q.target;
  std::lock_guard<std::mutex> lock(db_mu_);
  v1::QueryResponse out;
  auto id = db_.FindWorkload(func);
  // Any stored spelling of the target answers (search/target_lookup.h).
  search::TargetLookup found = search::FindBestRecord(db_, id.value_or(0), ir::Target::Parse(target));
  const std::optional<database::TuningRecord>& best = found.record;
  const database::MissReason& miss = found.miss;
  out.set_hit(best.has_value());
  if (best) out.set_record_json(database::RecordToJson(*best).dump());
  out.set_workload_known(miss.workload_known);
  out.set_records_any_target(miss.records_any_target);
  out.set_records_this_target(miss.records_this_target);
  out.set_usable_this_target(miss.usable_this_target);
  for (const std::string& t : miss.other_targets) out.add_other_targets(t);
  return out;
}

}  // namespace kiln::rpc::farm
