// A farm on loopback for the integration tests: a real `kiln farm serve`
// and real `kiln worker` processes, each in its own process group so that
// teardown kills them and their kiln-runner children whatever happened.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "database/database.h"
#include "tests/common/run_kiln.h"

namespace kiln::testing {

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// `kiln ARGS` with a wall-clock bound (coreutils timeout), so that a test
// never waits forever on a job that does not end.
inline KilnResult RunKilnBounded(const std::string& args, int seconds = 240) {
  const std::string cmd = "timeout " + std::to_string(seconds) + " " + std::string(KILN_BINARY_DIR) +
                          "/tools/kiln " + args + " 2>&1";
  KilnResult r{-1, ""};
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class FarmCluster {
 public:
  explicit FarmCluster(std::string name) {
    dir_ = std::filesystem::temp_directory_path() / ("kiln_farm_" + std::to_string(getpid()) + "_" + name);
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~FarmCluster() {
    for (pid_t pid : all_) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGCONT);
    }
    for (pid_t pid : all_) ::waitpid(pid, nullptr, 0);
    std::filesystem::remove_all(dir_);
  }
  FarmCluster(const FarmCluster&) = delete;
  FarmCluster& operator=(const FarmCluster&) = delete;

  std::string db() const { return (dir_ / "farm.db").string(); }
  std::string path(const std::string& file) const { return (dir_ / file).string(); }
  const std::string& address() const { return address_; }
  const std::string& metrics_address() const { return metrics_address_; }

  // Starts the coordinator (on `listen`, port 0 by default) and waits until
  // it says where it listens. False if it does not within the bound.
  // `security`: plaintext on loopback unless a test gives TLS flags.
  bool StartCoordinator(const std::string& flags, const std::string& listen = "127.0.0.1:0",
                        const std::string& security = "--insecure") {
    const std::string log = path("coordinator" + std::to_string(coordinators_++) + ".log");
    coordinator_ = Spawn("farm serve --listen " + listen + " --db " + db() + " " + security + " " + flags, log);
    for (int i = 0; i < 600; ++i) {
      const std::string out = ReadAll(log);
      const size_t at = out.find("listening on ");
      if (at != std::string::npos && out.find('\n', at) != std::string::npos) {
        const size_t begin = at + 13;
        address_ = out.substr(begin, out.find(' ', begin) - begin);
        if (const size_t m = out.find("metrics at http://"); m != std::string::npos) {
          const size_t b = m + 18;
          metrics_address_ = out.substr(b, out.find('/', b) - b);
        }
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  pid_t coordinator() const { return coordinator_; }

  pid_t StartWorker(const std::string& flags, const std::string& security = "--insecure") {
    const std::string log = path("worker" + std::to_string(workers_.size()) + ".log");
    pid_t pid = Spawn("worker --farm " + address_ + " " + security + " " + flags, log);
    workers_.push_back(pid);
    return pid;
  }
  const std::vector<pid_t>& workers() const { return workers_; }

  // kill -9 of one process (not its group: its kiln-runner child is left to
  // notice, as after a real crash); reaped.
  void Kill(pid_t pid) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }

  // Records in the coordinator's database (0 while it is being created).
  int64_t Records() const {
    try {
      return database::Database::Open(db(), database::Database::Mode::kReadOnly).Size();
    } catch (const std::exception&) {
      return 0;
    }
  }
  bool WaitForRecords(int64_t n, int seconds = 240) const {
    for (int i = 0; i < seconds * 10; ++i) {
      if (Records() >= n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
  // Trace hashes of every record, and whether any repeats.
  std::pair<std::multiset<std::string>, bool> TraceHashes(const std::string& db_path = "") const {
    database::Database d =
        database::Database::Open(db_path.empty() ? db() : db_path, database::Database::Mode::kReadOnly);
    std::multiset<std::string> hashes;
    bool dup = false;
    d.ForEachRecord([&](auto, const database::TuningRecord& r) {
      dup |= hashes.count(r.trace_hash) > 0;
      hashes.insert(r.trace_hash);
    });
    return {hashes, dup};
  }
  std::string Logs() const {
    std::string s;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      if (e.path().extension() == ".log") s += "== " + e.path().filename().string() + "\n" + ReadAll(e.path());
    }
    return s;
  }

 private:
  pid_t Spawn(const std::string& args, const std::string& log) {
    pid_t pid = fork();
    if (pid == 0) {
      setpgid(0, 0);
      const std::string cmd = "exec " + std::string(KILN_BINARY_DIR) + "/tools/kiln " + args + " > " + log + " 2>&1";
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    setpgid(pid, pid);
    all_.push_back(pid);
    return pid;
  }

  std::filesystem::path dir_;
  std::string address_;
  std::string metrics_address_;
  pid_t coordinator_ = -1;
  int coordinators_ = 0;
  std::vector<pid_t> workers_;
  std::vector<pid_t> all_;
};

}  // namespace kiln::testing
