// Acceptance: a process SIGKILLed mid-stream loses nothing it committed, and
// two processes committing at once lose nothing.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <set>

#include "database/database.h"
#include "ir/workloads/suite.h"

namespace kiln::database {
namespace {

const char* kTarget = "llvm -mcpu=skylake-avx512";

TuningRecord Rec(int writer, int i) {
  TuningRecord r;
  r.target = kTarget;
  r.trace_json = "{\"writer\":" + std::to_string(writer) + ",\"i\":" + std::to_string(i) + "}";
  r.run_seconds = {1.0 + i};
  r.verified = true;
  return r;
}

void RemoveDb(const std::string& p) {
  for (const char* s : {"", "-wal", "-shm"}) std::remove((p + s).c_str());
}

std::string Path(const std::string& tag) {
  std::string p = testing::TempDir() + "kiln_crash_" + tag + std::to_string(getpid()) + ".db";
  RemoveDb(p);
  return p;
}

// Removes the database when the test ends (a forked child leaves through
// _exit or a signal and never runs it).
struct RemoveAtEnd {
  std::string path;
  ~RemoveAtEnd() { RemoveDb(path); }
};

TEST(Crash, SigkillMidStreamKeepsEveryCommittedRecord) {
  std::string path = Path("kill");
  RemoveAtEnd cleanup{path};
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    Database db = Database::Open(path);
    WorkloadId w = db.CommitWorkload(ir::MakeWorkload("GMM", 0));
    for (int i = 0;; ++i) {
      db.CommitRecord(w, Rec(0, i));
      // Reported only after the commit returned.
      if (write(fds[1], &i, sizeof i) != sizeof i) _exit(2);
    }
  }
  close(fds[1]);
  std::vector<int> committed;
  int id;
  while (committed.size() < 300 && read(fds[0], &id, sizeof id) == sizeof id) committed.push_back(id);
  kill(child, SIGKILL);
  // Drain what the child reported before it died.
  while (read(fds[0], &id, sizeof id) == sizeof id) committed.push_back(id);
  close(fds[0]);
  int status;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  Database db = Database::Open(path);
  EXPECT_EQ(db.IntegrityCheck(), "ok");
  auto w = db.FindWorkload(ir::MakeWorkload("GMM", 0));
  ASSERT_TRUE(w.has_value());
  for (int i : committed) {
    ASSERT_TRUE(db.HasRecord(*w, kTarget, TraceHash(CanonicalTraceJson(Rec(0, i).trace_json))))
        << "record " << i << " was committed before the kill but is missing";
  }
  EXPECT_GE(db.Size(), static_cast<int64_t>(committed.size()));
}

TEST(Crash, TwoConcurrentWritersLoseNothing) {
  std::string path = Path("two");
  RemoveAtEnd cleanup{path};
  { Database db = Database::Open(path); }
  const int kEach = 400;
  std::vector<pid_t> kids;
  for (int writer = 0; writer < 2; ++writer) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      try {
        Database db = Database::Open(path);
        WorkloadId w = db.CommitWorkload(ir::MakeWorkload("GMM", 0));
        for (int i = 0; i < kEach; i += 4) {
          std::vector<TuningRecord> batch;
          for (int j = i; j < i + 4; ++j) batch.push_back(Rec(writer, j));
          db.CommitRecords(w, batch);
        }
        _exit(0);
      } catch (...) {
        _exit(1);
      }
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  Database db = Database::Open(path);
  EXPECT_EQ(db.IntegrityCheck(), "ok");
  EXPECT_EQ(db.Stats().workloads, 1);  // both writers share one workload row
  EXPECT_EQ(db.Size(), 2 * kEach);
}

}  // namespace
}  // namespace kiln::database
