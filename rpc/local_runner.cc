#include "rpc/local_runner.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <list>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "codegen/cuda/cuda_driver.h"
#include "codegen/cuda/nvrtc_compiler.h"
#include "codegen/llvm_backend.h"
#include "ir/structural_hash.h"
#include "rpc/child_process.h"
#include "rpc/cuda_candidate.h"
#include "rpc/machine_load.h"
#include "rpc/protocol.h"
#include "support/cores.h"
#include "support/parallel_for.h"
#include "support/thread_cpu_time.h"

namespace kiln::rpc {
namespace {

using search::MeasureResult;
using search::MeasureStatus;
namespace fs = std::filesystem;

// The reference is the unscheduled program, which may be far slower than any
// candidate; its one run gets this much time beyond a candidate's limit.
constexpr double kWorkloadExtraSecs = 60;
// How many references LocalRunner keeps, and in how many bytes (objects and
// outputs together; the most recent one is kept whatever its size).
constexpr size_t kMaxReferences = 16;
constexpr size_t kMaxReferenceBytes = size_t{1} << 30;

bool IsExecutable(const fs::path& p) { return ::access(p.c_str(), X_OK) == 0 && fs::is_regular_file(p); }

int64_t DefaultMemoryLimitMb() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<int64_t>(pages) / 1024 * page / 1024 * 3 / 4;
}

MeasureResult Failure(MeasureStatus status, std::string message) {
  MeasureResult r;
  r.status = status;
  r.message = std::move(message);
  return r;
}

std::string WithStderr(std::string message, const std::string& tail) {
  if (tail.empty()) return message;
  return message + "; runner stderr: " + tail;
}

using support::HardwareThreads;
using support::ThreadCpuSeconds;

// The kernel's thread pool: the target's cores, but never more than this
// machine has, so that a timed kernel never competes with itself.
int KernelThreads(const ir::Target& target) {
  const int hw = HardwareThreads();
  return target.num_cores > 0 ? std::min(target.num_cores, hw) : hw;
}

// What a signal usually means for generated code, for the person reading the record.
std::string SignalMeaning(int sig) {
  switch (sig) {
    case SIGSEGV: return "invalid memory access: an index out of bounds?";
    case SIGBUS: return "misaligned or unmapped memory access";
    case SIGFPE: return "arithmetic fault: an integer division by zero?";
    case SIGILL: return "illegal instruction: compiled for features this CPU lacks?";
    case SIGABRT: return "aborted";
    case SIGKILL: return "killed from outside: out of memory (OOM killer)?";
    default: return "the candidate's kernel did not finish";
  }
}

// Why candidates for a cuda target cannot be measured here; empty when they
// can. Probed in this process before anything is built, so that a machine
// without a GPU fails the batch at once with the driver's reason.
std::string CudaUnavailableReason(const ir::Target& target) {
  codegen::CudaDeviceInfo info;
  try {
    info = codegen::ProbeCudaDevice();
  } catch (const std::exception& e) {
    return std::string("this machine cannot run CUDA kernels: ") + e.what();
  }
  try {
    if (codegen::SmVersion(target.arch) > codegen::SmVersion(info.arch)) {
      return "the target is " + target.arch + " but this machine's GPU, " + info.name + ", is " +
             info.arch + ": its kernels cannot run here";
    }
  } catch (const std::exception& e) {
    return "target '" + target.ToString() + "': " + e.what();
  }
  return "";
}

}  // namespace

std::string FindRunnerExecutable(const LocalRunnerOptions& options) {
  std::vector<std::string> tried;
  auto check = [&](const fs::path& p) -> bool {
    tried.push_back(p.string());
    return IsExecutable(p);
  };
  if (!options.runner_path.empty()) {
    if (check(options.runner_path)) return options.runner_path;
    throw std::runtime_error("runner_path '" + options.runner_path + "' is not an executable");
  }
  if (const char* env = std::getenv("KILN_RUNNER"); env != nullptr && *env != '\0') {
    if (check(env)) return env;
    throw std::runtime_error(std::string("KILN_RUNNER='") + env + "' is not an executable");
  }
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path next = self.parent_path() / "kiln-runner";
    if (check(next)) return next.string();
  }
#ifdef KILN_RUNNER_BUILD_PATH
  if (check(KILN_RUNNER_BUILD_PATH)) return KILN_RUNNER_BUILD_PATH;
#endif
  std::string list;
  for (const auto& t : tried) list += (list.empty() ? "" : ", ") + t;
  throw std::runtime_error("cannot find kiln-runner (set KILN_RUNNER; tried: " + list + ")");
}

