// One kiln-runner child process: spawned with posix_spawn (the parent is
// multi-threaded, so it never forks), connected by a socketpair on the
// child's fd 3, its stderr captured through a pipe.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "rpc/protocol.h"

namespace kiln::rpc {

// "SIGSEGV", "SIGABRT", ...; "signal N" for one without a name here.
std::string SignalName(int sig);

class ChildProcess {
 public:
  // Starts `path` with `args` (argv[1..]). Throws std::runtime_error if it
  // cannot be started.
  ChildProcess(const std::string& path, const std::vector<std::string>& args);
  ~ChildProcess();  // kills and reaps the child if it is still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Throws ProtocolError if the child is gone.
  void Send(MessageType type, std::string_view payload);

  struct Outcome {
    enum class Kind { kMessage, kTimeout, kDied, kBadMessage };
    Kind kind;
    Message message;     // kMessage
    std::string detail;  // kDied: "killed by SIGSEGV" / "exited with status 1"; kBadMessage: why
    int signal = 0;      // kDied by a signal
  };
  // Waits up to timeout_s for the next frame. On kTimeout and kBadMessage the
  // child is killed; after anything but kMessage the child is gone.
  Outcome Receive(double timeout_s);

  void Kill();  // SIGKILL and reap
  bool alive() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }  // -1 once the child is gone
  // The last few KiB the child wrote to stderr.
  const std::string& stderr_tail() const { return stderr_tail_; }

 private:
  void DrainStderr();
  // Reaps the child (waiting at most a moment, then SIGKILL) and describes its end.
  Outcome Reap();

  pid_t pid_ = -1;
  int sock_ = -1;
  int err_ = -1;
  FrameBuffer frames_;
  std::string stderr_tail_;
};

}  // namespace kiln::rpc
