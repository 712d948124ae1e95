// farm_bench: the farm at scale on loopback. One coordinator (`kiln farm
// serve --allow-simulated`, its own process) and 256 simulated workers
// (`kiln worker --simulate`'s code, rpc/farm/worker.h, as threads in a few
// forked processes, one gRPC stream each) run several jobs with the replay
// strategy; the bench prints
//   - dispatch throughput: candidates measured per second of wall time,
//   - worker utilization: simulated measurement time over workers x wall,
//   - commit throughput: records per second of commit time (the
//     coordinator's kiln_farm_commit_seconds histogram: from a batch's last
//     result until its records are committed and the search, cost model
//     included, has taken them in) and per second of wall,
//   - coordinator overhead: the coordinator process's CPU time (search,
//     dispatch, gRPC, SQLite) per candidate,
// and whether the goals are met: utilization >= 90% with 50 ms measurements,
// overhead <= 1 ms per candidate, no lost or doubled record (the database
// holds exactly the trials asked for, one record per trace).
//
// Not a test: it needs minutes of CPU and its figures depend on the machine.
// Run: build/bench/farm_bench [--workers 256 --processes 4 --jobs 4 --trials 1024]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "codegen/llvm_backend.h"
#include "database/database.h"
#include "kiln/v1/farm.grpc.pb.h"
#include "rpc/farm/farm_client.h"
#include "rpc/farm/simulated_timing.h"
#include "rpc/farm/worker.h"

