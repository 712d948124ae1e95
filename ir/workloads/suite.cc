#include "ir/workloads/suite.h"

#include <functional>
#include <stdexcept>

#include "ir/flops.h"
#include "ir/op.h"
#include "ir/workloads/variants.h"

namespace kiln::ir {

namespace {

using Params = std::vector<int64_t>;

struct Family {
  std::string name;
  std::function<PrimFunc(const Params&)> build;
  std::vector<Params> configs;
};

// te_workload.py's CONFIGS (same order and values), then the extras.
const std::vector<Family>& Families() {
  static const std::vector<Family> families = {
      {"C1D",
       [](const Params& p) { return Conv1dNLC(p[0], p[1], p[2], p[3], p[4], p[5], p[6]); },
       {{1, 256, 64, 128, 3, 2, 1},
        {1, 128, 128, 256, 1, 2, 0},
        {1, 64, 256, 256, 5, 1, 2},
        {1, 32, 512, 512, 3, 1, 1}}},
      {"C2D",
       [](const Params& p) { return Conv2dNHWC(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]); },
       {{1, 224, 224, 3, 64, 7, 2, 3},
        {1, 56, 56, 64, 64, 1, 1, 0},
        {1, 14, 14, 256, 256, 3, 1, 1},
        {1, 7, 7, 512, 512, 3, 1, 1}}},
      {"C3D",
       [](const Params& p) {
         return Conv3dNDHWC(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8]);
       },
       {{1, 16, 224, 224, 3, 64, 7, 2, 3},
        {1, 16, 56, 56, 64, 64, 1, 1, 0},
        {1, 16, 14, 14, 256, 256, 3, 1, 1},
        {1, 16, 7, 7, 512, 512, 3, 1, 1}}},
      {"GMM",
       [](const Params& p) { return BatchMatmulNKKM(p[0], p[1], p[2], p[3]); },
       {{1, 128, 128, 128}, {1, 512, 32, 512}, {1, 512, 512, 512}, {1, 1024, 1024, 1024}}},
      {"GRP",
       [](const Params& p) {
         return Conv2dNHWC(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9]);
       },
       {{1, 56, 56, 64, 128, 3, 2, 1, 1, 4},
        {1, 56, 56, 64, 64, 1, 1, 0, 1, 4},
        {1, 14, 14, 256, 256, 3, 1, 1, 1, 4},
        {1, 7, 7, 512, 512, 3, 1, 1, 1, 4}}},
      {"DIL",
       [](const Params& p) {
         return Conv2dNHWC(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8]);
       },
       {{1, 224, 224, 3, 64, 7, 2, 3, 2},
        {1, 56, 56, 64, 64, 1, 1, 0, 2},
        {1, 14, 14, 256, 256, 3, 1, 1, 2},
        {1, 7, 7, 512, 512, 3, 1, 1, 2}}},
      {"DEP",
       [](const Params& p) {
         return DepthwiseConv2dNHWC(p[0], p[1], p[2], p[3], p[4], p[5], p[6]);
       },
       {{1, 112, 112, 32, 3, 1, 1},
        {1, 112, 112, 64, 3, 2, 1},
        {1, 14, 14, 512, 3, 2, 1},
        {1, 7, 7, 1024, 3, 1, 1}}},
      {"T2D",
       [](const Params& p) {
         return Conv2dTransposeNHWC(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
       },
       {{1, 4, 4, 512, 256, 4, 2, 1},
        {1, 8, 8, 256, 128, 4, 2, 1},
        {1, 16, 16, 128, 64, 4, 2, 1},
        {1, 32, 32, 64, 3, 4, 2, 1}}},
      {"CAP",
       [](const Params& p) {
         return Conv2dCapsuleNHWIJC(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
       },
       {{1, 16, 16, 32, 32, 3, 2, 1},
        {1, 8, 8, 32, 32, 3, 1, 1},
        {1, 16, 16, 8, 16, 3, 2, 1},
        {1, 8, 8, 16, 16, 3, 1, 1}}},
      {"NRM",
       [](const Params& p) { return NormBMN(p[0], p[1], p[2]); },
       {{1, 256, 256}, {1, 512, 512}, {1, 1024, 1024}, {1, 4096, 1024}}},
      {"SFM",
       [](const Params& p) { return SoftmaxMN(p[0], p[1]); },
       {{256, 256}, {512, 512}, {1024, 1024}, {2048, 2048}}},
      {"CBR",
       [](const Params& p) {
         return Conv2dNHWCBnRelu(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
       },
       {{1, 224, 224, 3, 64, 7, 2, 3},
        {1, 56, 56, 64, 128, 3, 2, 1},
        {1, 28, 28, 128, 256, 1, 2, 0},
        {1, 7, 7, 512, 512, 3, 1, 1}}},
      {"TBG",
       [](const Params& p) { return TransposeBatchMatmul(p[0], p[1], p[2], p[3]); },
       {{1, 128, 12, 64}, {1, 128, 16, 64}, {1, 64, 12, 128}, {1, 128, 12, 128}}},
      {"matmul", [](const Params& p) { return Matmul(p[0], p[1], p[2]); }, {{1024, 1024, 1024}}},
      {"matmul_relu",
       [](const Params& p) { return MatmulRelu(p[0], p[1], p[2]); },
       {{1024, 1024, 1024}}},
      {"conv2d_nchw",
       [](const Params& p) {
         return Conv2dNCHW(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8]);
       },
       {{1, 56, 56, 64, 64, 3, 3, 1, 1}}},
      {"GEMV", [](const Params& p) { return GemvNT(p[0], p[1], p[2]); }, {{1, 4096, 4096}}},
      {"RMS", [](const Params& p) { return RmsNorm(p[0], p[1], 1e-5); }, {{1, 4096}}},
      {"ATTN_SFM",
       [](const Params& p) {
         return Softmax({p[0], p[1], p[2]}, -1);
       },
       {{32, 1, 4096}}},
  };
  return families;
}

