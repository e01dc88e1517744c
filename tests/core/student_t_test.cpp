#include "core/student_t.h"

#include <gtest/gtest.h>

#include <cmath>

namespace hb {
namespace {

TEST(StudentT, QuantilesMatchTheTables) {
  // Two-sided 95% critical values (any statistics table).
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.7062, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.975, 2), 4.3027, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 3), 3.1824, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 4), 2.7764, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 9), 2.2622, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.0423, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.995, 5), 4.0321, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 100000), 1.95997, 1e-4);  // the normal's
  EXPECT_NEAR(student_t_quantile(0.025, 2), -4.3027, 1e-4);
}

TEST(StudentT, CdfIsSymmetricAndCauchyAtOneDegree) {
  EXPECT_DOUBLE_EQ(student_t_cdf(0, 3), 0.5);
  EXPECT_NEAR(student_t_cdf(1, 1), 0.75, 1e-12);  // Cauchy: 1/2 + atan(1)/pi
  EXPECT_NEAR(student_t_cdf(-2.5, 7) + student_t_cdf(2.5, 7), 1.0, 1e-12);
  for (int df : {1, 2, 5, 40})
    for (double p : {0.6, 0.9, 0.975, 0.999})
      EXPECT_NEAR(student_t_cdf(student_t_quantile(p, df), df), p, 1e-9) << df << " " << p;
}

TEST(StudentT, OutOfDomainIsNan) {
  EXPECT_TRUE(std::isnan(student_t_quantile(0.975, 0)));
  EXPECT_TRUE(std::isnan(student_t_quantile(1.0, 3)));
  EXPECT_TRUE(std::isnan(student_t_quantile(0.0, 3)));
  EXPECT_TRUE(std::isnan(student_t_cdf(NAN, 3)));
  EXPECT_TRUE(std::isnan(student_t_cdf(1, 0)));
}

}  // namespace
}  // namespace hb
