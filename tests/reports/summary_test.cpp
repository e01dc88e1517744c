// Issue 19: the sentences a report opens with, computed from the data, and the chart helpers
// that keep labels from colliding.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include "fixtures.h"
#include "reports/convergence.h"
#include "reports/format.h"
#include "reports/html.h"
#include "reports/summary.h"
#include "reports/svg_plot.h"
#include "reports/tables.h"

namespace hb::reports {
namespace {

using testing::make_failed_point;
using testing::make_point;
using testing::make_report;

bool has(const std::string& text, const std::string& piece) {
  return text.find(piece) != std::string::npos;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

Point with_recall(Point p, double recall) {
  p.accuracy.mass_recall = recall;
  return p;
}

// full-gpu, cpu-only, quest (fast but below the target) and hybridgen at 4k and 8k; full-gpu
// oom at 8k.
Report contest() {
  Report r = make_report();
  r.points.clear();
  for (int64_t len : {4096, 8192}) {
    const double scale = static_cast<double>(len) / 4096;
    r.points.push_back(make_point("cpu-only", len, 3e6 * scale));
    r.points.push_back(len == 4096
                           ? make_point("full-gpu", len, 2e6)
                           : make_failed_point("full-gpu", len, PointStatus::oom,
                                               "KV 2.0 GiB > accelerator capacity 1.0 GiB"));
    r.points.push_back(with_recall(make_point("quest", len, 0.5e6 * scale), 0.6));
    r.points.push_back(with_recall(make_point("hybridgen", len, 1e6 * scale), 0.97));
  }
  r.speedups = compute_speedups(r.points);
  return r;
}

TEST(Summary, FastestWithinTargetAgainstReferenceAndBestBaseline) {
  const auto s = summary_sentences(contest());
  ASSERT_GE(s.size(), 3u);
  ASSERT_LE(s.size(), 5u);
  const std::string all = joined(s);
  EXPECT_TRUE(has(s[0], "emulated")) << all;
  // quest is faster but misses recall >= 0.9: hybridgen wins, and cpu-only is the best baseline
  // that meets the target.
  EXPECT_TRUE(has(all, "hybridgen is the fastest strategy within recall >= 0.9 at every length"))
      << all;
  EXPECT_TRUE(has(all, "at 4k 2.00x ± ")) << all;
  EXPECT_TRUE(has(all, "faster than full-gpu and 3.00x ± ")) << all;
  EXPECT_TRUE(has(all, "faster than cpu-only, the best baseline within target")) << all;
  // At 8k full-gpu is oom: said, then compared with the best baseline only.
  EXPECT_TRUE(has(all, "at 8k full-gpu is oom; 3.00x ± ")) << all;
  EXPECT_FALSE(has(all, "quest, the best")) << all;
  EXPECT_TRUE(has(s[0], "emulated: a stand-in")) << all;
  EXPECT_TRUE(has(s[0], "; every timed point settled")) << all;
}

// Issue 47: on the emulated accelerator the summary says which scope was timed and claims of the
// stand-in only what holds: attention (the default there) is what the strategies differ in; at
// layer scope the stand-in's GEMMs fill most of the step.
TEST(Summary, AnEmulatedRunSaysWhatItsScopeTimed) {
  Report r = contest();
  r.context.accelerator.emulated = true;
  r.context.sweep["scope"] = "attention";
  const std::string attention = summary_sentences(r).at(0);
  EXPECT_TRUE(has(attention, "timed at attention scope, what the strategies differ in"))
      << attention;
  EXPECT_TRUE(has(attention, "--scope layer")) << attention;
  EXPECT_FALSE(has(attention, "ratios carry over")) << attention;
  r.context.sweep["scope"] = "layer";
  const std::string layer = summary_sentences(r).at(0);
  EXPECT_TRUE(has(layer, "At layer scope the stand-in's CPU threads also ran the layer's GEMMs"))
      << layer;
  EXPECT_TRUE(has(layer, "--scope attention")) << layer;
}

TEST(Summary, NoneWithinTargetSaysSo) {
  Report r = contest();
  for (auto& p : r.points) p.accuracy.mass_recall = 0.5;
  const std::string all = joined(summary_sentences(r));
  EXPECT_TRUE(has(all,
                  "No strategy meets recall >= 0.9 at 4k and 8k: at 4k the fastest, quest, "
                  "has recall 50.0%"))
      << all;
}

// Issue 49: `run --strategy cpu-only,quest` said "3.61x faster than cpu-only and no baseline
// meets the target", though cpu-only, the reference, has 100% recall: the reference was the only
// baseline, and it was just compared with.
TEST(Summary, TheReferenceAloneIsNotDeniedAsABaseline) {
  for (StrategyRole role : {StrategyRole::baseline, StrategyRole::system}) {
    Report r = make_report();
    r.points = {make_point("cpu-only", 4096, 3e6), with_recall(make_point("quest", 4096, 1e6), 1)};
    r.points[1].role = role;
    r.speedups = compute_speedups(r.points);
    std::string all = joined(summary_sentences(r));
    EXPECT_TRUE(has(all, "quest is the fastest strategy within recall >= 0.9 at 4k: 3.00x ± "))
        << all;
    EXPECT_FALSE(has(all, "baseline meets the target")) << all;
    // A second baseline below the target is another matter: none of the others meets it.
    r.points.push_back(with_recall(make_point("h2o", 4096, 2e6), 0.5));
    r.speedups = compute_speedups(r.points);
    all = joined(summary_sentences(r));
    EXPECT_TRUE(has(all, "faster than cpu-only and no other baseline meets the target.")) << all;
  }
}

TEST(Summary, ReferenceOomAndKvBoundary) {
  Report r = make_report();  // full-gpu oom at 16k; no kv_fit_fraction
  std::string all = joined(summary_sentences(r));
  EXPECT_TRUE(has(all,
                  "full-gpu is the fastest strategy within recall >= 0.9 at 4k and 8k: at 4k "
                  "full-gpu is the reference itself and 2.00x ± "))
      << all;
  EXPECT_TRUE(has(all,
                  "cpu-only is the fastest strategy within recall >= 0.9 at 16k: full-gpu is "
                  "oom; no other baseline meets the target."))
      << all;
  EXPECT_TRUE(has(all, "full-gpu runs out of accelerator memory (oom) at 16k.")) << all;
  for (auto& p : r.points) p.kv_fit_fraction = p.axes.seq_len < 16384 ? 1.0 : 0.5;
  all = joined(summary_sentences(r));
  EXPECT_TRUE(has(all, "The KV cache stops fitting the accelerator's KV budget at 16k")) << all;
}

TEST(Summary, SingleStrategyModeledAndEmpty) {
  Report r = make_report();
  r.points.erase(std::remove_if(r.points.begin(), r.points.end(),
                                [](const Point& p) { return p.axes.strategy != "cpu-only"; }),
                 r.points.end());
  for (auto& p : r.points) p.provenance = Provenance::modeled;
  r.speedups = compute_speedups(r.points);
  const auto s = summary_sentences(r);
  const std::string all = joined(s);
  EXPECT_TRUE(has(s[0], "modeled from a platform profile")) << all;
  EXPECT_TRUE(has(all,
                  "Only cpu-only ran, so there is nothing to compare it with; it meets "
                  "recall >= 0.9 at 4k, 8k and 16k."))
      << all;
  r.points.clear();
  EXPECT_EQ(summary_sentences(r), std::vector<std::string>{"The report has no points."});
}

TEST(Summary, NoisyPointsAndRatiosWithinNoise) {
  Report r = contest();
  r.context.sweep["max_noise_fraction"] = "0.050000";
  Point& shy = r.points[0];  // cpu-only at 4k
  static_cast<Timing&>(shy.step) = Timing::from_samples(testing::noisy_samples(3e6, 0.2, 6, 3));
  shy.step.stop_reason = StopReason::max_steps;
  // hybridgen as fast as full-gpu at 4k, within noise.
  static_cast<Timing&>(r.points[3].step) =
      Timing::from_samples(testing::noisy_samples(1.98e6, 0.01, 30, 9));
  r.speedups = compute_speedups(r.points);
  const std::string all = joined(summary_sentences(r));
  EXPECT_TRUE(has(all,
                  "1 of 7 timed points stopped before the 5.0% noise target: 1 too noisy to "
                  "judge: cpu-only at 4k ("))
      << all;
  // Within noise of each other, neither is crowned: the tie is named.
  EXPECT_TRUE(has(all, "Tie within noise at 4k")) << all;
  EXPECT_TRUE(has(all, "full-gpu and hybridgen")) << all;
  EXPECT_TRUE(within_noise(1.02, 0.02));
  EXPECT_TRUE(within_noise(1 / 1.02, 0.02));
  EXPECT_FALSE(within_noise(1.10, 0.02));
}

// A spread as large in the first half of the rounds as in the second is the machine's own: the
// summary and the fix say so (more samples would not lower it) instead of "raise --timeout"; a
// spread that came with a transient keeps the old advice.
TEST(Summary, ASpreadThatMoreSamplesWouldNotLowerIsSaidAsSuch) {
  Report r = contest();
  r.context.sweep["max_noise_fraction"] = "0.050000";
  Point& floor = r.points[0];  // cpu-only at 4k: 20% noise from start to end, 12 rounds
  static_cast<Timing&>(floor.step) = Timing::from_samples(testing::noisy_samples(3e6, 0.2, 240, 3));
  floor.step.stop_reason = StopReason::timeout;
  floor = testing::with_passes(floor, 12);
  Point& burst = r.points[1];  // quiet in its first half, a slower spell in the second
  std::vector<double> v = testing::noisy_samples(2e6, 0.01, 120, 4);
  for (double x : testing::noisy_samples(3e6, 0.05, 120, 5)) v.push_back(x);
  static_cast<Timing&>(burst.step) = Timing::from_samples(v);
  burst.step.stop_reason = StopReason::timeout;
  burst = testing::with_passes(burst, 12);
  r.speedups = compute_speedups(r.points);
  const auto f = noise_floor(floor, 0.05);
  ASSERT_TRUE(f.has_value());
  EXPECT_TRUE(f->at_floor) << f->first_half << " " << f->second_half;
  EXPECT_EQ(f->rounds, 12);
  EXPECT_GT(f->median_rel_half_width, 0.0);
  EXPECT_LT(f->median_rel_half_width, 0.1);  // 12 round medians of 20 samples each
  EXPECT_FALSE(noise_floor(burst, 0.05)->at_floor);
  EXPECT_FALSE(noise_floor(testing::with_passes(floor, 5), 0.05).has_value());  // too few rounds
  const std::string floor_line = unconverged_line(floor, 0.05);
  EXPECT_TRUE(has(floor_line, "this machine's own spread")) << floor_line;
  EXPECT_TRUE(has(floor_line, "--max-noise 20.0%") || has(floor_line, "--max-noise 25.0%"))
      << floor_line;
  EXPECT_FALSE(has(floor_line, "raise --timeout")) << floor_line;
  EXPECT_TRUE(has(unconverged_line(burst, 0.05), "raise --timeout"));
  const std::string all = joined(summary_sentences(r));
  EXPECT_TRUE(has(all,
                  "2 of 7 timed points stopped before the 5.0% noise target: 1 at this "
                  "machine's own step-to-step spread"))
      << all;
  EXPECT_TRUE(has(all, "1 too noisy to judge: ")) << all;
}

// The role each point carries decides, not the strategy's name: a hybridgen-named baseline is a
// baseline, an ablation never is, and the reference is not one of the baselines it measures.
TEST(Summary, BaselinesAreChosenByRoleNotName) {
  Report r = contest();
  r.points.push_back(make_point("hybridgen-like-baseline", 4096, 2e6, 0.95));
  r.points.push_back(make_point("hybridgen-lse", 4096, 2e6, 0.95));
  r.speedups = compute_speedups(r.points);
  const auto t = procurement_tables(r).at(0);
  EXPECT_TRUE(is_baseline(t, "quest"));
  EXPECT_FALSE(is_baseline(t, "full-gpu"));
  EXPECT_FALSE(is_baseline(t, "hybridgen"));
  EXPECT_FALSE(is_baseline(t, "hybridgen-lse"));
  EXPECT_FALSE(is_baseline(t, "hybridgen-like-baseline"));  // role_from_name: an ablation
  for (auto& p : r.points)
    if (p.axes.strategy == "hybridgen-like-baseline") p.role = StrategyRole::baseline;
  EXPECT_TRUE(is_baseline(procurement_tables(r).at(0), "hybridgen-like-baseline"));
}

// The charts' two parts: the headline without ablations, the system beside its ablations; the
// reference stays in both so every speedup keeps its denominator.
TEST(Summary, ChartPartsKeepAblationsApartFromTheHeadline) {
  Report r = contest();
  r.points.push_back(make_point("hybridgen-lse", 4096, 2e6, 0.95));
  r.speedups = compute_speedups(r.points);
  const auto t = procurement_tables(r).at(0);
  const auto head = t.headline_part(), abl = t.ablation_part();
  auto has_s = [](const ProcurementTable& x, const std::string& s) {
    return std::find(x.strategies.begin(), x.strategies.end(), s) != x.strategies.end();
  };
  EXPECT_TRUE(has_s(head, "quest") && has_s(head, "hybridgen") && has_s(head, "full-gpu"));
  EXPECT_FALSE(has_s(head, "hybridgen-lse"));
  EXPECT_EQ(head.at("hybridgen-lse", 4096), nullptr);
  EXPECT_TRUE(has_s(abl, "hybridgen") && has_s(abl, "hybridgen-lse") && has_s(abl, "full-gpu"));
  EXPECT_FALSE(has_s(abl, "quest"));
  EXPECT_NE(abl.at("hybridgen-lse", 4096), nullptr);
  const std::string html = html_report(r);
  EXPECT_TRUE(has(html, "Ablations")) << html.substr(0, 2000);
}

TEST(Summary, OpensMarkdownHtmlWithContextCollapsedBelow) {
  const Report r = contest();
  const std::string first = summary_sentences(r)[1];
  const std::string md = markdown_report(r);
  EXPECT_EQ(md.rfind("# hybridbench report\n\n## Summary\n\n- ", 0), 0u) << md;
  const auto details = md.find("<details><summary>Run context");
  ASSERT_NE(details, std::string::npos);
  EXPECT_LT(md.find(first), details);
  EXPECT_GT(md.find("- **host**: testhost"), details);
  EXPECT_LT(md.find("- **host**: testhost"), md.find("</details>"));

  const std::string html = html_report(r);
  const auto ul = html.find("<ul class=\"summary\"");
  const auto hd = html.find("<details>");
  ASSERT_NE(ul, std::string::npos);
  ASSERT_NE(hd, std::string::npos);
  EXPECT_LT(ul, hd);
  EXPECT_LT(html.find("<table class=\"facts\">"), html.find("</details>"));
  EXPECT_GT(html.find("<table class=\"facts\">"), hd);
}

TEST(Charts, SpreadLabelsKeepOrderAndGap) {
  const auto y = spread_labels({50, 51, 52, 200, 10}, 11, 0, 100);
  ASSERT_EQ(y.size(), 5u);
  std::vector<double> sorted = y;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 1; i < sorted.size(); ++i) EXPECT_GE(sorted[i] - sorted[i - 1], 11 - 1e-9);
  EXPECT_LT(y[0], y[1]);
  EXPECT_LT(y[1], y[2]);
  EXPECT_LE(y[3], 100);  // clamped into the range
  EXPECT_EQ(y[4], 10);   // alone where it wished
}

// Issue 49: a chart over 30-60 ms read "50 ms" alone. Every range gives at least four ticks to
// read values by, inside the range and increasing; a wide one keeps its decades.
std::string plain(double v) { return format_fixed(v, 4); }
TEST(Charts, LogTicksGiveAtLeastFourOnAnyRange) {
  for (const auto& [lo, hi] : std::vector<std::pair<double, double>>{
           {30e6, 60e6}, {1.0, 1.05}, {42.0, 44.0}, {0.8, 3.0}, {1e3, 1e9}, {7.0, 70.0}}) {
    const auto ticks = log_ticks(lo, hi, plain);
    EXPECT_GE(ticks.size(), 4u) << lo << "-" << hi;
    EXPECT_LE(ticks.size(), 16u) << lo << "-" << hi;
    for (size_t i = 0; i < ticks.size(); ++i) {
      EXPECT_GE(ticks[i].value, lo);
      EXPECT_LE(ticks[i].value, hi);
      if (i > 0) EXPECT_GT(ticks[i].value, ticks[i - 1].value);
    }
  }
  const auto decades = log_ticks(1e3, 1e9, plain);
  ASSERT_EQ(decades.size(), 7u);  // 1e3 ... 1e9: decades only
  EXPECT_EQ(decades[1].value, 1e4);
  const auto narrow = log_ticks(30e6, 60e6, plain);  // 30, 40, 50, 60 ms
  ASSERT_EQ(narrow.size(), 4u);
  EXPECT_EQ(narrow.front().value, 30e6);
  EXPECT_TRUE(log_ticks(5, 5, plain).empty());
}

TEST(Charts, LabelPlacerNeverOverlaps) {
  LabelPlacer placer(0, 300);
  std::vector<LabelPlacer::Box> placed;
  for (int i = 0; i < 8; ++i) placer.place(10, 80, 100, 12);  // eight labels wishing one spot
  const auto& b = placer.boxes();
  for (size_t i = 0; i < b.size(); ++i)
    for (size_t j = i + 1; j < b.size(); ++j)
      EXPECT_FALSE(b[i].y0 < b[j].y1 && b[j].y0 < b[i].y1) << i << " overlaps " << j;
}

// Strategies whose points coincide share one label; the Pareto front is drawn; bars within noise
// are hatched; only the strategies the summary names are coloured.
TEST(Charts, PiledPointsShareOneLabelAndNoiseIsHatched) {
  Report r = contest();
  for (const char* s : {"h2o", "offload"})
    for (int64_t len : {4096, 8192})
      r.points.push_back(make_point(s, len, 3e6 * static_cast<double>(len) / 4096));
  r.points.push_back(make_point("streamingllm", 4096, 2e6, 0.01, 30, 5));  // full-gpu's time
  r.speedups = compute_speedups(r.points);
  const std::string html = html_report(r);
  // cpu-only, h2o and offload: same time, same recall, one spot, one label.
  EXPECT_TRUE(std::regex_search(html, std::regex(">(cpu-only|h2o|offload), (cpu-only|h2o|offload), "
                                                 "(cpu-only|h2o|offload)")))
      << html;
  EXPECT_TRUE(has(html, "Pareto front"));
  EXPECT_TRUE(has(html, "stroke=\"#333\" stroke-width=\"1.6\" points="));  // the staircase
  EXPECT_TRUE(has(html, "fill=\"#a9a9a9\""));                              // grey context
  EXPECT_TRUE(has(html, "within noise of 1x"));
  EXPECT_TRUE(has(html, "streamingllm at 4k: 1.00x ± "));
  EXPECT_TRUE(has(html, "vs full-gpu (within noise)</title><rect"));  // drawn hatched
  EXPECT_TRUE(has(html, "fill=\"url(#hb"));
  // Every point's direct label at the time chart's right edge is one <text> each.
  EXPECT_TRUE(has(html, ">hybridgen</text>"));
}

}  // namespace
}  // namespace hb::reports
