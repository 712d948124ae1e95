// The GPU runner (rpc::LocalRunner with a cuda target) up to the launch on
// every machine, and through it where a GPU is present:
// - the launch description of real kernels (one kernel, a shared-memory
//   GEMM, a multi-kernel softmax with workspace) travels to the child intact,
//   and a corrupt one is refused with a reason;
// - the real kiln-runner child answers a CUDA candidate without a GPU with an
//   infra_error naming why, stays alive for the next request, and dies (for
//   the parent to report) on a corrupt payload;
// - without a GPU, LocalRunner fails the whole batch with the driver's reason
//   before building anything;
// - with a GPU, real kernels are launched, checked against the CPU reference
//   and timed, and a crashing child is replaced (GTEST_SKIP elsewhere).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "codegen/cuda/cuda_driver.h"
#include "codegen/llvm_backend.h"
#include "ir/workloads/suite.h"
#include "rpc/cuda_candidate.h"
#include "rpc/protocol.h"
#include "rpc/timing.h"
#include "search/measure.h"
#include "tests/codegen/gpu_test_kernels.h"
#if KILN_HAVE_RUNNER
#include "rpc/child_process.h"
#include "rpc/local_runner.h"
#endif

namespace kiln::rpc {
namespace {

using ::testing::HasSubstr;
using search::MeasureStatus;

const ir::Target kSm90 = ir::Target::Parse("cuda -arch=sm_90");

// Empty when this machine has a usable GPU, else why not.
std::string NoGpuReason() {
  try {
    codegen::ProbeCudaDevice();
    return "";
  } catch (const codegen::CudaUnavailable& e) {
    return e.what();
  }
}

TEST(CudaCandidate, LaunchDescriptionOfOneKernel) {
  CudaCandidateMessage c = BuildCudaCandidate(ir::testing::MatmulPerThread(64, 48, 32), kSm90);
  EXPECT_EQ(c.arch, "sm_90");
  EXPECT_FALSE(c.cubin.empty());
  EXPECT_NE(c.ptx.find(".visible .entry"), std::string::npos);
  // The workload's arguments, in order: A 64x32, B 32x48, C 64x48.
  ASSERT_EQ(c.buffers.size(), 3u);
  const int64_t elements[] = {64 * 32, 32 * 48, 64 * 48};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(c.buffers[i].dtype, "float32");
    EXPECT_EQ(c.buffers[i].elements, elements[i]) << i;
    EXPECT_FALSE(c.buffers[i].workspace);
  }
  ASSERT_EQ(c.launches.size(), 1u);
  const codegen::CudaLaunch& l = c.launches[0];
  // 16x16 threads per block over a 64x48 output: 4 x 3 blocks.
  EXPECT_EQ(l.block[0] * l.block[1] * l.block[2], 256);
  EXPECT_EQ(l.grid[0] * l.grid[1] * l.grid[2], 12);
  EXPECT_EQ(l.args, (std::vector<int>{0, 1, 2}));
  EXPECT_NE(c.ptx.find(l.kernel), std::string::npos) << l.kernel;

  // Through the wire and back, unchanged.
  c.index = 9;
  c.fault = TestFault::kWrongValues;
  CudaCandidateMessage d = DecodeCudaCandidate(Encode(c));
  EXPECT_EQ(d.index, 9u);
  EXPECT_EQ(d.fault, TestFault::kWrongValues);
  EXPECT_EQ(d.arch, c.arch);
  EXPECT_EQ(d.cubin, c.cubin);
  EXPECT_EQ(d.ptx, c.ptx);
  ASSERT_EQ(d.buffers.size(), c.buffers.size());
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    EXPECT_EQ(d.buffers[i].name, c.buffers[i].name);
    EXPECT_EQ(d.buffers[i].elements, c.buffers[i].elements);
  }
  ASSERT_EQ(d.launches.size(), 1u);
  EXPECT_EQ(d.launches[0].kernel, l.kernel);
  EXPECT_EQ(d.launches[0].grid, l.grid);
  EXPECT_EQ(d.launches[0].block, l.block);
  EXPECT_EQ(d.launches[0].dynamic_shared_bytes, l.dynamic_shared_bytes);
  EXPECT_EQ(d.launches[0].args, l.args);
}

