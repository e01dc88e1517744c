// run --accuracy-target and what the tables make of it: the fastest point within the target next
// to the raw fastest, headline accuracy without rel_l2, and the speed-accuracy Pareto front.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "core/error.h"
#include "fixtures.h"
#include "reports/accuracy_target.h"
#include "reports/html.h"
#include "reports/json_io.h"
#include "reports/tables.h"

namespace hb::reports {
namespace {

using testing::make_point;

bool has(const std::string& text, const std::string& piece) {
  return text.find(piece) != std::string::npos;
}

Point with_accuracy(Point p, double recall, double cosine) {
  p.accuracy.mass_recall = recall;
  p.accuracy.cosine = cosine;
  return p;
}

// At 4k: streamingllm is fastest but inaccurate (recall 0.3), quest is next and accurate
// (0.95), full-gpu is slowest and exact. At 8k nothing sparse meets the target and the only
// accurate strategy did not score (--accuracy-steps 0), so no point qualifies.
Report mixed_report(const std::string& target = "") {
  Report r = testing::make_report();
  r.points.clear();
  if (!target.empty()) r.context.sweep[kAccuracyTargetKey] = target;
  r.points.push_back(with_accuracy(make_point("streamingllm", 4096, 1e6), 0.30, 0.80));
  r.points.push_back(with_accuracy(make_point("quest", 4096, 2e6), 0.95, 0.999));
  r.points.push_back(with_accuracy(make_point("full-gpu", 4096, 4e6), 1.0, 1.0));
  r.points.push_back(with_accuracy(make_point("streamingllm", 8192, 2e6), 0.20, 0.70));
  r.points.push_back(with_accuracy(make_point("quest", 8192, 4e6), 0.85, 0.995));
  Point unscored = make_point("full-gpu", 8192, 8e6);
  unscored.accuracy = {};  // steps_scored 0: no figures, not eligible
  r.points.push_back(unscored);
  r.speedups = compute_speedups(r.points);
  return r;
}

TEST(AccuracyTarget, ParsesMetricAndThresholdOrABareRecall) {
  const AccuracyTarget def;
  EXPECT_EQ(def.metric, AccuracyTarget::Metric::recall);
  EXPECT_EQ(def.threshold, 0.9);
  EXPECT_EQ(def.describe(), "recall >= 0.9");

  auto t = parse_accuracy_target("recall:0.95");
  EXPECT_EQ(t.metric, AccuracyTarget::Metric::recall);
  EXPECT_DOUBLE_EQ(t.threshold, 0.95);
  t = parse_accuracy_target("cosine:0.99");
  EXPECT_EQ(t.metric, AccuracyTarget::Metric::cosine);
  EXPECT_DOUBLE_EQ(t.threshold, 0.99);
  EXPECT_EQ(t.text(), "cosine:0.99");
  EXPECT_EQ(parse_accuracy_target(t.text()).metric, AccuracyTarget::Metric::cosine);
  t = parse_accuracy_target("0.8");
  EXPECT_EQ(t.metric, AccuracyTarget::Metric::recall);
  EXPECT_DOUBLE_EQ(t.threshold, 0.8);

  for (const char* bad : {"", "rel_l2:0.1", "recall:", "recall:1.5", "recall:-0.1", "cosine:x",
                          "0.9x", "nan", "recall:0.9:1"})
    EXPECT_THROW(parse_accuracy_target(bad), Error) << bad;
  try {
    parse_accuracy_target("l2:0.1");
    FAIL();
  } catch (const Error& e) {
    EXPECT_TRUE(has(e.problem(), "'l2'")) << e.problem();
    EXPECT_TRUE(has(e.fix(), "recall:0.9")) << e.fix();
    EXPECT_EQ(e.exit_code(), 2);
  }
}

TEST(AccuracyTarget, ReportCarriesItOrGetsTheDefault) {
  EXPECT_EQ(report_accuracy_target(mixed_report()).describe(), "recall >= 0.9");
  EXPECT_EQ(report_accuracy_target(mixed_report("cosine:0.99")).describe(), "cosine >= 0.99");
  // An unreadable target is an error, never the default in disguise (read_report refuses such
  // a file, naming $.context.sweep.accuracy_target).
  EXPECT_THROW(report_accuracy_target(mixed_report("garbage")), Error);
  Report garbage = mixed_report("recall:7");
  try {
    from_json_text(to_json_text(garbage), "g.json");
    ADD_FAILURE() << "recall:7 was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("$.context.sweep.accuracy_target"), std::string::npos)
        << e.what();
  }
}

TEST(AccuracyTarget, FastestWithinTargetSkipsAFasterInaccuratePoint) {
  const Report t_report = mixed_report();  // the tables point into it
  const auto t = procurement_tables(t_report)[0];
  EXPECT_EQ(t.fastest(4096), "streamingllm");
  EXPECT_EQ(t.fastest_within_target(4096), "quest");
  // 8k: quest misses 0.9 and full-gpu has no accuracy figures.
  EXPECT_EQ(t.fastest(8192), "streamingllm");
  EXPECT_EQ(t.fastest_within_target(8192), "");

  // A cosine target changes who qualifies: quest's 0.995 passes cosine >= 0.99 at 8k.
  const Report c_report = mixed_report("cosine:0.99");  // the tables point into it
  const auto c = procurement_tables(c_report)[0];
  EXPECT_EQ(c.fastest_within_target(8192), "quest");
  EXPECT_EQ(c.fastest_within_target(4096), "quest");
}

TEST(AccuracyTarget, TablesNameTheFastestWithinTargetOrNone) {
  const Report r = mixed_report();
  const std::string md = markdown_report(r);
  const auto grid = time_grid(procurement_tables(r)[0]).markdown();
  // The row: label, then quest at 4k and none at 8k.
  const auto row = grid.find("| fastest within recall >= 0.9 |");
  ASSERT_NE(row, std::string::npos) << grid;
  const std::string line = grid.substr(row, grid.find('\n', row) - row);
  EXPECT_TRUE(has(line, "quest")) << line;
  EXPECT_TRUE(has(line, "none")) << line;
  EXPECT_FALSE(has(line, "streamingllm")) << line;
  EXPECT_TRUE(has(md, "fastest within recall >= 0.9")) << md;
  const std::string html = html_report(r);
  EXPECT_TRUE(has(html, "fastest within recall &gt;= 0.9")) << html;
  EXPECT_TRUE(has(html, "<td>none</td>") || has(html, ">none<")) << html;
  // The accuracy chart plots the target's metric with the threshold, not rel_l2.
  EXPECT_TRUE(has(html, "attention-mass recall")) << html;
  EXPECT_TRUE(has(html, "target: recall &gt;= 0.9")) << html;
  EXPECT_FALSE(has(html, "relative L2")) << html;
  EXPECT_TRUE(has(html_report(mixed_report("cosine:0.99")), "output cosine similarity"));
}

TEST(AccuracyTarget, HeadlineAccuracyIsRecallCosineAndNeedleNotRelL2) {
  Point p = with_accuracy(make_point("quest", 4096, 2e6), 0.95, 0.99912);
  p.accuracy.needle_success_rate = 0.5;
  const std::string cell = accuracy_cell(&p);
  EXPECT_TRUE(has(cell, "recall 95.0%")) << cell;
  EXPECT_TRUE(has(cell, "cosine 0.9991")) << cell;
  EXPECT_TRUE(has(cell, "needle 50.0%")) << cell;
  EXPECT_FALSE(has(cell, "rel_l2")) << cell;
}

TEST(AccuracyTarget, ParetoFrontIsMarked) {
  const Report t_report = mixed_report();  // the tables point into it
  const auto t = procurement_tables(t_report)[0];
  // 4k: each is faster or more accurate than the others: all three on the front.
  EXPECT_TRUE(t.on_pareto_front("streamingllm", 4096));
  EXPECT_TRUE(t.on_pareto_front("quest", 4096));
  EXPECT_TRUE(t.on_pareto_front("full-gpu", 4096));
  // 8k: full-gpu is unscored (not on the front); quest and streamingllm trade off.
  EXPECT_FALSE(t.on_pareto_front("full-gpu", 8192));
  EXPECT_TRUE(t.on_pareto_front("quest", 8192));

  // A point slower and less accurate than another is dominated.
  Report r = mixed_report();
  r.points.push_back(with_accuracy(make_point("h2o", 4096, 3e6), 0.5, 0.9));
  r.speedups = compute_speedups(r.points);
  const auto d = procurement_tables(r)[0];
  EXPECT_FALSE(d.on_pareto_front("h2o", 4096));
  // A point whose recall is NaN (not computable) is neither on the front nor dominating.
  Report n = mixed_report();
  n.points[0].accuracy.mass_recall = std::numeric_limits<double>::quiet_NaN();
  n.speedups = compute_speedups(n.points);
  const auto nt = procurement_tables(n)[0];
  EXPECT_FALSE(nt.on_pareto_front("streamingllm", 4096));
  EXPECT_EQ(nt.fastest_within_target(4096), "quest");
  const std::string acc = accuracy_grid(d).markdown();
  const auto row = acc.find("| h2o");
  ASSERT_NE(row, std::string::npos);
  const std::string h2o_line = acc.substr(row, acc.find('\n', row) - row);
  EXPECT_FALSE(has(h2o_line.substr(0, h2o_line.find('|', 6)), kParetoMark));
  const auto qrow = acc.find("| quest");
  EXPECT_TRUE(has(acc.substr(qrow, acc.find('\n', qrow) - qrow), kParetoMark)) << acc;
}

}  // namespace
}  // namespace hb::reports
