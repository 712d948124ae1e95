// ChildProcess with real child processes (/bin/sh, /bin/true, sleep, cat):
// how a child ended, its signal by name, the deadline kill, the stderr tail,
// frames through fd 3, and a clear error when nothing can be started.
#include "rpc/child_process.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace kiln::rpc {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using Kind = ChildProcess::Outcome::Kind;

// A generous deadline for a child that ends by itself.
constexpr double kEndsSoon = 60;

ChildProcess Shell(const std::string& script) { return ChildProcess("/bin/sh", {"-c", script}); }

TEST(ChildProcessTest, SignalNames) {
  EXPECT_EQ(SignalName(SIGSEGV), "SIGSEGV");
  EXPECT_EQ(SignalName(SIGABRT), "SIGABRT");
  EXPECT_EQ(SignalName(SIGFPE), "SIGFPE");
  EXPECT_EQ(SignalName(SIGBUS), "SIGBUS");
  EXPECT_EQ(SignalName(SIGILL), "SIGILL");
  EXPECT_EQ(SignalName(SIGKILL), "SIGKILL");
  EXPECT_EQ(SignalName(SIGXCPU), "SIGXCPU");
  EXPECT_EQ(SignalName(63), "signal 63");
}

TEST(ChildProcessTest, ExitStatus) {
  ChildProcess t("/bin/true", {});
  ChildProcess::Outcome o = t.Receive(kEndsSoon);
  EXPECT_EQ(o.kind, Kind::kDied);
  EXPECT_EQ(o.detail, "exited with status 0");
  EXPECT_EQ(o.signal, 0);
  EXPECT_FALSE(t.alive());

  ChildProcess sh = Shell("exit 7");
  o = sh.Receive(kEndsSoon);
  EXPECT_EQ(o.kind, Kind::kDied);
  EXPECT_EQ(o.detail, "exited with status 7");
  EXPECT_EQ(o.signal, 0);
  // Once gone, it stays gone.
  EXPECT_EQ(sh.Receive(kEndsSoon).kind, Kind::kDied);
  EXPECT_THROW(sh.Send(MessageType::kError, "x"), ProtocolError);
}

TEST(ChildProcessTest, DeathBySignalIsNamed) {
  for (int sig : {SIGSEGV, SIGABRT, SIGFPE, SIGBUS, SIGKILL}) {
    ChildProcess c = Shell("kill -" + std::to_string(sig) + " $$");
    ChildProcess::Outcome o = c.Receive(kEndsSoon);
    EXPECT_EQ(o.kind, Kind::kDied) << sig;
    EXPECT_EQ(o.signal, sig);
    EXPECT_EQ(o.detail, "killed by " + SignalName(sig));
    EXPECT_FALSE(c.alive());
  }
}

TEST(ChildProcessTest, DeadlineKillsAHangingChild) {
  // exec: the shell becomes `sleep`, so killing the child kills the sleeper.
  ChildProcess c = Shell("echo before-the-hang >&2; exec sleep 600");
  EXPECT_TRUE(c.alive());
  ChildProcess::Outcome o = c.Receive(0.3);
  EXPECT_EQ(o.kind, Kind::kTimeout);
  EXPECT_FALSE(c.alive());
  EXPECT_THAT(c.stderr_tail(), HasSubstr("before-the-hang"));
  EXPECT_EQ(c.Receive(kEndsSoon).kind, Kind::kDied);
}

TEST(ChildProcessTest, KillEndsARunningChild) {
  ChildProcess c = Shell("exec sleep 600");
  c.Kill();
  EXPECT_FALSE(c.alive());
  c.Kill();  // idempotent
  EXPECT_THROW(c.Send(MessageType::kError, "x"), ProtocolError);
}

TEST(ChildProcessTest, StderrTailIsCaptured) {
  ChildProcess c = Shell("echo 'kiln-runner: boom' >&2; exit 3");
  ChildProcess::Outcome o = c.Receive(kEndsSoon);
  EXPECT_EQ(o.detail, "exited with status 3");
  EXPECT_EQ(c.stderr_tail(), "kiln-runner: boom\n");
  // stdout goes nowhere: only stderr is captured.
  ChildProcess quiet = Shell("echo to-stdout; exit 0");
  quiet.Receive(kEndsSoon);
  EXPECT_EQ(quiet.stderr_tail(), "");
}

