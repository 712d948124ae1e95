// GMM 1024^3 (batch_matmul_nkkm, batch 1) under the hand-written CPU
// schedule for this host's vector width (configs/traces/gmm_1024_cpu.json
// on AVX-512, gmm_1024_avx2.json otherwise), against OpenBLAS sgemm and
// oneDNN's matmul with packed B, with the same thread count, in the same run.
//
//   gemm_bench [--trace FILE | --db FILE] [--threads N] [--reps N] [--emit-asm FILE]
//       --db races the best verified record of GMM:3 on this host in a
//       tuning database (e.g. after `kiln tune --workload GMM:3 --trials 512`)
//   gemm_bench --write-trace FILE [--rows R --vecs V]
//       regenerates the trace file from the schedule written out below
//       (R x 16V register tile; the committed files are 4 x 64 for
//       AVX-512, the default, and 4 x 16 for AVX2: --rows 4 --vecs 1)
//
// Goals (issue 17, kernel quality at 512 trials): Kiln >= 1.05x OpenBLAS and
// >= 0.95x oneDNN. oneDNN's matmul gets B with format_tag::any and B is
// reordered into the layout it picks once, before timing ("packed B": the
// weights of an inference layer are constant). Each peer is optional
// (bench/CMakeLists.txt): without one, its line says so.
//
// The kernel is first checked against sampled elements computed in double,
// then OpenBLAS's and oneDNN's results against the kernel's; then all are
// timed: median of --reps runs, in alternating blocks after a warm-up each
// (bench/peer_timing.h says why). On a host without AVX-512, oneDNN 2.6's
// matmul has no brgemm kernel and keeps B as given (it prints its choice).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/bench_main.h"
#include "bench/bench_trace.h"
#include "codegen/kernel_abi.h"
#include "codegen/llvm_backend.h"
#include "codegen/target_features.h"
#include "ir/compare.h"
#include "ir/interpreter.h"
#include "ir/ndarray.h"
#include "ir/schedule/schedule.h"
#include "ir/schedule/trace.h"
#include "ir/workloads/suite.h"
#include "onednn_peer.h"
#include "peer_timing.h"

#ifdef KILN_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace kiln::bench {
namespace {

constexpr int64_t kN = 1024;

// The hand schedule (configs/traces/README.md explains it). Loops of "Z":
// b, i, j, k. Each parallel task owns a 64-column panel of Z: it packs that
// panel of Y (1024 x 64, 256 KiB, contiguous: unpacked, its rows 4 KiB apart
// fall into a few cache sets and the panel does not stay in L2), then for
// every 4-row strip keeps the 4 x 64 accumulator in registers over all of k.
// Register tile: kRows rows of Z by kVecs vectors of 16 floats. 4 x 4 keeps
// 16 zmm accumulators, 4 loads of Y and 4 broadcasts of X per 16 FMAs; 8 x 2
// and 2 x 8 measured slower, larger tiles spill. With AVX2's 16 ymm
// registers a 16-float vector is two of them: 4 x 1 (8 accumulators) beat
// 8 x 1, 4 x 2 and 2 x 2 on znver3, and 4 x 4 spills.
void HandSchedule(ir::Schedule& sch, int64_t rows, int64_t vecs) {
  ir::BlockRV z = sch.GetBlock("Z");
  std::vector<ir::LoopRV> l = sch.GetLoops(z);
  auto i = sch.Split(l[1], {std::monostate{}, rows});
  auto j = sch.Split(l[2], {std::monostate{}, vecs, int64_t{16}});
  sch.Reorder({l[0], j[0], i[0], l[3], i[1], j[1], j[2]});
  ir::BlockRV local = sch.CacheWrite(z, 0, "local");
  sch.ReverseComputeAt(local, i[0], true);
  ir::BlockRV packed = sch.CacheRead(z, 1, "global");
  sch.ComputeAt(packed, j[0], true);
  sch.Parallel(sch.Fuse({l[0], j[0]}));
  sch.Unroll(i[1]);
  sch.Unroll(j[1]);
  sch.Vectorize(j[2]);
  sch.DecomposeReduction(z, l[3]);
}

// The trace JSON with one instruction per line, so that a diff of the file
// reads as a diff of the schedule.
std::string TraceFileText(const ir::Trace& trace) {
  const nlohmann::json j = trace.AsJSON();
  std::string text = "[[\n";
  for (size_t i = 0; i < j[0].size(); ++i) text += "  " + j[0][i].dump() + (i + 1 < j[0].size() ? ",\n" : "\n");
  return text + " ],\n " + j[1].dump() + "]\n";
}

// Largest |kiln - double reference| / (1 + |reference|) over sampled
// elements of Z = X * Y (row-major, batch 1).
double SampledError(const float* x, const float* y, const float* z, int samples) {
  double worst = 0;
  uint64_t s = 12345;
  for (int t = 0; t < samples; ++t) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    const int64_t i = static_cast<int64_t>((s >> 33) % kN);
    const int64_t j = static_cast<int64_t>((s >> 13) % kN);
    double ref = 0;
    for (int64_t k = 0; k < kN; ++k) ref += double(x[i * kN + k]) * double(y[k * kN + j]);
    worst = std::max(worst, std::abs(ref - z[i * kN + j]) / (1 + std::abs(ref)));
  }
  return worst;
}

