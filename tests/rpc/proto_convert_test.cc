// search::MeasureResult <-> kiln.v1.MeasureResult (rpc/proto_convert.h), as a
// farm worker's result crosses the wire: the noise figures survive, an absent
// machine load stays unknown, and an impossible one is refused by name.
#include "rpc/proto_convert.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>

namespace kiln::rpc {
namespace {

using ::testing::HasSubstr;

search::MeasureResult Ok(std::vector<double> secs) {
  search::MeasureResult r;
  r.status = search::MeasureStatus::kOk;
  r.run_secs = std::move(secs);
  r.verified = true;
  r.build_secs = 0.5;
  return r;
}

TEST(ProtoConvert, NoiseFiguresSurviveTheRoundTrip) {
  search::MeasureResult r = Ok({1.0, 1.5, 1.2});
  r.machine_load = 0.375;
  r.wide_spread = true;
  const v1::MeasureResult p = ToProto(r);
  EXPECT_TRUE(p.has_machine_load());
  const search::MeasureResult back = FromProto(p);
  EXPECT_DOUBLE_EQ(back.machine_load, 0.375);
  EXPECT_TRUE(back.wide_spread);
  EXPECT_EQ(back.run_secs, r.run_secs);
  EXPECT_TRUE(back.verified);
}

TEST(ProtoConvert, AnUnknownLoadStaysUnknown) {
  search::MeasureResult r = Ok({1.0, 1.01});
  ASSERT_EQ(r.machine_load, -1);
  const v1::MeasureResult p = ToProto(r);
  EXPECT_FALSE(p.has_machine_load());  // not a load of 0: an idle machine is a figure
  const search::MeasureResult back = FromProto(p);
  EXPECT_EQ(back.machine_load, -1);
  EXPECT_FALSE(back.wide_spread);
  // An idle machine (0) is a figure, not unknown.
  r.machine_load = 0;
  EXPECT_TRUE(ToProto(r).has_machine_load());
  EXPECT_EQ(FromProto(ToProto(r)).machine_load, 0);
}

TEST(ProtoConvert, ASenderThatLeavesOutTheSpreadLosesNothing) {
  v1::MeasureResult p = ToProto(Ok({1.0, 2.0, 1.1}));
  p.clear_wide_spread();  // an older worker's result
  EXPECT_TRUE(FromProto(p).wide_spread);
}

TEST(ProtoConvert, AnImpossibleLoadIsRefusedByName) {
  for (double bad : {-0.5, 1.5, std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity()}) {
    v1::MeasureResult p = ToProto(Ok({1.0}));
    p.set_machine_load(bad);
    try {
      FromProto(p);
      ADD_FAILURE() << "machine_load " << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr("machine_load")) << bad;
    }
  }
}

}  // namespace
}  // namespace kiln::rpc
