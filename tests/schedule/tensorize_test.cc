// Tensorize and the tensor-intrinsic registry: a tensorized fp16 GEMM keeps
// its semantics (interpreted against the unscheduled workload), mismatches
// are refused with the reason, and the trace replays and round-trips.
#include <gtest/gtest.h>

#include <map>

#include "ir/error.h"
#include "ir/interpreter.h"
#include "ir/transform/passes.h"
#include "ir/functor.h"
#include "ir/ndarray.h"
#include "ir/tensor_intrin/tensor_intrin.h"
#include "ir/tensor_intrin/tensor_intrin_match.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/schedule/tensorize.h"
#include "ir/workloads/suite.h"
#include "ir/workloads/variants.h"
#include "tests/schedule/schedule_test_util.h"

namespace kiln::ir {
namespace {

using testing::ReplaysExactly;
using testing::SameResult;
using testing::WellFormed;

constexpr const char* kMma = "wmma_sync_16x16x16_f16f16f32";
constexpr const char* kFill = "wmma_fill_16x16x16_f32";
constexpr const char* kLoadA = "wmma_load_16x16x16_f16_a_shared";
constexpr const char* kLoadB = "wmma_load_16x16x16_f16_b_shared";
constexpr const char* kStore = "wmma_store_16x16x16_f32_global";

// The copy block's last two loops split by `tile` and the two inner ones
// innermost (swapped when `transpose`); returns the first inner loop.
LoopRV TileCopy(Schedule& sch, BlockRV copy, int64_t tile, bool transpose = false) {
  std::vector<LoopRV> l = sch.GetLoops(copy);
  auto r = sch.Split(l[l.size() - 2], {std::monostate{}, tile});
  auto c = sch.Split(l[l.size() - 1], {std::monostate{}, tile});
  if (transpose) {
    sch.Reorder({r[0], c[0], c[1], r[1]});
    return c[1];
  }
  sch.Reorder({r[0], c[0], r[1], c[1]});
  return r[1];
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

struct Stages {
  BlockRV z, a_frag, b_frag, store;
};

// GMM_FP16 staged as tensor cores need it: X, Y -> shared -> wmma fragments,
// the accumulator in wmma.accumulator; the GEMM tiled to 16x16x16.
Stages Stage(Schedule& sch, int64_t tile = 16) {
  Stages s;
  s.z = sch.GetBlock("Z");
  sch.CacheRead(s.z, 0, "shared");
  sch.CacheRead(s.z, 1, "shared");
  s.a_frag = sch.CacheRead(s.z, 0, "wmma.matrix_a");
  s.b_frag = sch.CacheRead(s.z, 1, "wmma.matrix_b");
  s.store = sch.CacheWrite(s.z, 0, "wmma.accumulator");
  std::vector<LoopRV> l = sch.GetLoops(s.z);  // b, i, j, k
  auto i = sch.Split(l[1], {std::monostate{}, tile});
  auto j = sch.Split(l[2], {std::monostate{}, tile});
  auto k = sch.Split(l[3], {std::monostate{}, tile});
  sch.Reorder({i[0], j[0], k[0], i[1], j[1], k[1]});
  return s;
}

// The whole GEMM on tensor cores, every stage tensorized.
PrimFunc TensorizedGemm(Schedule& sch) {
  Stages s = Stage(sch);
  std::vector<LoopRV> l = sch.GetLoops(s.z);  // b, i0, j0, k0, i1, j1, k1
  BlockRV outer = sch.Blockize(l[4]);
  BlockRV init = sch.DecomposeReduction(outer, l[3]);
  Tensorize(sch, outer, kMma);
  Tensorize(sch, init, kFill);
  Tensorize(sch, TileCopy(sch, s.a_frag, 16), kLoadA);
  Tensorize(sch, TileCopy(sch, s.b_frag, 16), kLoadB);
  Tensorize(sch, TileCopy(sch, s.store, 16), kStore);
  return sch.func();
}

TEST(TensorIntrin, RegistryHoldsTheWmmaSet) {
  std::vector<std::string> names = TensorIntrinNames();
  for (const char* n : {kMma, kFill, kLoadA, kLoadB, kStore}) {
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  }
  EXPECT_EQ(FindTensorIntrin("no_such_intrin"), nullptr);
  const TensorIntrin* mma = FindTensorIntrin(kMma);
  ASSERT_NE(mma, nullptr);
  ASSERT_EQ(mma->desc.params.size(), 3u);
  EXPECT_EQ(mma->desc.params[0].scope(), "wmma.accumulator");
  EXPECT_EQ(mma->desc.params[1].scope(), "wmma.matrix_a");
  EXPECT_EQ(mma->desc.params[1].dtype(), DataType::Float(16));
  // (The description accumulates into C with no init, as TVM's does, so
  // the workload verifier's reduction-without-init rule does not apply.)
  EXPECT_EQ(mma->desc.root_block().body.as<ForNode>()->loop_var.name(), "i");
}

// The description is a program the interpreter runs: C += A * B over 16^3.
TEST(TensorIntrin, MmaDescriptionRunsAsAMatmul) {
  const TensorIntrin* mma = FindTensorIntrin(kMma);
  std::vector<NDArray> args = MakeRandomArgs(mma->desc, 3);
  std::vector<NDArray> start = MakeRandomArgs(mma->desc, 3);
  Interpret(mma->desc, args);
  for (int i = 0; i < 16; i += 5) {
    for (int j = 0; j < 16; j += 3) {
      double want = start[0].GetAsDouble(i * 16 + j);
      for (int k = 0; k < 16; ++k) {
        want += args[1].GetAsDouble(i * 16 + k) * args[2].GetAsDouble(k * 16 + j);
      }
      EXPECT_NEAR(args[0].GetAsDouble(i * 16 + j), want, 1e-3 * (1 + std::abs(want)));
    }
  }
}

TEST(Tensorize, GemmKeepsItsSemanticsAndReplays) {
  PrimFunc f = BatchMatmulNKKMFp16(1, 32, 48, 32);
  Schedule sch(f);
  PrimFunc g = TensorizedGemm(sch);
  EXPECT_TRUE(SameResult(f, g));
  EXPECT_TRUE(WellFormed(g));
  EXPECT_TRUE(ReplaysExactly(f, sch));
  // Five blocks carry their intrinsic.
  std::string text = ToText(g);
  for (const char* n : {kMma, kFill, kLoadA, kLoadB, kStore}) {
    EXPECT_NE(text.find(std::string("\"kiln.tensor_intrin\": \"") + n + "\""), std::string::npos)
        << n << "\n" << text;
  }
  // The text form parses back to the same program, and prints the same.
  PrimFunc back = ParseFunc(text);
  EXPECT_FALSE(StructuralMismatch(g, back).has_value());
  EXPECT_EQ(ToText(back), text);
  std::string py = sch.trace().AsPython();
  EXPECT_NE(py.find("sch.tensorize(block_or_loop="), std::string::npos) << py;
  EXPECT_NE(py.find("tensor_intrin=\"wmma_sync_16x16x16_f16f16f32\", preserve_unit_iters=True)"),
            std::string::npos)
      << py;
  // Tensorize of a loop blockizes it first, in the trace too.
  EXPECT_EQ(Count(py, "sch.blockize("), 4u) << py;
  EXPECT_EQ(Count(py, "sch.tensorize("), 5u) << py;
}

TEST(Tensorize, RefusesAnInitAndNamesIt) {
  PrimFunc f = BatchMatmulNKKMFp16(1, 32, 32, 32);
  Schedule sch(f);
  Stages s = Stage(sch);
  BlockRV outer = sch.Blockize(sch.GetLoops(s.z)[4]);
  KILN_EXPECT_SCHEDULE_ERROR(Tensorize(sch, outer, kMma),
                             "tensorize: block 'Z_o' does not match tensor intrinsic "
                             "wmma_sync_16x16x16_f16f16f32: block 'Z_o' has an init");
}

TEST(Tensorize, RefusesAWrongTileShape) {
  PrimFunc f = BatchMatmulNKKMFp16(1, 32, 32, 32);
  Schedule sch(f);
  Stages s = Stage(sch, 8);
  std::vector<LoopRV> l = sch.GetLoops(s.z);
  BlockRV outer = sch.Blockize(l[4]);
  BlockRV init = sch.DecomposeReduction(outer, l[3]);
  KILN_EXPECT_SCHEDULE_ERROR(Tensorize(sch, outer, kMma), "where the intrinsic's loop i has extent 16");
  KILN_EXPECT_SCHEDULE_ERROR(Tensorize(sch, init, kFill), "block 'Z_o_init' does not match");
}

TEST(Tensorize, RefusesAWrongDtypeScopeAndLayout) {
  PrimFunc f = BatchMatmulNKKMFp16(1, 32, 32, 32);
  Schedule sch(f);
  Stages s = Stage(sch);
  // A float32 accumulator copy is not a float16 load.
  LoopRV store_tile = TileCopy(sch, s.store, 16);
  PrimFunc before = sch.func();
  size_t trace_size = sch.trace().size();
  KILN_EXPECT_SCHEDULE_ERROR(
      Tensorize(sch, store_tile, kLoadA),
      "buffer Z is float32 where the intrinsic's operand dst is float16");
  // A refused tensorize of a loop leaves no blockize behind.
  EXPECT_FALSE(StructuralMismatch(before, sch.func()).has_value());
  EXPECT_EQ(sch.trace().size(), trace_size);
  // The A fragment loaded as B: the scope differs.
  KILN_EXPECT_SCHEDULE_ERROR(Tensorize(sch, TileCopy(sch, s.a_frag, 16), kLoadB),
                             "needs \"wmma.matrix_b\"");
  // A transposed walk over the tile is a different index pattern.
  KILN_EXPECT_SCHEDULE_ERROR(Tensorize(sch, TileCopy(sch, s.b_frag, 16, true), kLoadB),
                             "does not match the intrinsic's operand dst");
  // A float32 GEMM has no float16 operands.
  Schedule fp32(Matmul(32, 32, 32));
  std::vector<LoopRV> l = fp32.GetLoops(fp32.GetBlock("C"));
  auto i = fp32.Split(l[0], {std::monostate{}, int64_t{16}});
  auto j = fp32.Split(l[1], {std::monostate{}, int64_t{16}});
  auto k = fp32.Split(l[2], {std::monostate{}, int64_t{16}});
  fp32.Reorder({i[0], j[0], k[0], i[1], j[1], k[1]});
  BlockRV o = fp32.Blockize(i[1]);
  fp32.DecomposeReduction(o, k[0]);
  KILN_EXPECT_SCHEDULE_ERROR(Tensorize(fp32, o, kMma), "block 'C_o_update' does not match");
  KILN_EXPECT_SCHEDULE_ERROR(Tensorize(fp32, o, "wmma_magic"), "unknown tensor intrinsic \"wmma_magic\"");
}

TEST(Tensorize, RefusesAReductionLoopWhereASpatialOneBelongs) {
  PrimFunc f = BatchMatmulNKKMFp16(1, 32, 32, 32);
  Schedule sch(f);
  Stages s = Stage(sch);
  std::vector<LoopRV> l = sch.GetLoops(s.z);  // b, i0, j0, k0, i1, j1, k1
  sch.Reorder({l[4], l[6], l[5]});
  BlockRV outer = sch.Blockize(l[4]);
  sch.DecomposeReduction(outer, l[3]);
  KILN_EXPECT_SCHEDULE_ERROR(Tensorize(sch, outer, kMma), "drives reduction iterators of block 'Z'");
}

// Replaying the trace from its JSON text gives the same program (the
// tensorize instruction re-checks the match), and a mismatching replay is
// refused with the reason.
TEST(Tensorize, TraceRoundTripAndReplayOnAnotherShape) {
  PrimFunc f = BatchMatmulNKKMFp16(1, 32, 32, 32);
  Schedule sch(f);
  TensorizedGemm(sch);
  Trace t = Trace::FromJSONString(sch.trace().AsJSONString());
  EXPECT_EQ(t.AsJSONString(), sch.trace().AsJSONString());
  Schedule again(f);
  t.ApplyToSchedule(&again, false);
  EXPECT_FALSE(StructuralMismatch(sch.func(), again.func()).has_value());
  EXPECT_TRUE(SameResult(f, again.func()));
}

// The lowering pass turns each tensorized block into the annotated unit
// loop of tensor_intrin.h, which AsLoweredTensorIntrin reads back.
TEST(LowerTensorIntrin, TensorizedBlocksBecomeIntrinsicLoops) {
  PrimFunc f = BatchMatmulNKKMFp16(1, 32, 32, 32);
  Schedule sch(f);
  PrimFunc low = transform::LowerTensorIntrin(TensorizedGemm(sch));
  struct Finder : IRVisitor {
    std::vector<LoweredTensorIntrin> found;
    void VisitFor(const ForNode* op) override {
      std::string why;
      if (auto t = AsLoweredTensorIntrin(*op, &why)) found.push_back(*t);
      EXPECT_EQ(why, "");
      IRVisitor::VisitFor(op);
    }
  } finder;
  finder.VisitStmt(low.body);
  ASSERT_EQ(finder.found.size(), 5u) << ToText(low);
  std::map<std::string, const LoweredTensorIntrin*> by_name;
  for (const auto& t : finder.found) by_name[t.intrin->name] = &t;
  const LoweredTensorIntrin* mma = by_name.at(kMma);
  ASSERT_EQ(mma->operands.size(), 3u);
  EXPECT_EQ(mma->operands[0].buffer.scope(), "wmma.accumulator");
  EXPECT_TRUE(mma->operands[0].written);
  EXPECT_FALSE(mma->operands[1].written);
  EXPECT_EQ(mma->operands[1].buffer.scope(), "wmma.matrix_a");
  // The last element is the first plus 15 in the two tile dimensions.
  EXPECT_EQ(ToText(mma->operands[1].last[1]), ToText(mma->operands[1].first[1]) + " + 15");
  const LoweredTensorIntrin* store = by_name.at(kStore);
  EXPECT_EQ(store->operands[1].buffer.name(), "Z");
  EXPECT_TRUE(store->operands[1].written);
  // No tensorized block keeps its loops: the inner blocks are gone.
  EXPECT_EQ(ToText(low).find("with T.block(\"Z\")"), std::string::npos) << ToText(low);
}

// A block marked with an intrinsic it does not compute is an error naming
// it, not wrong code.
TEST(LowerTensorIntrin, AMarkThatNoLongerMatchesIsAnError) {
  PrimFunc f = BatchMatmulNKKMFp16(1, 32, 32, 32);
  Schedule sch(f);
  std::string text = ToText(TensorizedGemm(sch));
  const std::string from = "\"kiln.tensor_intrin\": \"wmma_store_16x16x16_f32_global\"";
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(), "\"kiln.tensor_intrin\": \"wmma_fill_16x16x16_f32\"");
  PrimFunc broken = ParseFunc(text);
  try {
    transform::LowerTensorIntrin(broken);
    ADD_FAILURE() << "expected an IRError";
  } catch (const IRError& e) {
    EXPECT_NE(std::string(e.what()).find("was tensorized with wmma_fill_16x16x16_f32 but no "
                                         "longer matches it"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace kiln::ir
