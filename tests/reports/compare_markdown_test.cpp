// compare for pull requests: the markdown table (parses as a GitHub table), the geometric-mean
// row on planted reports, MISSING/NEW collapsed, accuracy deltas and the accuracy target.
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures.h"
#include "reports/accuracy_target.h"
#include "reports/compare.h"
#include "reports/compare_render.h"

namespace hb::reports {
namespace {

using testing::make_point;
using testing::make_report;
using testing::scaled;
using testing::with_passes;

// The cells of a markdown table row: split on '|' not escaped by a backslash, without the
// empty outer fields.
std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::string cur;
  for (size_t i = 0; i < row.size(); ++i) {
    if (row[i] == '\\' && i + 1 < row.size() && row[i + 1] == '|') {
      cur += "\\|";
      ++i;
    } else if (row[i] == '|') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += row[i];
    }
  }
  out.push_back(cur);
  if (!out.empty() && out.front().find_first_not_of(' ') == std::string::npos)
    out.erase(out.begin());
  if (!out.empty() && out.back().find_first_not_of(' ') == std::string::npos) out.pop_back();
  return out;
}

// The table's lines: the first run of lines starting with '|'.
std::vector<std::string> table_lines(const std::string& md) {
  std::vector<std::string> lines;
  std::istringstream in(md);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty() && l[0] == '|')
      lines.push_back(l);
    else if (!lines.empty())
      break;
  }
  return lines;
}

// A GitHub table: a header, a separator of ---/:--/--: cells, rows of the header's width.
void expect_github_table(const std::string& md, size_t columns, size_t rows) {
  const auto lines = table_lines(md);
  ASSERT_EQ(lines.size(), rows + 2) << md;
  EXPECT_EQ(cells(lines[0]).size(), columns) << lines[0];
  const auto sep = cells(lines[1]);
  ASSERT_EQ(sep.size(), columns) << lines[1];
  for (const auto& c : sep)
    EXPECT_NE(c.find("---"), std::string::npos) << "separator cell '" << c << "'";
  for (size_t i = 2; i < lines.size(); ++i)
    EXPECT_EQ(cells(lines[i]).size(), columns) << "row " << i << ": " << lines[i];
}

TEST(CompareMarkdown, ParsesAsAGithubTable) {
  const Report base = with_passes(make_report());  // --repetitions 5: changes can be judged
  Report pr = scaled(base, 1.3);
  const std::string md = compare_markdown_text(compare_reports(base, pr, {}));
  // 6 matched points (5 timed + full-gpu oom in both) + the geomean row; 7 columns.
  expect_github_table(md, 7, 7);
  EXPECT_NE(md.find("REGRESSION"), std::string::npos) << md;
  EXPECT_NE(md.find("| **geomean**"), std::string::npos) << md;
  EXPECT_NE(md.find("SLOWER ❗"), std::string::npos) << md;
}

TEST(CompareMarkdown, PipesInCellsAreEscaped) {
  Report base = make_report();
  for (auto& p : base.points) p.axes.workload = "a|b";
  const std::string md = compare_markdown_text(compare_reports(base, base, {}));
  expect_github_table(md, 7, 7);
}

