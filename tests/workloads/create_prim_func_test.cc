#include "ir/compute/create_prim_func.h"

#include <gtest/gtest.h>

#include <limits>

#include "ir/compute/compute.h"
#include "ir/compute/nn.h"
#include "ir/compute/pad.h"
#include "ir/error.h"
#include "ir/op.h"
#include "ir/workloads/suite.h"
#include "tests/workloads/block_walk.h"

namespace kiln::ir {
namespace {

using compute::Body;
using compute::Tensor;
using testing::BlockNames;
using testing::Blocks;

int64_t ConstOf(const Expr& e) {
  int64_t v = -999;
  EXPECT_TRUE(AsConstInt(e, &v));
  return v;
}

// The region is the single point `vars` (each an iter var of `block`).
void ExpectPoint(const BufferRegion& r, const std::string& buffer, const std::vector<Var>& vars) {
  EXPECT_EQ(r.buffer.name(), buffer);
  ASSERT_EQ(r.region.size(), vars.size());
  for (size_t i = 0; i < vars.size(); ++i) {
    EXPECT_TRUE(r.region[i].min.same_as(vars[i])) << buffer << " dim " << i;
    EXPECT_EQ(ConstOf(r.region[i].extent), 1);
  }
}

TEST(CreatePrimFunc, MatmulHasTvmStructure) {
  PrimFunc f = Matmul(4, 5, 6);
  ASSERT_EQ(f.params.size(), 3u);
  EXPECT_EQ(f.params[0].name(), "A");
  EXPECT_EQ(f.params[1].name(), "B");
  EXPECT_EQ(f.params[2].name(), "C");
  EXPECT_EQ(ConstOf(f.params[0].shape()[0]), 4);
  EXPECT_EQ(ConstOf(f.params[0].shape()[1]), 6);
  ASSERT_TRUE(f.attrs.count("tir.noalias"));
  EXPECT_TRUE(f.attrs.at("tir.noalias").dtype().is_bool());
  EXPECT_EQ(ConstOf(f.attrs.at("tir.noalias")), 1);
  EXPECT_TRUE(f.root_block().alloc_buffers.empty());

  auto blocks = Blocks(f);
  ASSERT_EQ(blocks.size(), 1u);
  const auto& site = blocks[0];
  const BlockNode& b = *site.block;
  EXPECT_EQ(b.name, "C");
  ASSERT_EQ(site.loops.size(), 3u);
  const char* loop_names[] = {"i", "j", "k"};
  const int64_t extents[] = {4, 5, 6};
  ASSERT_EQ(b.iter_vars.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(site.loops[i]->loop_var.name(), loop_names[i]);
    EXPECT_EQ(ConstOf(site.loops[i]->min), 0);
    EXPECT_EQ(ConstOf(site.loops[i]->extent), extents[i]);
    EXPECT_EQ(site.loops[i]->for_kind, ForKind::kSerial);
    EXPECT_EQ(b.iter_vars[i].var.name(), std::string("v_") + loop_names[i]);
    EXPECT_EQ(ConstOf(b.iter_vars[i].dom.min), 0);
    EXPECT_EQ(ConstOf(b.iter_vars[i].dom.extent), extents[i]);
    EXPECT_TRUE(site.realize->iter_values[i].same_as(site.loops[i]->loop_var));
  }
  EXPECT_EQ(b.iter_vars[0].iter_type, IterType::kDataPar);
  EXPECT_EQ(b.iter_vars[1].iter_type, IterType::kDataPar);
  EXPECT_EQ(b.iter_vars[2].iter_type, IterType::kCommReduce);
  const Var &vi = b.iter_vars[0].var, &vj = b.iter_vars[1].var, &vk = b.iter_vars[2].var;

  // As in TVM, a reduction's own output is not among its reads.
  ASSERT_EQ(b.reads.size(), 2u);
  ExpectPoint(b.reads[0], "A", {vi, vk});
  ExpectPoint(b.reads[1], "B", {vk, vj});
  ASSERT_EQ(b.writes.size(), 1u);
  ExpectPoint(b.writes[0], "C", {vi, vj});

  ASSERT_TRUE(b.init.has_value());
  const auto* init = b.init->as<BufferStoreNode>();
  ASSERT_NE(init, nullptr);
  double zero = -1;
  ASSERT_TRUE(AsConstFloat(init->value, &zero));
  EXPECT_EQ(zero, 0.0);
  const auto* store = b.body.as<BufferStoreNode>();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->buffer.name(), "C");
  ASSERT_EQ(store->value.kind(), ExprKind::kAdd);
  const auto* add = store->value.as<BinaryNode>();
  const auto* acc = add->a.as<BufferLoadNode>();
  ASSERT_NE(acc, nullptr);
  EXPECT_TRUE(acc->buffer.same_as(store->buffer));
  EXPECT_EQ(add->b.kind(), ExprKind::kMul);
  EXPECT_TRUE(b.annotations.empty());
}

TEST(CreatePrimFunc, SoftmaxHasFourBlocksAndTvmReducers) {
  PrimFunc f = SoftmaxMN(3, 7);
  EXPECT_EQ(BlockNames(f), (std::vector<std::string>{"T_softmax_maxelem", "T_softmax_exp",
                                                     "T_softmax_expsum", "T_softmax_norm"}));
  const auto& allocs = f.root_block().alloc_buffers;
  ASSERT_EQ(allocs.size(), 3u);
  EXPECT_EQ(allocs[0].name(), "T_softmax_maxelem");
  EXPECT_EQ(allocs[1].name(), "T_softmax_exp");
  EXPECT_EQ(allocs[2].name(), "T_softmax_expsum");
  ASSERT_EQ(f.params.size(), 2u);
  EXPECT_EQ(f.params[1].name(), "T_softmax_norm");

  auto blocks = Blocks(f);
  const BlockNode& maxelem = *blocks[0].block;
  ASSERT_EQ(blocks[0].loops.size(), 2u);
  EXPECT_EQ(blocks[0].loops[0]->loop_var.name(), "i0");
  EXPECT_EQ(blocks[0].loops[1]->loop_var.name(), "k");
  double init = 0;
  ASSERT_TRUE(AsConstFloat(maxelem.init->as<BufferStoreNode>()->value, &init));
  EXPECT_EQ(init, -static_cast<double>(std::numeric_limits<float>::max()));
  EXPECT_EQ(maxelem.body.as<BufferStoreNode>()->value.kind(), ExprKind::kMax);

  const BlockNode& exp = *blocks[1].block;
  EXPECT_FALSE(exp.init.has_value());
  ASSERT_EQ(exp.reads.size(), 2u);
  EXPECT_EQ(exp.reads[0].buffer.name(), "A");
  EXPECT_EQ(exp.reads[1].buffer.name(), "T_softmax_maxelem");
  const auto* call = exp.body.as<BufferStoreNode>()->value.as<CallNode>();
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->op, CallOp::kExp);