// Families one can name but that are not part of the suite (variants.h).
const std::vector<Family>& Variants() {
  static const std::vector<Family> variants = {
      {"GMM_FP16",
       [](const Params& p) { return BatchMatmulNKKMFp16(p[0], p[1], p[2], p[3]); },
       {{1, 128, 128, 128}, {1, 512, 32, 512}, {1, 512, 512, 512}, {1, 1024, 1024, 1024}}},
  };
  return variants;
}

std::string FormatParams(const Params& p) {
  std::string s = "(";
  for (size_t i = 0; i < p.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(p[i]);
  }
  return s + ")";
}

const Family& Find(const std::string& name, int index) {
  std::vector<const Family*> all;
  for (const auto& f : Families()) all.push_back(&f);
  for (const auto& f : Variants()) all.push_back(&f);
  for (const Family* fp : all) {
    const Family& f = *fp;
    if (f.name != name) continue;
    if (index < 0 || index >= static_cast<int>(f.configs.size())) {
      throw std::invalid_argument("workload " + name + " has configs 0.." +
                                  std::to_string(f.configs.size() - 1) + ", not " +
                                  std::to_string(index));
    }
    return f;
  }
  std::string valid;
  for (const Family* f : all) valid += (valid.empty() ? "" : ", ") + f->name;
  throw std::invalid_argument("unknown workload '" + name + "'; valid names: " + valid);
}

}  // namespace

std::vector<WorkloadConfig> SuiteConfigs() {
  std::vector<WorkloadConfig> out;
  for (const auto& f : Families()) {
    for (size_t i = 0; i < f.configs.size(); ++i) {
      out.push_back({f.name, static_cast<int>(i), FormatParams(f.configs[i])});
    }
  }
  return out;
}

std::vector<std::string> SuiteNames() {
  std::vector<std::string> out;
  for (const auto& f : Families()) out.push_back(f.name);
  return out;
}

PrimFunc MakeWorkload(const std::string& name, int index) {
  const Family& f = Find(name, index);
  return f.build(f.configs[index]);
}

PrimFunc MakeWorkloadWithParams(const std::string& name, const std::vector<int64_t>& params) {
  const Family& f = Find(name, 0);
  if (params.size() != f.configs[0].size()) {
    throw std::invalid_argument("workload " + name + " takes " +
                                std::to_string(f.configs[0].size()) + " parameters, as in " +
                                name + FormatParams(f.configs[0]) + "; got " +
                                std::to_string(params.size()));
  }
  try {
    return f.build(params);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("workload " + name + FormatParams(params) + ": " + e.what());
  }
}

WorkloadInfo DescribeWorkload(const std::string& name, int index) {
  const Family& f = Find(name, index);
  PrimFunc func = f.build(f.configs[index]);
  WorkloadInfo info;
  info.name = name;
  info.index = index;
  info.params = FormatParams(f.configs[index]);
  for (const auto& b : func.params) {
    std::vector<int64_t> shape;
    for (const auto& d : b.shape()) {
      int64_t v = 0;
      if (!AsConstInt(d, &v)) {
        throw std::logic_error("workload " + name + ": buffer " + b.name() +
                               " has a non-constant shape");
      }
      shape.push_back(v);
    }
    info.args.emplace_back(b.name(), std::move(shape));
  }
  info.flops = EstimateFlops(func);
  return info;
}

}  // namespace kiln::ir