TEST(CompareMarkdown, GeomeanOfPlantedRatios) {
  // Two timed points, one planted 2x slower and one 2x faster: geomean exactly 1 -> SAME.
  Report base;
  base.points = {with_passes(make_point("a", 4096, 1e6, 0.001)),
                 with_passes(make_point("b", 4096, 1e6, 0.001))};
  Report pr = base;
  for (auto& [idx, f] : std::vector<std::pair<size_t, double>>{{0, 2.0}, {1, 0.5}}) {
    std::vector<double> v = pr.points[idx].step.samples_ns;
    for (auto& x : v) x *= f;
    static_cast<Timing&>(pr.points[idx].step) = Timing::from_samples(v);
  }
  CompareResult c = compare_reports(base, pr, {});
  EXPECT_EQ(c.geomean.n, 2);
  EXPECT_NEAR(c.geomean.ratio, 1.0, 1e-9);
  EXPECT_EQ(c.geomean.verdict, Verdict::same);
  // Every point 1.5x: geomean 1.5, SLOWER (noise 0.1%).
  c = compare_reports(base, scaled(base, 1.5), {});
  EXPECT_NEAR(c.geomean.ratio, 1.5, 1e-9);
  EXPECT_EQ(c.geomean.verdict, Verdict::slower);
  EXPECT_NE(compare_markdown_text(c).find("+50.0%"), std::string::npos);
  c = compare_reports(base, scaled(base, 0.8), {});
  EXPECT_NEAR(c.geomean.ratio, 0.8, 1e-9);
  EXPECT_EQ(c.geomean.verdict, Verdict::faster);
  // One pass a side: the points' noise leaves out drift between runs, so 1.2x is unproven.
  Report single_pass = base;
  for (auto& p : single_pass.points) p.step.pass_sizes.clear();
  c = compare_reports(single_pass, scaled(single_pass, 1.2), {});
  EXPECT_EQ(c.geomean.verdict, Verdict::inconclusive);
  EXPECT_NE(compare_markdown_text(c).find("INCONCLUSIVE"), std::string::npos);
  // 3 x 1.0 and 1 x 4.0: (4)^(1/4) = sqrt 2, not the arithmetic mean 1.75.
  base.points = {make_point("a", 4096, 1e6, 0.001), make_point("b", 4096, 1e6, 0.001),
                 make_point("c", 4096, 1e6, 0.001), make_point("d", 4096, 1e6, 0.001)};
  pr = base;
  std::vector<double> v = pr.points[3].step.samples_ns;
  for (auto& x : v) x *= 4;
  static_cast<Timing&>(pr.points[3].step) = Timing::from_samples(v);
  c = compare_reports(base, pr, {});
  EXPECT_NEAR(c.geomean.ratio, std::sqrt(2.0), 1e-9);
  const auto j = nlohmann::json::parse(compare_json_text(c, "a", "b"));
  EXPECT_NEAR(j["geomean"]["ratio"].get<double>(), std::sqrt(2.0), 1e-9);
  EXPECT_EQ(j["geomean"]["points"], 4);
}

TEST(CompareMarkdown, GeomeanWithinItsNoiseIsNoisy) {
  Report base;
  base.points = {make_point("a", 4096, 1e6, 0.2, 30, 1)};
  Report pr;
  pr.points = {make_point("a", 4096, 1e6 * 1.08, 0.2, 30, 2)};  // beyond --min-effect
  const CompareResult c = compare_reports(base, pr, {});
  EXPECT_EQ(c.geomean.n, 1);
  EXPECT_EQ(c.geomean.verdict, Verdict::noisy) << c.geomean.ratio << " ± " << c.geomean.rel_noise;
}

TEST(CompareMarkdown, FooterAgreesWithTheTable) {
  // cpu-only with 6 rounds planted 1.3x slower (3 SLOWER); full-gpu with one round: 4k 1.2x
  // (INCONCLUSIVE), 8k unchanged (SAME); 16k oom in both (UNTIMED).
  Report base = make_report();
  for (auto& p : base.points)
    if (p.timed() && p.axes.strategy == "cpu-only") p = with_passes(p, 6);
  Report pr = scaled(base, 1.3);
  pr.points[1] = scaled(base, 1.2).points[1];  // full-gpu 4k
  pr.points[3] = base.points[3];               // full-gpu 8k
  const CompareResult c = compare_reports(base, pr, {});
  const std::string md = compare_markdown_text(c);
  EXPECT_EQ(md.rfind("### hybridbench compare: REGRESSION in 3 point(s) (1 of 5 timed points not "
                     "judged: 1 INCONCLUSIVE)\n",
                     0),
            0u)
      << md;
  // The rules name the basis each point was judged on, with the table's numbers.
  EXPECT_NE(md.find("both sides have >= 2 rounds (3 point(s))"), std::string::npos) << md;
  EXPECT_NE(md.find("(2 point(s) with one round)"), std::string::npos) << md;
  EXPECT_EQ(md.find("every change"), std::string::npos) << md;
  // The footer's counts are the verdict column's.
  std::map<std::string, int> tally;
  const auto lines = table_lines(md);
  for (size_t i = 2; i + 1 < lines.size(); ++i) {  // rows, without the geomean row
    std::string v = cells(lines[i]).at(5);
    v = v.substr(v.find_first_not_of(' '));
    ++tally[v.substr(0, v.find(' '))];
  }
  std::string counts;
  for (auto v : kAllVerdicts)
    if (tally.count(verdict_name(v)))
      counts += " " + std::to_string(tally[verdict_name(v)]) + " " + verdict_name(v);
  EXPECT_EQ(counts, " 3 SLOWER 1 SAME 1 INCONCLUSIVE 1 UNTIMED");
  EXPECT_NE(md.find("\n6 points:" + counts + "\n"), std::string::npos) << md;
}

