// kiln-runner: the isolated child process of rpc::LocalRunner. It reads
// requests from fd 3 (rpc/protocol.h), runs kernels loaded with the JIT (or,
// for a CUDA candidate, launched on the GPU: rpc/runner_main/cuda_run.h) and
// answers with results. Whatever a kernel does to this process (crash, hang,
// exhaust memory) the parent observes from outside and reports.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "codegen/kernel_abi.h"
#include "codegen/llvm_backend.h"
#include "ir/ndarray.h"
#include "rpc/output_check.h"
#include "rpc/protocol.h"
#include "rpc/runner_main/cuda_run.h"
#include "rpc/test_fault.h"
#include "rpc/timing.h"

namespace kiln::rpc {
namespace {

constexpr int kSocketFd = 3;
// The address-space limit set by --memory-limit-mb (0: none), for messages.
unsigned long long g_memory_limit_mb = 0;

// Generated kernels return non-zero only when a buffer they allocate cannot be had.
std::string KernelFailure(int32_t rc, const char* when) {
  return "the kernel returned " + std::to_string(rc) + " " + when +
         (rc == 1 ? " (it could not allocate a buffer: out of memory?)" : "");
}

struct Workload {
  WorkloadMessage spec;
  std::vector<ir::NDArray> inputs;    // the random arguments before any call
  std::vector<ir::NDArray> expected;  // every argument after the reference call
};

std::vector<void*> Pointers(std::vector<ir::NDArray>& args) {
  std::vector<void*> ptrs;
  for (auto& a : args) ptrs.push_back(a.data());
  return ptrs;
}

void Reply(search::MeasureStatus status, std::string message, std::vector<double> secs = {},
           bool verified = false) {
  ResultMessage r{status, std::move(message), std::move(secs), verified};
  WriteFrame(kSocketFd, MessageType::kResult, Encode(r));
}

// Sets up a workload; returns the reference outputs if it computed them.
std::unique_ptr<Workload> SetUp(const Message& m, WorkloadReadyMessage* ready) {
  auto w = std::make_unique<Workload>();
  w->spec = DecodeWorkload(m.payload);
  kiln_runtime_set_num_threads(w->spec.num_threads);
  for (size_t i = 0; i < w->spec.args.size(); ++i) {
    const ArgSpec& a = w->spec.args[i];
    ir::NDArray arr(a.dtype, a.shape);
    // The same per-argument seeds as ir::MakeRandomArgs, so that a run is
    // reproducible from input_seed alone.
    ir::FillRandom(&arr, w->spec.input_seed ^ ir::MixSeed(i + 1));
    w->inputs.push_back(std::move(arr));
  }
  w->expected = w->inputs;
  if (!w->spec.expected.empty()) {
    // DecodeWorkload checked one block of the right size per argument.
    for (size_t i = 0; i < w->expected.size(); ++i) {
      std::memcpy(w->expected[i].data(), w->spec.expected[i].data(), w->spec.expected[i].size());
    }
    w->spec.expected.clear();
    return w;
  }
  auto kernel = codegen::JitKernel::Load(w->spec.reference);
  std::vector<void*> ptrs = Pointers(w->expected);
  int32_t rc = kernel->Call(ptrs.data());
  if (rc != 0) throw std::runtime_error("the reference kernel returned " + std::to_string(rc));
  for (const ir::NDArray& e : w->expected) {
    ready->expected.emplace_back(static_cast<const char*>(e.data()), e.nbytes());
  }
  return w;
}

void RunCandidate(const Workload& w, const Message& m) {
  CandidateMessage c = DecodeCandidate(m.payload);
  std::unique_ptr<codegen::JitKernel> kernel;
  try {
    kernel = codegen::JitKernel::Load(c.code);
  } catch (const std::exception& e) {
    Reply(search::MeasureStatus::kBuildError, std::string("the object does not load: ") + e.what());
    return;
  }
  if (!FaultRunsKernel(c.fault)) ExecuteFault(c.fault);
  std::vector<ir::NDArray> args = w.inputs;
  std::vector<void*> ptrs = Pointers(args);
  const auto first_start = std::chrono::steady_clock::now();
  int32_t rc = kernel->Call(ptrs.data());
  const double first_secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - first_start).count();
  if (rc != 0) {
    Reply(search::MeasureStatus::kRunCrash, KernelFailure(rc, "on its first call"));
    return;
  }
  if (c.fault == TestFault::kWrongValues && !args.empty() && args.back().size() > 0) {
    ir::NDArray& out = args.back();
    out.SetFromDouble(0, out.GetAsDouble(0) + 1);
  }
  // A stray write: the kernel wrote into an argument that is not its output
  // (the check compares every argument, inputs included, with the reference).
  if (c.fault == TestFault::kStrayWrite && !args.empty() && args.front().size() > 0) {
    ir::NDArray& in = args.front();
    in.SetFromDouble(0, in.GetAsDouble(0) + 1);
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (auto diff = CompareOutput(w.spec.args[i].name, args[i], w.expected[i])) {
      Reply(search::MeasureStatus::kWrongResult, *diff);
      return;
    }
  }
  // The checked call was the warm-up (page faults, the kernel pool's start,
  // the instruction cache), so timing starts with the repeats; and a
  // candidate far slower than the workload's best is timed by that call.
  TimingStart start;
  start.warm_secs = first_secs;
  if (c.slow_call_secs > 0) start.long_call_secs = std::min(kLongCallSecs, c.slow_call_secs);
  std::vector<double> secs;
  try {
    secs = TimeCalls(
        [&] {
          int32_t r = kernel->Call(ptrs.data());
          if (r != 0) throw std::runtime_error(KernelFailure(r, "while timed"));
        },
        w.spec.timing, FlushCpuCache, start);
  } catch (const std::runtime_error& e) {
    Reply(search::MeasureStatus::kRunCrash, e.what());
    return;
  }
  Reply(search::MeasureStatus::kOk, "", std::move(secs), true);
}

// An address-space limit turns runaway allocation into a failed allocation in
// this process instead of memory pressure on the whole machine.
void LimitMemory(const char* arg) {
  char* end = nullptr;
  unsigned long long mb = std::strtoull(arg, &end, 10);
  if (end == arg || *end != '\0') {
    std::fprintf(stderr, "kiln-runner: bad --memory-limit-mb '%s'\n", arg);
    std::exit(2);
  }
  if (mb == 0) return;
  g_memory_limit_mb = mb;
  rlimit lim{static_cast<rlim_t>(mb) << 20, static_cast<rlim_t>(mb) << 20};
  if (setrlimit(RLIMIT_AS, &lim) != 0) {
    std::fprintf(stderr, "kiln-runner: setrlimit: %s\n", std::strerror(errno));
    std::exit(2);
  }
}

int Serve() {
  std::unique_ptr<Workload> workload;
  for (;;) {
    std::optional<Message> m = ReadFrame(kSocketFd);
    if (!m) return 0;  // the parent closed the socket
    switch (m->type) {
      case MessageType::kWorkload:
      {
        workload.reset();
        WorkloadReadyMessage ready;
        try {
          workload = SetUp(*m, &ready);
        } catch (const std::exception& e) {
          WriteFrame(kSocketFd, MessageType::kError, std::string("workload setup: ") + e.what());
          continue;
        }
        WriteFrame(kSocketFd, MessageType::kWorkloadReady, Encode(ready));
        break;
      }
      case MessageType::kCudaCandidate:
        if (!workload) {
          WriteFrame(kSocketFd, MessageType::kError, "a candidate before any workload");
          continue;
        }
        try {
          CudaCandidateMessage c = DecodeCudaCandidate(m->payload);
          ResultMessage r = RunCudaCandidate(c, workload->spec.args, workload->inputs,
                                             workload->expected, workload->spec.timing);
          WriteFrame(kSocketFd, MessageType::kResult, Encode(r));
        } catch (const ProtocolError&) {
          throw;
        } catch (const std::exception& e) {
          WriteFrame(kSocketFd, MessageType::kError, std::string("cuda candidate: ") + e.what());
        }
        break;
      case MessageType::kCandidate:
        if (!workload) {
          WriteFrame(kSocketFd, MessageType::kError, "a candidate before any workload");
          continue;
        }
        try {
          RunCandidate(*workload, *m);
        } catch (const ProtocolError&) {
          throw;
        } catch (const std::bad_alloc&) {
          Reply(search::MeasureStatus::kRunCrash,
                "out of memory: the candidate exceeded the runner's address-space limit of " +
                    std::to_string(g_memory_limit_mb) + " MiB (LocalRunnerOptions::memory_limit_mb)");
        } catch (const std::exception& e) {
          WriteFrame(kSocketFd, MessageType::kError, std::string("candidate: ") + e.what());
        }
        break;
      default:
        WriteFrame(kSocketFd, MessageType::kError,
                   "unexpected message type " + std::to_string(static_cast<uint32_t>(m->type)));
        return 2;
    }
  }
}

}  // namespace
}  // namespace kiln::rpc

int main(int argc, char** argv) {
  // Ctrl-C in a terminal signals the whole foreground process group: the
  // tuner stops after the batch in flight, so this child must finish its
  // candidate rather than die and have it recorded as a crash.
  std::signal(SIGINT, SIG_IGN);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--memory-limit-mb=", 0) == 0) {
      kiln::rpc::LimitMemory(argv[i] + std::strlen("--memory-limit-mb="));
    } else {
      std::fprintf(stderr, "kiln-runner: unknown argument '%s' (started by kiln, not by hand)\n",
                   argv[i]);
      return 2;
    }
  }
  try {
    return kiln::rpc::Serve();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln-runner: %s\n", e.what());
    return 3;
  }
}
