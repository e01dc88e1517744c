// Tables, HTML and CI exporters rendered from a crafted report.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <sstream>

#include "core/error.h"
#include "fixtures.h"
#include "reports/convergence.h"
#include "reports/exporters.h"
#include "reports/format.h"
#include "reports/html.h"
#include "reports/labels.h"
#include "reports/point_warnings.h"
#include "reports/tables.h"

namespace hb::reports {
namespace {

using testing::make_report;

bool has(const std::string& text, const std::string& piece) {
  return text.find(piece) != std::string::npos;
}

size_t count(const std::string& text, const std::string& piece) {
  size_t n = 0;
  for (size_t at = text.find(piece); at != std::string::npos; at = text.find(piece, at + 1)) ++n;
  return n;
}

TEST(ProcurementTable, GridOfStrategiesAndLengths) {
  const Report r = make_report();
  const auto tables = procurement_tables(r);
  ASSERT_EQ(tables.size(), 1u);
  const auto& t = tables[0];
  EXPECT_EQ(t.seq_lens, (std::vector<int64_t>{4096, 8192, 16384}));
  EXPECT_EQ(t.strategies, (std::vector<std::string>{"cpu-only", "full-gpu"}));
  EXPECT_EQ(t.reference, "full-gpu");  // preferred when present
  EXPECT_EQ(t.provenances, std::vector<std::string>{"emulated"});
  // cpu-only takes twice full-gpu's time: speedup 0.5 vs the reference.
  auto sp = t.speedup("cpu-only", 4096);
  ASSERT_TRUE(sp.has_value());
  EXPECT_NEAR(sp->first, 0.5, 0.02);
  EXPECT_GT(sp->second, 0);
  EXPECT_EQ(t.speedup("full-gpu", 4096)->first, 1.0);
  EXPECT_FALSE(t.speedup("cpu-only", 16384).has_value());  // reference oom there
  EXPECT_EQ(t.fastest(4096), "full-gpu");
  EXPECT_EQ(t.fastest(16384), "cpu-only");
}

TEST(ProcurementTable, ReferenceCanBeChosenAndMustExist) {
  const Report r = make_report();
  const auto t = procurement_tables(r, {"cpu-only"})[0];
  EXPECT_NEAR(t.speedup("full-gpu", 8192)->first, 2.0, 0.05);
  EXPECT_THROW(procurement_tables(r, {"quest"}), Error);
}

TEST(ProcurementTable, SeparateSettingsGetSeparateTables) {
  Report r = make_report();
  Point other = r.points[0];
  other.axes.batch = 8;
  r.points.push_back(other);
  EXPECT_EQ(procurement_tables(r).size(), 2u);
}

TEST(Markdown, ShowsTimesSpeedupsAccuracyAndFailures) {
  const std::string md = markdown_report(make_report());
  EXPECT_TRUE(has(md, "# hybridbench report"));
  EXPECT_TRUE(has(md, "**accelerator**: cpu: cpu-accelerator (1 thread) (emulated"));
  EXPECT_TRUE(has(md, "Figures: emulated."));
  EXPECT_TRUE(has(md, "| strategy |")) << md;
  EXPECT_TRUE(has(md, "| cpu-only |"));
  EXPECT_TRUE(has(md, "2.00 ms ± "));
  EXPECT_TRUE(has(md, "0.50x ± ")) << md;
  EXPECT_TRUE(has(md, "n/a (full-gpu oom)"));
  EXPECT_TRUE(has(md, "recall 100.0%, cosine ")) << md;
  EXPECT_FALSE(
      has(md, "rel_l2 1.0e-03"));  // the JSON and CSV keep it; the tables do not headline it
  EXPECT_TRUE(has(md, "- full-gpu at 16k: oom: KV 2.0 GiB > accelerator capacity 1.0 GiB"));
  EXPECT_TRUE(has(md, "| fastest "));
}

// Issue 18: a point that stopped on the step cap (or the time limit) before its noise target is
// flagged in the tables, listed with its noise, target and fix, and warned about by `run`.
// One timed step has no spread: its "0%" noise would read as settled. Below the sweep's
// --min-samples (and always below 2) the noise is unknown and the point is flagged, whatever
// its stop reason says.
TEST(Convergence, FewerSamplesThanTheMinimumAreUnknownNoise) {
  Report r = make_report();
  r.context.sweep["min_samples"] = "5";
  Point& one = r.points[2];  // stopped on "noise"
  static_cast<Timing&>(one.step) = Timing::from_samples({1e6});
  ASSERT_EQ(noise_min_samples(r.context), 5);
  EXPECT_TRUE(noise_unknown(one, 5));
  EXPECT_TRUE(noise_unknown(one, 1));  // one step never has a noise figure
  EXPECT_TRUE(missed_noise_target(one, std::nullopt, 5));
  EXPECT_TRUE(has(noise_text(one, 5), "unknown (1 sample")) << noise_text(one, 5);
  static_cast<Timing&>(one.step) = Timing::from_samples(testing::noisy_samples(1e6, 0.01, 5, 7));
  EXPECT_FALSE(noise_unknown(one, 5));
  EXPECT_FALSE(has(noise_text(one, 5), "unknown"));
  r.context.sweep.erase("min_samples");
  EXPECT_EQ(noise_min_samples(r.context), 2);  // no echo: one step is still not enough
}

TEST(Convergence, PointThatStopsShortOfItsNoiseTargetIsFlagged) {
  Report r = make_report();
  r.context.sweep["max_noise_fraction"] = "0.050000";
  Point& shy = r.points[0];  // cpu-only at 4k
  ASSERT_EQ(shy.axes.strategy, "cpu-only");
  shy.step = {};
  static_cast<Timing&>(shy.step) =
      Timing::from_samples(testing::noisy_samples(2e6, 0.2, 6, 3));  // ~20% noise, 6 samples
  shy.step.stop_reason = StopReason::max_steps;
  static_cast<Timing&>(r.points[1].step) =
      Timing::from_samples(testing::noisy_samples(1e6, 0.2, 6, 4));  // full-gpu at 4k, ~20%
  r.points[1].step.stop_reason = StopReason::timeout;
  EXPECT_TRUE(missed_noise_target(shy));
  EXPECT_FALSE(missed_noise_target(r.points[2]));      // stopped on "noise"
  EXPECT_FALSE(missed_noise_target(r.points.back()));  // oom: never timed

  const std::string md = markdown_report(r);
  EXPECT_EQ(count(md, kUnconvergedMark), 2u) << md;  // the two cells
  EXPECT_TRUE(has(md, "† 2 of 6 point(s) stopped before reaching the 5.0% noise target")) << md;
  EXPECT_TRUE(has(md, "cpu-only, seq_len 4k, batch 1: noise ")) << md;
  EXPECT_TRUE(has(md,
                  "(target 5.0%), stopped on max-steps; raise --max-samples (replays the decode "
                  "positions) or --decode-steps"))
      << md;
  EXPECT_TRUE(has(md, "full-gpu, seq_len 4k, batch 1: noise ")) << md;
  EXPECT_TRUE(has(md, "stopped on timeout; raise --timeout")) << md;

  const std::string html = html_report(r);
  EXPECT_TRUE(has(html, "† 2 of 6 point(s) stopped before reaching the 5.0% noise target"));
  EXPECT_GE(count(html, "±"), 1u);

  const std::string w = unconverged_warning(r);
  EXPECT_TRUE(has(w, "warning: 2 of 6 point(s) stopped before reaching the noise target of 5.0%"))
      << w;
  EXPECT_TRUE(has(w, "\n  cpu-only, seq_len 4k, batch 1: noise ")) << w;
  EXPECT_TRUE(has(w,
                  "stopped on max-steps; raise --max-samples (replays the decode positions) or "
                  "--decode-steps\n"))
      << w;

  // Converged points and modeled ones (their steps are computed) are never flagged.
  const Report plain = make_report();
  EXPECT_EQ(unconverged_warning(plain), "");
  EXPECT_FALSE(has(markdown_report(plain), kUnconvergedMark));
  Point modeled = shy;
  modeled.provenance = Provenance::modeled;
  EXPECT_FALSE(missed_noise_target(modeled));
  // Stopped by max-steps (accuracy steps still owed) with its noise already within the target:
  // settled as asked. Without a known target the stop reason is all there is to go on.
  Point settled = shy;
  static_cast<Timing&>(settled.step) =
      Timing::from_samples(testing::noisy_samples(2e6, 0.005, 6, 5));
  settled.step.stop_reason = StopReason::max_steps;
  EXPECT_FALSE(missed_noise_target(settled, 0.05));
  EXPECT_TRUE(missed_noise_target(settled));
}

TEST(Markdown, MixedProvenanceMarksCells) {
  Report r = make_report();
  r.points[0].provenance = Provenance::modeled;
  r.speedups = compute_speedups(r.points);
  const std::string md = markdown_report(r);
  EXPECT_TRUE(has(md, "mixed: emulated, modeled"));
  EXPECT_TRUE(has(md, " (m) |"));
}

TEST(Csv, OneQuotedRowPerPoint) {
  Report r = make_report();
  r.points.back().reason = "needs 2.0 GiB, \"capacity\" is 1.0 GiB";
  const std::string csv = csv_report(r);
  std::istringstream in(csv);
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("model,family,seq_len,batch,strategy,", 0), 0u);
  EXPECT_TRUE(has(header, "step_median_ns"));
  EXPECT_TRUE(has(header, "speedup_vs_reference"));
  int rows = 0;
  while (std::getline(in, line)) ++rows;
  EXPECT_EQ(rows, 6);
  // kv_fit_fraction follows provenance, empty when the point does not say.
  EXPECT_TRUE(has(header, ",provenance,kv_fit_fraction,samples,"));
  EXPECT_TRUE(has(csv, ",oom,\"needs 2.0 GiB, \"\"capacity\"\" is 1.0 GiB\",emulated,,0,"));
  EXPECT_TRUE(has(csv, "cpu-only,fp16,structured,cpu,8,16,,ok,,emulated,,30,"));
  r.points[0].kv_fit_fraction = 0.5;
  EXPECT_TRUE(has(csv_report(r), ",ok,,emulated,0.5,30,")) << csv_report(r);
}

// Every point says how much of its KV fits the accelerator's budget: the step-time grid gets a
// row for it and a line says at which length the KV stops fitting.
Report with_kv_fit(std::map<int64_t, double> by_len) {
  Report r = make_report();
  for (auto& p : r.points) p.kv_fit_fraction = by_len.at(p.axes.seq_len);
  return r;
}

TEST(Markdown, MarksWhereTheKvStopsFitting) {
  const std::string md = markdown_report(with_kv_fit({{4096, 1.0}, {8192, 0.5}, {16384, 0.25}}));
  EXPECT_TRUE(has(md, "| KV on accelerator ")) << md;
  EXPECT_TRUE(has(md, "all |")) << md;
  EXPECT_TRUE(has(md, "50.0% |"));
  EXPECT_TRUE(has(md,
                  "The KV cache stops fitting the accelerator's KV budget at 8k (50.0% of it "
                  "fits there, 25.0% at 16k)."))
      << md;
  EXPECT_TRUE(has(html_report(with_kv_fit({{4096, 1.0}, {8192, 0.5}, {16384, 0.25}})),
                  "KV budget at 8k (50.0% of it fits there"));
  EXPECT_TRUE(has(markdown_report(with_kv_fit({{4096, 1.0}, {8192, 1.0}, {16384, 1.0}})),
                  "fits the accelerator's KV budget at every length"));
  EXPECT_TRUE(has(markdown_report(with_kv_fit({{4096, 0.9}, {8192, 0.45}, {16384, 0.2}})),
                  "outgrows the accelerator's KV budget at every length, from 4k"));
  // Reports without the figure (older ones) show neither the row nor the line.
  const std::string plain = markdown_report(make_report());
  EXPECT_FALSE(has(plain, "KV on accelerator"));
  EXPECT_FALSE(has(plain, "stops fitting"));
  EXPECT_FALSE(has(plain, "fits the accelerator's KV budget"));
  EXPECT_EQ(kv_fit_cell(std::nullopt), "-");
  EXPECT_EQ(kv_fit_cell(0.123), "12.3%");
}

TEST(Html, SelfContainedWithChartsAndLabels) {
  Report r = make_report();
  r.points[0].axes.strategy = "a<b>&c";  // must be escaped everywhere
  r.speedups = compute_speedups(r.points);
  const std::string html = html_report(r);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  // The time chart, and one speedup and one accuracy panel per length (small multiples).
  EXPECT_EQ(count(html, "<svg"), 7u);
  EXPECT_EQ(count(html, "</svg>"), 7u);
  EXPECT_EQ(count(html, "<polyline"), 2u);  // one line per strategy in the time chart
  for (const char* external : {"http://", "https://", "<script", "src=", "href=", "@import"})
    EXPECT_FALSE(has(html, external)) << external;
  // url() only for a pattern the same SVG defines (the hatching), never a resource.
  EXPECT_EQ(count(html, "url("), count(html, "url(#"));
  EXPECT_FALSE(has(html, "a<b>&c"));
  EXPECT_TRUE(has(html, "a&lt;b&gt;&amp;c"));
  EXPECT_GE(count(html, ">emulated<"), 3u);  // the provenance label inside each chart
  EXPECT_TRUE(has(html, ">oom<"));           // the failed point drawn in the time chart
  EXPECT_TRUE(has(html, "full-gpu at 16k: oom"));
  EXPECT_TRUE(has(html, "<table>"));
}

// A profile's prediction of measured points: markdown and HTML show both, side by side.
TEST(ModeledAlongside, TablesAndChartShowBoth) {
  Report r = make_report();
  int modeled = 0;
  for (auto& p : r.points) {
    if (!p.timed()) continue;
    p.modeled.platform = "gh200-c2c";
    p.modeled.overlap = "transfer > cpu > accelerator > sync";
    p.modeled.step = Timing::from_samples(
        std::vector<double>(p.step.samples_ns.size(), 1.25 * p.step.summary.median));
    p.modeled.error_vs_measured = 0.25;
    ++modeled;
  }
  ASSERT_GE(modeled, 2);
  const std::string md = markdown_report(r);
  EXPECT_TRUE(has(md, "### Measured | modeled on gh200-c2c")) << md;
  EXPECT_GE(count(md, "(+25.0%)"), static_cast<size_t>(modeled));
  const std::string html = html_report(r);
  EXPECT_TRUE(has(
      html, "stroke-dasharray=\"6 4\" points="));  // the modeled series next to the measured line
  EXPECT_TRUE(has(html, "Dashed: the median modeled on gh200-c2c"));
  EXPECT_TRUE(has(csv_report(r), ",gh200-c2c,"));
  // Without predictions, nothing of it appears.
  const Report plain = make_report();
  EXPECT_FALSE(has(markdown_report(plain), "modeled on"));
  EXPECT_FALSE(has(html_report(plain), "stroke-dasharray=\"6 4\" points="));
}

TEST(Html, EmptyReportStillRenders) {
  Report r = make_report();
  r.points.clear();
  r.speedups.clear();
  const std::string html = html_report(r);
  EXPECT_TRUE(has(html, "no points"));
  EXPECT_TRUE(has(html, "</html>"));
}

TEST(Exporters, BencherMetricFormat) {
  const Report r = make_report();
  const auto j = nlohmann::json::parse(bmf_json_text(r));
  EXPECT_EQ(j.size(), 5u);  // timed points only
  const std::string name = benchmark_name(r.points[0].axes);
  EXPECT_EQ(name, "cpu-only/llama-3-8b/seq_len=4096/batch=1/fp16/structured/cpu/steps=8/page=16");
  const auto& lat = j.at(name).at("latency");
  EXPECT_EQ(lat["value"].get<double>(), r.points[0].step.summary.median);
  EXPECT_EQ(lat["lower_value"].get<double>(), r.points[0].step.summary.p10);
  EXPECT_EQ(lat["upper_value"].get<double>(), r.points[0].step.summary.p90);
  EXPECT_FALSE(j.at(name).contains("throughput"));  // no whole model: no model's tokens/s
  EXPECT_EQ(j.at(name).at("rel-l2")["value"].get<double>(), 1e-3);
}

TEST(Exporters, GithubActionBenchmarkCustomSmallerIsBetter) {
  const Report r = make_report();
  const auto j = nlohmann::json::parse(github_benchmark_json_text(r));
  ASSERT_TRUE(j.is_array());
  EXPECT_EQ(j.size(), 10u);  // step time + rel_l2 for each of the 5 timed points
  for (const auto& e : j) {
    EXPECT_TRUE(e.contains("name") && e.contains("unit") && e.contains("value"));
    EXPECT_TRUE(e["value"].is_number());
  }
  EXPECT_EQ(j[0]["unit"], "ns");
  EXPECT_TRUE(has(j[0]["range"].get<std::string>(), "± "));
}

}  // namespace
}  // namespace hb::reports

