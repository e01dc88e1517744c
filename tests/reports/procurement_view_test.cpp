// The procurement view of a crafted model-mode report (reports/procurement_view.h, _markdown.h,
// _chart.h): two platforms, whole-model blocks built from hand-picked step times, capacity rows;
// every expected figure is computed by hand in the comments.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "reports/json_io.h"
#include "reports/procurement_chart.h"
#include "reports/procurement_markdown.h"
#include "reports/procurement_scaling.h"
#include "reports/procurement_view.h"
#include "reports/tables.h"
#include "reports/whole_model.h"
#include "procurement_fixture.h"

namespace hb::reports {
namespace {

using M = ProcurementMetric;
using testing::procurement_report;

const ProcurementSetting& setting(const std::vector<ProcurementSetting>& all, int64_t len,
                                  int batch) {
  const auto it = std::find_if(all.begin(), all.end(),
                               [&](const auto& s) { return s.seq_len == len && s.batch == batch; });
  EXPECT_NE(it, all.end());
  return *it;
}

const ProcurementEntry& entry(const ProcurementSetting& s, const std::string& platform,
                              const std::string& strategy) {
  for (const auto& e : s.entries)
    if (e.candidate.platform == platform && e.candidate.strategy == strategy) return e;
  ADD_FAILURE() << platform << " " << strategy;
  return s.entries.front();
}

TEST(ProcurementView, BestLinesNameTheWinnerAndHowFarAhead) {
  const Report r = procurement_report();
  const auto all = procurement_settings({&r});
  const auto lines = best_lines(setting(all, 131072, 8));
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0],
            "Most tokens/s: b200 with full-gpu, 195 tokens/s, 1.20x ahead of h200 with full-gpu "
            "(163 tokens/s).");
  EXPECT_EQ(
      lines[1],
      "Lowest ITL: b200 with full-gpu, 41.0 ms, 1.20x ahead of h200 with full-gpu (49.0 ms).");
  // $14.236 / $13.611 = 1.046: the cheaper platform wins on cost although it is slower.
  EXPECT_EQ(lines[2],
            "Lowest $/Mtok: h200 with full-gpu, $13.61/Mtok, 1.05x ahead of b200 with full-gpu "
            "($14.24/Mtok).");
  EXPECT_EQ(lines[3],
            "Most tokens/s per W: b200 with full-gpu, 0.1951 tokens/s/W (the only platform with "
            "an eligible figure here).");
  EXPECT_EQ(lines[4],
            "Longest context: b200 with offload, 2M tokens, 1.33x ahead of h200 with offload "
            "(1.50M tokens).");
}

TEST(ProcurementView, MissingEconomicsLeaveTheColumnBlankWithItsReason) {
  const Report r = procurement_report();
  const auto all = procurement_settings({&r});
  const ProcurementSetting& s = setting(all, 131072, 8);
  const Figure& w = entry(s, "h200", "full-gpu").candidate.figure(M::tokens_per_w);
  EXPECT_FALSE(w.value);
  EXPECT_EQ(w.blank_reason, "no power: h200's profile has no economics.gpu_power_w");
  EXPECT_EQ(figure_text(M::tokens_per_w, w), "-");
  const auto blanks = blank_lines(s);
  ASSERT_EQ(blanks.size(), 1u);
  EXPECT_EQ(blanks[0],
            "tokens/s/W blank: no power: h200's profile has no economics.gpu_power_w (h200)");
  // Nothing anywhere has a price: the line says so instead of crowning anyone.
  Report none = procurement_report();
  for (auto& p : none.points) {
    p.whole_model->cost_per_mtok_usd.reset();
    p.whole_model->cost_blank_reason = "no price: add economics";
  }
  const auto lines = best_lines(setting(procurement_settings({&none}), 131072, 8));
  EXPECT_EQ(lines[2].rfind("Lowest $/Mtok: blank: ", 0), 0u) << lines[2];
  EXPECT_NE(lines[2].find("no price: add economics"), std::string::npos);
}

TEST(ProcurementView, WhatMissesTheTargetOrDoesNotFitIsListedNotRanked) {
  Report r = procurement_report();
  // h200's full-gpu holds only 64k at batch 8 now: the 128k point does not fit.
  r.capacity[1].seq_len = 65536;
  const auto all = procurement_settings({&r});
  const ProcurementSetting& s = setting(all, 131072, 8);
  EXPECT_FALSE(entry(s, "h200", "full-gpu").candidate.eligible);
  EXPECT_FALSE(entry(s, "h200", "full-gpu").fits);
  const auto lines = not_ranked_lines(s);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "b200 with h2o: misses recall >= 0.9 (recall 0.500)");
  EXPECT_EQ(lines[1],
            "h200 with full-gpu: does not fit its memory at batch 8 (longest 64k; accelerator: "
            "all KV ...)");
  EXPECT_EQ(lines[2], "h200 with h2o: misses recall >= 0.9 (recall 0.500)");
  // Now b200 leads ITL with nothing on another platform's full-gpu to beat: offload on h200.
  EXPECT_EQ(best_lines(s)[1],
            "Lowest ITL: b200 with full-gpu, 41.0 ms, 4.90x ahead of h200 with offload (201 ms).");
}

