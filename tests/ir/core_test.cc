// Core IR: data types, constructors and their type rules, visitor/mutator.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "ir/ir.h"
#include "ir/structural_equal.h"
#include "ir/substitute.h"
#include "ir/text/parser.h"

namespace kiln::ir {
namespace {

TEST(DataType, SpellingRoundTrips) {
  for (const char* s : {"bool", "int8", "int16", "int32", "int64", "uint8", "float16", "bfloat16",
                        "float32", "float64", "float32x8", "int32x4", "handle"}) {
    DataType t;
    ASSERT_TRUE(DataType::Parse(s, &t)) << s;
    EXPECT_EQ(t.str(), s);
  }
  DataType t;
  EXPECT_FALSE(DataType::Parse("float8", &t));
  EXPECT_FALSE(DataType::Parse("int7", &t));
  EXPECT_FALSE(DataType::Parse("bfloat32", &t));
  EXPECT_FALSE(DataType::Parse("float32x0", &t));
  EXPECT_FALSE(DataType::Parse("", &t));
  EXPECT_EQ(DataType::Float32().bytes(), 4);
  EXPECT_EQ(DataType::Bool().bytes(), 1);
  EXPECT_EQ(DataType::BFloat16().bytes(), 2);
}

TEST(Op, IntegerPromotionWidensAndRetypesLiterals) {
  Var i("i", DataType::Int64());
  Expr e = i + 1;
  EXPECT_EQ(e.dtype(), DataType::Int64());
  const auto* add = e.as<BinaryNode>();
  ASSERT_NE(add, nullptr);
  // The literal became an int64 constant, not a cast of an int32 one.
  ASSERT_NE(add->b.as<IntImmNode>(), nullptr);
  EXPECT_EQ(add->b.dtype(), DataType::Int64());

  Var j("j");  // int32
  Expr mixed = i * j;
  EXPECT_EQ(mixed.dtype(), DataType::Int64());
  ASSERT_NE(mixed.as<BinaryNode>()->b.as<CastNode>(), nullptr);
}

TEST(Op, FloatMeetsIntByCastingTheInt) {
  Buffer a("A", DataType::Float32(), {IntImm(4)});
  Var i("i");
  Expr e = BufferLoad(a, {i}) * Cast(DataType::Float32(), i);
  EXPECT_EQ(e.dtype(), DataType::Float32());
  Expr f = BufferLoad(a, {i}) + 2;
  EXPECT_EQ(f.as<BinaryNode>()->b.dtype(), DataType::Float32());
  EXPECT_NE(f.as<BinaryNode>()->b.as<FloatImmNode>(), nullptr);
}

TEST(Op, ComparisonsAreBoolAndLogicNeedsBool) {
  Var i("i");
  Expr c = i < 3;
  EXPECT_TRUE(c.dtype().is_bool());
  EXPECT_TRUE((c && (i >= 0)).dtype().is_bool());
  EXPECT_THROW(And(i, c), IRError);
  EXPECT_THROW(Not(i), IRError);
  EXPECT_THROW(Select(i, i, i), IRError);
}

TEST(Op, VectorsBroadcastScalarsAndRejectLaneMismatch) {
  Expr r = Ramp(IntImm(0), IntImm(1), 4);
  EXPECT_EQ(r.dtype(), DataType::Int(32, 4));
  Expr s = r + 5;
  EXPECT_EQ(s.dtype().lanes(), 4);
  EXPECT_NE(s.as<BinaryNode>()->b.as<BroadcastNode>(), nullptr);
  EXPECT_THROW(r + Ramp(IntImm(0), IntImm(1), 8), IRError);
  Buffer a("A", DataType::Float32(), {IntImm(16)});
  EXPECT_EQ(BufferLoad(a, {r}).dtype(), DataType::Float(32, 4));
}

TEST(Op, ConstructorsRejectMalformedInput) {
  Buffer a("A", DataType::Float32(), {IntImm(4), IntImm(4)});
  EXPECT_THROW(BufferLoad(a, {IntImm(0)}), IRError);
  EXPECT_THROW(BufferLoad(a, {IntImm(0), FloatImm(1.0)}), IRError);
  EXPECT_THROW(BufferStore(a, FloatImm(0.0), {IntImm(0)}), IRError);
  EXPECT_THROW(Call(CallOp::kExp, {IntImm(1)}), IRError);
  EXPECT_THROW(Call(CallOp::kPow, {FloatImm(1.0)}), IRError);
  EXPECT_THROW(IntImm(1, DataType::Float32()), IRError);
  EXPECT_THROW(Ramp(IntImm(0), IntImm(1), 1), IRError);
  try {
    BufferLoad(a, {IntImm(0)});
  } catch (const IRError& e) {
    EXPECT_STREQ(e.what(), "buffer A has 2 dimension(s) but is indexed with 1");
  }
}

TEST(Op, CallOpsHaveNamesAndArity) {
  for (int k = 0; k < static_cast<int>(CallOp::kCount_); ++k) {
    CallOp op = static_cast<CallOp>(k), back;
    ASSERT_TRUE(CallOpFromName(CallOpName(op), &back));
    EXPECT_EQ(back, op);
  }
  EXPECT_EQ(Call(CallOp::kIsNan, {FloatImm(1.0)}).dtype(), DataType::Bool());
  EXPECT_EQ(Call(CallOp::kSigmoid, {FloatImm(1.0, DataType::Float(16))}).dtype(),
            DataType::Float(16));
}

TEST(Op, LimitsMatchTvm) {
  double v;
  ASSERT_TRUE(AsConstFloat(MinValue(DataType::Float32()), &v));
  EXPECT_EQ(v, -3.4028234663852886e+38);
  int64_t i;
  ASSERT_TRUE(AsConstInt(MaxValue(DataType::Int(8)), &i));
  EXPECT_EQ(i, 127);
  ASSERT_TRUE(AsConstInt(MinValue(DataType::Int64()), &i));
  EXPECT_EQ(i, INT64_MIN);
}

// ir/op.cc: the small constants of the index types are one node each for the
// whole process, and their handles count no references, so the search's
// threads can copy them without writing shared memory.
TEST(Op, SmallIndexConstantsAreSharedUncountedNodes) {
  struct Case {
    int64_t value;
    DataType type;
  };
  const std::vector<Case> shared = {{-16, DataType::Int32()},  {0, DataType::Int32()},
                                    {1024, DataType::Int32()}, {-16, DataType::Int64()},
                                    {7, DataType::Int64()},    {1024, DataType::Int64()},
                                    {0, DataType::Bool()},     {1, DataType::Bool()}};
  std::vector<Expr> made_elsewhere(shared.size());
  std::thread other([&] {
    for (size_t i = 0; i < shared.size(); ++i) {
      made_elsewhere[i] = IntImm(shared[i].value, shared[i].type);
    }
  });
  other.join();
  for (size_t i = 0; i < shared.size(); ++i) {
    const Expr e = IntImm(shared[i].value, shared[i].type);
    const IntImmNode* n = e.as<IntImmNode>();
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->value, shared[i].value);
    EXPECT_EQ(e.dtype(), shared[i].type);
    EXPECT_TRUE(e.same_as(made_elsewhere[i])) << shared[i].value << " " << shared[i].type.str();
    const Expr copy = e;  // NOLINT(performance-unnecessary-copy-initialization): the point
    EXPECT_EQ(copy.node().use_count(), 0) << "a shared constant must count no references";
  }
  // Outside the range, or of another type: a fresh counted node each time.
  for (const Case& c : std::vector<Case>{{-17, DataType::Int32()},
                                         {1025, DataType::Int64()},
                                         {3, DataType::Int(16)},
                                         {5, DataType::UInt(32)}}) {
    const Expr a = IntImm(c.value, c.type), b = IntImm(c.value, c.type);
    EXPECT_FALSE(a.same_as(b)) << c.value << " " << c.type.str();
    EXPECT_EQ(a.node().use_count(), 1);
    EXPECT_EQ(a.as<IntImmNode>()->value, c.value);
    EXPECT_EQ(a.dtype(), c.type);
  }
}

TEST(Stmt, SeqStmtFlattensAndUnwrapsSingletons) {
  Buffer a("A", DataType::Float32(), {IntImm(4)});
  Stmt s0 = BufferStore(a, FloatImm(0.0), {IntImm(0)});
  Stmt s1 = BufferStore(a, FloatImm(1.0), {IntImm(1)});
  EXPECT_TRUE(SeqStmt({s0}).same_as(s0));
  Stmt nested = SeqStmt({SeqStmt({s0, s1}), s1});
  ASSERT_NE(nested.as<SeqStmtNode>(), nullptr);
  EXPECT_EQ(nested.as<SeqStmtNode>()->seq.size(), 3u);
}

// Replaces one variable by another everywhere.
class ReplaceVar : public IRMutator {
 public:
  ReplaceVar(const Var& from, Expr to) : from_(from), to_(std::move(to)) {}