namespace hb::reports {
namespace {

TEST(ProcurementTable, PairwiseMatrixAtTheLongestSharedLength) {
  Report r = testing::make_report();
  const auto t = procurement_tables(r)[0];
  EXPECT_EQ(t.pairwise_length(), 8192);  // full-gpu is oom at 16k: only one strategy ran there
  const std::string md =
      t.ratio("full-gpu", "cpu-only", 8192) ? pairwise_grid(t, 8192).markdown() : "";
  EXPECT_NEAR(t.ratio("full-gpu", "cpu-only", 8192)->first, 2.0, 0.05);
  EXPECT_TRUE(md.find("| full-gpu |    2.00x |    1.00x |") != std::string::npos) << md;
  EXPECT_TRUE(markdown_report(r).find("### Pairwise at 8k") != std::string::npos);
}

// Issue 17: a point whose strategy warned (it ran on a stand-in) is named in the markdown and
// HTML reports and in run's stderr text; a report without warnings says nothing.
TEST(Render, PointWarningsAreListedUnderTheSummary) {
  Report r = make_report();
  EXPECT_EQ(point_warnings_sentence(r), "");
  EXPECT_EQ(point_warnings_text(r), "");
  EXPECT_FALSE(has(markdown_report(r), "point warning"));
  r.points[1].warnings = {"h2o: no prompt queries to score the prompt with"};
  const std::string label = r.points[1].axes.strategy + ", seq_len " +
                            format_tokens(r.points[1].axes.seq_len) + ", batch " +
                            std::to_string(r.points[1].axes.batch) + ": h2o: no prompt queries";
  EXPECT_TRUE(has(markdown_report(r), "Warning: 1 point warning(s)")) << markdown_report(r);
  EXPECT_TRUE(has(markdown_report(r), label)) << markdown_report(r);
  EXPECT_TRUE(has(html_report(r), "1 point warning(s)"));
  EXPECT_TRUE(has(point_warnings_text(r), "warning: 1 point warning(s)"));
  EXPECT_TRUE(has(point_warnings_text(r), "  " + label));
}

}  // namespace
}  // namespace hb::reports
