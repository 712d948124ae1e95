// search/measure.cc: status names, the median of a result, and ArgInfoOf.
#include "search/measure.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

#include "ir/error.h"
#include "ir/buffer.h"
#include "ir/expr.h"
#include "ir/op.h"
#include "ir/workloads/suite.h"

namespace kiln::search {
namespace {

using ::testing::HasSubstr;

const MeasureStatus kAll[] = {MeasureStatus::kOk,      MeasureStatus::kBuildError,
                              MeasureStatus::kRunCrash, MeasureStatus::kTimeout,
                              MeasureStatus::kWrongResult, MeasureStatus::kInfraError};

TEST(MeasureTest, StatusNamesRoundTrip) {
  std::set<std::string> names;
  for (MeasureStatus s : kAll) {
    std::string name = MeasureStatusName(s);
    EXPECT_EQ(ParseMeasureStatus(name), s) << name;
    names.insert(name);
  }
  EXPECT_EQ(names.size(), std::size(kAll));  // distinct
  EXPECT_STREQ(MeasureStatusName(MeasureStatus::kOk), "ok");
  EXPECT_STREQ(MeasureStatusName(MeasureStatus::kBuildError), "build_error");
  EXPECT_STREQ(MeasureStatusName(MeasureStatus::kRunCrash), "run_crash");
  EXPECT_STREQ(MeasureStatusName(MeasureStatus::kTimeout), "timeout");
  EXPECT_STREQ(MeasureStatusName(MeasureStatus::kWrongResult), "wrong_result");
  EXPECT_STREQ(MeasureStatusName(MeasureStatus::kInfraError), "infra_error");
  EXPECT_STREQ(MeasureStatusName(static_cast<MeasureStatus>(99)), "invalid_status");
}

TEST(MeasureTest, ParseRejectsUnknownNames) {
  for (const char* bad : {"", "OK", "crash", "ok ", "invalid_status"}) {
    try {
      ParseMeasureStatus(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr(std::string("unknown measure status '") + bad + "'"));
      EXPECT_THAT(e.what(), HasSubstr("wrong_result"));
    }
  }
}

MeasureResult Ok(std::vector<double> secs) {
  MeasureResult r;
  r.status = MeasureStatus::kOk;
  r.run_secs = std::move(secs);
  r.verified = true;
  return r;
}

TEST(MeasureTest, MedianSecs) {
  EXPECT_EQ(Ok({3e-3}).MedianSecs(), 3e-3);
  EXPECT_EQ(Ok({5, 1, 3}).MedianSecs(), 3);
  EXPECT_EQ(Ok({4, 1, 3, 2}).MedianSecs(), 2.5);
  EXPECT_EQ(Ok({2, 2, 9, 2}).MedianSecs(), 2);
  EXPECT_TRUE(std::isinf(Ok({}).MedianSecs()));
  for (MeasureStatus s : kAll) {
    if (s == MeasureStatus::kOk) continue;
    MeasureResult r = Ok({1, 2, 3});
    r.status = s;  // times of a failed result do not count
    EXPECT_TRUE(std::isinf(r.MedianSecs())) << MeasureStatusName(s);
  }
  EXPECT_TRUE(std::isinf(MeasureResult{}.MedianSecs()));  // the default is infra_error
}

TEST(MeasureTest, ArgInfoOfSuiteWorkload) {
  std::vector<ArgInfo> info = ArgInfoOf(ir::BatchMatmulNKKM(2, 8, 4, 6));
  ASSERT_EQ(info.size(), 3u);
  EXPECT_EQ(info[0].shape, (std::vector<int64_t>{2, 8, 6}));
  EXPECT_EQ(info[1].shape, (std::vector<int64_t>{2, 6, 4}));
  EXPECT_EQ(info[2].shape, (std::vector<int64_t>{2, 8, 4}));
  for (const ArgInfo& a : info) EXPECT_EQ(a.dtype, ir::DataType::Float32());
}

TEST(MeasureTest, ArgInfoOfRejectsSymbolicShapes) {
  // The text parser has no symbolic shapes, so the parameter is built directly
  // (ArgInfoOf looks only at the parameters).
  ir::PrimFunc f = ir::BatchMatmulNKKM(1, 4, 4, 4);
  ir::Var n("n");
  f.params[1] = ir::Buffer("B", ir::DataType::Float32(), {ir::IntImm(4), n, ir::IntImm(4)});
  try {
    ArgInfoOf(f);
    ADD_FAILURE() << "accepted a symbolic extent";
  } catch (const ir::IRError& e) {
    EXPECT_THAT(e.what(), HasSubstr("parameter 1 (B) has a non-constant extent in dimension 1"));
  }
}

}  // namespace
}  // namespace kiln::search