 protected:
  Expr VisitVar(const Expr& e, const VarNode* op) override {
    return op == from_.get() ? to_ : e;
  }

 private:
  Var from_;
  Expr to_;
};

class CountLoads : public IRVisitor {
 public:
  int loads = 0;

 protected:
  void VisitBufferLoad(const BufferLoadNode* op) override {
    ++loads;
    IRVisitor::VisitBufferLoad(op);
  }
};

TEST(Functor, MutatorKeepsUnchangedSubtreesAndRebuildsChangedOnes) {
  Buffer a("A", DataType::Float32(), {IntImm(8)});
  Buffer b("B", DataType::Float32(), {IntImm(8)});
  Var i("i"), j("j");
  Stmt store = BufferStore(b, BufferLoad(a, {i}) + BufferLoad(a, {IntImm(0)}), {i});
  Stmt loop = For(i, IntImm(0), IntImm(8), ForKind::kSerial, store);

  ReplaceVar nothing(j, IntImm(3));
  EXPECT_TRUE(nothing.VisitStmt(loop).same_as(loop));

  ReplaceVar some(i, j * 2);
  Stmt out = some.VisitStmt(loop);
  EXPECT_FALSE(out.same_as(loop));
  const auto* f = out.as<ForNode>();
  ASSERT_NE(f, nullptr);
  const auto* st = f->body.as<BufferStoreNode>();
  ASSERT_NE(st, nullptr);
  EXPECT_NE(st->indices[0].as<BinaryNode>(), nullptr);
  // The untouched load A[0] is shared with the original tree.
  const auto* sum = st->value.as<BinaryNode>();
  const auto* orig = store.as<BufferStoreNode>()->value.as<BinaryNode>();
  EXPECT_TRUE(sum->b.same_as(orig->b));

  CountLoads counter;
  counter.VisitStmt(out);
  EXPECT_EQ(counter.loads, 2);
}

TEST(PrimFunc, RootBody) {
  Buffer a("A", DataType::Float32(), {IntImm(4)});
  PrimFunc f;
  f.params = {a};
  f.body = MakeRootBody(BufferStore(a, FloatImm(0.0), {IntImm(0)}));
  EXPECT_EQ(f.root_block().name, "root");
  PrimFunc bad;
  bad.body = BufferStore(a, FloatImm(0.0), {IntImm(0)});
  EXPECT_THROW(bad.root_block(), IRError);
}

}  // namespace
}  // namespace kiln::ir