struct LocalRunner::State {
  LocalRunnerOptions options;
  LocalRunnerStats stats;
  std::unique_ptr<ChildProcess> child;
  // What the running child has set up, so a batch of the same task skips it.
  std::optional<std::string> child_workload_key;
  // The references of the last few workloads (a task scheduler alternates
  // between tasks, and compiling and running the unscheduled program is far
  // from free), most recently used first.
  struct Reference {
    std::string key;  // workload hash and name, target, input seed
    codegen::ObjectCode object;
    // Its outputs as the first child computed them (WorkloadMessage::expected),
    // for every later child of the same workload; empty until then.
    std::vector<std::string> outputs;
    size_t Bytes() const {
      size_t n = object.object.size();
      for (const auto& o : outputs) n += o.size();
      return n;
    }
  };
  std::list<Reference> references;

  // The reference for `key`, moved to the front; builds it if it is not kept.
  Reference& FindOrBuildReference(const std::string& key, const search::MeasureTask& task) {
    for (auto it = references.begin(); it != references.end(); ++it) {
      if (it->key == key) {
        references.splice(references.begin(), references, it);
        return references.front();
      }
    }
    // For a cuda target the reference runs on this machine's CPU, JIT
    // compiled like any CPU kernel: the unscheduled program on the GPU would
    // be one thread, and the LLVM path is the one the suite's tests check
    // against the interpreter. Kept here (and its outputs after the first
    // child ran it), it is built and run once per workload.
    Reference r{key, codegen::BuildObject(task.workload, ReferenceTargetFor(task.target)), {}};
    ++stats.references_built;
    references.push_front(std::move(r));
    return references.front();
  }
  // Drops the least recently used references beyond the limits (the front one stays).
  void TrimReferences() {
    size_t bytes = 0, count = 0;
    for (auto it = references.begin(); it != references.end();) {
      bytes += it->Bytes();
      ++count;
      if (it != references.begin() && (count > kMaxReferences || bytes > kMaxReferenceBytes)) {
        it = references.erase(it);
      } else {
        ++it;
      }
    }
  }

  // Whether the running child was started for CUDA candidates.
  bool child_cuda = false;

  void StartChild(bool cuda) {
    child.reset();
    child_workload_key.reset();
    // No address-space limit for a CUDA child: the driver reserves far more
    // virtual memory than any machine has (unified addressing), and cuInit
    // fails under a limit.
    const int64_t limit = cuda ? 0 : options.memory_limit_mb;
    child = std::make_unique<ChildProcess>(
        FindRunnerExecutable(options),
        std::vector<std::string>{"--memory-limit-mb=" + std::to_string(limit)});
    child_cuda = cuda;
    ++stats.children_started;
  }
  // After a crash, a timeout or anything unexpected the child is not trusted
  // with the next candidate (it may have leaked memory or corrupted its heap).
  void DropChild() {
    child.reset();
    child_workload_key.reset();
  }
};

LocalRunner::LocalRunner(LocalRunnerOptions options) : state_(std::make_unique<State>()) {
  state_->options = std::move(options);
  if (state_->options.memory_limit_mb == 0) state_->options.memory_limit_mb = DefaultMemoryLimitMb();
}

LocalRunner::~LocalRunner() = default;

const LocalRunnerStats& LocalRunner::stats() const { return state_->stats; }

void LocalRunner::set_test_faults(std::vector<TestFault> faults) {
  state_->options.test_faults = std::move(faults);
}

