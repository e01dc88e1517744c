// `hybridbench report --procurement` end to end: one report, two side by side, --itl-slo, the
// HTML page, and the refusals (exit 2). Skipped when the binary has not been built.
#include <gtest/gtest.h>

#include "procurement_fixture.h"
#include "reports/json_io.h"
#include "tests/cli_fixture.h"

namespace hb::reports {
namespace {

class ProcurementCli : public hb::cli_test::CliTest {};

TEST_F(ProcurementCli, RanksOneReportOrSeveralSideBySide) {
  Report r = testing::procurement_report();
  write_report(file("p.json"), r);
  ASSERT_EQ(run("report " + file("p.json") + " --procurement --itl-slo 50ms"), 0) << out_;
  EXPECT_NE(stdout_.find("## Procurement: platforms ranked per strategy"), std::string::npos);
  EXPECT_NE(stdout_.find("- Most tokens/s: b200 with full-gpu, 195 tokens/s"), std::string::npos)
      << stdout_;
  EXPECT_NE(stdout_.find("max batch, ITL <= 50.0 ms"), std::string::npos) << stdout_;
  // A measured local node (no platform axis: its host name is its platform) beside them: one
  // platform's points, as a node measures only itself (two points with the same axes are refused).
  Report local = testing::procurement_report();
  local.context.host = "my-node";
  const std::string first = local.points.front().axes.extra.at("platform");
  std::erase_if(local.points, [&](const Point& p) { return p.axes.extra.at("platform") != first; });
  for (auto& p : local.points) p.axes.extra.erase("platform");
  local.speedups = compute_speedups(local.points);
  std::erase_if(local.capacity, [&](const CapacityRow& c) { return c.platform != first; });
  for (auto& c : local.capacity) c.platform = "";
  write_report(file("local.json"), local);
  ASSERT_EQ(run("report " + file("local.json") + " " + file("p.json") + " --procurement --html " +
                file("p.html")),
            0)
      << out_;
  EXPECT_NE(stdout_.find("my-node with full-gpu"), std::string::npos) << stdout_;
  const std::string html = slurp(file("p.html"));
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("Pareto front"), std::string::npos);
}

TEST_F(ProcurementCli, RefusesWhatItCannotDo) {
  write_report(file("p.json"), testing::procurement_report());
  EXPECT_EQ(run("report " + file("p.json") + " " + file("p.json")), 2) << out_;
  EXPECT_NE(out_.find("add --procurement"), std::string::npos) << out_;
  EXPECT_EQ(run("report " + file("p.json") + " --procurement --format csv"), 2) << out_;
  EXPECT_EQ(run("report " + file("p.json") + " --procurement --itl-slo 0"), 2) << out_;
  EXPECT_EQ(run("report " + file("p.json") + " --procurement --itl-slo fast"), 2) << out_;
}

}  // namespace
}  // namespace hb::reports