TEST(CompareMarkdown, MissingAndNewCollapseIntoCounts) {
  Report base = make_report(), pr = make_report();
  base.points.push_back(make_point("quest", 4096, 1e6));
  base.points.push_back(make_point("quest", 8192, 2e6));
  pr.points.push_back(make_point("h2o", 4096, 1e6));
  const std::string md = compare_markdown_text(compare_reports(base, pr, {}));
  expect_github_table(md, 7, 7);  // the 6 matched points and the geomean: no MISSING/NEW rows
  EXPECT_NE(md.find("<details><summary>2 MISSING (base only), 1 NEW (new only)</summary>"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- MISSING: `quest/llama-3-8b/seq_len=8192"), std::string::npos) << md;
  EXPECT_NE(md.find("- NEW: `h2o/"), std::string::npos) << md;
  const auto lines = table_lines(md);
  for (const auto& l : lines) EXPECT_EQ(l.find("quest"), std::string::npos) << l;
}

TEST(CompareMarkdown, AccuracyDeltaBesideTimeDelta) {
  Report base = make_report(), pr = make_report();
  pr.points[0].accuracy.mass_recall = 0.95;
  pr.points[0].accuracy.cosine = 0.99;
  const CompareResult c = compare_reports(base, pr, {});
  EXPECT_EQ(accuracy_delta_text(c.points[0]),
            "recall 100.0% -> 95.0% (-5.0 pt), cosine 1.0000 -> 0.9900");
  const std::string md = compare_markdown_text(c);
  EXPECT_NE(md.find("recall 100.0% -> 95.0% (-5.0 pt)"), std::string::npos) << md;
  // The drop is beyond --recall-tolerance: the reason is in the accuracy cell, in bold.
  EXPECT_NE(md.find("**mass_recall 1.0000 -> 0.9500**"), std::string::npos) << md;
}

TEST(CompareAccuracyTarget, FallingBelowTheTargetIsARegression) {
  Report base = make_report(), pr = make_report();
  base.context.sweep[kAccuracyTargetKey] = "recall:0.9";
  pr.context.sweep[kAccuracyTargetKey] = "recall:0.9";
  base.points[0].accuracy.mass_recall = 0.905;
  pr.points[0].accuracy.mass_recall = 0.899;  // within --recall-tolerance 0.01, below the target
  CompareResult c = compare_reports(base, pr, {});
  ASSERT_EQ(c.points[0].accuracy_regressions.size(), 1u);
  EXPECT_EQ(c.points[0].accuracy_regressions[0],
            "below --accuracy-target recall >= 0.9: 0.9050 -> 0.8990");
  EXPECT_TRUE(c.has_regression());
  // Below the target on both sides: not a new failure.
  base.points[0].accuracy.mass_recall = 0.899;
  EXPECT_FALSE(compare_reports(base, pr, {}).has_regression());
  // NEW's target is the one judged; an explicit option overrides it.
  base.points[0].accuracy.mass_recall = 0.905;
  pr.context.sweep[kAccuracyTargetKey] = "recall:0.8";
  c = compare_reports(base, pr, {});
  EXPECT_FALSE(c.has_regression());
  EXPECT_EQ(c.target.describe(), "recall >= 0.8");
  ASSERT_FALSE(c.warnings.empty());
  EXPECT_NE(c.warnings.back().find("different accuracy targets"), std::string::npos);
  CompareOptions o;
  o.accuracy_target = parse_accuracy_target("recall:0.9");
  EXPECT_TRUE(compare_reports(base, pr, o).has_regression());
}

}  // namespace
}  // namespace hb::reports