std::vector<MeasureResult> LocalRunner::Measure(const search::MeasureTask& task,
                                                const std::vector<search::MeasureCandidate>& batch) {
  using Clock = std::chrono::steady_clock;
  std::vector<MeasureResult> results(batch.size());
  if (batch.empty()) return results;
  State& s = *state_;
  // A bad timing config is the caller's error: no candidate can be measured.
  const search::TimingConfig& t = task.timing;
  if (t.number < 1 || t.repeat < 1 || !std::isfinite(t.min_repeat_ms) || t.min_repeat_ms < 0 ||
      !std::isfinite(t.timeout_s) || t.timeout_s <= 0 || !std::isfinite(t.slow_call_secs) ||
      t.slow_call_secs < 0) {
    const std::string msg = fmt::format(
        "bad timing config: number {}, repeat {}, min_repeat_ms {}, timeout_s {}, slow_call_secs "
        "{} (number and repeat must be >= 1, min_repeat_ms and slow_call_secs finite and >= 0, "
        "timeout_s finite and > 0)",
        t.number, t.repeat, t.min_repeat_ms, t.timeout_s, t.slow_call_secs);
    for (MeasureResult& r : results) r = Failure(MeasureStatus::kInfraError, msg);
    return results;
  }
  const bool cuda = task.target.kind == ir::Target::Kind::kCUDA;
  if (cuda) {
    if (std::string why = CudaUnavailableReason(task.target); !why.empty()) {
      for (MeasureResult& r : results) r = Failure(MeasureStatus::kInfraError, why);
      return results;
    }
  }
  const auto build_start = Clock::now();

  // 1. Build every candidate on parallel threads. Nothing runs in the child
  // meanwhile, so the builds and the timed kernels never share the cores.
  // A CPU candidate becomes an object, a CUDA one PTX and a cubin with its
  // launch description; built[i] says which candidates built.
  std::vector<std::optional<codegen::ObjectCode>> objects(batch.size());
  std::vector<std::optional<CudaCandidateMessage>> cuda_objects(batch.size());
  std::vector<char> built(batch.size(), 0);
  {
    const int threads =
        s.options.build_threads > 0 ? s.options.build_threads : HardwareThreads();
    support::ParallelFor(static_cast<int>(batch.size()), threads, [&](int i) {
      auto start = Clock::now();
      try {
        if (cuda) {
          cuda_objects[i] = BuildCudaCandidate(batch[i].scheduled, task.target);
        } else {
          objects[i] = codegen::BuildObject(batch[i].scheduled, task.target);
        }
        built[i] = 1;
      } catch (const std::exception& e) {
        results[i] = Failure(MeasureStatus::kBuildError, e.what());
      }
      results[i].build_secs = std::chrono::duration<double>(Clock::now() - start).count();
    });
  }
  const auto run_start = Clock::now();
  s.stats.build_wall_secs += std::chrono::duration<double>(run_start - build_start).count();
  struct AddRunTime {
    State& s;
    Clock::time_point start;
    double cpu_start = ThreadCpuSeconds();
    ~AddRunTime() {
      s.stats.run_wall_secs += std::chrono::duration<double>(Clock::now() - start).count();
      s.stats.run_cpu_secs += ThreadCpuSeconds() - cpu_start;
    }
  } add_run_time{s, run_start};

  // Every built candidate not measured yet gets this failure.
  auto fail_rest = [&](size_t from, MeasureStatus st, const std::string& msg) {
    for (size_t j = from; j < batch.size(); ++j) {
      if (!built[j]) continue;
      double b = results[j].build_secs;
      results[j] = Failure(st, msg);
      results[j].build_secs = b;
    }
  };

  // 2. The workload: argument specs and the reference object.
  WorkloadMessage workload;
  std::string key;
  State::Reference* reference = nullptr;
  try {
    for (const search::ArgInfo& a : search::ArgInfoOf(task.workload)) {
      workload.args.push_back({"", a.dtype, a.shape});
    }
    for (size_t i = 0; i < workload.args.size(); ++i) workload.args[i].name = task.workload.params[i].name();
    key = ir::StructuralHashHex(task.workload) + "|" + task.workload.name + "|" +
          task.target.ToString() + "|" + std::to_string(task.input_seed);
    reference = &s.FindOrBuildReference(key, task);
  } catch (const std::exception& e) {
    fail_rest(0, MeasureStatus::kInfraError,
              std::string("cannot build the reference (the unscheduled workload): ") + e.what());
    return results;
  }
  // The key also covers the timing config, which the child keeps per workload.
  key += "|" + std::to_string(task.timing.number) + "," + std::to_string(task.timing.repeat) + "," +
         std::to_string(task.timing.min_repeat_ms) + "," + std::to_string(task.timing.flush_cache);
  workload.num_threads = KernelThreads(ReferenceTargetFor(task.target));
  workload.input_seed = task.input_seed;
  workload.timing = task.timing;
  workload.reference = reference->object;

  // 3. Run each built candidate in the child, one at a time, restarting it
  // after any failure that may have left it in a bad state.
  // The first sample of the current child in this batch: a candidate too
  // short for the CPU counters to tick gets the load of the batch so far.
  std::optional<CpuSample> load_window;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!built[i]) continue;
    const double build_secs = results[i].build_secs;
    MeasureResult& r = results[i];
    auto fail = [&](MeasureStatus st, std::string msg) {
      r = Failure(st, std::move(msg));
      r.build_secs = build_secs;
    };
    try {
      if (s.child && s.child->alive() && s.child_cuda != cuda) s.DropChild();
      if (!s.child || !s.child->alive()) s.StartChild(cuda);
      if (s.child_workload_key != key) {
        workload.expected = reference->outputs;
        s.child->Send(MessageType::kWorkload, Encode(workload));
        workload.expected.clear();
        ChildProcess::Outcome o = s.child->Receive(task.timing.timeout_s + kWorkloadExtraSecs);
        if (o.kind != ChildProcess::Outcome::Kind::kMessage ||
            o.message.type != MessageType::kWorkloadReady) {
          std::string why = o.kind == ChildProcess::Outcome::Kind::kMessage
                                ? (o.message.type == MessageType::kError ? o.message.payload
                                                                         : "an unexpected reply")
                            : o.kind == ChildProcess::Outcome::Kind::kTimeout
                                ? fmt::format("it took longer than {:g} s", task.timing.timeout_s +
                                                                                 kWorkloadExtraSecs)
                                : "the runner was " + o.detail;
          std::string msg = WithStderr("the runner could not compute the reference output: " + why,
                                       s.child->stderr_tail());
          s.DropChild();
          // The reference itself fails, so no candidate of this batch can be checked.
          fail_rest(i, MeasureStatus::kInfraError, msg);
          return results;
        }
        WorkloadReadyMessage ready = DecodeWorkloadReady(o.message.payload);
        if (!ready.expected.empty()) {
          if (ready.expected.size() != workload.args.size()) {
            throw ProtocolError("the runner sent " + std::to_string(ready.expected.size()) +
                                " reference outputs for " + std::to_string(workload.args.size()) +
                                " arguments");
          }
          reference->outputs = std::move(ready.expected);
          ++s.stats.references_run;
          s.TrimReferences();
        }
        s.child_workload_key = key;
      }
      const TestFault fault =
          i < s.options.test_faults.size() ? s.options.test_faults[i] : TestFault::kNone;
      std::string payload;
      if (cuda) {
        CudaCandidateMessage c = std::move(*cuda_objects[i]);
        c.index = static_cast<uint32_t>(i);
        c.fault = fault;
        payload = Encode(c);
      } else {
        CandidateMessage c;
        c.index = static_cast<uint32_t>(i);
        c.code = std::move(*objects[i]);
        c.fault = fault;
        c.slow_call_secs = task.timing.slow_call_secs;
        payload = Encode(c);
      }
      const pid_t child_pid = s.child->pid();
      const std::optional<CpuSample> cpu_before = SampleCpu(child_pid);
      if (!load_window || !cpu_before || load_window->pid != child_pid) load_window = cpu_before;
      s.child->Send(cuda ? MessageType::kCudaCandidate : MessageType::kCandidate, payload);
      ChildProcess::Outcome o = s.child->Receive(task.timing.timeout_s);
      // Read while the child is still there (it is alive after a reply).
      const std::optional<CpuSample> cpu_after = SampleCpu(child_pid);
      switch (o.kind) {
        case ChildProcess::Outcome::Kind::kMessage:
          if (o.message.type == MessageType::kResult) {
            ResultMessage m = DecodeResult(o.message.payload);
            r.status = m.status;
            r.message = m.message;
            r.run_secs = std::move(m.run_secs);
            r.verified = m.verified;
            r.machine_load = OtherLoad(cpu_before, cpu_after);
            if (r.machine_load < 0) r.machine_load = OtherLoad(load_window, cpu_after);
            r.wide_spread = search::IsWideSpread(r.run_secs);
            // A kernel that failed or ran out of memory may have left the
            // child's heap or address space in a state the next one suffers
            // from. A wrong result too: it may come from out-of-bounds writes
            // that also hit the child's copies of the inputs and the
            // reference outputs, which every later candidate is checked with.
            if (m.status != MeasureStatus::kOk) s.DropChild();
          } else if (o.message.type == MessageType::kError) {
            fail(MeasureStatus::kInfraError, "runner: " + o.message.payload);
            s.DropChild();
          } else {
            fail(MeasureStatus::kInfraError, "runner: an unexpected reply to a candidate");
            s.DropChild();
          }
          break;
        case ChildProcess::Outcome::Kind::kTimeout:
          fail(MeasureStatus::kTimeout,
               fmt::format("the candidate ran longer than the limit of {:g} s "
                           "(TimingConfig::timeout_s) and was killed",
                           task.timing.timeout_s));
          s.DropChild();
          break;
        case ChildProcess::Outcome::Kind::kDied:
          if (o.signal != 0) {
            fail(MeasureStatus::kRunCrash,
                 WithStderr("the kernel crashed the runner: " + o.detail + " (" +
                                SignalMeaning(o.signal) + ")",
                            s.child->stderr_tail()));
          } else {
            fail(MeasureStatus::kInfraError,
                 WithStderr("the runner " + o.detail + " while measuring the candidate",
                            s.child->stderr_tail()));
          }
          s.DropChild();
          break;
        case ChildProcess::Outcome::Kind::kBadMessage:
          fail(MeasureStatus::kInfraError,
               WithStderr("runner protocol: " + o.detail, s.child->stderr_tail()));
          s.DropChild();
          break;
      }
    } catch (const std::exception& e) {
      // A child that cannot be started or a bad result payload.
      std::string tail = s.child ? s.child->stderr_tail() : "";
      fail(MeasureStatus::kInfraError, WithStderr(e.what(), tail));
      s.DropChild();
    }
  }
  return results;
}

}  // namespace kiln::rpc
