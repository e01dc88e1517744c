#include "reports/busy_machine.h"

#include <gtest/gtest.h>

#include "fixtures.h"

namespace hb::reports {
namespace {

ReportContext with(std::map<std::string, std::string> facts) {
  ReportContext c;
  c.system_settings = std::move(facts);
  return c;
}

TEST(BusyMachine, WarnsOnlyWhenTheLoadFactsSaySo) {
  EXPECT_EQ(busy_machine_warning(with({})), "");  // reports from before load facts
  EXPECT_EQ(busy_machine_warning(with({{"load.avg_1min_start", "0.10"},
                                       {"load.runnable_others_start", "0"},
                                       {"load.runnable_others_end", "3"},
                                       {"load.steal_percent", "0.0"}})),
            "");  // quiet before; a transient at the end alone is not "busy"
  const std::string load = busy_machine_warning(with({{"load.avg_1min_start", "1.20"}}));
  EXPECT_NE(load.find("load average 1.20 before the run started"), std::string::npos) << load;
  const std::string others = busy_machine_warning(
      with({{"load.runnable_others_start", "1"}, {"load.runnable_others_end", "2"}}));
  EXPECT_NE(others.find("1 and 2 other runnable processes"), std::string::npos) << others;
  const std::string steal = busy_machine_warning(with({{"load.steal_percent", "7.5"}}));
  EXPECT_NE(steal.find("7.5% of the CPU time stolen"), std::string::npos) << steal;
  EXPECT_EQ(busy_machine_warning(with({{"load.avg_1min_start", "garbage"}})), "");
}

// Issue 49: model-mode runs warned that "absolute times carry the load" about times priced from a
// profile. A report of modeled points only gets no warning; mixed with measured ones, the warning
// says the modeled ones are unaffected.
TEST(BusyMachine, ModeledPointsAreNotWarnedAbout) {
  Report r = testing::make_report();
  r.context.system_settings["load.avg_1min_start"] = "2.50";
  EXPECT_NE(busy_machine_warning(r).find("load average 2.50"), std::string::npos);
  EXPECT_EQ(busy_machine_warning(r).find("modeled"), std::string::npos);
  for (auto& p : r.points) p.provenance = Provenance::modeled;
  EXPECT_EQ(busy_machine_warning(r), "");
  r.points[0].provenance = Provenance::measured;
  EXPECT_NE(busy_machine_warning(r).find("the modeled points are priced from their profile"),
            std::string::npos)
      << busy_machine_warning(r);
}

}  // namespace
}  // namespace hb::reports