TEST(ProcurementView, LargestBatchAtTheSloEdgeAndTheMemoryLimit) {
  // b200 full-gpu at 128k: ITL 17 ms at batch 1 and 41 ms at batch 8, so ITL(b) = 17 + 24 (b -
  // 1) / 7 ms; its memory holds 10 sequences there.
  const Report r = procurement_report();
  auto slo_batch = [&](double slo_ns) {
    const auto all = procurement_settings({&r}, {slo_ns});
    const ProcurementEntry& e = entry(setting(all, 131072, 8), "b200", "full-gpu");
    return e;
  };
  EXPECT_EQ(*slo_batch(41e6).slo_batch.value, 8);      // exactly at the SLO
  EXPECT_EQ(*slo_batch(41e6 - 1).slo_batch.value, 7);  // just under it
  EXPECT_EQ(slo_batch(41e6).at_slo_batch, "ITL 41.0 ms, 195 tokens/s, $14.24/Mtok");
  const ProcurementEntry wide = slo_batch(60e6);  // 13 by the ITL, 10 by memory
  EXPECT_EQ(*wide.slo_batch.value, 10);
  EXPECT_EQ(wide.slo_note, "memory binds: accelerator: all KV ...");
  EXPECT_EQ(*slo_batch(10e6).slo_batch.value, 0);  // batch 1 is already over
  // Without an SLO: the memory's limit alone.
  const auto all = procurement_settings({&r});
  EXPECT_EQ(*entry(setting(all, 131072, 8), "b200", "full-gpu").slo_batch.value, 10);
}

TEST(ProcurementView, ItlAtTheLongestContextIsExtrapolatedFromTheContexts) {
  // 25 ms at 32k, 41 ms at 128k: at 256k, 41 + 16 x (128k / 96k) = 62.33 ms.
  const Report r = procurement_report();
  const auto all = procurement_settings({&r});
  const ProcurementEntry& e = entry(setting(all, 131072, 8), "b200", "full-gpu");
  EXPECT_EQ(e.max_context_bound, "accelerator");
  EXPECT_EQ(e.at_max_context.rfind("ITL 62.3 ms, ", 0), 0u) << e.at_max_context;
  // $14.236 x 62.33 / 41 = $21.64 at the same batch.
  EXPECT_NE(e.at_max_context.find("$21.64"), std::string::npos) << e.at_max_context;
  EXPECT_NEAR(piecewise_linear({{32768, 25e6}, {131072, 41e6}}, 262144), 62.333333e6, 1);
  EXPECT_NEAR(piecewise_linear({{1, 10}, {2, 20}, {4, 20}}, 3), 20, 1e-12);
  EXPECT_NEAR(piecewise_linear({{1, 10}, {2, 20}, {4, 20}}, 0), 0, 1e-12);
}

// Table cells are padded to their column: runs of spaces as one, to read a row.
std::string squeezed(std::string s) {
  s.erase(std::unique(s.begin(), s.end(), [](char a, char b) { return a == ' ' && b == ' '; }),
          s.end());
  return s;
}

TEST(ProcurementView, TheMarkdownSectionAndTheChart) {
  const Report r = procurement_report();
  const std::string md = squeezed(procurement_markdown(procurement_settings({&r})));
  EXPECT_NE(md.find("### llama-3.1-70b, fp16, 128k tokens, batch 8, workload llama-like"),
            std::string::npos);
  EXPECT_NE(md.find("| full-gpu | 1 | b200 | 195 | 41.0 ms | $14.24 | 0.1951 | 256k |"),
            std::string::npos)
      << md;
  // The default markdown report carries it too: the report has two platforms.
  EXPECT_NE(markdown_report(r).find("## Procurement: platforms ranked per strategy"),
            std::string::npos);
  // The chart: every fitting point with both figures, the front through the ranked ones.
  const auto all = procurement_settings({&r});
  const ProcurementSetting& s = setting(all, 131072, 8);
  const std::vector<Candidate> candidates = s.candidates();
  const auto front = itl_cost_front(candidates);
  ASSERT_EQ(front.size(), 2u);  // h200 full-gpu (cheapest), b200 full-gpu (fastest)
  EXPECT_EQ(front[0]->platform, "h200");
  EXPECT_EQ(front[1]->platform, "b200");
  std::string why;
  const std::string svg = procurement_chart(s, "t", why);
  EXPECT_TRUE(why.empty());
  EXPECT_NE(svg.find("b200 with h2o"), std::string::npos);  // drawn hollow: misses the target
  EXPECT_NE(svg.find("fill=\"#fff\""), std::string::npos);
  // The legend lists the platforms drawn (issue 49: 8 listed where 2 were plotted): one whose
  // points all fail to fit has no marker and no legend entry.
  ProcurementSetting one = s;
  one.platforms.push_back("mi300x");
  const std::string with_extra = procurement_chart(one, "t", why);
  EXPECT_EQ(with_extra.find(">mi300x<"), std::string::npos) << with_extra;
  EXPECT_NE(with_extra.find(">h200<"), std::string::npos);
}

TEST(ProcurementView, CapacityRowsSurviveTheJsonAndOldReportsHaveNone) {
  const Report r = procurement_report();
  const Report back = from_json_text(to_json_text(r), "test");
  ASSERT_EQ(back.capacity.size(), r.capacity.size());
  EXPECT_EQ(back.capacity[2].seq_len, 2097152);
  EXPECT_EQ(back.capacity[4].kind, CapacityKind::max_batch);
  EXPECT_EQ(back.capacity[4].batch, 10);
  Report bad = procurement_report();
  bad.capacity[0].none = true;  // an answer of 256k that says nothing fits
  EXPECT_THROW(from_json_text(to_json_text(bad), "bad"), Error);
  Report old = procurement_report();
  old.capacity.clear();
  EXPECT_EQ(to_json_text(old).find("\"capacity\""), std::string::npos);
  const auto all = procurement_settings({&old});
  EXPECT_EQ(entry(setting(all, 131072, 8), "b200", "full-gpu")
                .candidate.figure(M::max_context)
                .blank_reason,
            "no capacity in the report (written before it, or by a sweep of a trace)");
}

}  // namespace
}  // namespace hb::reports
