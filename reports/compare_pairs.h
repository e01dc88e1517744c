#pragma once
// An A/B's verdict from its pass pairs (`compare --ab`, cli/ab_run.*). Each pair k is the OLD and
// the NEW pass run next to each other. In each pair a point's move is its NEW/OLD median ratio
// over its group's move in that same pair: the geometric mean of the other strategies' NEW/OLD
// ratios of its group (>= kMinGroupForShift - 1 of them), else the machine control's NEW/OLD
// ratio, else 1 (judged as it is). A move the whole machine made in a pair (every strategy and
// the control together) cancels there, so it never fails; it is said among the warnings.
//
// The verdict rests on the pairs' moves, not on the pooled rounds: the passes of one side moved
// 10-40% between passes on the loaded 2-core VM, which a U test over rounds read as significant
// (cli/AB.md). Rule, for n pairs with median move M (geometric):
//   |M - 1| < min_effect                          SAME
//   fewer than kAgreeing(n) = ceil(2n/3) pairs moving M's way   NOISY
//   |M - 1| <= relative_allowance                 INCONCLUSIVE (never a regression)
//   else FASTER / SLOWER; SLOWER beyond threshold is a regression (exit 3).
// Measured (cli/AB.md): the per-pair moves of 5 A/A jobs had a robust spread of 7%; resampled,
// 6 pairs give about 1% false alarms a point (4% a 4-strategy job).
#include <string>
#include <utility>
#include <vector>

#include "reports/compare.h"
#include "reports/report.h"

namespace hb::reports {

// Pairs moving the median's way that a verdict other than SAME / NOISY needs: ceil(2n/3).
int pairs_agreeing_needed(int pairs);

struct PairedPoint {
  std::string key;            // PointAxes::key()
  std::vector<double> moves;  // per pair: (new / old) / the group's (new / old) in that pair
  std::string reference;      // "group", "control" or "none"
  double median_move = 1;     // exp(median ln move)
  int agreeing = 0;           // pairs moving the median's way
  Verdict verdict = Verdict::same;
};

// A group's own move in each pair (all its strategies together) and its control's.
struct PairedGroupMove {
  std::string group_key;
  PointAxes axes;
  std::vector<double> group, control;  // per pair, NEW / OLD; control empty without one
};

struct PairedJudgement {
  int pairs = 0;
  std::vector<PairedPoint> points;
  std::vector<PairedGroupMove> groups;
};

// The moves and verdicts of every point timed in every pair (OLD pass, NEW pass).
PairedJudgement judge_pass_pairs(const std::vector<std::pair<Report, Report>>& pairs,
                                 const CompareOptions& options);

// `result` (compare_reports of the two sides' pooled reports) with its timing verdicts replaced
// by the pairs' for the points judged there, its regressions recounted and the group moves said
// among its warnings. Accuracy, behaviour and failed points keep their verdicts.
void apply_pass_pairs(const PairedJudgement& pairs, CompareResult& result);

}  // namespace hb::reports