  const BlockNode& norm = *blocks[3].block;
  ASSERT_TRUE(norm.annotations.count("axis"));
  EXPECT_EQ(ConstOf(norm.annotations.at("axis")), 1);
  EXPECT_EQ(norm.body.as<BufferStoreNode>()->value.kind(), ExprKind::kDiv);
}

TEST(CreatePrimFunc, MinReducerStartsFromMaxValue) {
  Tensor a = compute::placeholder({8, 3}, DataType::Float32(), "A");
  IterVar k = compute::reduce_axis(3, "k");
  Tensor m = compute::compute(
      {8}, [&](const std::vector<Var>& i) -> Body { return compute::min(a(i[0], k.var), {k}); },
      "M");
  PrimFunc f = compute::CreatePrimFunc({a, m});
  const BlockNode& b = *Blocks(f)[0].block;
  double init = 0;
  ASSERT_TRUE(AsConstFloat(b.init->as<BufferStoreNode>()->value, &init));
  EXPECT_EQ(init, static_cast<double>(std::numeric_limits<float>::max()));
  EXPECT_EQ(b.body.as<BufferStoreNode>()->value.kind(), ExprKind::kMin);
  EXPECT_EQ(b.iter_vars[0].var.name(), "v_i0");
}

TEST(CreatePrimFunc, PadUsesIfThenElseOnPaddedDimensionsOnly) {
  Tensor a = compute::placeholder({2, 5, 3}, DataType::Float32(), "inputs");
  Tensor p = compute::pad(a, {0, 1, 0}, {0, 2, 0});
  EXPECT_EQ(p.name(), "PadInput");
  EXPECT_EQ(ConstOf(p.shape()[1]), 8);
  PrimFunc f = compute::CreatePrimFunc({a, p});
  const BlockNode& b = *Blocks(f)[0].block;
  EXPECT_EQ(b.name, "PadInput");
  const auto* call = b.body.as<BufferStoreNode>()->value.as<CallNode>();
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->op, CallOp::kIfThenElse);
  // 1 <= v_i1 and v_i1 < 6
  const auto* cond = call->args[0].as<BinaryNode>();
  ASSERT_EQ(call->args[0].kind(), ExprKind::kAnd);
  ASSERT_EQ(cond->a.kind(), ExprKind::kLE);
  EXPECT_EQ(ConstOf(cond->a.as<BinaryNode>()->a), 1);
  ASSERT_EQ(cond->b.kind(), ExprKind::kLT);
  EXPECT_EQ(ConstOf(cond->b.as<BinaryNode>()->b), 6);
  const auto* load = call->args[1].as<BufferLoadNode>();
  ASSERT_NE(load, nullptr);
  EXPECT_TRUE(load->indices[0].same_as(b.iter_vars[0].var));
  EXPECT_EQ(load->indices[1].kind(), ExprKind::kSub);
  EXPECT_TRUE(load->indices[2].same_as(b.iter_vars[2].var));
  ASSERT_EQ(b.reads.size(), 1u);
  EXPECT_EQ(b.reads[0].buffer.name(), "inputs");

  // Without padding the stage is a plain copy, as topi emits it.
  Tensor q = compute::pad(a, {0, 0, 0});
  PrimFunc g = compute::CreatePrimFunc({a, q});
  EXPECT_EQ(Blocks(g)[0].block->body.as<BufferStoreNode>()->value.kind(), ExprKind::kBufferLoad);
}

