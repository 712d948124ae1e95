// The tuning farm from the command line: `kiln farm serve` (the
// coordinator), `kiln worker` (dials in and measures), `kiln submit` (sends
// a job and follows it), `kiln jobs` (list, watch, cancel) and `kiln farm
// status` (workers and pools). The work is in rpc/farm/; this file parses
// flags and prints. Clients share the TLS and token flags of
// tools/farm_client_flags.h.
#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "ir/structural_hash.h"
#include "ir/text/printer.h"
#include "kiln/v1/farm.grpc.pb.h"
#include "rpc/farm/coordinator.h"
#include "rpc/farm/health_check.h"
#include "rpc/farm/job_file.h"
#include "rpc/farm/job_runner.h"
#include "rpc/farm/simulated_timing.h"
#include "rpc/farm/worker.h"
#include "rpc/proto_convert.h"
#include "search/prior_model.h"
#include "tools/command_guard.h"
#include "tools/commands.h"
#include "tools/farm_client_flags.h"
#include "tools/progress_text.h"
#include "tools/target_spec.h"
#include "tools/tune_cli.h"
#include "tools/workload_spec.h"

namespace kiln::tools {
namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void OnFarmSignal(int) { g_interrupted.store(true); }

// SIGINT and SIGTERM set g_interrupted; the command polls it.
void CatchInterrupts() {
  g_interrupted.store(false);
  std::signal(SIGINT, OnFarmSignal);
  std::signal(SIGTERM, OnFarmSignal);
}

std::atomic<bool> g_reload{false};
extern "C" void OnFarmHangup(int) { g_reload.store(true); }

using rpc::farm::FarmClientOptions;

[[noreturn]] void RpcFailed(const std::string& farm, const grpc::Status& s) {
  throw std::runtime_error(rpc::farm::DescribeFailure(farm, s));
}

std::string ToJson(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::util::JsonPrintOptions o;
  o.add_whitespace = true;
  o.always_print_primitive_fields = true;
  (void)google::protobuf::util::MessageToJsonString(m, &out, o);
  return out;
}

search::TuneProgress FromJobProgress(const v1::JobProgress& p) {
  search::TuneProgress t{};
  t.trials_done = p.trials_done();
  t.trials_target = p.trials_target();
  t.best_gflops = p.best_gflops();
  t.best_secs = p.best_seconds();
  for (const auto& [k, v] : p.errors_by_kind()) t.errors_by_kind[k] = v;
  t.eta_secs = p.eta_seconds();
  return t;
}

// --- kiln farm serve ---------------------------------------------------------

struct ServeArgs {
  rpc::farm::CoordinatorOptions options;
  std::string prior_model = search::kAutoPriorModel;
  bool verbose = false;
};

int Serve(ServeArgs a) {
  spdlog::set_level(a.verbose ? spdlog::level::info : spdlog::level::warn);
  a.options.prior_model_files = PriorModelFiles(a.prior_model);
  for (const std::string& w : rpc::farm::CheckSecurityOptions(a.options)) {
    std::cerr << "kiln farm: warning: " << w << "\n";
  }
  rpc::farm::Coordinator coordinator(a.options);
  CatchInterrupts();
  g_reload.store(false);
  std::signal(SIGHUP, OnFarmHangup);
  const std::string address = coordinator.Start();
  std::cout << "kiln farm: listening on " << address << " (database " << a.options.db_path << ", "
            << (a.options.insecure ? "plaintext" : a.options.client_ca.empty() ? "TLS" : "mutual TLS") << ", "
            << (a.options.auth_file.empty() ? "no tokens" : "tokens from " + a.options.auth_file) << ")";
  if (!coordinator.metrics_address().empty()) {
    std::cout << "; metrics at http://" << coordinator.metrics_address() << "/metrics";
  }
  std::cout << std::endl;
  std::thread watcher([&] {
    while (!g_interrupted.load()) {
      // SIGHUP: the auth file is read again (the handler only sets a flag).
      if (g_reload.exchange(false)) {
        const std::string error = coordinator.ReloadAuth();
        if (error.empty()) std::cerr << "kiln farm: reloaded " << a.options.auth_file << std::endl;
        else std::cerr << "kiln farm: error: " << error << " (the old principals stay)" << std::endl;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::cerr << "kiln farm: shutting down; unfinished jobs resume on the next start\n";
    coordinator.Shutdown();
  });
  coordinator.Wait();
  g_interrupted.store(true);
  watcher.join();
  return 0;
}

// --- kiln worker -------------------------------------------------------------

struct WorkerArgs {
  FarmClientFlags client;
  std::string target = "host", name, simulate;
  int slots = 1;
  bool verbose = false;
};

int Worker(const WorkerArgs& a) {
  spdlog::set_level(a.verbose ? spdlog::level::debug : spdlog::level::info);
  const ir::Target target = ResolveTargetFlag(a.target);
  rpc::farm::WorkerOptions o;
  o.client = ResolveFarmClient(a.client);
  o.target = target.ToString();
  o.fingerprint = MachineFingerprint(target);
  o.simulate = a.simulate;
  if (!o.simulate.empty()) {
    (void)rpc::farm::SimulatedTiming::Parse(o.simulate);  // a bad model fails here, not per lease
    o.fingerprint = "simulated " + o.simulate;
  }
  o.slots = a.slots;
  o.name = a.name;
  o.runner.build_threads = 1;  // one candidate per lease: its build is serial anyway
  o.stop = &g_interrupted;
  CatchInterrupts();
  std::cerr << "kiln worker: serving '" << o.target << "' with " << a.slots << " slot(s) for " << o.client.farm
            << (o.simulate.empty() ? "" : " -- SIMULATED (" + o.simulate + "): nothing is built or run")
            << std::endl;
  return rpc::farm::RunWorker(o);
}

// --- kiln submit -------------------------------------------------------------

struct SubmitArgs {
  FarmClientFlags client;
  std::string job_file, target;
  std::vector<std::string> workloads;
  int64_t trials = 0;
  int64_t seed = -1;
  int trials_per_iter = 0, priority = 0;
  std::string strategy;
  double number = 0, repeat = 0, min_repeat_ms = -1, timeout = 0;
  bool detach = false, json = false;
};

v1::TuningJob BuildJob(const SubmitArgs& a) {
  v1::TuningJob job;
  if (!a.job_file.empty()) job = rpc::farm::ParseJobFile(a.job_file);
  if (!a.workloads.empty()) {
    job.clear_workloads();
    for (const std::string& w : a.workloads) job.add_workloads()->set_spec(w);
  }
  if (!a.target.empty()) job.mutable_target()->set_spec(a.target);
  if (job.target().spec().empty()) job.mutable_target()->set_spec("host");
  if (a.trials > 0) job.set_trials(a.trials);
  if (a.seed >= 0) job.set_seed(static_cast<uint64_t>(a.seed));
  if (job.seed() == 0 && a.seed < 0 && a.job_file.empty()) job.set_seed(1);  // kiln tune's default
  if (a.trials_per_iter > 0) job.mutable_strategy()->set_trials_per_iter(a.trials_per_iter);
  if (!a.strategy.empty()) job.mutable_strategy()->set_name(a.strategy);
  if (a.priority != 0) job.set_priority(a.priority);
  v1::TimingConfig* t = job.mutable_timing();
  if (a.number > 0) t->set_number(static_cast<int32_t>(a.number));
  if (a.repeat > 0) t->set_repeat(static_cast<int32_t>(a.repeat));
  if (a.min_repeat_ms >= 0) t->set_min_repeat_ms(a.min_repeat_ms);
  if (a.timeout > 0) t->set_timeout_s(a.timeout);
  // The client resolves what only it can see: suite names, its files, "host".
  for (v1::JobWorkload& w : *job.mutable_workloads()) {
    if (!w.workload().text().empty()) continue;
    ResolvedWorkload r = ResolveWorkload(w.spec());
    w.mutable_workload()->set_text(ir::ToText(r.func));
    w.mutable_workload()->set_structural_hash(ir::StructuralHashHex(r.func));
    w.mutable_workload()->set_name(r.label);
  }
  job.mutable_target()->set_spec(ResolveTargetFlag(job.target().spec()).ToString());
  rpc::farm::ValidateJob(job);
  return job;
}

// Follows a job's events on stderr; returns the exit code for its end.
int Follow(const FarmClientOptions& client, grpc::ClientContext& context,
           grpc::ClientReader<v1::JobEvent>& reader, bool detach, bool json) {
  const std::string& farm = client.farm;
  v1::JobEvent e;
  int64_t job_id = 0;
  std::string last_line;
  std::atomic<bool> finished{false};
  std::atomic<bool> answered{false};
  std::atomic<bool> no_answer{false};
  // The stream lives as long as the job; its first event must come within
  // the RPC deadline.
  const auto first_by = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(client.rpc_timeout_seconds * 1000));
  std::thread detacher([&] {
    while (!finished.load()) {
      if (g_interrupted.load()) {
        context.TryCancel();
        return;
      }
      if (!answered.load() && std::chrono::steady_clock::now() > first_by) {
        no_answer.store(true);
        context.TryCancel();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  auto stop_detacher = [&] {
    finished.store(true);
    detacher.join();
  };
  v1::JobEvent last;
  while (reader.Read(&e)) {
    answered.store(true);
    last = e;
    if (job_id == 0) {
      job_id = e.job_id();
      std::cerr << "kiln: job " << job_id << " on " << farm << std::endl;
      if (detach) {
        context.TryCancel();
        break;
      }
    }
    std::string line = e.has_progress() ? ProgressText(FromJobProgress(e.progress()))
                                         : std::string(rpc::farm::JobStateName(e.state()));
    if (!e.has_progress() && !e.message().empty()) line += ": " + e.message();
    if (line != last_line) std::cerr << line << std::endl;
    last_line = line;
    if (e.done()) break;
  }
  stop_detacher();
  grpc::Status s = reader.Finish();
  if (no_answer.load()) {
    throw std::runtime_error("farm " + farm + ": no answer within " + std::to_string(client.rpc_timeout_seconds) +
                             " s (--rpc-timeout)");
  }
  if (detach || (g_interrupted.load() && !last.done())) {
    if (job_id == 0) RpcFailed(farm, s);
    std::cerr << "kiln: detached from job " << job_id << "; it keeps running on the farm (watch it with "
              << "`kiln jobs watch " << job_id << " --farm " << farm << "`, cancel it with `kiln jobs cancel "
              << job_id << " --farm " << farm << "`)\n";
    if (json) std::cout << nlohmann::json{{"job_id", job_id}, {"detached", true}}.dump(2) << "\n";
    else if (detach) std::cout << job_id << "\n";
    return detach ? 0 : 130;
  }
  if (!s.ok()) RpcFailed(farm, s);
  if (!last.done()) throw std::runtime_error("farm " + farm + ": the event stream ended before the job did");
  // The workers' noise figures, as `kiln tune` reports its own.
  std::cerr << BusyMachineWarning(last.busy_measurements(), last.ok_measurements());
  if (json) {
    std::cout << ToJson(last) << "\n";
  } else {
    std::cout << "job " << last.job_id() << " " << rpc::farm::JobStateName(last.state()) << ": "
              << last.message() << "\n";
    if (last.has_best() && !last.best().trace_hash().empty()) {
      std::cout << "best: " << LatencyText(last.best().median_seconds()) << " (trace "
                << last.best().trace_hash() << ")\n";
    }
  }
  return last.state() == v1::JOB_STATE_DONE ? 0 : 1;
}

int Submit(const SubmitArgs& a) {
  v1::SubmitRequest req;
  *req.mutable_job() = BuildJob(a);
  const FarmClientOptions client = ResolveFarmClient(a.client);
  auto stub = v1::JobService::NewStub(rpc::farm::DialFarm(client));
  CatchInterrupts();
  grpc::ClientContext context;
  rpc::farm::PrepareCall(client, &context, /*deadline=*/false);
  auto reader = stub->Submit(&context, req);
  return Follow(client, context, *reader, a.detach, a.json);
}

// --- kiln jobs ---------------------------------------------------------------

struct JobsArgs {
  FarmClientFlags client;
  int64_t id = 0;
  bool json = false;
};

int ListJobs(const JobsArgs& a) {
  const FarmClientOptions client = ResolveFarmClient(a.client);
  auto stub = v1::JobService::NewStub(rpc::farm::DialFarm(client));
  grpc::ClientContext context;
  rpc::farm::PrepareCall(client, &context, /*deadline=*/true);
  v1::ListJobsResponse resp;
  grpc::Status s = stub->ListJobs(&context, v1::ListJobsRequest{}, &resp);
  if (!s.ok()) RpcFailed(client.farm, s);
  if (a.json) {
    std::cout << ToJson(resp) << "\n";
    return 0;
  }
  std::cout << std::left << std::setw(5) << "ID" << std::setw(11) << "STATE" << std::setw(5) << "PRI"
            << std::setw(14) << "RECORDS" << std::setw(24) << "WORKLOADS" << "MESSAGE\n";
  for (const v1::JobInfo& j : resp.jobs()) {
    std::string workloads;
    for (const auto& w : j.job().workloads()) {
      workloads += (workloads.empty() ? "" : ",") + (w.workload().name().empty() ? w.spec() : w.workload().name());
    }
    if (workloads.size() > 22) workloads = workloads.substr(0, 19) + "...";
    std::cout << std::left << std::setw(5) << j.id() << std::setw(11) << rpc::farm::JobStateName(j.state())
              << std::setw(5) << j.job().priority() << std::setw(14)
              << (std::to_string(j.records()) + "/" + std::to_string(j.job().trials())) << std::setw(24)
              << workloads << j.message() << "\n";
  }
  return 0;
}

int CancelJob(const JobsArgs& a) {
  const FarmClientOptions client = ResolveFarmClient(a.client);
  auto stub = v1::JobService::NewStub(rpc::farm::DialFarm(client));
  grpc::ClientContext context;
  rpc::farm::PrepareCall(client, &context, /*deadline=*/true);
  v1::CancelJobRequest req;
  req.set_job_id(a.id);
  v1::CancelJobResponse resp;
  grpc::Status s = stub->CancelJob(&context, req, &resp);
  if (!s.ok()) RpcFailed(client.farm, s);
  if (a.json) std::cout << ToJson(resp.job()) << "\n";
  else std::cout << "job " << a.id << ": " << rpc::farm::JobStateName(resp.job().state()) << "\n";
  return 0;
}

int WatchJob(const JobsArgs& a) {
  const FarmClientOptions client = ResolveFarmClient(a.client);
  auto stub = v1::JobService::NewStub(rpc::farm::DialFarm(client));
  CatchInterrupts();
  grpc::ClientContext context;
  rpc::farm::PrepareCall(client, &context, /*deadline=*/false);
  v1::WatchRequest req;
  req.set_job_id(a.id);
  auto reader = stub->Watch(&context, req);
  return Follow(client, context, *reader, false, a.json);
}

// --- kiln farm status --------------------------------------------------------

int Status(const FarmClientFlags& flags, bool json) {
  const FarmClientOptions client = ResolveFarmClient(flags);
  const std::string& farm = client.farm;
  auto stub = v1::FarmService::NewStub(rpc::farm::DialFarm(client));
  grpc::ClientContext context;
  rpc::farm::PrepareCall(client, &context, /*deadline=*/true);
  v1::FarmStatusResponse resp;
  grpc::Status s = stub->Status(&context, v1::FarmStatusRequest{}, &resp);
  if (!s.ok()) RpcFailed(farm, s);
  if (json) {
    std::cout << ToJson(resp) << "\n";
    return 0;
  }
  std::cout << "jobs running: " << resp.jobs_running() << "; leases expired: " << resp.leases_expired()
            << "; late results dropped: " << resp.late_results_dropped() << "\n\n";
  std::cout << std::left << std::setw(9) << "WORKERS" << std::setw(7) << "SLOTS" << std::setw(8) << "LEASED"
            << std::setw(8) << "QUEUED" << "POOL (target | fingerprint)\n";
  for (const v1::PoolStatus& p : resp.pools()) {
    std::cout << std::left << std::setw(9) << p.workers() << std::setw(7) << p.slots() << std::setw(8)
              << p.leases_in_flight() << std::setw(8) << p.queued() << p.target()
              << (p.fingerprint().empty() ? "" : " | " + p.fingerprint()) << "\n";
  }
  std::cout << "\n" << std::left << std::setw(8) << "WORKER" << std::setw(7) << "SLOTS" << std::setw(8)
            << "LEASED" << std::setw(9) << "RESULTS" << "NAME\n";
  for (const v1::WorkerStatus& w : resp.workers()) {
    std::cout << std::left << std::setw(8) << w.worker_id() << std::setw(7) << w.info().slots() << std::setw(8)
              << w.leases_in_flight() << std::setw(9) << w.results() << w.info().name() << "\n";
  }
  return 0;
}

// --- kiln farm health --------------------------------------------------------

int Health(const FarmClientFlags& flags) {
  const FarmClientOptions client = ResolveFarmClient(flags);
  rpc::farm::HealthAnswer h = rpc::farm::CheckHealth(client);
  if (!h.status.ok()) RpcFailed(client.farm, h.status);
  std::cout << h.serving << "\n";
  return h.serving == "SERVING" ? 0 : 1;
}

void AddTimingFlags(CLI::App* cmd, SubmitArgs& a) {
  cmd->add_option("--number", a.number, "Calls per timed repeat (default 3)");
  cmd->add_option("--repeat", a.repeat, "Timed repeats (default 1)");
  cmd->add_option("--min-repeat-ms", a.min_repeat_ms, "Grow --number until a repeat lasts this long (default 100)");
  cmd->add_option("--timeout", a.timeout, "Seconds per candidate before it is killed (default 30)");
}

}  // namespace

void RegisterFarmCommands(CLI::App& app, int* exit_code) {
  auto* farm = app.add_subcommand("farm", "The tuning farm's coordinator and its state");
  farm->require_subcommand(1);

  auto sa = std::make_shared<ServeArgs>();
  auto* serve = farm->add_subcommand("serve", "Run the coordinator: jobs, leases, the database");
  serve->add_option("--listen", sa->options.listen, "gRPC address (port 0: pick a free one)")
      ->capture_default_str();
  serve->add_option("--db", sa->options.db_path, "Tuning database (created if missing)")->capture_default_str();
  serve->add_option("--lease-seconds", sa->options.lease_seconds, "A lease not renewed this long is re-queued")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
  serve->add_option("--heartbeat-seconds", sa->options.heartbeat_seconds, "How often workers renew leases")
      ->check(CLI::Range(0.01, 3600.0))
      ->capture_default_str();
  serve
      ->add_option("--prior-model", sa->prior_model,
                   "Cost models an evolutionary job's model may start from: 'auto' (those of "
                   "configs/models/), 'none', or a name or file; a job uses the first trained "
                   "on a CPU with its target's vector units")
      ->capture_default_str();
  serve->add_option("--threads", sa->options.search_threads, "Sampling threads per job (0: every core)")
      ->check(CLI::Range(0, 4096));
  serve->add_option("--tls-cert", sa->options.tls_cert, "Server certificate chain (PEM)");
  serve->add_option("--tls-key", sa->options.tls_key, "The certificate's private key (PEM)");
  serve->add_option("--client-ca", sa->options.client_ca,
                    "CA (PEM) that client certificates must chain to: mutual TLS");
  serve->add_flag("--insecure", sa->options.insecure,
                  "Plaintext gRPC instead of TLS; listens only on loopback unless --insecure-any-address");
  serve->add_flag("--insecure-any-address", sa->options.insecure_any_address,
                  "Allow --insecure, or running without --auth, on a non-loopback address");
  serve->add_option("--auth", sa->options.auth_file,
                    "Principals file: NAME ROLE TOKEN per line (roles worker, submit, read, admin); "
                    "re-read on SIGHUP");
  serve->add_flag("--allow-simulated", sa->options.allow_simulated,
                  "Accept workers started with --simulate (scale tests; their records are marked unverified)");
  serve->add_option("--metrics", sa->options.metrics_listen,
                    "Serve Prometheus metrics at http://HOST:PORT/metrics");
  serve->add_option("--max-workers", sa->options.max_workers, "Workers connected at most")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  serve->add_option("--max-jobs", sa->options.max_jobs, "Unfinished jobs at most")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  serve->add_flag("--verbose,-v", sa->verbose, "Log workers, leases and jobs");
  serve->callback([=] { Guard(exit_code, [&] { return Serve(*sa); }); });

  auto st = std::make_shared<std::pair<FarmClientFlags, bool>>();
  auto* status = farm->add_subcommand("status", "Workers and device pools, as a table or JSON");
  AddFarmClientFlags(status, st->first);
  status->add_flag("--json", st->second, "Print JSON");
  status->callback([=] { Guard(exit_code, [&] { return Status(st->first, st->second); }); });

  auto hf = std::make_shared<FarmClientFlags>();
  auto* health = farm->add_subcommand("health", "Ask the coordinator's grpc.health.v1 service (exit 0: SERVING)");
  AddFarmClientFlags(health, *hf);
  health->callback([=] { Guard(exit_code, [&] { return Health(*hf); }); });

  auto wa = std::make_shared<WorkerArgs>();
  auto* worker = app.add_subcommand("worker", "Dial a coordinator and measure its leases here");
  AddFarmClientFlags(worker, wa->client);
  worker->add_option("--simulate", wa->simulate,
                     "Measure nothing: sleep and report synthetic times from MODEL, fixed:D or "
                     "lognormal:D,SIGMA (e.g. fixed:50ms); for scale tests");
  worker->add_option("--target", wa->target, "What this worker measures for: 'host' or a target string")
      ->capture_default_str();
  worker->add_option("--slots", wa->slots, "Leases measured at once")->check(CLI::Range(1, 1024))->capture_default_str();
  worker->add_option("--name", wa->name, "Name shown in `kiln farm status` (default host:pid)");
  worker->add_flag("--verbose,-v", wa->verbose, "Log more");
  worker->callback([=] { Guard(exit_code, [&] { return Worker(*wa); }); });

  auto su = std::make_shared<SubmitArgs>();
  auto* submit = app.add_subcommand("submit", "Send a tuning job to the farm and follow its progress");
  AddFarmClientFlags(submit, su->client);
  submit->add_option("--workload,-w", su->workloads, "Suite name (GMM, GMM:3) or a text file; repeatable");
  submit->add_option("--target", su->target, "Target: 'host' (this machine) or a target string");
  submit->add_option("--trials", su->trials, "Records the database should hold (split by weight)")
      ->check(CLI::Range(int64_t{1}, int64_t{100000000}));
  submit->add_option("--job", su->job_file, "Job file (kiln.v1.TuningJob, text format or .json)");
  submit->add_option("--seed", su->seed, "Search seed (default 1, as kiln tune)");
  submit->add_option("--trials-per-iter", su->trials_per_iter, "Candidates per batch (default 16)")
      ->check(CLI::Range(1, 100000));
  submit->add_option(
      "--strategy", su->strategy,
      "Search strategy: 'evolutionary' (the default: ranked by an XGBoost model that "
      "learns from every record of the target in the farm's database) or 'replay'");
  submit->add_option("--priority", su->priority, "Higher runs first; equal priorities share workers");
  AddTimingFlags(submit, *su);
  submit->add_flag("--detach", su->detach, "Print the job id and return; the job runs on");
  submit->add_flag("--json", su->json, "Print the final event as JSON");
  submit->callback([=] {
    Guard(exit_code, [&] {
      if (su->workloads.empty() && su->job_file.empty()) throw std::runtime_error("give --workload or --job");
      return Submit(*su);
    });
  });

  auto ja = std::make_shared<JobsArgs>();
  auto* jobs = app.add_subcommand("jobs", "List the farm's jobs; `jobs watch|cancel ID`");
  AddFarmClientFlags(jobs, ja->client);
  jobs->add_flag("--json", ja->json, "Print JSON");
  jobs->require_subcommand(0, 1);
  jobs->fallthrough();
  auto* cancel = jobs->add_subcommand("cancel", "Cancel a job (its committed records stay)");
  cancel->add_option("id", ja->id, "Job id")->required();
  auto* watch = jobs->add_subcommand("watch", "Follow a job's progress (Ctrl-C detaches)");
  watch->add_option("id", ja->id, "Job id")->required();
  jobs->callback([=] {
    Guard(exit_code, [&] {
      if (cancel->parsed()) return CancelJob(*ja);
      if (watch->parsed()) return WatchJob(*ja);
      return ListJobs(*ja);
    });
  });
}

}  // namespace kiln::tools