TEST(CudaCandidate, MultiKernelProgramsKeepTheirOrderAndWorkspace) {
  // conv2d: the padding kernel writes a workspace the convolution reads.
  CudaCandidateMessage conv = DecodeCudaCandidate(Encode(BuildCudaCandidate(ir::testing::Conv2d(), kSm90)));
  ASSERT_EQ(conv.launches.size(), 2u);
  const size_t params = 3;  // input, weight, output
  ASSERT_GT(conv.buffers.size(), params);
  for (size_t i = params; i < conv.buffers.size(); ++i) {
    EXPECT_TRUE(conv.buffers[i].workspace) << i;
    EXPECT_GT(conv.buffers[i].elements, 0) << i;
  }
  const int ws = static_cast<int>(params);
  EXPECT_THAT(conv.launches[0].args, ::testing::Contains(ws));  // padding writes it
  EXPECT_THAT(conv.launches[1].args, ::testing::Contains(ws));  // convolution reads it
  EXPECT_THAT(conv.launches[1].args, ::testing::Contains(2));   // and writes the output

  // Softmax: four kernels, in program order (max, exp, sum, normalize).
  CudaCandidateMessage sm = DecodeCudaCandidate(Encode(BuildCudaCandidate(ir::testing::Softmax(), kSm90)));
  ASSERT_EQ(sm.launches.size(), 4u);
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_THAT(sm.launches[k].kernel, HasSubstr("_kernel" + std::to_string(k)));
  }
  // The shared-memory GEMM carries its static shared memory in the kernel.
  CudaCandidateMessage gemm = BuildCudaCandidate(ir::testing::TiledGemm(), kSm90);
  ASSERT_EQ(gemm.launches.size(), 1u);
  EXPECT_GT(gemm.launches[0].static_shared_bytes, 0);
}

TEST(CudaCandidate, CorruptLaunchDescriptionsAreRefused) {
  const CudaCandidateMessage good = BuildCudaCandidate(ir::testing::MatmulPerThread(), kSm90);
  auto expect_bad = [&](auto mutate, const std::string& why) {
    CudaCandidateMessage c = good;
    mutate(c);
    try {
      DecodeCudaCandidate(Encode(c));
      ADD_FAILURE() << "accepted: " << why;
    } catch (const ProtocolError& e) {
      EXPECT_THAT(e.what(), HasSubstr(why));
    }
  };
  expect_bad([](CudaCandidateMessage& c) { c.launches[0].block[0] = 0; }, "block extent 0 on axis 0");
  expect_bad([](CudaCandidateMessage& c) { c.launches[0].grid[1] = 70000; }, "grid extent 70000 on axis 1");
  expect_bad([](CudaCandidateMessage& c) { c.launches[0].block = {64, 32, 1}; }, "more than 1024 threads");
  expect_bad([](CudaCandidateMessage& c) { c.launches[0].args.push_back(3); }, "passes buffer 3 of 3");
  expect_bad([](CudaCandidateMessage& c) { c.launches[0].dynamic_shared_bytes = -1; }, "dynamic shared");
  expect_bad([](CudaCandidateMessage& c) { c.launches.clear(); }, "0 launches");
  expect_bad([](CudaCandidateMessage& c) { c.launches[0].kernel.clear(); }, "names no kernel");
  expect_bad([](CudaCandidateMessage& c) { c.buffers[1].dtype = "float32x4"; }, "bad dtype");
  expect_bad([](CudaCandidateMessage& c) { c.buffers[1].elements = -5; }, "-5 elements");
  expect_bad([](CudaCandidateMessage& c) { c.cubin.clear(), c.ptx.clear(); }, "neither a cubin nor PTX");
  // A truncated payload is refused like any other message.
  const std::string bytes = Encode(good);
  EXPECT_THROW(DecodeCudaCandidate(bytes.substr(0, bytes.size() - 3)), ProtocolError);
}

// The GPU timing protocol is the CPU's with another clock: a fake clock of
// 0.1 ms per call grows `number` until a repeat lasts min_repeat_ms.
TEST(CudaTiming, BatchesFollowTheCpuProtocol) {
  search::TimingConfig t;
  t.number = 1;
  t.repeat = 3;
  t.min_repeat_ms = 5;
  t.flush_cache = true;
  int64_t calls = 0, flushes = 0, last_n = 0;
  std::vector<double> secs = TimeBatches(
      [&](int64_t n) {
        calls += n;
        last_n = n;
        return 1e-4 * static_cast<double>(n);
      },
      t, [&] { ++flushes; });
  ASSERT_EQ(secs.size(), 3u);
  for (double s : secs) EXPECT_NEAR(s, 1e-4, 1e-12);
  EXPECT_GE(static_cast<double>(last_n) * 1e-4, 5e-3);  // the last run lasted min_repeat_ms
  EXPECT_GE(flushes, 3);                                 // before every timed run
  EXPECT_GT(calls, 3 * 50);
}

