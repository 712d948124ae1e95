// The farm coordinator (`kiln farm serve`): owns the tuning database (this
// process is its only writer), runs every job's search (job_runner.h), hands
// candidates to workers as leases (dispatcher.h) and serves the three gRPC
// services of proto/kiln/v1/farm.proto. Every RPC passes the CallGate first.
//
// Security (README "Running a farm"): TLS with --tls-cert/--tls-key (mutual
// TLS with --client-ca), or plaintext with --insecure, which binds only to a
// loopback address unless --insecure-any-address. Bearer tokens and roles
// come from --auth FILE (rpc/farm/auth_file.h), reloaded by ReloadAuth
// (SIGHUP in `kiln farm serve`); without --auth every caller is an admin,
// which is allowed only on loopback (or with --insecure-any-address).
// Every queue is bounded: workers (max_workers), jobs queued or running
// (max_jobs), candidates per job (a job's batch), leases per worker (its
// slots, at most 1024).
//
// Jobs live in the database: on start, jobs left queued or running by an
// earlier coordinator (shut down or killed) are resumed; their Tune loops
// skip what is committed and measure the rest.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "database/database.h"
#include "kiln/v1/farm.pb.h"
#include "rpc/farm/call_gate.h"
#include "rpc/farm/dispatcher.h"
#include "rpc/farm/farm_metrics.h"
#include "rpc/farm/metrics_server.h"
#include "rpc/farm/job_runner.h"

namespace kiln::rpc::farm {

struct CoordinatorOptions {
  std::string listen = "127.0.0.1:0";  // gRPC address; port 0 picks a free one
  std::string db_path = "farm.db";
  double lease_seconds = 60;
  double heartbeat_seconds = 5;   // told to workers; well under lease_seconds
  int search_threads = 0;         // 0: every core
  int max_message_bytes = 64 << 20;  // larger requests are refused (RESOURCE_EXHAUSTED)
  int max_worker_message_bytes = 4 << 20;  // a worker's hello, heartbeat or result
  int max_workers = 4096;
  int max_jobs = 1024;  // queued or running

  std::string tls_cert, tls_key, client_ca;  // PEM files
  bool insecure = false;                     // plaintext (loopback only unless the next)
  bool insecure_any_address = false;
  std::string auth_file;                     // principals; empty: no authentication
  bool allow_simulated = false;              // accept `kiln worker --simulate` results
  std::string metrics_listen;                // HOST:PORT for /metrics; empty: none
  double hello_seconds = 30;                 // a worker must say hello this soon
  // Cost models a job's xgb model may start from (JobRunContext).
  std::vector<std::string> prior_model_files;
};

// Whether HOST:PORT names a loopback address (127.0.0.0/8, ::1, localhost).
bool IsLoopbackAddress(const std::string& host_port);
// Throws std::invalid_argument when the security flags do not fit together
// or would expose the farm (plaintext or no tokens on a non-loopback address
// without --insecure-any-address). Returns warnings to print.
std::vector<std::string> CheckSecurityOptions(const CoordinatorOptions& o);

class Coordinator {
 public:
  // Opens (migrating) the database and resumes its unfinished jobs; Start()
  // then serves. Throws on a bad database.
  explicit Coordinator(CoordinatorOptions options);
  ~Coordinator();
  // Binds and serves; returns the address it listens on (the real port).
  // Throws std::runtime_error when it cannot bind.
  std::string Start();
  // Stops serving and every job after its batch in flight; unfinished jobs
  // stay `running` in the database.
  void Shutdown();
  void Wait();

  // Reads the auth file again and installs it; streams of principals it
  // removed end, the others stay. On a bad file the old table stays and the
  // error is returned (empty on success).
  std::string ReloadAuth();
  // HOST:PORT of the metrics endpoint (empty without --metrics).
  std::string metrics_address() const;

  // For the services.
  CallGate& gate() { return gate_; }
  FarmMetrics& metrics() { return metrics_; }
  Dispatcher& dispatcher() { return dispatcher_; }
  const CoordinatorOptions& options() const { return options_; }
  // Stores and starts a job (validated by the caller); returns its handle.
  JobHandle* SubmitJob(const v1::TuningJob& job, const std::string& principal);
  // The principal that submitted a job ('' when unknown); nullopt: no job.
  std::optional<std::string> JobOwner(int64_t id);
  JobHandle* FindJob(int64_t id);
  // Every job, or only those `owner` submitted (a submit principal sees its
  // own jobs: another's job file names its workloads and budget).
  std::vector<v1::JobInfo> ListJobs(const std::string* owner = nullptr);
  // Cancels a job; nullopt when there is no such job.
  std::optional<v1::JobInfo> CancelJob(int64_t id);
  v1::QueryResponse Query(const v1::QueryRequest& request);  // throws std::invalid_argument for bad input
  int32_t JobsRunning();

 private:
  void StartJob(int64_t id, const v1::TuningJob& job, const std::string& principal);
  v1::JobInfo Info(const database::JobRow& row);

  const CoordinatorOptions options_;
  FarmMetrics metrics_;
  Dispatcher dispatcher_;
  CallGate gate_;
  std::unique_ptr<MetricsServer> metrics_server_;
  std::atomic<bool> shutting_down_{false};
  std::mutex db_mu_;
  database::Database db_;  // jobs table and queries; job threads open their own
  std::mutex jobs_mu_;
  std::map<int64_t, std::unique_ptr<JobHandle>> jobs_;
  std::vector<std::unique_ptr<grpc::Service>> services_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace kiln::rpc::farm
