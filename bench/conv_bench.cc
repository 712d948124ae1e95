// C2D:0, ResNet-50's first layer (conv2d_nhwc: 1x224x224x3 -> 64 channels,
// 7x7, stride 2, padding 3), Kiln's tuned kernel against oneDNN's forward
// convolution with the same thread count, in the same run.
//
//   conv_bench (--db FILE | --trace FILE) [--threads N] [--reps N]
//       --db races the best verified record of C2D:0 for this host in a
//       tuning database (e.g. after `kiln tune --workload C2D:0 --trials 512`);
//       --trace applies a trace JSON file to C2D:0 instead
//
// Goal (issue 17, kernel quality at 512 trials): Kiln >= 0.85x oneDNN.
// oneDNN gets NHWC src and dst (format_tag::nhwc, Kiln's layouts) and its
// weights with format_tag::any, reordered once before timing into the layout
// it picks (a blocked one for its jit or brgemm kernels): the weights of an
// inference layer are constant. Without oneDNN (bench/CMakeLists.txt) Kiln is
// timed alone.
//
// Both outputs are first checked against a naive convolution computed in
// double; then both are timed: median of --reps runs, in alternating blocks
// after a warm-up each (bench/peer_timing.h says why).
#include <cmath>
#include <cstdint>
#include <cstdio>
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
#include "ir/ndarray.h"
#include "ir/schedule/schedule.h"
#include "ir/schedule/trace.h"
#include "ir/workloads/suite.h"
#include "onednn_peer.h"
#include "peer_timing.h"