int Run(int argc, char** argv) {
  CLI::App app{"GMM 1024^3: a Kiln schedule vs OpenBLAS sgemm and oneDNN matmul (packed B)"};
  const ir::Target host = codegen::HostTarget();
  std::string trace_path = std::string(KILN_SOURCE_DIR "/configs/traces/") +
                           (codegen::TargetHasFeature(host, "avx512f") ? "gmm_1024_cpu.json" : "gmm_1024_avx2.json");
  std::string write_trace, emit_asm, db_path;
  int threads = 2, reps = 9;
  auto* trace_opt = app.add_option("--trace", trace_path, "Trace JSON applied to GMM 1024^3");
  app.add_option("--db", db_path, "Race the best verified GMM:3 record for this host in a tuning database")
      ->excludes(trace_opt);
  app.add_option("--threads", threads, "Threads for Kiln, OpenBLAS and oneDNN")->check(CLI::Range(1, 256));
  app.add_option("--reps", reps, "Timed runs of each (median)")->check(CLI::Range(1, 1000));
  app.add_option("--write-trace", write_trace, "Write the hand schedule's trace to FILE and exit");
  app.add_option("--emit-asm", emit_asm, "Write the kernel's assembly to FILE");
  int64_t rows = 4, vecs = 4;
  app.add_option("--rows", rows, "With --write-trace: register tile rows (default 4)")->check(CLI::Range(1, 64));
  app.add_option("--vecs", vecs, "With --write-trace: register tile width in 16-float vectors (default 4)")
      ->check(CLI::Range(1, 64));
  CLI11_PARSE(app, argc, argv);

  const ir::PrimFunc gmm = ir::MakeWorkload("GMM", 3);
  if (!write_trace.empty()) {
    ir::Schedule sch(gmm, 1);
    HandSchedule(sch, rows, vecs);
    std::ofstream out(write_trace);
    out << TraceFileText(sch.trace());
    if (!out) throw std::runtime_error("cannot write " + write_trace);
    std::cout << "wrote " << write_trace << "\n" << sch.trace().AsPython();
    return 0;
  }

  const BenchTrace picked = LoadBenchTrace(gmm, "GMM:3", host.ToString(), db_path, trace_path);
  const std::string& trace_json = picked.json;
  const std::string& trace_from = picked.from;
  ir::Schedule sch(gmm, 1);
  ir::Trace::FromJSONString(trace_json).ApplyToSchedule(&sch, /*remove_postproc=*/false);
  if (!emit_asm.empty()) {
    std::ofstream(emit_asm) << codegen::EmitAssembly(sch.func(), host);
  }
  auto kernel = codegen::JitKernel::Load(codegen::BuildObject(sch.func(), host));

  std::vector<ir::NDArray> args = ir::MakeRandomArgs(gmm, 7);
  const float* x = args[0].data_as<float>();
  const float* y = args[1].data_as<float>();
  float* z = args[2].data_as<float>();
  void* ptrs[3] = {args[0].data(), args[1].data(), args[2].data()};
  kiln_runtime_set_num_threads(threads);
  auto run_kiln = [&] {
    if (kernel->Call(ptrs) != 0) throw std::runtime_error("kernel returned non-zero");
  };
  run_kiln();

  const double flops = 2.0 * kN * kN * kN;
  std::cout << "GMM 1024^3, " << trace_from << ", " << threads << " thread(s), median of " << reps
            << ", load average " << LoadAverage() << " on " << host.num_cores << " core(s)\n";
  const double sampled = SampledError(x, y, z, 2000);
  if (sampled > 1e-4) {
    std::cerr << "FAIL: kernel differs from the double reference (worst scaled error " << sampled << ")\n";
    return 1;
  }
  std::vector<Contender> contenders;
  contenders.push_back({"kiln", run_kiln, {}});
#ifdef KILN_HAVE_OPENBLAS
  openblas_set_num_threads(threads);
  ir::NDArray zb(ir::DataType::Float32(), {1, kN, kN});
  auto run_blas = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kN, kN, kN, 1.0f, x, kN, y, kN, 0.0f,
                zb.data_as<float>(), kN);
  };
  run_blas();
  // Different summation orders over 1024 terms: compare at 1e-4, not the
  // float32 default of 1e-5.
  ir::CompareResult cmp = ir::Compare(zb, args[2], ir::Tolerance{1e-4, 1e-4}, "Z");
  if (!cmp.ok) {
    std::cerr << "FAIL: kernel differs from OpenBLAS: " << cmp.message << "\n";
    return 1;
  }
  contenders.push_back({"openblas", run_blas, {}});
