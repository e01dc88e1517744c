#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "core/stats.h"

namespace hb {
namespace {

TEST(Stats, QuantilesAndNoise) {
  std::vector<double> s = {5, 1, 4, 2, 3};
  auto r = summarize(s);
  EXPECT_EQ(r.median, 3);
  EXPECT_EQ(r.min, 1);
  EXPECT_EQ(r.max, 5);
  EXPECT_DOUBLE_EQ(r.q1, 2);
  EXPECT_DOUBLE_EQ(r.p10, 1.4);
  EXPECT_NEAR(r.stdev, std::sqrt(2.5), 1e-12);
  EXPECT_TRUE(std::isnan(quantile(std::vector<double>{}, 0.5)));
  EXPECT_EQ(summarize(std::vector<double>{}).count, 0);
}

}  // namespace
}  // namespace hb