namespace kiln::bench {
namespace {

// C2D config 0 (ir/workloads/suite.cc): N, H, W, CI, CO, kernel, stride,
// padding. Conv2dNHWC (ir/workloads/conv.cc) takes inputs [N, H, W, CI],
// weight [KH, KW, CI, CO] (HWIO) and writes [N, OH, OW, CO]; Run checks
// these shapes against the workload's parameters before anything else.
constexpr int64_t kN = 1, kH = 224, kW = 224, kCI = 3, kCO = 64, kK = 7, kStride = 2, kPad = 3;
constexpr int64_t kOH = (kH + 2 * kPad - kK) / kStride + 1;  // 112
constexpr int64_t kOW = (kW + 2 * kPad - kK) / kStride + 1;  // 112

void CheckWorkloadShapes() {
  const ir::WorkloadInfo info = ir::DescribeWorkload("C2D", 0);
  const std::vector<std::vector<int64_t>> expected = {
      {kN, kH, kW, kCI}, {kK, kK, kCI, kCO}, {kN, kOH, kOW, kCO}};
  bool ok = info.args.size() == expected.size();
  for (size_t i = 0; ok && i < expected.size(); ++i) ok = info.args[i].second == expected[i];
  if (!ok) {
    throw std::runtime_error("C2D:0 " + info.params +
                             " no longer has the shapes conv_bench was written for "
                             "(inputs NHWC 1x224x224x3, weight HWIO 7x7x3x64, output 1x112x112x64)");
  }
}

// The convolution in double, straight from its definition, rounded to float.
ir::NDArray NaiveConv(const float* in, const float* weight) {
  ir::NDArray out(ir::DataType::Float32(), {kN, kOH, kOW, kCO});
  float* o = out.data_as<float>();
  std::vector<double> acc(kCO);
  for (int64_t n = 0; n < kN; ++n) {
    for (int64_t oh = 0; oh < kOH; ++oh) {
      for (int64_t ow = 0; ow < kOW; ++ow) {
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t rh = 0; rh < kK; ++rh) {
          const int64_t ih = oh * kStride + rh - kPad;
          if (ih < 0 || ih >= kH) continue;
          for (int64_t rw = 0; rw < kK; ++rw) {
            const int64_t iw = ow * kStride + rw - kPad;
            if (iw < 0 || iw >= kW) continue;
            for (int64_t ci = 0; ci < kCI; ++ci) {
              const double x = in[((n * kH + ih) * kW + iw) * kCI + ci];
              const float* w = weight + ((rh * kK + rw) * kCI + ci) * kCO;
              for (int64_t co = 0; co < kCO; ++co) acc[co] += x * w[co];
            }
          }
        }
        for (int64_t co = 0; co < kCO; ++co) o[((n * kOH + oh) * kOW + ow) * kCO + co] = float(acc[co]);
      }
    }
  }
  return out;
}

int Run(int argc, char** argv) {
  CLI::App app{"C2D:0 (ResNet-50's first convolution, NHWC): a tuned Kiln kernel vs oneDNN"};
  const ir::Target host = codegen::HostTarget();
  std::string trace_path, db_path;
  int threads = 2, reps = 9;
  auto* trace_opt = app.add_option("--trace", trace_path, "Trace JSON applied to C2D:0");
  auto* db_opt = app.add_option("--db", db_path, "Race the best verified C2D:0 record for this host in a tuning database");
  trace_opt->excludes(db_opt);
  db_opt->excludes(trace_opt);
  app.add_option("--threads", threads, "Threads for Kiln and oneDNN")->check(CLI::Range(1, 256));
  app.add_option("--reps", reps, "Timed runs of each (median)")->check(CLI::Range(1, 1000));
  CLI11_PARSE(app, argc, argv);
  if (trace_path.empty() && db_path.empty()) {
    throw std::runtime_error("give --db FILE (a tuning database with C2D:0 records) or --trace FILE");
  }

  CheckWorkloadShapes();
  const ir::PrimFunc conv = ir::MakeWorkload("C2D", 0);
  const BenchTrace picked = LoadBenchTrace(conv, "C2D:0", host.ToString(), db_path, trace_path);
  const std::string& trace_json = picked.json;
  const std::string& trace_from = picked.from;
  ir::Schedule sch(conv, 1);
  ir::Trace::FromJSONString(trace_json).ApplyToSchedule(&sch, /*remove_postproc=*/false);
  auto kernel = codegen::JitKernel::Load(codegen::BuildObject(sch.func(), host));

  std::vector<ir::NDArray> args = ir::MakeRandomArgs(conv, 7);
  const float* in = args[0].data_as<float>();
  const float* weight = args[1].data_as<float>();
  void* ptrs[3] = {args[0].data(), args[1].data(), args[2].data()};
  kiln_runtime_set_num_threads(threads);
  auto run_kiln = [&] {
    if (kernel->Call(ptrs) != 0) throw std::runtime_error("kernel returned non-zero");
  };
  run_kiln();

  const double flops = 2.0 * kN * kOH * kOW * kCO * kK * kK * kCI;
  std::cout << "C2D:0 1x224x224x3 -> 64, 7x7 stride 2 pad 3 (NHWC), " << trace_from << ", " << threads
            << " thread(s), median of " << reps << ", load average " << LoadAverage() << " on "
            << host.num_cores << " core(s)\n";
  // 147 products of values in [-1, 1) per output; a float32 sum in another
  // order stays well inside 1e-4.
  const ir::NDArray reference = NaiveConv(in, weight);
  const ir::Tolerance tol{1e-4, 1e-4};
  ir::CompareResult cmp = ir::Compare(reference, args[2], tol, "output");
  if (!cmp.ok) {
    std::cerr << "FAIL: kernel differs from the naive convolution: " << cmp.message << "\n";
    return 1;
  }
  std::vector<Contender> contenders;
  contenders.push_back({"kiln", run_kiln, {}});
#ifdef KILN_HAVE_DNNL
  using dnnl::memory;
  using tag = memory::format_tag;
  constexpr auto f32 = memory::data_type::f32;
  OneDnnPeer dnnl_peer(threads);
  // oneDNN's dims are logical: NCHW for data, OIHW for weights, whatever the
  // layout in memory; the format tag gives the layout. Kiln's weight
  // [KH][KW][CI][CO] is OIHW's dims laid out h, w, i, o: format_tag::hwio.
  const memory::desc src_md({kN, kCI, kH, kW}, f32, tag::nhwc);
  const memory::desc dst_md({kN, kCO, kOH, kOW}, f32, tag::nhwc);
  const memory::desc user_wei_md({kCO, kCI, kK, kK}, f32, tag::hwio);
  const dnnl::convolution_forward::primitive_desc conv_pd(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                      src_md, memory::desc({kCO, kCI, kK, kK}, f32, tag::any), dst_md,
                                      {kStride, kStride}, {kPad, kPad}, {kPad, kPad}),
      dnnl_peer.engine);
  if (conv_pd.src_desc() != src_md || conv_pd.dst_desc() != dst_md) {
    throw std::runtime_error("oneDNN chose other than NHWC for src or dst");
  }
  // oneDNN's memory takes a non-const handle; it only reads src and weights.
  memory src_mem(src_md, dnnl_peer.engine, const_cast<float*>(in));
  memory wei_user(user_wei_md, dnnl_peer.engine, const_cast<float*>(weight));
  memory wei_packed = dnnl_peer.Prepacked(wei_user, conv_pd.weights_desc());
  ir::NDArray out_dnnl(ir::DataType::Float32(), {kN, kOH, kOW, kCO});
  memory dst_mem(dst_md, dnnl_peer.engine, out_dnnl.data());
  dnnl::convolution_forward conv_prim(conv_pd);
  auto run_dnnl = [&] {
    conv_prim.execute(dnnl_peer.stream,
                      {{DNNL_ARG_SRC, src_mem}, {DNNL_ARG_WEIGHTS, wei_packed}, {DNNL_ARG_DST, dst_mem}});
    dnnl_peer.stream.wait();
  };
  run_dnnl();
  ir::CompareResult dcmp = ir::Compare(reference, out_dnnl, tol, "output");
  if (!dcmp.ok) {
    std::cerr << "FAIL: oneDNN differs from the naive convolution (weight layout?): " << dcmp.message << "\n";
    return 1;
  }
  std::cout << "onednn: convolution "
            << OneDnnPeer::Describe(conv_pd.impl_info_str(), user_wei_md, conv_pd.weights_desc()) << "\n";
  contenders.push_back({"onednn", run_dnnl, {}});
#endif
  TimeInAlternatingBlocks(contenders, reps);
  const double gk = ReportContender(contenders[0], flops);
#ifdef KILN_HAVE_DNNL
  const double gd = ReportContender(contenders[1], flops);
  ReportRatio("onednn", gk, gd, 0.85, "oneDNN");
#else
  (void)gk;
  std::printf("onednn not found at configure time (install libdnnl-dev): no ratio\n");
#endif
  return 0;
}

}  // namespace
}  // namespace kiln::bench

int main(int argc, char** argv) {
  return kiln::bench::BenchMain("conv_bench", kiln::bench::Run, argc, argv);
}
