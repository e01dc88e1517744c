// `hybridbench report --procurement` end to end: one report, two side by side, --itl-slo, the
// HTML page, and the refusals (exit 2). Skipped when the binary has not been built.
#include <gtest/gtest.h>

#include <algorithm>

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

// Issue 49 item 5: a model-mode report records the uncertainty validate-model --published gives
// (the largest |error| of its ITL rows, not held rows aside; a row that did not run counts 1) and
// its platform's sourced figures; report prints it where "± 0.0%" stood.
TEST_F(ProcurementCli, ModelModeRecordsThePublishedRowsErrorAsItsUncertainty) {
  ASSERT_EQ(run("run -q --mode model --platform h200-pcie5-emr --model llama-3.1-8b --seq-len 4k "
                "--strategy full-gpu,cpu-only --decode-steps 4 --out " +
                file("m.json")),
            0)
      << out_;
  const Report r = read_report(file("m.json"));
  // The run records the published rows' errors (model/published_errors.cpp, held to a fresh
  // projection by tests/model/published_projection_test.cpp) as its figures' uncertainty.
  for (const std::string figure : {"itl", "tokens_per_s"}) {
    const ModelUncertainty* u = r.context.uncertainty(figure);
    ASSERT_NE(u, nullptr) << figure;
    EXPECT_GT(u->rel, 0) << figure;
    EXPECT_GE(u->rel, u->median_abs_error) << figure;
    EXPECT_GT(u->rows, 0) << figure;
    EXPECT_NE(u->source.find(std::to_string(u->rows) + " rows"), std::string::npos) << u->source;
  }
  const auto price = std::find_if(r.context.assumptions.begin(), r.context.assumptions.end(),
                                  [](const auto& a) { return a.figure.rfind("price", 0) == 0; });
  ASSERT_NE(price, r.context.assumptions.end());
  EXPECT_EQ(price->platform, "h200-pcie5-emr");
  EXPECT_NE(price->text.find("2024-12"), std::string::npos) << price->text;  // the list's date
  ASSERT_EQ(run("report " + file("m.json")), 0) << out_;
  EXPECT_EQ(stdout_.find("± 0.0%"), std::string::npos) << stdout_;
  EXPECT_NE(stdout_.find("% (model)"), std::string::npos) << stdout_;
}

}  // namespace
}  // namespace hb::reports