namespace {

using Clock = std::chrono::steady_clock;
std::atomic<bool> g_stop{false};
extern "C" void OnStop(int) { g_stop.store(true); }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// utime + stime of a process, in seconds.
double CpuSeconds(pid_t pid) {
  std::string stat = ReadAll("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream in(stat.substr(paren + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && in >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

pid_t Spawn(const std::string& cmd, const std::string& log) {
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    const std::string line = "exec " + cmd + " > " + log + " 2>&1";
    execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// A process of `n` simulated workers, each a thread with its own stream.
pid_t SpawnWorkers(const std::string& address, int first, int n, const std::string& model) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  std::signal(SIGTERM, OnStop);
  spdlog::set_level(spdlog::level::warn);
  kiln::rpc::farm::WorkerOptions o;
  o.client.farm = address;
  o.client.insecure = true;
  o.target = kiln::codegen::ResolveTarget("llvm -num-cores=1").ToString();
  o.fingerprint = "simulated " + model;
  o.slots = 1;
  o.simulate = model;
  o.stop = &g_stop;
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([o, i, first]() mutable {
      o.name = "sim-" + std::to_string(first + i);
      kiln::rpc::farm::RunWorker(o);
    });
  }
  for (auto& t : threads) t.join();
  _exit(0);
}

// The value of a metric line `name` (first match), or 0.
double Metric(const std::string& text, const std::string& name) {
  const size_t at = text.find("\n" + name + " ");
  if (at == std::string::npos) return 0;
  return std::stod(text.substr(at + name.size() + 2));
}

// GET /metrics over plain HTTP/1.0.
std::string HttpGet(const std::string& address) {
  const size_t colon = address.rfind(':');
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  inet_pton(AF_INET, address.substr(0, colon).c_str(), &a.sin_addr);
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  std::string out;
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    const std::string req = "GET /metrics HTTP/1.0\r\n\r\n";
    if (write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size())) {
      char buf[4096];
      ssize_t n;
      while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"farm_bench: one coordinator, many simulated workers on loopback"};
  int workers = 256, processes = 4, jobs = 4, threads = 0;
  int64_t trials = 1024;
  int per_iter = 256;
  std::string model = "fixed:50ms";
  std::string kiln = std::string(KILN_BINARY_DIR) + "/tools/kiln";
  app.add_option("--workers", workers, "Simulated workers (one slot each)")->check(CLI::Range(1, 4096));
  app.add_option("--processes", processes, "Processes the workers run in")->check(CLI::Range(1, 64));
  app.add_option("--jobs", jobs, "Jobs at once, one workload each")->check(CLI::Range(1, 8));
  app.add_option("--trials", trials, "Records per job")->check(CLI::Range(int64_t{1}, int64_t{1000000}));
  app.add_option("--trials-per-iter", per_iter, "Candidates per batch")->check(CLI::Range(1, 100000));
  app.add_option("--simulate", model, "The workers' timing model");
  app.add_option("--threads", threads, "The coordinator's sampling threads per job (0: every core)");
  app.add_option("--kiln", kiln, "The kiln binary");
  CLI11_PARSE(app, argc, argv);
  const double measure_seconds = kiln::rpc::farm::SimulatedTiming::Parse(model).Sample("");

  const auto dir = std::filesystem::temp_directory_path() / ("kiln_farm_bench_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string db = (dir / "farm.db").string();
  const std::string log = (dir / "coordinator.log").string();
  pid_t coordinator = Spawn(kiln + " farm serve --insecure --allow-simulated --listen 127.0.0.1:0 --metrics "
                                   "127.0.0.1:0 --threads " + std::to_string(threads) + " --db " + db,
                            log);
  std::string address, metrics;
  for (int i = 0; i < 600 && address.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const std::string out = ReadAll(log);
    const size_t at = out.find("listening on ");
    const size_t m = out.find("metrics at http://");
    if (at == std::string::npos || m == std::string::npos || out.find('\n', m) == std::string::npos) continue;
    address = out.substr(at + 13, out.find(' ', at + 13) - at - 13);
    metrics = out.substr(m + 18, out.find('/', m + 18) - m - 18);
  }
  if (address.empty()) {
    std::cerr << "farm_bench: the coordinator did not start:\n" << ReadAll(log);
    kill(coordinator, SIGKILL);
    return 1;
  }
  // Workers fork before this process touches gRPC.
  std::vector<pid_t> children;
  for (int p = 0; p < processes; ++p) {
    const int first = workers * p / processes, last = workers * (p + 1) / processes;
    children.push_back(SpawnWorkers(address, first, last - first, model));
  }

  kiln::rpc::farm::FarmClientOptions client;
  client.farm = address;
  client.insecure = true;
  auto channel = kiln::rpc::farm::DialFarm(client);
  auto farm = kiln::v1::FarmService::NewStub(channel);
  auto job_service = kiln::v1::JobService::NewStub(channel);
  int registered = 0;
  for (int i = 0; i < 1200 && registered < workers; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    grpc::ClientContext ctx;
    kiln::rpc::farm::PrepareCall(client, &ctx, true);
    kiln::v1::FarmStatusResponse st;
    if (farm->Status(&ctx, {}, &st).ok()) registered = st.workers_size();
  }
  std::cout << "farm_bench: " << registered << " simulated workers (" << model << ") in " << processes
            << " processes, coordinator " << address << "\n";

  const char* kWorkloads[] = {"GMM:0", "GMM:1", "C2D:0", "C1D:0", "DEP:0", "T2D:0", "GMM:2", "C3D:0"};
  const double cpu0 = CpuSeconds(coordinator);
  const auto t0 = Clock::now();
  for (int j = 0; j < jobs; ++j) {
    const std::string cmd = kiln + " submit --detach --insecure --farm " + address + " --workload " +
                            kWorkloads[j] + " --target 'llvm -num-cores=1' --strategy replay --trials " +
                            std::to_string(trials) + " --trials-per-iter " + std::to_string(per_iter) +
                            " --seed " + std::to_string(j + 1) + " > /dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) std::cerr << "farm_bench: submitting " << kWorkloads[j] << " failed\n";
  }
  int done = 0;
  bool failed = false;
  while (done < jobs && !failed) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    grpc::ClientContext ctx;
    kiln::rpc::farm::PrepareCall(client, &ctx, true);
    kiln::v1::ListJobsResponse list;
    if (!job_service->ListJobs(&ctx, {}, &list).ok()) continue;
    done = 0;
    for (const auto& j : list.jobs()) {
      if (j.state() == kiln::v1::JOB_STATE_DONE) ++done;
      if (j.state() == kiln::v1::JOB_STATE_FAILED || j.state() == kiln::v1::JOB_STATE_CANCELLED) {
        std::cerr << "farm_bench: job " << j.id() << " ended " << j.message() << "\n";
        failed = true;
      }
    }
    if (Clock::now() - t0 > std::chrono::minutes(9)) {
      std::cerr << "farm_bench: the jobs did not finish in 9 minutes\n";
      failed = true;
    }
  }
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  const double cpu = CpuSeconds(coordinator) - cpu0;
  const std::string text = HttpGet(metrics);

  for (pid_t c : children) kill(c, SIGTERM);
  for (pid_t c : children) waitpid(c, nullptr, 0);
  kill(coordinator, SIGTERM);
  waitpid(coordinator, nullptr, 0);

  int64_t records = 0, distinct = 0;
  double busy = 0;
  {
    kiln::database::Database d = kiln::database::Database::Open(db, kiln::database::Database::Mode::kReadOnly);
    std::set<std::pair<std::string, std::string>> keys;
    d.ForEachRecord([&](auto, const kiln::database::TuningRecord& r) {
      ++records;
      keys.insert({r.workload_hash, r.trace_hash});
      busy += r.median_seconds;
    });
    distinct = static_cast<int64_t>(keys.size());
  }
  const int64_t expected = trials * jobs;
  const double late = Metric(text, "kiln_farm_late_results_total");
  const double commit_sum = Metric(text, "kiln_farm_commit_seconds_sum");
  const double candidates = static_cast<double>(records) + late;
  const double utilization = (busy + late * measure_seconds) / (registered * wall);
  const double overhead_ms = candidates > 0 ? cpu / candidates * 1e3 : 0;

  std::printf("jobs: %d x %lld trials, %d candidates per batch; wall %.2f s\n", jobs,
              static_cast<long long>(trials), per_iter, wall);
  std::printf("dispatch throughput: %.0f candidates/s (ideal %.0f)\n", candidates / wall,
              registered / measure_seconds);
  std::printf("worker utilization: %.1f%%\n", 100 * utilization);
  std::printf("commit throughput: %.0f records/s of commit time (%.3f s committing, cost model update included), "
              "%.0f records/s of wall\n",
              commit_sum > 0 ? records / commit_sum : 0, commit_sum, records / wall);
  std::printf("coordinator overhead: %.3f ms CPU per candidate (%.2f s CPU, search included)\n", overhead_ms, cpu);
  std::printf("records: %lld in the database, %lld distinct, %lld asked for; %g late results dropped\n",
              static_cast<long long>(records), static_cast<long long>(distinct), static_cast<long long>(expected),
              late);
  const bool util_ok = utilization >= 0.9;
  const bool overhead_ok = overhead_ms <= 1.0;
  const bool records_ok = !failed && records == expected && distinct == records;
  std::printf("goal utilization >= 90%% with %s: %s\n", model.c_str(), util_ok ? "met" : "NOT met");
  std::printf("goal coordinator overhead <= 1 ms per candidate: %s\n", overhead_ok ? "met" : "NOT met");
  std::printf("goal no lost or doubled record: %s\n", records_ok ? "met" : "NOT met");
  std::filesystem::remove_all(dir);
  return records_ok ? 0 : 1;
}
