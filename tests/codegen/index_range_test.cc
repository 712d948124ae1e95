// IndexRanges: which integer index expressions the CPU backend may compute
// in 64 bits with no-wrap flags (codegen/index_range.h). A wrong "yes" would
// let a kernel differ from the interpreter where int32 arithmetic wraps, so
// the refusals matter as much as the ranges.
#include "codegen/index_range.h"

#include <gtest/gtest.h>

#include <climits>

#include "ir/buffer.h"
#include "ir/op.h"

namespace kiln::codegen {
namespace {

using ir::arith::ConstIntBound;

class IndexRangesTest : public ::testing::Test {
 protected:
  IndexRangesTest() { ranges.Bind(i.as<ir::VarNode>(), ConstIntBound::Make(0, 127)); }

  std::optional<ConstIntBound> R(const ir::Expr& e) const { return ranges.NoWrapRange(e); }

  IndexRanges ranges;
  ir::Var i{"i"};  // bound to [0, 127]
  ir::Var j{"j"};  // unbound: any int32
};

TEST_F(IndexRangesTest, AffineIndicesOfBoundLoopsHaveTheirRange) {
  EXPECT_EQ(R(ir::Add(ir::Mul(i, ir::IntImm(512)), ir::IntImm(7))), ConstIntBound::Make(7, 127 * 512 + 7));
  EXPECT_EQ(R(ir::Sub(ir::IntImm(200), i)), ConstIntBound::Make(73, 200));
  EXPECT_EQ(R(ir::Min(i, ir::IntImm(100))), ConstIntBound::Make(0, 100));
  EXPECT_EQ(R(ir::Max(i, ir::IntImm(100))), ConstIntBound::Make(100, 127));
}

TEST_F(IndexRangesTest, FloorDivisionOfNonNegativeValuesByPositiveConstants) {
  EXPECT_EQ(R(ir::FloorDiv(i, ir::IntImm(8))), ConstIntBound::Make(0, 15));
  EXPECT_EQ(R(ir::FloorMod(i, ir::IntImm(8))), ConstIntBound::Make(0, 7));
  EXPECT_EQ(R(ir::FloorMod(i, ir::IntImm(256))), ConstIntBound::Make(0, 127));
  // A dividend that may be negative, a negative or non-constant divisor.
  EXPECT_FALSE(R(ir::FloorDiv(ir::Sub(i, ir::IntImm(5)), ir::IntImm(4))));
  EXPECT_FALSE(R(ir::FloorMod(ir::Sub(i, ir::IntImm(5)), ir::IntImm(4))));
  EXPECT_FALSE(R(ir::FloorDiv(i, ir::IntImm(-4))));
  EXPECT_FALSE(R(ir::FloorDiv(i, ir::Add(i, ir::IntImm(1)))));
}

TEST_F(IndexRangesTest, RefusesWhatMayWrapInInt32) {
  // An unbound int32 is fine alone, but may wrap once anything is added.
  EXPECT_EQ(R(j), ConstIntBound::Make(INT32_MIN, INT32_MAX));
  EXPECT_FALSE(R(ir::Add(j, ir::IntImm(1))));
  EXPECT_FALSE(R(ir::Mul(j, ir::IntImm(2))));
  // 127 * 20,000,000 leaves int32 although each operand fits.
  EXPECT_FALSE(R(ir::Mul(i, ir::IntImm(20000000))));
  EXPECT_TRUE(R(ir::Mul(i, ir::IntImm(16000000))));
  // A wrap in a subexpression poisons the whole, even if the end result fits.
  EXPECT_FALSE(R(ir::Sub(ir::Mul(i, ir::IntImm(20000000)), ir::Mul(i, ir::IntImm(20000000)))));
}

TEST_F(IndexRangesTest, Int64ArithmeticNeedsBoundsToo) {
  ir::Var k("k", ir::DataType::Int64());
  EXPECT_FALSE(R(ir::Mul(k, ir::IntImm(2, ir::DataType::Int64()))));
  ranges.Bind(k.as<ir::VarNode>(), ConstIntBound::Make(0, 100000));
  EXPECT_EQ(R(ir::Mul(k, ir::IntImm(30000, ir::DataType::Int64()))), ConstIntBound::Make(0, 3000000000LL));
}

TEST_F(IndexRangesTest, RefusesWhatItCannotReasonAbout) {
  ir::Buffer buf("A", ir::DataType::Int32(), {ir::IntImm(16)});
  EXPECT_FALSE(R(ir::BufferLoad(buf, {i})));
  EXPECT_FALSE(R(ir::Cast(ir::DataType::Int64(), i)));
  EXPECT_FALSE(R(ir::FloatImm(1.0)));
  EXPECT_FALSE(R(ir::TruncMod(i, ir::IntImm(4))));  // truncating: not among the supported operators
}

TEST_F(IndexRangesTest, UnbindForgetsTheLoop) {
  ranges.Unbind(i.as<ir::VarNode>());
  EXPECT_FALSE(R(ir::Mul(i, ir::IntImm(512))));
}

TEST_F(IndexRangesTest, LoopRangeNeedsBothEndsInsideTheType) {
  EXPECT_EQ(ranges.LoopRange(ir::IntImm(0), ir::IntImm(128), ir::DataType::Int32()),
            ConstIntBound::Make(0, 127));
  EXPECT_EQ(ranges.LoopRange(ir::IntImm(-16), ir::IntImm(32), ir::DataType::Int32()),
            ConstIntBound::Make(-16, 15));
  // min comes from an enclosing loop: i in [0, 127], so the loop covers [0, 127 + 3].
  EXPECT_EQ(ranges.LoopRange(i, ir::IntImm(4), ir::DataType::Int32()), ConstIntBound::Make(0, 130));
  EXPECT_EQ(ranges.LoopRange(ir::IntImm(INT32_MAX - 7), ir::IntImm(7), ir::DataType::Int32()),
            ConstIntBound::Make(INT32_MAX - 7, INT32_MAX - 1));
  // The loop test's end, min + extent, would wrap.
  EXPECT_FALSE(ranges.LoopRange(ir::IntImm(INT32_MAX - 7), ir::IntImm(8), ir::DataType::Int32()));
  EXPECT_FALSE(ranges.LoopRange(ir::IntImm(0), ir::IntImm(0), ir::DataType::Int32()));  // runs never
  EXPECT_FALSE(ranges.LoopRange(j, ir::IntImm(4), ir::DataType::Int32()));
  EXPECT_FALSE(ranges.LoopRange(ir::IntImm(0), ir::IntImm(4), ir::DataType::Int64()));  // mixed types
}

}  // namespace
}  // namespace kiln::codegen
