// The progress line's ETA (cli/progress.h): seconds left by cost, never negative.
#include "cli/progress.h"

#include <gtest/gtest.h>

namespace hb::cli {
namespace {

bench::Progress at(int64_t done, int64_t total, double done_cost, double total_cost,
                   double elapsed_s) {
  bench::Progress p;
  p.done = done, p.total = total, p.done_cost = done_cost, p.total_cost = total_cost;
  p.elapsed_s = elapsed_s;
  return p;
}

TEST(Progress, EtaByCostAndNeverNegative) {
  EXPECT_EQ(eta_text(at(0, 4, 0, 4, 3)), "--");    // nothing finished yet
  EXPECT_EQ(eta_text(at(1, 4, 1, 4, 10)), "30s");  // a quarter of the cost in 10 s
  EXPECT_EQ(eta_text(at(1, 2, 1, 8, 10)), "70s");  // by cost, not by count
  EXPECT_EQ(eta_text(at(4, 4, 4, 4, 40)), "0s");   // done
  // Issue 49: cost shares summed in doubles ended a hair above the total: "ETA -0s".
  EXPECT_EQ(eta_text(at(4, 4, 4.0000000001, 4, 40)), "0s");
  EXPECT_EQ(eta_text(at(3, 4, 4.0000000001, 4, 40)), "0s");
}

}  // namespace
}  // namespace hb::cli
