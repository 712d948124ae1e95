#include "rpc/farm/coordinator.h"

#include <google/protobuf/util/json_util.h>
#include <spdlog/spdlog.h>

#include <thread>

#include "database/record_json.h"
#include "rpc/farm/farm_service.h"
#include "rpc/farm/job_service.h"
#include "rpc/farm/worker_service.h"
#include "codegen/target_features.h"
#include "search/target_lookup.h"

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

}  // namespace

Coordinator::Coordinator(CoordinatorOptions options)
    : options_(std::move(options)),
      dispatcher_(ToDispatcherOptions(options_)),
      db_(database::Database::Open(options_.db_path)) {
  if (options_.lease_seconds <= 0 || options_.heartbeat_seconds <= 0 ||
      options_.heartbeat_seconds >= options_.lease_seconds) {
    throw std::invalid_argument("the heartbeat (" + std::to_string(options_.heartbeat_seconds) +
                                " s) must be positive and shorter than the lease (" +
                                std::to_string(options_.lease_seconds) + " s)");
  }
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
    StartJob(row.id, std::move(spec));
  }

  services_.push_back(std::make_unique<WorkerServiceImpl>(*this));
  services_.push_back(std::make_unique<JobServiceImpl>(*this));
  services_.push_back(std::make_unique<FarmServiceImpl>(*this));
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(options_.listen, grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(options_.max_message_bytes);
  for (auto& s : services_) builder.RegisterService(s.get());
  server_ = builder.BuildAndStart();
  if (!server_ || port == 0) throw std::runtime_error("cannot listen on " + options_.listen);
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
  std::lock_guard<std::mutex> lock(jobs_mu_);
  for (auto& [id, job] : jobs_) {
    if (job->thread.joinable()) job->thread.join();
  }
}

void Coordinator::Wait() {
  if (server_) server_->Wait();
}

void Coordinator::StartJob(int64_t id, const v1::TuningJob& spec) {
  std::lock_guard<std::mutex> lock(jobs_mu_);
  auto handle = std::make_unique<JobHandle>(id, spec);
  v1::JobEvent first;
  first.set_job_id(id);
  first.set_state(v1::JOB_STATE_QUEUED);
  handle->Publish(first);
  JobRunContext ctx;
  ctx.dispatcher = &dispatcher_;
  ctx.db_path = options_.db_path;
  ctx.search_threads = options_.search_threads > 0 ? options_.search_threads
                                                   : static_cast<int>(std::thread::hardware_concurrency());
  ctx.shutting_down = &shutting_down_;
  JobHandle* h = handle.get();
  h->thread = std::thread([h, ctx, this] {
    RunJob(*h, ctx);
    dispatcher_.ForgetJob(h->id());
  });
  jobs_[id] = std::move(handle);
}

JobHandle* Coordinator::SubmitJob(const v1::TuningJob& job) {
  int64_t id;
  {
    std::lock_guard<std::mutex> lock(db_mu_);
    id = db_.CreateJob(SpecJson(job), job.priority(), JobStateName(v1::JOB_STATE_QUEUED));
  }
  StartJob(id, job);
  return FindJob(id);
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

std::vector<v1::JobInfo> Coordinator::ListJobs() {
  std::lock_guard<std::mutex> lock(db_mu_);
  std::vector<v1::JobInfo> out;
  for (const database::JobRow& row : db_.Jobs()) out.push_back(Info(row));
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