TEST(ChildProcessTest, StderrTailKeepsTheEnd) {
  ChildProcess c = Shell(
      "i=0; while [ $i -lt 3000 ]; do echo line-$i >&2; i=$((i+1)); done; echo THE-END >&2; kill -ABRT $$");
  ChildProcess::Outcome o = c.Receive(kEndsSoon);
  EXPECT_EQ(o.signal, SIGABRT);
  EXPECT_LE(c.stderr_tail().size(), 4096u);
  EXPECT_GT(c.stderr_tail().size(), 2048u);
  EXPECT_THAT(c.stderr_tail(), EndsWith("line-2999\nTHE-END\n"));
  EXPECT_THAT(c.stderr_tail(), ::testing::Not(HasSubstr("line-0\n")));
}

TEST(ChildProcessTest, FramesThroughFd3) {
  // cat echoes the socket (fd 3) back to itself: every frame sent returns.
  // The frames are sent before any is read back, so together they must fit
  // in the socket buffers (a real runner reads a whole request first).
  ChildProcess c = Shell("exec cat <&3 >&3");
  std::string big(40000, 'b');
  c.Send(MessageType::kError, "hello");
  c.Send(MessageType::kWorkloadReady, "");
  c.Send(MessageType::kCandidate, big);
  ChildProcess::Outcome a = c.Receive(kEndsSoon);
  ChildProcess::Outcome b = c.Receive(kEndsSoon);
  ChildProcess::Outcome d = c.Receive(kEndsSoon);
  ASSERT_EQ(a.kind, Kind::kMessage) << a.detail;
  ASSERT_EQ(b.kind, Kind::kMessage) << b.detail;
  ASSERT_EQ(d.kind, Kind::kMessage) << d.detail;
  EXPECT_EQ(a.message.type, MessageType::kError);
  EXPECT_EQ(a.message.payload, "hello");
  EXPECT_EQ(b.message.type, MessageType::kWorkloadReady);
  EXPECT_EQ(b.message.payload, "");
  EXPECT_EQ(d.message.type, MessageType::kCandidate);
  EXPECT_EQ(d.message.payload, big);
  EXPECT_TRUE(c.alive());
  // Nothing more comes: the deadline ends it.
  EXPECT_EQ(c.Receive(0.05).kind, Kind::kTimeout);
}

TEST(ChildProcessTest, GarbageOnTheSocketIsABadMessage) {
  ChildProcess c = Shell("printf 'this is not a frame header' >&3; exec sleep 600");
  ChildProcess::Outcome o = c.Receive(kEndsSoon);
  EXPECT_EQ(o.kind, Kind::kBadMessage);
  EXPECT_THAT(o.detail, HasSubstr("magic"));
  EXPECT_FALSE(c.alive());  // a peer that speaks garbage is killed
}

TEST(ChildProcessTest, DeathInsideAFrame) {
  // Half a header, then a crash: the partial frame is not a message.
  ChildProcess c = Shell("printf 'KLNR' >&3; kill -SEGV $$");
  ChildProcess::Outcome o = c.Receive(kEndsSoon);
  EXPECT_EQ(o.kind, Kind::kDied);
  EXPECT_EQ(o.signal, SIGSEGV);
}

TEST(ChildProcessTest, SpawnFailureIsAClearError) {
  try {
    ChildProcess c("/nonexistent-dir/kiln-runner", {});
    ADD_FAILURE() << "started a missing binary";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot start '/nonexistent-dir/kiln-runner'"));
    EXPECT_THAT(e.what(), HasSubstr("No such file or directory"));
  }
  // A file that exists but is not executable.
  std::filesystem::path p = std::filesystem::temp_directory_path() /
                            ("kiln_child_process_test_" + std::to_string(::getpid()));
  std::ofstream(p) << "not a program\n";
  std::filesystem::permissions(p, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  try {
    ChildProcess c(p.string(), {});
    ADD_FAILURE() << "started a non-executable file";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot start '" + p.string() + "'"));
    EXPECT_THAT(e.what(), HasSubstr("Permission denied"));
  }
  std::filesystem::remove(p);
}

TEST(ChildProcessTest, ArgumentsReachTheChild) {
  ChildProcess c("/bin/sh", {"-c", "echo \"$0|$1\" >&2; exit 0", "first arg", "second arg"});
  c.Receive(kEndsSoon);
  EXPECT_EQ(c.stderr_tail(), "first arg|second arg\n");
}

}  // namespace
}  // namespace kiln::rpc
