// The headline claims only what the noise allows (issue 33): a winner only when its paired
// interval excludes 1 against every other contender within target; otherwise the tie is named.
// Ablations never take the headline and get their own sentence. Table-driven over crafted
// reports whose points ran in 6 rounds.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fixtures.h"
#include "reports/point_table.h"
#include "reports/summary.h"
#include "reports/tables.h"

namespace hb::reports {
namespace {

using testing::make_failed_point;
using testing::make_point;
using testing::with_passes;

struct Entrant {
  std::string strategy;
  double median_ns;  // <= 0: oom
  double recall = 1.0;
  double needle = -1;  // needle success rate; -1: no needle planted
};

// margin > 0: the run's --tie-margin in the sweep echo (0: a report from before the option).
Report crafted(const std::vector<Entrant>& entrants, double margin = 0) {
  Report r = testing::make_report();
  r.points.clear();
  if (margin > 0) r.context.sweep["tie_margin_fraction"] = std::to_string(margin);
  uint64_t seed = 1;
  for (const auto& e : entrants) {
    Point p = e.median_ns > 0
                  ? with_passes(make_point(e.strategy, 4096, e.median_ns, 0.01, 30, seed++), 6)
                  : make_failed_point(e.strategy, 4096, PointStatus::oom, "KV > budget");
    p.accuracy.mass_recall = e.recall;
    p.accuracy.needle_success_rate = e.needle;
    r.points.push_back(std::move(p));
  }
  r.speedups = compute_speedups(r.points);
  return r;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

struct Case {
  const char* name;
  std::vector<Entrant> entrants;
  std::vector<std::string> leaders;   // what ProcurementTable::leaders says, fastest first
  std::vector<std::string> must_say;  // pieces the summary contains
  std::vector<std::string> must_not_say;
  double margin = 0;  // --tie-margin
};

std::vector<Case> interval_cases() {
  return {
      {"clear winner",
       {{"full-gpu", 2e6}, {"h2o", 1e6}, {"hybridgen", 1.5e6}},
       {"h2o"},
       {"h2o is the fastest strategy within recall >= 0.9 at 4k", "faster than full-gpu",
        "hybridgen"},
       {"Tie", "lost most"}},
      {"tie of two",
       {{"full-gpu", 2e6}, {"h2o", 1e6}, {"hybridgen", 1.0e6}, {"quest", 1.6e6}},
       {"hybridgen", "h2o"},
       {"Tie within noise at 4k", "h2o and hybridgen"},
       {"is the fastest strategy", "quest and"}},
      {"an ablation never wins",
       {{"full-gpu", 2e6}, {"hybridgen", 1.2e6}, {"hybridgen-serial", 0.5e6}},
       {"hybridgen"},
       {"hybridgen is the fastest strategy", "Ablations (not in the headline) at 4k",
        "slower than hybridgen-serial"},
       {"hybridgen-serial is the fastest"}},
      {"fastest below target is not crowned",
       {{"full-gpu", 2e6}, {"streamingllm", 0.5e6, 0.3}, {"cpu-only", 3e6}},
       {"full-gpu"},
       {"full-gpu is the fastest strategy within recall >= 0.9",
        "1 strategy lost most of the exact attention", "streamingllm: attention-mass recall 30"},
       {"streamingllm is the fastest", "cpu-only: attention"}},
      {"a lost needle is said even at a good recall",
       {{"full-gpu", 2e6, 1.0, 1.0}, {"h2o", 1e6, 0.95, 0.2}, {"quest", 1.5e6, 0.92, 0.5}},
       {"h2o"},
       {"h2o is the fastest", "h2o: needle retrieved in 20"},
       {"quest: needle", "h2o: attention-mass", "full-gpu: needle"}},
      {"all below target",
       {{"streamingllm", 0.5e6, 0.3}, {"h2o", 0.6e6, 0.5}},
       {},
       {"No strategy meets recall >= 0.9 at 4k", "streamingllm: attention-mass recall 30"},
       {"is the fastest strategy", "Tie", "h2o: attention-mass"}},
      {"reference oom, baseline wins alone",
       {{"full-gpu", 0}, {"cpu-only", 3e6}, {"offload", 2e6}},
       {"offload"},
       {"offload is the fastest", "full-gpu is oom", "faster than cpu-only"},
       {"no other baseline meets"}},
      {"all exact and equal: a tie of everyone",
       {{"full-gpu", 1e6}, {"cpu-only", 1e6}, {"offload", 1e6}},
       {"cpu-only", "full-gpu", "offload"},
       {"Tie within noise at 4k", "cpu-only, full-gpu and offload"},
       {"is the fastest strategy"}},
  };
}

// Issue 33: a 2% lead the intervals resolve, but smaller than the shift identical runs showed,
// is named a tie under a 3% margin; a 6% lead still wins; without a margin (an older report)
// the 2% lead wins as before.
std::vector<Case> margin_cases() {
  return {
      {"ahead by less than the tie margin",
       {{"full-gpu", 2e6}, {"h2o", 1e6}, {"hybridgen", 1.02e6}},
       {"h2o", "hybridgen"},
       {"Tie within noise at 4k", "h2o and hybridgen",
        "within noise or the 3.0% tie margin of each",
        "trails it by less than the 3.0% tie margin; ", "the margin): 4k tie"},
       {"is the fastest strategy"},
       0.03},
      {"ahead by more than the tie margin",
       {{"full-gpu", 2e6}, {"h2o", 1e6}, {"hybridgen", 1.06e6}},
       {"h2o"},
       {"h2o is the fastest strategy", "faster than hybridgen"},
       {"Tie", "within the 3.0% tie margin"},
       0.03},
      {"ahead by more than the margin, but not by the interval",
       {{"full-gpu", 2e6}, {"h2o", 1e6}, {"hybridgen", 1.04e6}},
       {"h2o"},
       {"h2o is the fastest strategy", "hybridgen trails by 1.04x [",
        "at the 3.0% tie margin: another run may name it in the tie",
        "4k h2o (hybridgen at the margin)"},
       {"Tie", "full-gpu at the margin", "full-gpu trails"},
       0.03},
      {"the same 2% lead without a margin",
       {{"full-gpu", 2e6}, {"h2o", 1e6}, {"hybridgen", 1.02e6}},
       {"h2o"},
       {"h2o is the fastest strategy", "faster than hybridgen"},
       {"Tie", "tie margin"}},
      {"a lead under the margin over the system below target is said as such",
       {{"full-gpu", 2e6}, {"h2o", 1e6}, {"hybridgen", 1.02e6, 0.5}},
       {"h2o"},
       {"h2o is the fastest strategy", "as fast as hybridgen (1.02x",
        "within the 3.0% tie margin)"},
       {"Tie"},
       0.03},
  };
}

TEST(SummaryTies, HeadlineClaimsOnlyWhatTheNoiseAllows) {
  std::vector<Case> cases = interval_cases();
  for (auto& c : margin_cases()) cases.push_back(std::move(c));
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const Report r = crafted(c.entrants, c.margin);
    const auto tables = procurement_tables(r);
    ASSERT_EQ(tables.size(), 1u);
    auto leaders = tables[0].leaders(4096);
    if (leaders.size() > 1) std::sort(leaders.begin() + 1, leaders.end());
    auto expected = c.leaders;
    if (expected.size() > 1) {  // the fastest of a tie is a coin toss of the noise: sort all
      std::sort(leaders.begin(), leaders.end());
      std::sort(expected.begin(), expected.end());
    }
    EXPECT_EQ(leaders, expected);
    std::string all = joined(summary_sentences(r));
    for (const auto& line : fastest_within_target_lines(r)) all += line + "\n";
    for (const auto& piece : c.must_say)
      EXPECT_NE(all.find(piece), std::string::npos) << piece << "\n" << all;
    for (const auto& piece : c.must_not_say)
      EXPECT_EQ(all.find(piece), std::string::npos) << piece << "\n" << all;
  }
}

// The report's time grid names the same leaders, and a strategy at the margin, as run's line.
TEST(SummaryTies, TheTimeGridNamesAStrategyAtTheMargin) {
  const Report r = crafted({{"full-gpu", 2e6}, {"h2o", 1e6}, {"hybridgen", 1.04e6}}, 0.03);
  const auto tables = procurement_tables(r);
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0].at_margin(4096), std::vector<std::string>{"hybridgen"});
  const std::string grid = time_grid(tables[0]).markdown();
  EXPECT_NE(grid.find("| h2o (hybridgen at the margin) |"), std::string::npos) << grid;
  // Without a margin there is nothing to be at: the 4% lead is decided.
  EXPECT_TRUE(procurement_tables(crafted({{"h2o", 1e6}, {"hybridgen", 1.04e6}}))[0]
                  .at_margin(4096)
                  .empty());
}

}  // namespace
}  // namespace hb::reports
