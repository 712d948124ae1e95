#include "cost_model/random_model.h"

#include <gtest/gtest.h>

#include "ir/workloads/suite.h"

namespace kiln::cost_model {
namespace {

TEST(RandomModel, ScoresAreInRangeAndIndependentOfOrder) {
  const ir::PrimFunc a = ir::MakeWorkload("GMM", 0);
  const ir::PrimFunc b = ir::MakeWorkload("SFM", 0);
  RandomModel m(7);
  const std::vector<double> ab = m.Predict({a, b});
  const std::vector<double> ba = m.Predict({b, a});
  ASSERT_EQ(ab.size(), 2u);
  EXPECT_EQ(ab[0], ba[1]);
  EXPECT_EQ(ab[1], ba[0]);
  EXPECT_NE(ab[0], ab[1]);
  for (double s : ab) {
    EXPECT_GE(s, 0.0);
    EXPECT_LT(s, 1.0);
  }
  EXPECT_NE(RandomModel(8).Predict({a})[0], ab[0]) << "the seed must change the order";
  m.Update({{a, "k", 1e-3}});
  EXPECT_EQ(m.Predict({a})[0], ab[0]) << "a random model learns nothing";
}

}  // namespace
}  // namespace kiln::cost_model