namespace kiln::ir {
namespace {

TEST(Substitute, ReplacesUsesAndCastsToTheVariableType) {
  Var i("i"), j("j", DataType::Int64());
  Buffer a("A", DataType::Float32(), {IntImm(8)});
  Expr e = BufferLoad(a, {i * 2 + 1});
  Expr out = Substitute(e, {{i.get(), j + 3}});
  EXPECT_TRUE(UsesVar(out, [&](const VarNode* v) { return v == j.get(); }));
  EXPECT_FALSE(UsesVar(out, [&](const VarNode* v) { return v == i.get(); }));
  // j + 3 is int64 while i is int32: the substitute is cast back.
  const auto* mul = out.as<BufferLoadNode>()->indices[0].as<BinaryNode>()->a.as<BinaryNode>();
  ASSERT_NE(mul, nullptr);
  EXPECT_NE(mul->a.as<CastNode>(), nullptr);
  EXPECT_TRUE(Substitute(e, {}).same_as(e));
  EXPECT_TRUE(Substitute(e, {{j.get(), IntImm(0)}}).same_as(e));
  auto vars = FreeVars(i * j + i);
  ASSERT_EQ(vars.size(), 2u);
  EXPECT_EQ(vars[0], i.get());
}

TEST(Substitute, LoopVarsSkipTheInsideOfBlocksWithIterVars) {
  PrimFunc f = ParseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            v = T.axis.spatial(8, i)
            T.where(i < 8)
            T.reads(A[v])
            T.writes(B[v])
            B[v] = A[v]
        with T.block("C"):
            T.reads(B[i])
            T.writes(C[i])
            C[i] = B[i]
)");
  const auto* root = f.body.as<BlockRealizeNode>();
  ASSERT_NE(root, nullptr);
  const auto* loop = root->block->body.as<ForNode>();
  ASSERT_NE(loop, nullptr);
  Var j("j");
  VarMap map{{loop->loop_var.get(), j * 2}};
  Stmt got = SubstituteLoopVars(loop->body, map);
  // The same result as substituting everywhere...
  EXPECT_TRUE(StructuralEqual(got, Substitute(loop->body, map)));
  EXPECT_FALSE(UsesVar(got, [&](const VarNode* v) { return v == loop->loop_var.get(); }));
  // ...with block B's binding and predicate rewritten but its block (body,
  // regions) not walked, while the opaque block C is rewritten inside.
  const auto* seq = got.as<SeqStmtNode>();
  ASSERT_NE(seq, nullptr);
  const auto* old_seq = loop->body.as<SeqStmtNode>();
  const auto* b = seq->seq[0].as<BlockRealizeNode>();
  const auto* old_b = old_seq->seq[0].as<BlockRealizeNode>();
  EXPECT_FALSE(b->iter_values[0].same_as(old_b->iter_values[0]));
  EXPECT_FALSE(b->predicate.same_as(old_b->predicate));
  EXPECT_TRUE(b->block.same_as(old_b->block));
  EXPECT_FALSE(seq->seq[1].as<BlockRealizeNode>()->block.same_as(
      old_seq->seq[1].as<BlockRealizeNode>()->block));
  EXPECT_TRUE(SubstituteLoopVars(loop->body, {}).same_as(loop->body));
}

}  // namespace
}  // namespace kiln::ir
