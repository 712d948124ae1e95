// CompareOutput: TVM's validation tolerances per dtype on top of ir::Compare
// (exact integers, NaN and Inf handled explicitly), and a message that names
// the worst element and the tolerance it broke.
#include "rpc/output_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace kiln::rpc {
namespace {

using ::testing::HasSubstr;
using ir::DataType;
using ir::NDArray;

NDArray Filled(DataType dtype, std::vector<int64_t> shape, const std::vector<double>& values) {
  NDArray a(dtype, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) a.SetFromDouble(static_cast<int64_t>(i), values[i]);
  return a;
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST(OutputCheckTest, TolerancesByDtype) {
  for (DataType t : {DataType::Int(8), DataType::Int32(), DataType::Int64(), DataType::UInt(64),
                     DataType::Bool()}) {
    EXPECT_EQ(ToleranceFor(t).atol, 0) << t.str();
    EXPECT_EQ(ToleranceFor(t).rtol, 0) << t.str();
  }
  // TVM's validation tolerances.
  EXPECT_EQ(ToleranceFor(DataType::Float32()).atol, 2e-3);
  EXPECT_EQ(ToleranceFor(DataType::Float32()).rtol, 1e-3);
  EXPECT_EQ(ToleranceFor(DataType::Float(16)).atol, 1e-2);
  EXPECT_EQ(ToleranceFor(DataType::Float(16)).rtol, 1e-2);
  EXPECT_EQ(ToleranceFor(DataType::BFloat16()).atol, 5e-2);
  EXPECT_EQ(ToleranceFor(DataType::BFloat16()).rtol, 5e-2);
  // Coarser formats get looser tolerances.
  ir::Tolerance f64 = ToleranceFor(DataType::Float64()), f32 = ToleranceFor(DataType::Float32()),
            f16 = ToleranceFor(DataType::Float(16)), bf16 = ToleranceFor(DataType::BFloat16());
  EXPECT_GT(f64.atol, 0);
  EXPECT_LT(f64.rtol, f32.rtol);
  EXPECT_LT(f32.rtol, f16.rtol);
  EXPECT_LT(f16.rtol, bf16.rtol);
}

TEST(OutputCheckTest, IdenticalRandomArraysMatch) {
  for (DataType t : {DataType::Float32(), DataType::Float64(), DataType::Float(16), DataType::BFloat16(),
                     DataType::Int(8), DataType::UInt(16), DataType::Int64(), DataType::Bool()}) {
    NDArray a(t, {7, 5});
    ir::FillRandom(&a, 42);
    EXPECT_EQ(CompareOutput("C", a, a.Clone()), std::nullopt) << t.str();
  }
  NDArray empty(DataType::Float32(), {0, 3});
  EXPECT_EQ(CompareOutput("C", empty, empty), std::nullopt);
}

TEST(OutputCheckTest, IntegersMustMatchExactly) {
  NDArray e = Filled(DataType::Int32(), {2, 2}, {1, 2, 3, 4});
  NDArray g = Filled(DataType::Int32(), {2, 2}, {1, 2, 3, 5});
  auto msg = CompareOutput("C", g, e);
  ASSERT_TRUE(msg.has_value());
  EXPECT_THAT(*msg, HasSubstr("output C[1, 1]: expected 4, got 5"));
  EXPECT_THAT(*msg, HasSubstr("integers must match exactly"));
  EXPECT_THAT(*msg, HasSubstr("1 of 4 elements differ"));
  // Exact beyond double precision: uint64 values differing in the last bit.
  NDArray ue(DataType::UInt(64), {1}), ug(DataType::UInt(64), {1});
  ue.SetFromInt64(0, static_cast<int64_t>((uint64_t{1} << 63) + 2));
  ug.SetFromInt64(0, static_cast<int64_t>((uint64_t{1} << 63) + 3));
  EXPECT_TRUE(CompareOutput("U", ug, ue).has_value());
  EXPECT_FALSE(CompareOutput("U", ue, ue.Clone()).has_value());
}

TEST(OutputCheckTest, Float32WithinAndBeyondTolerance) {
  ir::Tolerance tol = ToleranceFor(DataType::Float32());
  const double e = 100;
  const double allowed = tol.atol + tol.rtol * e;
  NDArray expected = Filled(DataType::Float32(), {1}, {e});
  EXPECT_FALSE(CompareOutput("C", Filled(DataType::Float32(), {1}, {e + allowed * 0.5}), expected));
  EXPECT_FALSE(CompareOutput("C", Filled(DataType::Float32(), {1}, {e - allowed * 0.5}), expected));
  auto msg = CompareOutput("C", Filled(DataType::Float32(), {1}, {e + allowed * 2}), expected);
  ASSERT_TRUE(msg.has_value());
  EXPECT_THAT(*msg, HasSubstr("tolerance 0.002 + 0.001 * |expected|"));
  // Near zero the absolute part decides.
  NDArray zero = Filled(DataType::Float32(), {1}, {0});
  EXPECT_FALSE(CompareOutput("C", Filled(DataType::Float32(), {1}, {tol.atol * 0.5}), zero));
  EXPECT_TRUE(CompareOutput("C", Filled(DataType::Float32(), {1}, {tol.atol * 2}), zero));
}

TEST(OutputCheckTest, Float16IsLooserThanFloat32) {
  // Off by about 0.5-0.8 %: within float16's tolerance, not within float32's.
  EXPECT_FALSE(CompareOutput("C", Filled(DataType::Float(16), {1}, {1.0078125}),
                             Filled(DataType::Float(16), {1}, {1.0})));
  EXPECT_TRUE(CompareOutput("C", Filled(DataType::Float32(), {1}, {1.005}),
                            Filled(DataType::Float32(), {1}, {1.0})));
}

TEST(OutputCheckTest, NaNMatchesOnlyNaN) {
  NDArray nan = Filled(DataType::Float32(), {2}, {kNaN, 1});
  EXPECT_FALSE(CompareOutput("C", nan, nan.Clone()));
  NDArray num = Filled(DataType::Float32(), {2}, {0, 1});
  auto a = CompareOutput("C", nan, num);  // got NaN where a number was expected
  auto b = CompareOutput("C", num, nan);  // got a number where NaN was expected
  ASSERT_TRUE(a && b);
  EXPECT_THAT(*a, HasSubstr("C[0]: expected 0, got nan"));
  EXPECT_THAT(*b, HasSubstr("C[0]: expected nan, got 0"));
}

TEST(OutputCheckTest, InfinityMatchesOnlyTheSameInfinity) {
  NDArray pos = Filled(DataType::Float64(), {1}, {kInf});
  EXPECT_FALSE(CompareOutput("C", pos, pos.Clone()));
  EXPECT_TRUE(CompareOutput("C", Filled(DataType::Float64(), {1}, {-kInf}), pos));
  EXPECT_TRUE(CompareOutput("C", Filled(DataType::Float64(), {1}, {1e308}), pos));
  EXPECT_TRUE(CompareOutput("C", pos, Filled(DataType::Float64(), {1}, {1e308})));
  // A finite pair whose difference overflows is a mismatch, not a match.
  EXPECT_TRUE(CompareOutput("C", Filled(DataType::Float64(), {1}, {-1.7e308}),
                            Filled(DataType::Float64(), {1}, {1.7e308})));
}

TEST(OutputCheckTest, ReportsTheWorstElementAndTheMismatchCount) {
  NDArray e = Filled(DataType::Float32(), {2, 3}, {0, 0, 0, 0, 0, 0});
  // Three mismatches; the one at flat 4 ([1, 1]) is the largest.
  NDArray g = Filled(DataType::Float32(), {2, 3}, {0.5, 0, 0, 0.25, 8, 0});
  auto msg = CompareOutput("out", g, e);
  ASSERT_TRUE(msg.has_value());
  EXPECT_THAT(*msg, HasSubstr("output out[1, 1]: expected 0, got 8"));
  EXPECT_THAT(*msg, HasSubstr("3 of 6 elements differ"));
  // The error relative to the tolerance decides "worst": 3 off an expected
  // 1000 (3x the tolerance) is less bad than 0.1 off an expected 0 (50x).
  NDArray e2 = Filled(DataType::Float32(), {2}, {1000, 0});
  NDArray g2 = Filled(DataType::Float32(), {2}, {1003, 0.1f});
  auto msg2 = CompareOutput("out", g2, e2);
  ASSERT_TRUE(msg2.has_value());
  EXPECT_THAT(*msg2, HasSubstr("out[1]:"));
  EXPECT_THAT(*msg2, HasSubstr("2 of 2 elements differ"));
  // A NaN mismatch is worse than any finite error.
  NDArray g3 = Filled(DataType::Float32(), {3}, {100, kNaN, 5});
  auto msg3 = CompareOutput("out", g3, Filled(DataType::Float32(), {3}, {0, 0, 0}));
  ASSERT_TRUE(msg3.has_value());
  EXPECT_THAT(*msg3, HasSubstr("out[1]:"));
}

TEST(OutputCheckTest, ShapeOrDtypeMismatchIsReported) {
  NDArray e(DataType::Float32(), {4, 4});
  auto shape = CompareOutput("C", NDArray(DataType::Float32(), {4, 3}), e);
  ASSERT_TRUE(shape.has_value());
  EXPECT_THAT(*shape, HasSubstr("output C: shape differs: expected (4, 4), got (4, 3)"));
  auto dtype = CompareOutput("C", NDArray(DataType::Float64(), {4, 4}), e);
  ASSERT_TRUE(dtype.has_value());
  EXPECT_THAT(*dtype, HasSubstr("output C: dtype differs: expected float32, got float64"));
  // Same element count, different shape, is still a mismatch.
  EXPECT_TRUE(CompareOutput("C", NDArray(DataType::Float32(), {16}), e).has_value());
}

TEST(OutputCheckTest, BoolMustMatchExactly) {
  NDArray e = Filled(DataType::Bool(), {3}, {1, 0, 1});
  EXPECT_FALSE(CompareOutput("M", e.Clone(), e));
  auto msg = CompareOutput("M", Filled(DataType::Bool(), {3}, {1, 1, 1}), e);
  ASSERT_TRUE(msg.has_value());
  EXPECT_THAT(*msg, HasSubstr("M[1]:"));
}

}  // namespace
}  // namespace kiln::rpc
