#include "reports/busy_machine.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace hb::reports
