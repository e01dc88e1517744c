// A report's first screen (issue 49 item 6) and the model's uncertainty and assumptions in it
// (item 5): the answer in three lines, its chart, the default markdown's length, --full.
#include <gtest/gtest.h>

#include <algorithm>

#include "procurement_fixture.h"
#include "reports/first_screen.h"
#include "reports/html.h"
#include "reports/json_io.h"
#include "reports/tables.h"

namespace hb::reports {
namespace {

// Table cells are padded to their column: runs of spaces as one, to read a row.
std::string squeezed(std::string s) {
  s.erase(std::unique(s.begin(), s.end(), [](char a, char b) { return a == ' ' && b == ' '; }),
          s.end());
  return s;
}

size_t lines(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

// The README's procurement command's shape: 15 platforms, 6 strategies, 32k and 128k, batch 1
// and 8, every point with whole-model figures (the platforms slower by 5% each).
Report big_report() {
  Report r;
  r.context.host = "build-vm";
  r.context.sweep["accuracy_target"] = "recall:0.9";
  const char* strategies[] = {"full-gpu", "h2o", "hybridgen", "cpu-only", "offload", "quest"};
  for (int n = 0; n < 15; ++n)
    for (const char* s : strategies)
      for (int64_t len : {32768, 131072})
        for (int batch : {1, 8})
          r.points.push_back(testing::wm_point("platform-" + std::to_string(n), s, len, batch,
                                               0.5e6 * (1 + 0.05 * n) * (len / 32768.0), 1.0, 10.0,
                                               1000.0));
  r.speedups = compute_speedups(r.points);
  return r;
}

TEST(FirstScreen, TheAnswerInThreeLinesAtTheLongestContextAndLargestBatch) {
  const Report r = testing::procurement_report();
  const FirstScreen f = first_screen(r, {});
  ASSERT_TRUE(f.headline.has_value());
  EXPECT_EQ(f.headline->seq_len, 131072);
  EXPECT_EQ(f.headline->batch, 8);
  ASSERT_EQ(f.answer.size(), 3u);
  EXPECT_EQ(f.answer[0].rfind("At llama-3.1-70b, fp16, 128k tokens, batch 8", 0), 0u)
      << f.answer[0];
  EXPECT_NE(f.answer[0].find("most tokens/s: b200 with full-gpu, 195 tokens/s"), std::string::npos)
      << f.answer[0];
  EXPECT_EQ(f.answer[1].rfind("Lowest $/Mtok: h200 with full-gpu, $13.61", 0), 0u) << f.answer[1];
}

TEST(FirstScreen, TheMarkdownOpensWithTheAnswerAndItsChartAndFullGivesTheRest) {
  const Report r = testing::procurement_report();
  const std::string md = markdown_report(r);
  EXPECT_EQ(md.rfind("# hybridbench report\n\n- At llama-3.1-70b", 0), 0u) << md;
  // b200 195 tokens/s is the longest bar (40), h200 163 -> 33.5 -> 33 characters.
  std::string b200 = "b200 ", h200 = "h200 ";
  for (int i = 0; i < 40; ++i) b200 += "█";
  for (int i = 0; i < 33; ++i) h200 += "█";
  EXPECT_NE(md.find("```text\n" + b200 + " 195 (full-gpu)\n" + h200 + " 163 (full-gpu)\n```"),
            std::string::npos)
      << md;
  EXPECT_LT(md.find("```text"), md.find("## Procurement"));
  EXPECT_NE(md.find("`hybridbench report FILE --full`"), std::string::npos);
  EXPECT_EQ(md.find("### Step time"), std::string::npos);
  TableOptions full;
  full.full = true;
  const std::string all = markdown_report(r, full);
  EXPECT_EQ(all.rfind("# hybridbench report\n\n- At llama-3.1-70b", 0), 0u);
  EXPECT_NE(all.find("### Step time"), std::string::npos);
  EXPECT_NE(all.find("## Summary"), std::string::npos);
}

TEST(FirstScreen, TheDefaultMarkdownOfFifteenPlatformsStaysUnder200Lines) {
  const Report r = big_report();
  const std::string md = markdown_report(r);
  EXPECT_LE(lines(md), 200u) << md;
  TableOptions full;
  full.full = true;
  EXPECT_GT(lines(markdown_report(r, full)), 1000u);  // what the cap saves
  // The top two platforms per strategy and the count of what is left out.
  EXPECT_NE(md.find("Top 2 platforms per strategy; 78 more ranked row(s)"), std::string::npos)
      << md;
}

TEST(FirstScreen, TheHtmlFirstScreenHoldsTheAnswerThenTheChartThenCollapsedParts) {
  const std::string html = html_report(testing::procurement_report(), {});
  const size_t answer = html.find("<ul class=\"summary\" id=\"summary\">"), svg = html.find("<svg"),
               details = html.find("<details>");
  ASSERT_NE(answer, std::string::npos);
  ASSERT_NE(svg, std::string::npos);
  ASSERT_NE(details, std::string::npos);
  EXPECT_LT(answer, svg);
  EXPECT_LT(svg, details);
  const std::string first = html.substr(answer, svg - answer);
  size_t items = 0;
  for (size_t at = first.find("<li>"); at != std::string::npos; at = first.find("<li>", at + 1))
    ++items;
  EXPECT_EQ(items, 3u);
  // Every section after the chart is collapsed: no <h2> outside a <details>.
  EXPECT_EQ(html.substr(answer, details - answer).find("<h2>"), std::string::npos);
}

// Issue 49 item 5: no modeled figure prints "± 0.0%" when the report carries the model's
// uncertainty; it and the platforms' assumptions survive the JSON.
TEST(ModelUncertainty, ModeledFiguresCarryThePublishedRowsErrorInsteadOfZero) {
  Report r = testing::procurement_report();
  TableOptions full;
  full.full = true;
  EXPECT_NE(markdown_report(r, full).find("± 0.0%"), std::string::npos);  // before: no source
  r.context.model_uncertainty = {
      {"itl", 0.051, 0.012, 9, "validate-model --published, 9 rows, median 1.2%, max 5.1%"}};
  r.context.assumptions = {{"b200", "price per hour (USD, node)", "80 (a price list, 2025-06)"},
                           {"b200", "GPU power (W, each)", "1000 (datasheet, 2025-03)"},
                           {"h200", "price per hour (USD, node)", "64 (a price list, 2024-12)"}};
  const Report back = from_json_text(to_json_text(r), "test");
  ASSERT_EQ(back.context.model_uncertainty.size(), 1u);
  EXPECT_EQ(back.context.model_uncertainty[0].rel, 0.051);
  EXPECT_EQ(back.context.model_uncertainty[0].rows, 9);
  ASSERT_EQ(back.context.assumptions.size(), 3u);
  EXPECT_EQ(back.context.assumptions[2].text, "64 (a price list, 2024-12)");
  const std::string all = markdown_report(back, full);
  EXPECT_EQ(all.find("± 0.0%"), std::string::npos) << all;
  EXPECT_NE(all.find("± 5.1% (model)"), std::string::npos);
  // The speedup of two modeled times: both uncertainties in quadrature, 5.1% x sqrt(2).
  EXPECT_NE(all.find("± 7.2% (model)"), std::string::npos) << all;
  EXPECT_NE(all.find("195 tokens/s ± 5.1% (model)"), std::string::npos);
  EXPECT_NE(
      squeezed(all).find("| b200 | price per hour (USD, node) | 80 (a price list, 2025-06) |"),
      std::string::npos)
      << all;
  // The default markdown has the values alone, a row per platform.
  const std::string md = squeezed(markdown_report(back));
  EXPECT_NE(md.find("| h200 | 64 | - |"), std::string::npos) << md;
}

}  // namespace
}  // namespace hb::reports