TEST(CreatePrimFunc, DuplicateNamesGetSuffixes) {
  PrimFunc f = DepthwiseConv2dNHWC(1, 4, 4, 2, 3, 1, 1);
  ASSERT_EQ(f.params.size(), 3u);
  EXPECT_EQ(f.params[0].name(), "placeholder");
  EXPECT_EQ(f.params[1].name(), "placeholder_1");
  EXPECT_EQ(f.params[2].name(), "depth_conv2d_nhwc");
  // The renamed buffer is the one the blocks access.
  const BlockNode& conv = *Blocks(f)[1].block;
  ASSERT_EQ(conv.reads.size(), 2u);
  EXPECT_TRUE(conv.reads[1].buffer.same_as(f.params[1]));

  Tensor a = compute::placeholder({4}, DataType::Float32(), "A");
  Tensor x = compute::compute(
      {4}, [&](const std::vector<Var>& i) -> Body { return a(i[0]) * FloatImm(2.0); }, "X");
  Tensor y = compute::compute(
      {4}, [&](const std::vector<Var>& i) -> Body { return x(i[0]) + FloatImm(1.0); }, "X");
  PrimFunc g = compute::CreatePrimFunc({a, y});
  EXPECT_EQ(BlockNames(g), (std::vector<std::string>{"X", "X_1"}));
  EXPECT_EQ(g.params[1].name(), "X");
  EXPECT_EQ(g.root_block().alloc_buffers[0].name(), "X_1");
}

TEST(CreatePrimFunc, StagesFollowPostDfsOrder) {
  PrimFunc f = TransposeBatchMatmul(1, 4, 2, 3);
  EXPECT_EQ(BlockNames(f), (std::vector<std::string>{"query_T", "value_T", "C"}));
  PrimFunc cbr = Conv2dNHWCBnRelu(1, 5, 5, 2, 3, 3, 1, 1);
  EXPECT_EQ(BlockNames(cbr), (std::vector<std::string>{"PaddedInput", "Conv2dOutput", "bias_add",
                                                       "bn_mul", "bn_add", "compute"}));
  EXPECT_EQ(cbr.params[3].name(), "bn_offset");
  EXPECT_EQ(cbr.params[5].name(), "compute");
}