#if KILN_HAVE_RUNNER

search::MeasureTask GpuTask(const ir::PrimFunc& workload) {
  search::MeasureTask task;
  task.workload = workload;
  task.target = kSm90;
  task.timing.number = 2;
  task.timing.repeat = 2;
  task.timing.min_repeat_ms = 1;
  task.timing.timeout_s = 30;
  task.input_seed = 3;
  return task;
}

TEST(CudaRunner, WithoutAGpuTheBatchFailsClearlyBeforeBuilding) {
  const std::string why = NoGpuReason();
  if (why.empty()) GTEST_SKIP() << "this machine has a GPU; the no-GPU path is not reachable";
  LocalRunner runner;
  std::vector<search::MeasureCandidate> batch(3, {ir::testing::MatmulPerThread(), "[]"});
  auto results = runner.Measure(GpuTask(ir::Matmul(64, 48, 32)), batch);
  ASSERT_EQ(results.size(), 3u);
  for (const auto& r : results) {
    EXPECT_EQ(r.status, MeasureStatus::kInfraError);
    EXPECT_THAT(r.message, HasSubstr("this machine cannot run CUDA kernels: " + why));
    EXPECT_TRUE(r.run_secs.empty());
  }
  EXPECT_EQ(runner.stats().children_started, 0);
  EXPECT_EQ(runner.stats().references_built, 0);
}

// The child's handling of CUDA requests, spoken to directly.
TEST(CudaRunner, ChildAnswersCudaCandidatesAndRefusesCorruptOnes) {
  const std::string why = NoGpuReason();
  ChildProcess child(FindRunnerExecutable({}), {"--memory-limit-mb=0"});
  CudaCandidateMessage c = BuildCudaCandidate(ir::testing::MatmulPerThread(), kSm90);

  // A CUDA candidate before any workload is an error reply, not a crash.
  child.Send(MessageType::kCudaCandidate, Encode(c));
  ChildProcess::Outcome o = child.Receive(30);
  ASSERT_EQ(o.kind, ChildProcess::Outcome::Kind::kMessage) << o.detail;
  EXPECT_EQ(o.message.type, MessageType::kError);
  EXPECT_THAT(o.message.payload, HasSubstr("before any workload"));

  // The workload: the reference is the unscheduled matmul on the CPU.
  const ir::PrimFunc workload = ir::Matmul(64, 48, 32);
  WorkloadMessage w;
  w.input_seed = 3;
  w.timing = GpuTask(workload).timing;
  const std::vector<search::ArgInfo> infos = search::ArgInfoOf(workload);
  for (size_t i = 0; i < infos.size(); ++i) {
    w.args.push_back({workload.params[i].name(), infos[i].dtype, infos[i].shape});
  }
  w.reference = codegen::BuildObject(workload, ReferenceTargetFor(kSm90));
  child.Send(MessageType::kWorkload, Encode(w));
  o = child.Receive(60);
  ASSERT_EQ(o.kind, ChildProcess::Outcome::Kind::kMessage) << o.detail;
  ASSERT_EQ(o.message.type, MessageType::kWorkloadReady) << o.message.payload;
  EXPECT_EQ(DecodeWorkloadReady(o.message.payload).expected.size(), 3u);

  // A launch description whose buffers do not match the workload.
  CudaCandidateMessage wrong = c;
  wrong.buffers[2].elements += 1;
  child.Send(MessageType::kCudaCandidate, Encode(wrong));
  o = child.Receive(30);
  ASSERT_EQ(o.kind, ChildProcess::Outcome::Kind::kMessage) << o.detail;
  ResultMessage r = DecodeResult(o.message.payload);
  EXPECT_EQ(r.status, MeasureStatus::kInfraError);
  EXPECT_THAT(r.message, HasSubstr("the CUDA launch description is wrong: buffer 2"));

  // The real candidate: measured on a GPU, or an infra_error saying why not.
  child.Send(MessageType::kCudaCandidate, Encode(c));
  o = child.Receive(60);
  ASSERT_EQ(o.kind, ChildProcess::Outcome::Kind::kMessage) << o.detail;
  r = DecodeResult(o.message.payload);
  if (why.empty()) {
    EXPECT_EQ(r.status, MeasureStatus::kOk) << r.message;
    EXPECT_TRUE(r.verified);
  } else {
    EXPECT_EQ(r.status, MeasureStatus::kInfraError);
    EXPECT_THAT(r.message, HasSubstr("this machine cannot run CUDA kernels: " + why));
  }

  // A corrupt payload ends the child with the reason on its stderr.
  std::string bad = Encode(c);
  child.Send(MessageType::kCudaCandidate, bad.substr(0, bad.size() / 2));
  o = child.Receive(30);
  EXPECT_EQ(o.kind, ChildProcess::Outcome::Kind::kDied);
  EXPECT_THAT(child.stderr_tail(), HasSubstr("bad cuda candidate message"));
}

