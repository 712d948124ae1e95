#include "rpc/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace kiln::rpc {
namespace {

constexpr size_t kStderrTailBytes = 4096;

std::runtime_error SysError(const std::string& what) {
  return std::runtime_error(what + ": " + std::strerror(errno));
}

}  // namespace

std::string SignalName(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGBUS: return "SIGBUS";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    case SIGXCPU: return "SIGXCPU";
    case SIGPIPE: return "SIGPIPE";
    default: return "signal " + std::to_string(sig);
  }
}

ChildProcess::ChildProcess(const std::string& path, const std::vector<std::string>& args) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) throw SysError("socketpair");
  int ep[2];
  if (::pipe2(ep, O_CLOEXEC) != 0) {
    ::close(sv[0]);
    ::close(sv[1]);
    throw SysError("pipe");
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  // dup2 clears close-on-exec on the target, so only fds 0-3 reach the child.
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, ep[1], 2);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 3);
  std::vector<std::string> argv_s = {path};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawn(&pid, path.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(sv[1]);
  ::close(ep[1]);
  if (rc != 0) {
    ::close(sv[0]);
    ::close(ep[0]);
    throw std::runtime_error("cannot start '" + path + "': " + std::strerror(rc));
  }
  pid_ = pid;
  sock_ = sv[0];
  err_ = ep[0];
  ::fcntl(err_, F_SETFL, ::fcntl(err_, F_GETFL) | O_NONBLOCK);
  ::fcntl(sock_, F_SETFL, ::fcntl(sock_, F_GETFL) | O_NONBLOCK);
}

ChildProcess::~ChildProcess() {
  Kill();
  if (sock_ >= 0) ::close(sock_);
  if (err_ >= 0) ::close(err_);
}

void ChildProcess::Send(MessageType type, std::string_view payload) {
  if (pid_ <= 0) throw ProtocolError("the runner child is not running");
  // The socket is non-blocking for Receive; writes wait for room instead.
  ::fcntl(sock_, F_SETFL, ::fcntl(sock_, F_GETFL) & ~O_NONBLOCK);
  try {
    WriteFrame(sock_, type, payload);
  } catch (...) {
    ::fcntl(sock_, F_SETFL, ::fcntl(sock_, F_GETFL) | O_NONBLOCK);
    throw;
  }
  ::fcntl(sock_, F_SETFL, ::fcntl(sock_, F_GETFL) | O_NONBLOCK);
}

void ChildProcess::DrainStderr() {
  if (err_ < 0) return;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(err_, buf, sizeof buf);
    if (n > 0) {
      stderr_tail_.append(buf, static_cast<size_t>(n));
      if (stderr_tail_.size() > kStderrTailBytes) {
        stderr_tail_.erase(0, stderr_tail_.size() - kStderrTailBytes);
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {  // the child closed stderr (it exited): stop polling it
      ::close(err_);
      err_ = -1;
    }
    return;
  }
}

ChildProcess::Outcome ChildProcess::Receive(double timeout_s) {
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(timeout_s));
  for (;;) {
    try {
      if (auto m = frames_.Pop()) return {Outcome::Kind::kMessage, std::move(*m), "", 0};
    } catch (const ProtocolError& e) {
      Kill();
      return {Outcome::Kind::kBadMessage, {}, e.what(), 0};
    }
    if (pid_ <= 0) return {Outcome::Kind::kDied, {}, "the runner child is not running", 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      Kill();
      return {Outcome::Kind::kTimeout, {}, "", 0};
    }
    pollfd fds[2] = {{sock_, POLLIN, 0}, {err_, POLLIN, 0}};
    int rc = ::poll(fds, 2, static_cast<int>(std::min<int64_t>(left.count() + 1, 1000)));
    if (rc < 0 && errno != EINTR) {
      Kill();
      return {Outcome::Kind::kBadMessage, {}, std::string("poll: ") + std::strerror(errno), 0};
    }
    if (fds[1].revents) DrainStderr();
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char buf[1 << 16];
      ssize_t n = ::read(sock_, buf, sizeof buf);
      if (n > 0) {
        frames_.Append(buf, static_cast<size_t>(n));
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        return Reap();
      }
    }
  }
}

ChildProcess::Outcome ChildProcess::Reap() {
  Outcome out{Outcome::Kind::kDied, {}, "", 0};
  int status = 0;
  // The child closed its socket: it is exiting. Give it a moment, then force it.
  for (int i = 0; i < 200; ++i) {
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) break;
    if (i == 199) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  pid_ = -1;
  DrainStderr();
  if (WIFSIGNALED(status)) {
    out.signal = WTERMSIG(status);
    out.detail = "killed by " + SignalName(out.signal);
  } else if (WIFEXITED(status)) {
    out.detail = "exited with status " + std::to_string(WEXITSTATUS(status));
  } else {
    out.detail = "ended (status " + std::to_string(status) + ")";
  }
  return out;
}

void ChildProcess::Kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  DrainStderr();
}

}  // namespace kiln::rpc