#endif
#ifdef KILN_HAVE_DNNL
  using dnnl::memory;
  OneDnnPeer dnnl_peer(threads);
  const memory::dims dims = {kN, kN};
  const memory::desc plain(dims, memory::data_type::f32, memory::format_tag::ab);
  const dnnl::matmul::primitive_desc mm_pd(
      dnnl::matmul::desc(plain, memory::desc(dims, memory::data_type::f32, memory::format_tag::any), plain),
      dnnl_peer.engine);
  // oneDNN's memory takes a non-const handle; it only reads src and weights.
  memory a_mem(plain, dnnl_peer.engine, const_cast<float*>(x));
  memory b_user(plain, dnnl_peer.engine, const_cast<float*>(y));
  memory b_packed = dnnl_peer.Prepacked(b_user, mm_pd.weights_desc());
  ir::NDArray zd(ir::DataType::Float32(), {1, kN, kN});
  memory c_mem(plain, dnnl_peer.engine, zd.data());
  dnnl::matmul matmul(mm_pd);
  auto run_dnnl = [&] {
    matmul.execute(dnnl_peer.stream,
                   {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_packed}, {DNNL_ARG_DST, c_mem}});
    dnnl_peer.stream.wait();
  };
  run_dnnl();
  ir::CompareResult dcmp = ir::Compare(zd, args[2], ir::Tolerance{1e-4, 1e-4}, "Z");
  if (!dcmp.ok) {
    std::cerr << "FAIL: kernel differs from oneDNN: " << dcmp.message << "\n";
    return 1;
  }
  std::cout << "onednn: matmul " << OneDnnPeer::Describe(mm_pd.impl_info_str(), plain, mm_pd.weights_desc())
            << "\n";
  contenders.push_back({"onednn", run_dnnl, {}});
#endif
  TimeInAlternatingBlocks(contenders, reps);
  const double gk = ReportContender(contenders[0], flops);
  for (size_t c = 1; c < contenders.size(); ++c) {
    const double gp = ReportContender(contenders[c], flops);
    if (contenders[c].name == "openblas") ReportRatio("openblas", gk, gp, 1.05, "OpenBLAS");
    if (contenders[c].name == "onednn") ReportRatio("onednn", gk, gp, 0.95, "oneDNN");
  }
#ifndef KILN_HAVE_OPENBLAS
  std::printf("openblas not found at configure time (install libopenblas-dev): no ratio\n");
#endif
#ifndef KILN_HAVE_DNNL
  std::printf("onednn not found at configure time (install libdnnl-dev): no ratio\n");
#endif
  return 0;
}

}  // namespace
}  // namespace kiln::bench

int main(int argc, char** argv) {
  return kiln::bench::BenchMain("gemm_bench", kiln::bench::Run, argc, argv);
}
