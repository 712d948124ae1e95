// Convolutions of the suite: C1D, C2D (also GRP, DIL), C3D, DEP, T2D, CAP, CBR
// and conv2d_nchw, following te_workload.py / topi.
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "ir/compute/compute.h"
#include "ir/compute/create_prim_func.h"
#include "ir/compute/fold.h"
#include "ir/compute/nn.h"
#include "ir/compute/pad.h"
#include "ir/op.h"
#include "ir/workloads/builder_util.h"
#include "ir/workloads/suite.h"

namespace kiln::ir {

using compute::Body;
using compute::FoldAdd;
using compute::FoldFloorDiv;
using compute::FoldFloorMod;
using compute::FoldMul;
using compute::FoldSub;
using compute::Tensor;
using workloads::ConvOutDim;
using workloads::FloorDivInt;
using workloads::FloorModInt;
using workloads::Require;
using workloads::RequirePositive;

namespace {

// out * stride + r * dilation, folded as TVM builds it.
Expr Window(const Expr& out, int64_t stride, const Expr& r, int64_t dilation) {
  return FoldAdd(FoldMul(out, stride), FoldMul(r, dilation));
}

// co // out_channel_per_group * channel_per_group + rc (te_workload's group index).
Expr GroupChannel(const Expr& co, int64_t out_per_group, int64_t in_per_group, const Expr& rc) {
  return FoldAdd(FoldMul(FoldFloorDiv(co, out_per_group), in_per_group), rc);
}

void CheckGroups(const std::string& op, int64_t CI, int64_t CO, int64_t groups) {
  Require(CI % groups == 0, op,
          "input channels " + std::to_string(CI) + " are not divisible by groups " +
              std::to_string(groups));
  Require(CO % groups == 0, op,
          "output channels " + std::to_string(CO) + " are not divisible by groups " +
              std::to_string(groups));
}

// The checks of the grouped convolutions (C1D, C2D, C3D), in order: the
// batch, spatial and channel `sizes` positive, then the window's
// kernel_size, stride, dilation and groups, padding not negative, and both
// channel counts divisible by groups.
void CheckGroupedConv(const std::string& op,
                      std::initializer_list<std::pair<const char*, int64_t>> sizes, int64_t CI,
                      int64_t CO, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation,
                      int64_t groups) {
  RequirePositive(op, sizes);
  RequirePositive(
      op,
      {{"kernel_size", kernel}, {"stride", stride}, {"dilation", dilation}, {"groups", groups}});
  Require(padding >= 0, op, "padding must not be negative");
  CheckGroups(op, CI, CO, groups);
}

}  // namespace

PrimFunc Conv1dNLC(int64_t N, int64_t L, int64_t CI, int64_t CO, int64_t kernel, int64_t stride,
                   int64_t padding, int64_t dilation, int64_t groups) {
  const std::string op = "conv1d_nlc";
  CheckGroupedConv(op, {{"N", N}, {"L", L}, {"CI", CI}, {"CO", CO}}, CI, CO, kernel, stride,
                   padding, dilation, groups);
  int64_t cpg = CI / groups, ocpg = CO / groups;
  int64_t out_len = ConvOutDim(op, L, kernel, stride, padding, dilation);
  Tensor inputs = compute::placeholder({N, L, CI}, DataType::Float32(), "inputs");
  Tensor weight = compute::placeholder({kernel, cpg, CO}, DataType::Float32(), "weight");
  IterVar rc = compute::reduce_axis(cpg, "rc");
  IterVar rl = compute::reduce_axis(kernel, "rl");
  Tensor padded = compute::pad(inputs, {0, padding, 0});
  Tensor out = compute::compute({N, out_len, CO},
                                [&](const std::vector<Var>& i) -> Body {
                                  const Var &n = i[0], &l = i[1], &co = i[2];
                                  return compute::sum(padded(n, Window(l, stride, rl.var, dilation),
                                                             GroupChannel(co, ocpg, cpg, rc.var)) *
                                                          weight(rl.var, rc.var, co),
                                                      {rl, rc});
                                },
                                op, {"n", "l", "co"});
  return compute::CreatePrimFunc({inputs, weight, out});
}

PrimFunc Conv2dNHWC(int64_t N, int64_t H, int64_t W, int64_t CI, int64_t CO, int64_t kernel,
                    int64_t stride, int64_t padding, int64_t dilation, int64_t groups) {
  const std::string op = "conv2d_nhwc";
  CheckGroupedConv(op, {{"N", N}, {"H", H}, {"W", W}, {"CI", CI}, {"CO", CO}}, CI, CO, kernel,
                   stride, padding, dilation, groups);
  int64_t cpg = CI / groups, ocpg = CO / groups;
  int64_t out_h = ConvOutDim(op, H, kernel, stride, padding, dilation);
  int64_t out_w = ConvOutDim(op, W, kernel, stride, padding, dilation);
  Tensor inputs = compute::placeholder({N, H, W, CI}, DataType::Float32(), "inputs");
  Tensor weight = compute::placeholder({kernel, kernel, cpg, CO}, DataType::Float32(), "weight");
  IterVar rh = compute::reduce_axis(kernel, "rh");
  IterVar rw = compute::reduce_axis(kernel, "rw");
  IterVar rc = compute::reduce_axis(cpg, "rc");
  Tensor padded = compute::pad(inputs, {0, padding, padding, 0});
  Tensor out = compute::compute({N, out_h, out_w, CO},
                                [&](const std::vector<Var>& i) -> Body {
                                  const Var &n = i[0], &h = i[1], &w = i[2], &co = i[3];
                                  return compute::sum(padded(n, Window(h, stride, rh.var, dilation),
                                                             Window(w, stride, rw.var, dilation),
                                                             GroupChannel(co, ocpg, cpg, rc.var)) *
                                                          weight(rh.var, rw.var, rc.var, co),
                                                      {rh, rw, rc});
                                },
                                op, {"n", "h", "w", "co"});
  return compute::CreatePrimFunc({inputs, weight, out});
}

PrimFunc Conv3dNDHWC(int64_t N, int64_t D, int64_t H, int64_t W, int64_t CI, int64_t CO,
                     int64_t kernel, int64_t stride, int64_t padding, int64_t dilation,
                     int64_t groups) {
  const std::string op = "conv3d_ndhwc";
  CheckGroupedConv(op, {{"N", N}, {"D", D}, {"H", H}, {"W", W}, {"CI", CI}, {"CO", CO}}, CI, CO,
                   kernel, stride, padding, dilation, groups);
  int64_t cpg = CI / groups, ocpg = CO / groups;
  int64_t out_d = ConvOutDim(op, D, kernel, stride, padding, dilation);
  int64_t out_h = ConvOutDim(op, H, kernel, stride, padding, dilation);
  int64_t out_w = ConvOutDim(op, W, kernel, stride, padding, dilation);
  Tensor inputs = compute::placeholder({N, D, H, W, CI}, DataType::Float32(), "inputs");
  Tensor weight =
      compute::placeholder({kernel, kernel, kernel, cpg, CO}, DataType::Float32(), "weight");
  IterVar rd = compute::reduce_axis(kernel, "rd");
  IterVar rh = compute::reduce_axis(kernel, "rh");
  IterVar rw = compute::reduce_axis(kernel, "rw");
  IterVar rc = compute::reduce_axis(cpg, "rc");
  Tensor padded = compute::pad(inputs, {0, padding, padding, padding, 0});
  Tensor out = compute::compute(
      {N, out_d, out_h, out_w, CO},
      [&](const std::vector<Var>& i) -> Body {
        const Var &n = i[0], &d = i[1], &h = i[2], &w = i[3], &co = i[4];
        return compute::sum(
            padded(n, Window(d, stride, rd.var, dilation), Window(h, stride, rh.var, dilation),
                   Window(w, stride, rw.var, dilation), GroupChannel(co, ocpg, cpg, rc.var)) *
                weight(rd.var, rh.var, rw.var, rc.var, co),
            {rd, rh, rw, rc});
      },
      op, {"n", "d", "h", "w", "co"});
  return compute::CreatePrimFunc({inputs, weight, out});
}

PrimFunc DepthwiseConv2dNHWC(int64_t N, int64_t H, int64_t W, int64_t C, int64_t kernel,
                             int64_t stride, int64_t padding, int64_t dilation) {
  const std::string op = "depthwise_conv2d_nhwc";
  RequirePositive(op, {{"N", N}, {"H", H}, {"W", W}, {"C", C}});
  RequirePositive(op, {{"kernel_size", kernel}, {"stride", stride}, {"dilation", dilation}});
  Require(padding >= 0, op, "padding must not be negative");
  const int64_t factor = 1;
  int64_t out_h = ConvOutDim(op, H, kernel, stride, padding, dilation);
  int64_t out_w = ConvOutDim(op, W, kernel, stride, padding, dilation);
  // te_workload leaves both placeholders unnamed ("placeholder").
  Tensor inputs = compute::placeholder({N, H, W, C});
  Tensor weight = compute::placeholder({factor, kernel, kernel, C});
  IterVar rh = compute::reduce_axis(kernel, "rh");
  IterVar rw = compute::reduce_axis(kernel, "rw");
  Tensor padded = compute::pad(inputs, {0, padding, padding, 0});
  Tensor out = compute::compute(
      {N, out_h, out_w, C * factor},
      [&](const std::vector<Var>& i) -> Body {
        const Var &n = i[0], &h = i[1], &w = i[2], &c = i[3];
        return compute::sum(
            padded(n, Window(h, stride, rh.var, dilation), Window(w, stride, rw.var, dilation),
                   FoldFloorDiv(c, factor)) *
                weight(FoldFloorMod(c, factor), rh.var, rw.var, FoldFloorDiv(c, factor)),
            {rh, rw});
      },
      "depth_conv2d_nhwc", {"n", "h", "w", "c"});
  return compute::CreatePrimFunc({inputs, weight, out});
}

PrimFunc Conv2dTransposeNHWC(int64_t N, int64_t H, int64_t W, int64_t CI, int64_t CO,
                             int64_t kernel, int64_t stride, int64_t padding) {
  const std::string op = "conv2d_transpose_nhwc";
  RequirePositive(op, {{"N", N}, {"H", H}, {"W", W}, {"CI", CI}, {"CO", CO}});
  RequirePositive(op, {{"kernel_size", kernel}, {"stride", stride}});
  Require(padding >= 0 && padding <= kernel - 1, op,
          "padding must lie in [0, kernel_size - 1], got " + std::to_string(padding));
  Tensor inputs = compute::placeholder({N, H, W, CI}, DataType::Float32(), "inputs");
  Tensor weight = compute::placeholder({kernel, kernel, CI, CO}, DataType::Float32(), "weight");
  // Padding of the stride-dilated input so that a plain correlation with the
  // flipped kernel yields the transposed convolution.
  int64_t bpad = kernel - 1 - padding;
  int64_t pad_in = FloorDivInt(bpad + stride - 1, stride);
  Tensor padded = compute::pad(inputs, {0, pad_in, pad_in, 0}, {0, pad_in, pad_in, 0});
  int64_t border = FloorModInt(stride - FloorModInt(bpad, stride), stride);
  int64_t out_h = (H - 1) * stride - 2 * padding + kernel;
  int64_t out_w = (W - 1) * stride - 2 * padding + kernel;
  Require(out_h > 0 && out_w > 0, op, "non-positive output extent");
  IterVar rc = compute::reduce_axis(CI, "rc");
  IterVar rh = compute::reduce_axis(kernel, "rh");
  IterVar rw = compute::reduce_axis(kernel, "rw");
  // The dilation is folded into the compute (as TVM does) rather than
  // materialized, so zero products can be unrolled away.
  auto dilated = [&](const Expr& n, const Expr& h, const Expr& w, const Expr& c) -> Expr {
    if (stride == 1) return padded(n, h, w, c);
    Expr cond = And(EQ(FoldFloorMod(h, stride), compute::IndexConst(0)),
                    EQ(FoldFloorMod(w, stride), compute::IndexConst(0)));
    return IfThenElse(cond, padded(n, FoldFloorDiv(h, stride), FoldFloorDiv(w, stride), c),
                      FloatImm(0.0));
  };
  Tensor out = compute::compute(
      {N, out_h, out_w, CO},
      [&](const std::vector<Var>& i) -> Body {
        const Var &n = i[0], &h = i[1], &w = i[2], &co = i[3];
        return compute::sum(
            dilated(n, FoldAdd(FoldAdd(h, rh.var), border), FoldAdd(FoldAdd(w, rw.var), border),
                    rc.var) *
                weight(FoldSub(kernel - 1, rh.var), FoldSub(kernel - 1, rw.var), rc.var, co),
            {rh, rw, rc});
      },
      op, {"n", "h", "w", "co"});
  return compute::CreatePrimFunc({inputs, weight, out});
}

PrimFunc Conv2dCapsuleNHWIJC(int64_t N, int64_t H, int64_t W, int64_t CI, int64_t CO,
                             int64_t kernel, int64_t stride, int64_t padding,
                             int64_t capsule_size) {
  const std::string op = "conv2d_capsule_nhwijc";
  RequirePositive(op, {{"N", N}, {"H", H}, {"W", W}, {"CI", CI}, {"CO", CO}});
  RequirePositive(op,
                  {{"kernel_size", kernel}, {"stride", stride}, {"capsule_size", capsule_size}});
  Require(padding >= 0, op, "padding must not be negative");
  int64_t cs = capsule_size;
  int64_t out_h = ConvOutDim(op, H, kernel, stride, padding, 1);
  int64_t out_w = ConvOutDim(op, W, kernel, stride, padding, 1);
  Tensor inputs = compute::placeholder({N, H, W, cs, cs, CI}, DataType::Float32(), "inputs");
  Tensor weight =
      compute::placeholder({kernel, kernel, cs, cs, CI, CO}, DataType::Float32(), "weight");
  IterVar rh = compute::reduce_axis(kernel, "rh");
  IterVar rw = compute::reduce_axis(kernel, "rw");
  IterVar cap_k = compute::reduce_axis(cs, "cap_k");
  IterVar rc = compute::reduce_axis(CI, "rc");
  Tensor padded = compute::pad(inputs, {0, padding, padding, 0, 0, 0});
  Tensor out = compute::compute(
      {N, out_h, out_w, cs, cs, CO},
      [&](const std::vector<Var>& i) -> Body {
        const Var &n = i[0], &h = i[1], &w = i[2], &cap_i = i[3], &cap_j = i[4], &co = i[5];
        return compute::sum(padded(n, Window(h, stride, rh.var, 1), Window(w, stride, rw.var, 1),
                                   cap_i, cap_k.var, rc.var) *
                                weight(rh.var, rw.var, cap_k.var, cap_j, rc.var, co),
                            {rh, rw, cap_k, rc});
      },
      op, {"n", "h", "w", "cap_i", "cap_j", "co"});
  return compute::CreatePrimFunc({inputs, weight, out});
}

PrimFunc Conv2dNHWCBnRelu(int64_t N, int64_t H, int64_t W, int64_t CI, int64_t CO, int64_t kernel,
                          int64_t stride, int64_t padding, int64_t dilation) {
  const std::string op = "conv2d_nhwc_bn_relu";
  RequirePositive(op, {{"N", N}, {"H", H}, {"W", W}, {"CI", CI}, {"CO", CO}});
  RequirePositive(op, {{"kernel_size", kernel}, {"strides", stride}, {"dilation", dilation}});
  Require(padding >= 0, op, "padding must not be negative");
  Tensor data = compute::placeholder({N, H, W, CI}, DataType::Float32(), "data");
  Tensor kern = compute::placeholder({kernel, kernel, CI, CO}, DataType::Float32(), "kernel");
  Tensor bias = compute::placeholder({CO}, DataType::Float32(), "bias");
  Tensor bn_scale = compute::placeholder({CO}, DataType::Float32(), "bn_scale");
  Tensor bn_offset = compute::placeholder({CO}, DataType::Float32(), "bn_offset");
  int64_t out_h = ConvOutDim(op, H, kernel, stride, padding, dilation);
  int64_t out_w = ConvOutDim(op, W, kernel, stride, padding, dilation);
  // conv2d_nhwc_without_layout_rewrite: topi's NHWC conv without layout_free.
  Tensor padded =
      compute::pad(data, {0, padding, padding, 0}, {0, padding, padding, 0}, 0.0, "PaddedInput");
  IterVar rc = compute::reduce_axis(CI, "rc");
  IterVar ry = compute::reduce_axis(kernel, "ry");
  IterVar rx = compute::reduce_axis(kernel, "rx");
  Tensor conv =
      compute::compute({N, out_h, out_w, CO},
                       [&](const std::vector<Var>& i) -> Body {
                         const Var &nn = i[0], &yy = i[1], &xx = i[2], &ff = i[3];
                         return compute::sum(padded(nn, Window(yy, stride, ry.var, dilation),
                                                    Window(xx, stride, rx.var, dilation), rc.var) *
                                                 kern(ry.var, rx.var, rc.var, ff),
                                             {ry, rx, rc});
                       },
                       "Conv2dOutput", {"nn", "yy", "xx", "ff"});
  std::vector<int64_t> shape = {N, out_h, out_w, CO};
  std::vector<std::string> ijkl = {"i", "j", "k", "l"};
  Tensor bias_add = compute::compute(
      shape,
      [&](const std::vector<Var>& i) -> Body { return conv(i[0], i[1], i[2], i[3]) + bias(i[3]); },
      "bias_add", ijkl);
  Tensor bn_mul = compute::compute(
      shape,
      [&](const std::vector<Var>& i) -> Body {
        return bias_add(i[0], i[1], i[2], i[3]) * bn_scale(i[3]);
      },
      "bn_mul", ijkl);
  Tensor bn_add = compute::compute(
      shape,
      [&](const std::vector<Var>& i) -> Body {
        return bn_mul(i[0], i[1], i[2], i[3]) + bn_offset(i[3]);
      },
      "bn_add", ijkl);
  Tensor out = compute::relu(bn_add);
  return compute::CreatePrimFunc({data, kern, bias, bn_offset, bn_scale, out});
}

PrimFunc Conv2dNCHW(int64_t N, int64_t H, int64_t W, int64_t CI, int64_t CO, int64_t KH, int64_t KW,
                    int64_t stride, int64_t padding, int64_t dilation) {
  const std::string op = "conv2d_nchw";
  RequirePositive(op, {{"n", N}, {"h", H}, {"w", W}, {"ci", CI}, {"co", CO}});
  RequirePositive(op, {{"kh", KH}, {"kw", KW}, {"stride", stride}, {"dilation", dilation}});
  Require(padding >= 0, op, "padding must not be negative");
  int64_t out_h = ConvOutDim(op, H, KH, stride, padding, dilation);
  int64_t out_w = ConvOutDim(op, W, KW, stride, padding, dilation);
  Tensor x = compute::placeholder({N, CI, H, W}, DataType::Float32(), "X");
  Tensor w = compute::placeholder({CO, CI, KH, KW}, DataType::Float32(), "W");
  Tensor temp =
      compute::pad(x, {0, 0, padding, padding}, {0, 0, padding, padding}, 0.0, "pad_temp");
  IterVar rc = compute::reduce_axis(CI, "rc");
  IterVar ry = compute::reduce_axis(KH, "ry");
  IterVar rx = compute::reduce_axis(KW, "rx");
  Tensor out =
      compute::compute({N, CO, out_h, out_w},
                       [&](const std::vector<Var>& i) -> Body {
                         const Var &nn = i[0], &ff = i[1], &yy = i[2], &xx = i[3];
                         return compute::sum(temp(nn, rc.var, Window(yy, stride, ry.var, dilation),
                                                  Window(xx, stride, rx.var, dilation)) *
                                                 w(ff, rc.var, ry.var, rx.var),
                                             {rc, ry, rx});
                       },
                       op, {"nn", "ff", "yy", "xx"});
  return compute::CreatePrimFunc({x, w, out});
}

}  // namespace kiln::ir