TEST(CreatePrimFunc, RepeatedAccessesShareOneRegion) {
  PrimFunc f = NormBMN(1, 3, 4);
  auto blocks = Blocks(f);
  ASSERT_EQ(blocks.size(), 2u);
  const BlockNode& c = *blocks[0].block;
  ASSERT_EQ(c.reads.size(), 1u);
  EXPECT_EQ(c.reads[0].buffer.name(), "A");
  for (const auto& r : c.reads[0].region) EXPECT_EQ(ConstOf(r.extent), 1);

  // Different points of one dimension: that dimension is covered whole.
  Tensor a = compute::placeholder({6}, DataType::Float32(), "A");
  Tensor s = compute::compute(
      {5}, [&](const std::vector<Var>& i) -> Body { return a(i[0]) + a(i[0] + 1); }, "S");
  PrimFunc g = compute::CreatePrimFunc({a, s});
  const BlockNode& b = *Blocks(g)[0].block;
  ASSERT_EQ(b.reads.size(), 1u);
  EXPECT_EQ(ConstOf(b.reads[0].region[0].min), 0);
  EXPECT_EQ(ConstOf(b.reads[0].region[0].extent), 6);
}

TEST(CreatePrimFunc, ZeroDimensionalOutputGetsDummyIterVar) {
  Tensor a = compute::placeholder(std::vector<int64_t>{}, DataType::Float32(), "A");
  Tensor b = compute::compute(
      std::vector<int64_t>{}, [&](const std::vector<Var>&) -> Body { return a() * FloatImm(3.0); },
      "B");
  PrimFunc f = compute::CreatePrimFunc({a, b});
  auto blocks = Blocks(f);
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_TRUE(blocks[0].loops.empty());
  ASSERT_EQ(blocks[0].block->iter_vars.size(), 1u);
  EXPECT_EQ(blocks[0].block->iter_vars[0].var.name(), "vi");
  EXPECT_EQ(ConstOf(blocks[0].realize->iter_values[0]), 0);
}

TEST(CreatePrimFunc, ReportsMisuseClearly) {
  Tensor a = compute::placeholder({4}, DataType::Float32(), "A");
  Tensor hidden = compute::placeholder({4}, DataType::Float32(), "Hidden");
  Tensor c = compute::compute(
      {4}, [&](const std::vector<Var>& i) -> Body { return a(i[0]) + hidden(i[0]); }, "C");
  try {
    compute::CreatePrimFunc({a, c});
    FAIL() << "missing placeholder accepted";
  } catch (const IRError& e) {
    EXPECT_NE(std::string(e.what()).find("Hidden"), std::string::npos) << e.what();
  }

  IterVar k = compute::reduce_axis(4, "k");
  IterVar k2 = compute::reduce_axis(4, "k2");
  Tensor bad = compute::compute(
      std::vector<int64_t>{1},
      [&](const std::vector<Var>&) -> Body { return compute::sum(a(k.var) * a(k2.var), {k}); },
      "Bad");
  try {
    compute::CreatePrimFunc({a, bad});
    FAIL() << "free reduce axis accepted";
  } catch (const IRError& e) {
    EXPECT_NE(std::string(e.what()).find("k2"), std::string::npos) << e.what();
  }

  EXPECT_THROW(compute::compute({4}, [&](const std::vector<Var>& i) -> Body { return a(i[0]); },
                                "X", {"i", "j"}),
               IRError);
  EXPECT_THROW(a(0, 1), IRError);
  IterVar spatial{Var("s"), Range{IntImm(0), IntImm(4)}, IterType::kDataPar};
  EXPECT_THROW(compute::sum(a(0), {spatial}), IRError);
  EXPECT_THROW(compute::CreatePrimFunc({a, c, c}), IRError);
  EXPECT_THROW(compute::CreatePrimFunc({a}), IRError);
}

}  // namespace
}  // namespace kiln::ir
