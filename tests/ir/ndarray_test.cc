#include "ir/ndarray.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "ir/compare.h"
#include "ir/error.h"
#include "ir/op.h"

namespace kiln::ir {
namespace {

using ::testing::HasSubstr;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST(Float16Test, KnownEncodings) {
  EXPECT_EQ(DoubleToFloat16Bits(1.0), 0x3C00);
  EXPECT_EQ(DoubleToFloat16Bits(-2.0), 0xC000);
  EXPECT_EQ(DoubleToFloat16Bits(0.0), 0x0000);
  EXPECT_EQ(DoubleToFloat16Bits(-0.0), 0x8000);
  EXPECT_EQ(DoubleToFloat16Bits(65504.0), 0x7BFF);
  EXPECT_EQ(DoubleToFloat16Bits(std::ldexp(1.0, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(DoubleToFloat16Bits(std::ldexp(1.0, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(DoubleToFloat16Bits(kInf), 0x7C00);
  EXPECT_EQ(DoubleToFloat16Bits(-kInf), 0xFC00);
  EXPECT_EQ(DoubleToFloat16Bits(kNaN), 0x7E00);
}

TEST(Float16Test, RoundsToNearestEven) {
  // Halfway between 1 and 1 + 2^-10 goes to the even neighbour, 1.
  EXPECT_EQ(DoubleToFloat16Bits(1.0 + std::ldexp(1.0, -11)), 0x3C00);
  // Halfway between 1 + 2^-10 and 1 + 2^-9 goes to the even 1 + 2^-9.
  EXPECT_EQ(DoubleToFloat16Bits(1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02);
  // Just above halfway rounds up.
  EXPECT_EQ(DoubleToFloat16Bits(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30)), 0x3C01);
  // Subnormals: half the smallest subnormal ties to 0, 1.5 of it to 2.
  EXPECT_EQ(DoubleToFloat16Bits(std::ldexp(1.0, -25)), 0x0000);
  EXPECT_EQ(DoubleToFloat16Bits(3 * std::ldexp(1.0, -25)), 0x0002);
  // Overflow: 65519 rounds down to the largest finite value, 65520 to inf.
  EXPECT_EQ(DoubleToFloat16Bits(65519.0), 0x7BFF);
  EXPECT_EQ(DoubleToFloat16Bits(65520.0), 0x7C00);
  EXPECT_EQ(RoundToFloat16(0.1), 0.0999755859375);
  // Carry into the next binade.
  EXPECT_EQ(RoundToFloat16(2047.5), 2048.0);
}

TEST(Float16Test, EveryBitPatternRoundTrips) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    double v = Float16BitsToDouble(static_cast<uint16_t>(bits));
    if (std::isnan(v)) {
      EXPECT_TRUE((bits & 0x7C00) == 0x7C00 && (bits & 0x3FF) != 0) << bits;
      continue;
    }
    ASSERT_EQ(DoubleToFloat16Bits(v), bits) << "bits " << bits << " value " << v;
    ASSERT_EQ(RoundToFloat16(v), v);
  }
}

TEST(BFloat16Test, KnownEncodingsAndRounding) {
  EXPECT_EQ(DoubleToBFloat16Bits(1.0), 0x3F80);
  EXPECT_EQ(DoubleToBFloat16Bits(-1.0), 0xBF80);
  EXPECT_EQ(DoubleToBFloat16Bits(kNaN), 0x7FC0);
  EXPECT_EQ(DoubleToBFloat16Bits(kInf), 0x7F80);
  EXPECT_EQ(DoubleToBFloat16Bits(1.0 + std::ldexp(1.0, -8)), 0x3F80);      // tie to even
  EXPECT_EQ(DoubleToBFloat16Bits(1.0 + 3 * std::ldexp(1.0, -8)), 0x3F82);  // tie to even
  // Rounding via float first would land exactly on the tie and go down;
  // rounding straight from double goes up.
  EXPECT_EQ(DoubleToBFloat16Bits(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30)), 0x3F81);
  EXPECT_EQ(DoubleToBFloat16Bits(3.5e38), 0x7F80);  // above the largest finite value
  EXPECT_EQ(BFloat16BitsToDouble(0x4049), 3.140625);
}

TEST(BFloat16Test, EveryBitPatternRoundTrips) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    double v = BFloat16BitsToDouble(static_cast<uint16_t>(bits));
    if (std::isnan(v)) continue;
    ASSERT_EQ(DoubleToBFloat16Bits(v), bits) << "bits " << bits << " value " << v;
  }
}

TEST(NDArrayTest, ShapeSizeAndAlignment) {
  NDArray a(DataType::Float32(), {3, 5});
  EXPECT_EQ(a.size(), 15);
  EXPECT_EQ(a.nbytes(), 60u);
  EXPECT_EQ(a.ShapeString(), "(3, 5)");
  EXPECT_EQ(a.IndexString(7), "[1, 2]");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % 64, 0u);
  for (int64_t i = 0; i < a.size(); ++i) EXPECT_EQ(a.data_as<float>()[i], 0.0f);
  EXPECT_THROW(NDArray(DataType::Float(32, 4), {2}), IRError);
  EXPECT_THROW(NDArray(DataType::Int32(), {-1}), IRError);
  EXPECT_THROW(a.GetAsDouble(15), IRError);
  EXPECT_THROW(a.SetFromInt64(-1, 0), IRError);
}

TEST(NDArrayTest, CopiesAreDeep) {
  NDArray a(DataType::Int32(), {4});
  a.SetFromInt64(1, 5);
  NDArray b = a;
  NDArray c = a.Clone();
  a.SetFromInt64(1, 6);
  EXPECT_EQ(b.GetAsInt64(1), 5);
  EXPECT_EQ(c.GetAsInt64(1), 5);
  EXPECT_NE(b.data(), a.data());
}

TEST(NDArrayTest, SetAndGetEveryDtype) {
  struct Case {
    DataType t;
    double in, out;
  };
  const Case cases[] = {
      {DataType::Float(16), 0.1, 0.0999755859375},
      {DataType::BFloat16(), 3.14159, 3.140625},
      {DataType::Float32(), 0.1, static_cast<double>(0.1f)},
      {DataType::Float64(), 0.1, 0.1},
      {DataType::Int(8), 300, 127},
      {DataType::Int(8), -300, -128},
      {DataType::Int(8), -3.7, -3},
      {DataType::Int(32), 3.7, 3},
      {DataType::Int(32), kNaN, 0},
      {DataType::Int(64), 1e30, 9.2233720368547758e18},
      {DataType::UInt(8), -5, 0},
      {DataType::UInt(8), 255.9, 255},
      {DataType::UInt(16), 1e9, 65535},
      {DataType::UInt(32), 4e9, 4e9},
      {DataType::Bool(), 0.5, 1},
      {DataType::Bool(), 0, 0},
  };
  for (const Case& c : cases) {
    NDArray a(c.t, {2});
    a.SetFromDouble(1, c.in);
    EXPECT_EQ(a.GetAsDouble(1), c.out) << c.t.str() << " " << c.in;
    EXPECT_EQ(a.GetAsDouble(0), 0) << c.t.str();
  }
}

TEST(NDArrayTest, ExactInt64AndWrapping) {
  NDArray a(DataType::Int(64), {1});
  a.SetFromInt64(0, (int64_t{1} << 53) + 1);
  EXPECT_EQ(a.GetAsInt64(0), (int64_t{1} << 53) + 1);
  NDArray u(DataType::UInt(64), {1});
  u.SetFromInt64(0, -1);
  EXPECT_EQ(u.GetAsDouble(0), 18446744073709551615.0);
  NDArray b(DataType::Int(8), {1});
  b.SetFromInt64(0, 200);  // integers wrap, as a C cast does
  EXPECT_EQ(b.GetAsInt64(0), -56);
  NDArray c(DataType::UInt(16), {1});
  c.SetFromInt64(0, -1);
  EXPECT_EQ(c.GetAsInt64(0), 65535);
}

TEST(ConversionTest, IntHelpers) {
  EXPECT_EQ(WrapToIntType(128, DataType::Int(8)), -128);
  EXPECT_EQ(WrapToIntType(-1, DataType::UInt(8)), 255);
  EXPECT_EQ(WrapToIntType(5, DataType::Bool()), 1);
  EXPECT_EQ(DoubleToIntSaturating(-1e300, DataType::Int(64)), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(DoubleToIntSaturating(1e300, DataType::UInt(64)), -1);
  EXPECT_EQ(DoubleToIntSaturating(-0.9, DataType::UInt(32)), 0);
}

TEST(FillRandomTest, GoldenValuesNeverDrift) {
  NDArray f(DataType::Float32(), {6});
  FillRandom(&f, 42);
  const float want_f32[] = {0x1.eeb99p-2f,   -0x1.5c4074p-1f, -0x1.c56cc8p-2f,
                            -0x1.3f18f8p-2f, -0x1.d90eap-1f,  0x1.7910c4p-1f};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(f.data_as<float>()[i], want_f32[i]) << i;

  NDArray n(DataType::Int32(), {8});
  FillRandom(&n, 42);
  const int32_t want_i32[] = {3, -6, -4, -3, -8, 5, -5, 4};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(n.data_as<int32_t>()[i], want_i32[i]) << i;

  NDArray h(DataType::Float(16), {4});
  FillRandom(&h, 7);
  const double want_f16[] = {-0x1.c4p-3, -0x1.efp-1, 0x1.9ap-1, 0x1.52p-3};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(h.GetAsDouble(i), want_f16[i]) << i;

  NDArray d(DataType::Float64(), {3});
  FillRandom(&d, 1);
  const double want_f64[] = {0x1.10a2dec890258p-3, 0x1.f75c6d0b2c774p-2, 0x1.e24e8bbbecc94p-1};
  for (int i = 0; i < 3; ++i) EXPECT_EQ(d.data_as<double>()[i], want_f64[i]) << i;
}

TEST(FillRandomTest, RangesAndDeterminism) {
  for (DataType t : {DataType::Float(16), DataType::BFloat16(), DataType::Float32(),
                     DataType::Float64(), DataType::Int(8), DataType::UInt(32), DataType::Bool()}) {
    NDArray a(t, {4096}), b(t, {4096}), c(t, {4096});
    FillRandom(&a, 5);
    FillRandom(&b, 5);
    FillRandom(&c, 6);
    EXPECT_TRUE(Compare(a, b, Tolerance{0, 0}).ok) << t.str();
    EXPECT_FALSE(Compare(a, c, Tolerance{0, 0}).ok) << t.str();
    double lo = 1e9, hi = -1e9;
    for (int64_t i = 0; i < a.size(); ++i) {
      lo = std::min(lo, a.GetAsDouble(i));
      hi = std::max(hi, a.GetAsDouble(i));
    }
    if (t.is_floating()) {
      EXPECT_GE(lo, -1.0) << t.str();
      EXPECT_LT(hi, 1.0) << t.str();
      EXPECT_LT(lo, -0.9) << t.str();
      EXPECT_GT(hi, 0.9) << t.str();
    } else if (t.is_int()) {
      EXPECT_EQ(lo, -8);
      EXPECT_EQ(hi, 7);
    } else if (t.is_uint()) {
      EXPECT_EQ(lo, 0);
      EXPECT_EQ(hi, 15);
    } else {
      EXPECT_EQ(lo, 0);
      EXPECT_EQ(hi, 1);
    }
  }
}

PrimFunc TwoParamFunc(Expr extent) {
  Buffer a("A", DataType::Float32(), {IntImm(4), IntImm(3)});
  Buffer b("B", DataType::Int(8), {std::move(extent)});
  PrimFunc f;
  f.params = {a, b};
  f.body = MakeRootBody(Evaluate(IntImm(0)));
  return f;
}

TEST(MakeArgsTest, OneArrayPerParamAndSeededPerParam) {
  PrimFunc f = TwoParamFunc(IntImm(7));
  std::vector<NDArray> zero = MakeArgs(f);
  ASSERT_EQ(zero.size(), 2u);
  EXPECT_EQ(zero[0].shape(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(zero[1].dtype(), DataType::Int(8));
  std::vector<NDArray> r = MakeRandomArgs(f, 11);
  NDArray want0(DataType::Float32(), {4, 3}), want1(DataType::Int(8), {7});
  FillRandom(&want0, 11 ^ MixSeed(1));
  FillRandom(&want1, 11 ^ MixSeed(2));
  EXPECT_TRUE(Compare(want0, r[0], Tolerance{0, 0}).ok);
  EXPECT_TRUE(Compare(want1, r[1], Tolerance{0, 0}).ok);
}

TEST(MakeArgsTest, SymbolicShapeIsAClearError) {
  PrimFunc f = TwoParamFunc(Var("n"));
  try {
    MakeArgs(f);
    FAIL() << "expected an error";
  } catch (const IRError& e) {
    EXPECT_THAT(e.what(), HasSubstr("parameter 1 (B)"));
    EXPECT_THAT(e.what(), HasSubstr("dimension 0"));
  }
}

NDArray Floats(std::vector<int64_t> shape, std::vector<double> values,
               DataType t = DataType::Float32()) {
  NDArray a(t, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) a.SetFromDouble(static_cast<int64_t>(i), values[i]);
  return a;
}

TEST(CompareTest, MessageNamesWorstElement) {
  NDArray want(DataType::Float32(), {4, 32}), got(DataType::Float32(), {4, 32});
  FillRandom(&want, 3);
  got = want;
  want.SetFromDouble(3 * 32 + 17, 1.25);
  got.SetFromDouble(3 * 32 + 17, 1.5);
  got.SetFromDouble(5, want.GetAsDouble(5) + 0.01);
  got.SetFromDouble(9, want.GetAsDouble(9) - 0.02);
  CompareResult r = Compare(want, got, Tolerance::For(DataType::Float32()), "C");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 3);
  EXPECT_EQ(r.worst_index, 3 * 32 + 17);
  EXPECT_EQ(r.expected, 1.25);
  EXPECT_EQ(r.actual, 1.5);
  EXPECT_EQ(r.abs_err, 0.25);
  EXPECT_DOUBLE_EQ(r.rel_err, 0.2);
  EXPECT_EQ(r.message,
            "C[3, 17]: expected 1.25, got 1.5 (abs err 0.25, rel err 0.2); 3 of 128 elements "
            "differ");
}

TEST(CompareTest, ToleranceIsRelativeAndAbsolute) {
  Tolerance tol = Tolerance::For(DataType::Float32());
  EXPECT_EQ(tol.rtol, 1e-5);
  EXPECT_EQ(tol.atol, 1e-5);
  EXPECT_TRUE(Compare(Floats({2}, {1000.0, 0.0}), Floats({2}, {1000.009, 9e-6}), tol).ok);
  EXPECT_FALSE(Compare(Floats({2}, {1000.0, 0.0}), Floats({2}, {1000.02, 0.0}), tol).ok);
  EXPECT_FALSE(Compare(Floats({1}, {0.0}), Floats({1}, {2e-5}), tol).ok);
  Tolerance half = Tolerance::For(DataType::Float(16));
  EXPECT_EQ(half.rtol, 1e-2);
  EXPECT_EQ(Tolerance::For(DataType::Int32()).atol, 0);
}

TEST(CompareTest, NaNAndInfinity) {
  Tolerance tol{1e-5, 1e-5};
  EXPECT_TRUE(Compare(Floats({2}, {kNaN, 1}), Floats({2}, {kNaN, 1}), tol).ok);
  CompareResult r = Compare(Floats({2}, {kNaN, 1}), Floats({2}, {0, 1}), tol, "Y");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.worst_index, 0);
  EXPECT_THAT(r.message, HasSubstr("Y[0]: expected nan, got 0"));
  EXPECT_FALSE(Compare(Floats({1}, {1}), Floats({1}, {kNaN}), tol).ok);
  EXPECT_TRUE(Compare(Floats({1}, {kInf}), Floats({1}, {kInf}), tol).ok);
  EXPECT_FALSE(Compare(Floats({1}, {kInf}), Floats({1}, {-kInf}), tol).ok);
  EXPECT_FALSE(Compare(Floats({1}, {1e30}), Floats({1}, {kInf}), tol).ok);
  // A NaN mismatch outranks a larger finite error.
  r = Compare(Floats({2}, {0, 5}), Floats({2}, {1000, kNaN}), tol);
  EXPECT_EQ(r.worst_index, 1);
  EXPECT_EQ(r.mismatches, 2);
}

TEST(CompareTest, IntegersAreExact) {
  NDArray a(DataType::Int(64), {2}), b(DataType::Int(64), {2});
  a.SetFromInt64(0, int64_t{1} << 53);
  b.SetFromInt64(0, (int64_t{1} << 53) + 1);  // equal as doubles
  CompareResult r = Compare(a, b, Tolerance::For(DataType::Int(64)), "I");
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.message, HasSubstr("I[0]: expected 9007199254740992, got 9007199254740993"));
  NDArray c(DataType::Int(32), {3}), d(DataType::Int(32), {3});
  d.SetFromInt64(2, 1);
  EXPECT_FALSE(Compare(c, d, Tolerance::For(DataType::Int(32))).ok);
  EXPECT_TRUE(Compare(c, c, Tolerance::For(DataType::Int(32))).ok);
}

TEST(CompareTest, DtypeAndShapeMismatch) {
  CompareResult r = Compare(NDArray(DataType::Float32(), {2}), NDArray(DataType::Float(16), {2}),
                            Tolerance{}, "Z");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.message, "Z: dtype differs: expected float32, got float16");
  r = Compare(NDArray(DataType::Float32(), {2, 3}), NDArray(DataType::Float32(), {3, 2}),
              Tolerance{}, "Z");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.message, "Z: shape differs: expected (2, 3), got (3, 2)");
  r = Compare(NDArray(DataType::Float32(), {2}), NDArray(DataType::Float32(), {2}), Tolerance{},
              "Z");
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.message, "Z: all 2 elements match");
}

}  // namespace
}  // namespace kiln::ir
