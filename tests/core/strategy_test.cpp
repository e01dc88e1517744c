#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/strategy.h"

namespace hb {
namespace {

TEST(StepResult, ClearKeepingMemoryReadsAsFresh) {
  StepResult r;
  r.o = {1.0f, 2.0f};
  r.total_ns = 7;
  r.phase_ns["cpu"] = 3;
  r.traffic.h2d_bytes = 9;
  r.attended = {{0, 1, 2}, {}};
  EXPECT_TRUE(r.lists_attended());
  const int64_t* row0 = r.attended[0].data();
  r.clear_keeping_memory();
  EXPECT_TRUE(r.o.empty());
  EXPECT_EQ(r.total_ns, 0);
  EXPECT_TRUE(r.phase_ns.empty());
  EXPECT_EQ(r.traffic.h2d_bytes, 0);
  EXPECT_FALSE(r.lists_attended());  // every row reads dense
  ASSERT_EQ(r.attended.size(), 2u);
  EXPECT_GE(r.attended[0].capacity(), 3u);
  r.attended[0].assign({4, 5});
  EXPECT_EQ(r.attended[0].data(), row0);  // refilled in place
  EXPECT_TRUE(r.lists_attended());
  EXPECT_FALSE(StepResult{}.lists_attended());
}

TEST(StrategyOptions, ReadsDefaultsAndRejectsTypos) {
  StrategyOptions o(
      std::map<std::string, std::string>{{"h2o.heavy_ratio", "0.2"}, {"h2o.recnt", "3"}});
  EXPECT_EQ(o.number("h2o", "heavy_ratio", 0.1), 0.2);
  EXPECT_EQ(o.number("h2o", "recent_ratio", 0.1), 0.1);
  EXPECT_THROW(o.check_all_used("h2o"), Error);
  try {
    o.check_all_used("h2o");
  } catch (const Error& e) {  // the typo named, and the options the strategy did ask for
    EXPECT_NE(e.problem().find("'recnt'"), std::string::npos) << e.problem();
    EXPECT_NE(e.fix().find("heavy_ratio, recent_ratio"), std::string::npos) << e.fix();
  }
  StrategyOptions none(std::map<std::string, std::string>{{"cpu-only.ratio", "1"}});
  try {
    none.check_all_used("cpu-only");
    ADD_FAILURE() << "an option a strategy never asks for is refused";
  } catch (const Error& e) {
    EXPECT_NE(e.fix().find("cpu-only takes no options"), std::string::npos) << e.fix();
  }
  StrategyOptions bad(std::map<std::string, std::string>{{"quest.budget", "lots"}});
  EXPECT_THROW(bad.number("quest", "budget", 2048), Error);
}

}  // namespace
}  // namespace hb