// Real kernels on a real GPU: launched, checked against the CPU reference and
// timed; a child that crashes is replaced and the next candidate measured.
TEST(CudaRunner, RealKernelsOnTheGpu) {
  const std::string why = NoGpuReason();
  if (!why.empty()) GTEST_SKIP() << "no GPU to launch kernels on: " << why;
  struct Case {
    const char* name;
    ir::PrimFunc workload, scheduled;
  };
  const std::vector<Case> cases = {
      {"matmul", ir::Matmul(64, 48, 32), ir::testing::MatmulPerThread(64, 48, 32)},
      {"tiled gemm", ir::Matmul(64, 64, 64), ir::testing::TiledGemm()},
      {"conv2d", ir::Conv2dNHWC(1, 10, 10, 8, 16, 3, 1, 1), ir::testing::Conv2d()},
      {"softmax", ir::SoftmaxMN(16, 100), ir::testing::Softmax()},
      {"softmax cross-thread", ir::SoftmaxMN(16, 100), ir::testing::SoftmaxCrossThread()},
      {"softmax cross-thread, 128 threads", ir::SoftmaxMN(4, 300),
       ir::testing::SoftmaxCrossThread(128, 4, 300)},
      {"softmax cross-thread, 6 threads", ir::SoftmaxMN(16, 100),
       ir::testing::SoftmaxCrossThread(6)},
      {"softmax in one kernel", ir::SoftmaxMN(4, 100), ir::testing::SoftmaxOneKernel(64)},
      {"softmax rows on threadIdx.y", ir::SoftmaxMN(8, 100), ir::testing::SoftmaxRowsOnThreadY(8)},
  };
  LocalRunner runner;
  for (const Case& c : cases) {
    auto r = runner.Measure(GpuTask(c.workload), {{c.scheduled, "[]"}}).at(0);
    EXPECT_EQ(r.status, MeasureStatus::kOk) << c.name << ": " << r.message;
    EXPECT_TRUE(r.verified) << c.name;
    ASSERT_EQ(r.run_secs.size(), 2u) << c.name;
    for (double s : r.run_secs) EXPECT_GT(s, 0) << c.name;
  }
  LocalRunnerOptions faulty;
  faulty.test_faults = {TestFault::kSegfault, TestFault::kNone, TestFault::kWrongValues,
                        TestFault::kNone};
  LocalRunner crashy(faulty);
  std::vector<search::MeasureCandidate> batch(4, {ir::testing::MatmulPerThread(64, 48, 32), "[]"});
  auto rs = crashy.Measure(GpuTask(ir::Matmul(64, 48, 32)), batch);
  EXPECT_EQ(rs[0].status, MeasureStatus::kRunCrash) << rs[0].message;
  EXPECT_THAT(rs[0].message, HasSubstr("SIGSEGV"));
  EXPECT_EQ(rs[1].status, MeasureStatus::kOk) << rs[1].message;
  EXPECT_EQ(rs[2].status, MeasureStatus::kWrongResult) << rs[2].message;
  EXPECT_EQ(rs[3].status, MeasureStatus::kOk) << rs[3].message;
  EXPECT_GE(crashy.stats().children_started, 3);
  EXPECT_EQ(crashy.stats().references_run, 1);  // the reference ran once for all children
}

#endif  // KILN_HAVE_RUNNER

}  // namespace
}  // namespace kiln::rpc
