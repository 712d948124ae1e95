// Every operator family of the suite, at reduced shapes, run through the
// reference interpreter and checked against a hand-written C++ operator.
#include <gtest/gtest.h>

#include "ir/compare.h"
#include "ir/interpreter.h"
#include "ir/ndarray.h"
#include "ir/workloads/suite.h"
#include "tests/workloads/reference_ops.h"

namespace kiln::ir {
namespace {

using reference::Vec;

Vec ToVec(const NDArray& a) {
  const float* p = a.data_as<float>();
  return Vec(p, p + a.size());
}

// Runs f on random inputs; returns the arguments (the output last).
std::vector<NDArray> RunOnRandom(const PrimFunc& f, uint64_t seed = 7) {
  std::vector<NDArray> args = MakeRandomArgs(f, seed);
  Interpret(f, args);
  return args;
}

// The sums here reassociate a few hundred float32 products: the reference
// accumulates in double, the program in float32 in its own loop order.
void ExpectMatches(const Vec& expected, const NDArray& actual, const std::string& name) {
  NDArray ref(DataType::Float32(), actual.shape());
  ASSERT_EQ(static_cast<int64_t>(expected.size()), ref.size()) << name;
  std::copy(expected.begin(), expected.end(), ref.data_as<float>());
  CompareResult r = Compare(ref, actual, Tolerance{1e-4, 1e-4}, name);
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(WorkloadReference, Conv1dNLC) {
  // Padding, stride 2 and groups exercise the index arithmetic.
  auto args = RunOnRandom(Conv1dNLC(2, 9, 4, 6, 3, 2, 1, 1, 2));
  ExpectMatches(reference::Conv1dNLC(ToVec(args[0]), ToVec(args[1]), 2, 9, 4, 6, 3, 2, 1, 1, 2),
                args[2], "conv1d_nlc");
}

TEST(WorkloadReference, Conv2dNHWC) {
  auto args = RunOnRandom(Conv2dNHWC(1, 7, 6, 3, 4, 3, 2, 1));
  ExpectMatches(reference::Conv2dNHWC(ToVec(args[0]), ToVec(args[1]), 1, 7, 6, 3, 4, 3, 2, 1, 1, 1),
                args[2], "C2D");
}

TEST(WorkloadReference, GroupedConv2dNHWC) {
  auto args = RunOnRandom(Conv2dNHWC(1, 6, 6, 8, 4, 3, 1, 1, 1, 4));
  ExpectMatches(reference::Conv2dNHWC(ToVec(args[0]), ToVec(args[1]), 1, 6, 6, 8, 4, 3, 1, 1, 1, 4),
                args[2], "GRP");
}

TEST(WorkloadReference, DilatedConv2dNHWC) {
  auto args = RunOnRandom(Conv2dNHWC(1, 9, 9, 2, 3, 3, 2, 3, 2));
  ExpectMatches(reference::Conv2dNHWC(ToVec(args[0]), ToVec(args[1]), 1, 9, 9, 2, 3, 3, 2, 3, 2, 1),
                args[2], "DIL");
}

TEST(WorkloadReference, Conv3dNDHWC) {
  auto args = RunOnRandom(Conv3dNDHWC(1, 4, 5, 5, 2, 3, 3, 2, 1));
  ExpectMatches(
      reference::Conv3dNDHWC(ToVec(args[0]), ToVec(args[1]), 1, 4, 5, 5, 2, 3, 3, 2, 1, 1, 1),
      args[2], "C3D");
}

TEST(WorkloadReference, DepthwiseConv2dNHWC) {
  auto args = RunOnRandom(DepthwiseConv2dNHWC(1, 7, 7, 3, 3, 2, 1));
  ExpectMatches(
      reference::DepthwiseConv2dNHWC(ToVec(args[0]), ToVec(args[1]), 1, 7, 7, 3, 3, 2, 1, 1),
      args[2], "DEP");
}

TEST(WorkloadReference, Conv2dTransposeNHWC) {
  // The suite's kernel/stride/padding (4, 2, 1) and an odd one (3, 2, 0).
  auto args = RunOnRandom(Conv2dTransposeNHWC(1, 3, 4, 3, 2, 4, 2, 1));
  ExpectMatches(
      reference::Conv2dTransposeNHWC(ToVec(args[0]), ToVec(args[1]), 1, 3, 4, 3, 2, 4, 2, 1),
      args[2], "T2D");
  auto odd = RunOnRandom(Conv2dTransposeNHWC(1, 3, 3, 2, 2, 3, 2, 0));
  ExpectMatches(
      reference::Conv2dTransposeNHWC(ToVec(odd[0]), ToVec(odd[1]), 1, 3, 3, 2, 2, 3, 2, 0), odd[2],
      "T2D odd");
  auto unit = RunOnRandom(Conv2dTransposeNHWC(1, 3, 3, 2, 2, 3, 1, 1));
  ExpectMatches(
      reference::Conv2dTransposeNHWC(ToVec(unit[0]), ToVec(unit[1]), 1, 3, 3, 2, 2, 3, 1, 1),
      unit[2], "T2D stride 1");
}

TEST(WorkloadReference, Conv2dCapsuleNHWIJC) {
  auto args = RunOnRandom(Conv2dCapsuleNHWIJC(1, 5, 5, 2, 3, 3, 2, 1, 2));
  ExpectMatches(
      reference::Conv2dCapsuleNHWIJC(ToVec(args[0]), ToVec(args[1]), 1, 5, 5, 2, 3, 3, 2, 1, 2),
      args[2], "CAP");
}

TEST(WorkloadReference, Conv2dNHWCBnRelu) {
  auto args = RunOnRandom(Conv2dNHWCBnRelu(1, 6, 6, 3, 4, 3, 2, 1));
  // Parameters: data, kernel, bias, bn_offset, bn_scale, out.
  ExpectMatches(
      reference::Conv2dNHWCBnRelu(ToVec(args[0]), ToVec(args[1]), ToVec(args[2]), ToVec(args[3]),
                                  ToVec(args[4]), 1, 6, 6, 3, 4, 3, 2, 1, 1),
      args[5], "CBR");
}

TEST(WorkloadReference, Conv2dNCHW) {
  auto args = RunOnRandom(Conv2dNCHW(1, 6, 5, 3, 4, 3, 2, 1, 1));
  ExpectMatches(reference::Conv2dNCHW(ToVec(args[0]), ToVec(args[1]), 1, 6, 5, 3, 4, 3, 2, 1, 1, 1),
                args[2], "conv2d_nchw");
}

TEST(WorkloadReference, BatchMatmul) {
  auto args = RunOnRandom(BatchMatmulNKKM(2, 5, 6, 7));
  ExpectMatches(reference::BatchMatmul(ToVec(args[0]), ToVec(args[1]), 2, 5, 6, 7), args[2], "GMM");
}

TEST(WorkloadReference, TransposeBatchMatmul) {
  auto args = RunOnRandom(TransposeBatchMatmul(1, 5, 3, 4));
  ExpectMatches(reference::TransposeBatchMatmul(ToVec(args[0]), ToVec(args[1]), 1, 5, 3, 4),
                args[2], "TBG");
}

TEST(WorkloadReference, MatmulAndMatmulRelu) {
  auto args = RunOnRandom(Matmul(5, 6, 7));
  ExpectMatches(reference::Matmul(ToVec(args[0]), ToVec(args[1]), 5, 6, 7), args[2], "matmul");
  auto relu = RunOnRandom(MatmulRelu(5, 6, 7));
  ExpectMatches(reference::Relu(reference::Matmul(ToVec(relu[0]), ToVec(relu[1]), 5, 6, 7)),
                relu[2], "matmul_relu");
}

TEST(WorkloadReference, GemvNT) {
  auto args = RunOnRandom(GemvNT(1, 33, 64));
  ExpectMatches(reference::GemvNT(ToVec(args[0]), ToVec(args[1]), 1, 33, 64), args[2], "GEMV");
}

TEST(WorkloadReference, NormBMN) {
  auto args = RunOnRandom(NormBMN(2, 6, 5));
  ExpectMatches(reference::NormBMN(ToVec(args[0]), 2, 6, 5), args[1], "NRM");
}

TEST(WorkloadReference, RmsNorm) {
  auto args = RunOnRandom(RmsNorm(3, 64, 1e-5));
  ExpectMatches(reference::RmsNorm(ToVec(args[0]), ToVec(args[1]), 3, 64, 1e-5), args[2], "RMS");
}

TEST(WorkloadReference, Softmax) {
  auto args = RunOnRandom(SoftmaxMN(4, 9));
  ExpectMatches(reference::Softmax(ToVec(args[0]), {4, 9}, 1), args[1], "SFM");
  auto attn = RunOnRandom(Softmax({4, 1, 16}, -1));
  ExpectMatches(reference::Softmax(ToVec(attn[0]), {4, 1, 16}, 2), attn[1], "ATTN_SFM");
  auto mid = RunOnRandom(Softmax({3, 5, 2}, 1));
  ExpectMatches(reference::Softmax(ToVec(mid[0]), {3, 5, 2}, 1), mid[1], "softmax axis 1");
}

}  // namespace
}  // namespace kiln::ir
