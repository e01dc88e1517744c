#pragma once
// compare(OLD, NEW): the CI regression check. Points are matched by their axes; each matched
// pair of timed points is judged with a Mann-Whitney U test plus a minimum effect size, so
// neither a tiny-but-significant shift nor a large-but-noisy one fails a build. Points with
// rounds (StepTiming::pass_sizes, >= 2 a side) are judged on their round medians; a point of one
// round on its step-block medians, and only beyond the drift allowance, since one round cannot
// show drift between runs. Accuracy is compared too: a strategy that got less accurate is a
// regression even when it got faster.
#include <optional>
#include <string>
#include <vector>

#include "reports/accuracy_target.h"
#include "reports/report.h"
#include "reports/run_agreement.h"

namespace hb::reports {

struct CompareOptions {
  double threshold = 0.05;  // a significant slowdown beyond this relative change is a regression
  double alpha = 0.01;      // significance level of the U test
  // Relative median changes below this are SAME even when significant: two identical default
  // runs minutes apart on the shared 2-core VM differed by 2-4% on 6 of 30 points (run-level
  // state the rounds inside one run cannot see), so anything smaller is not evidence.
  double min_effect = 0.05;
  // Robust relative noise (robust_rel_noise) above which a one-round point is not trusted: a
  // significant change counts only beyond 3x the noise (its samples then barely overlap).
  double max_noise = 0.10;
  // One round on either side: steps inside one run share its machine state, and two runs of one
  // binary minutes apart differed by up to 21% on a quiet 2-core build VM (noise inside each run
  // 8-9%). A significant one-round change within this fraction is INCONCLUSIVE (never a
  // regression); beyond it, it is judged. 25%: above that measured drift, below the 30% shift a
  // CI must catch. 0: judge every one.
  double drift_allowance = 0.25;
  // Points with rounds: a group (the strategies of one model, length, batch, ...) whose median
  // change is within this fraction moved as a whole, which is what the machine does between
  // runs (identical default runs back to back on the 2-core VM: whole groups moved -14% to +9%,
  // each strategy within ~7% of its group), so each point is judged on its change against that
  // common move. Beyond it, or with fewer than kMinGroupForShift timed points, a point is judged
  // as it is. 20%: above the measured drift, below the 30% a CI must catch. 0: never.
  double group_drift = 0.20;
  // Points with the machine control (StepTiming::control_ns) on both sides: a group whose
  // common move is within this fraction of its control's move moved with the machine, so each
  // point is judged against the group's move (a machine move fails nothing); beyond it the
  // strategies moved and not the machine, so each is judged against the control's move.
  // --group-drift does not apply to them. 10%: two identical runs on the loaded 2-core VM put
  // their groups 6-7% off the stream-read control (it does not track the strategies closer).
  double control_allowance = 0.10;
  // Points judged against their group's or control's rounds: a significant move within this
  // fraction is INCONCLUSIVE (never a regression): the rounds of one run share its state, and
  // two identical default-length runs on the loaded 2-core VM moved hybridgen 7.1-7.8% against
  // its group (its scheduler follows its timings), hybridgen-static 5.7%.
  double relative_allowance = 0.08;
  // Points NOISY or INCONCLUSIVE make the outcome Outcome::unjudged (a CI that must not pass
  // on points it could not judge); off, they are counted on the verdict line only.
  bool fail_unjudged = false;
  // Accuracy: rel_l2 may grow to old * (1 + rel) + abs before it is a regression (runs differ
  // slightly when thread timing changes summation order or an adaptive scheduler's choices).
  double rel_l2_rel_tolerance = 0.5;
  double rel_l2_abs_tolerance = 1e-4;
  double mass_recall_tolerance = 0.01;  // absolute drop allowed
  double needle_tolerance = 0.0;        // absolute drop in needle success rate allowed
  // The accuracy a point must reach (run --accuracy-target). nullopt: NEW's own target, from its
  // sweep echo (report_accuracy_target). A point that met it in OLD and misses it in NEW is an
  // accuracy regression even within mass_recall_tolerance: it left the set of points a reader
  // may pick from.
  std::optional<AccuracyTarget> accuracy_target;
};

// Throws hb::Error (usage) when options are inconsistent (e.g. min_effect > threshold, which
// would let a slowdown beyond the threshold be called SAME).
void validate(const CompareOptions& options);

enum class Verdict {
  faster,  // significant and at least min_effect faster
  slower,  // significant and at least min_effect slower
  same,    // change under min_effect, whatever the noise
  noisy,   // at least min_effect, but not significant, too few steps, or not beyond 3x the noise
  // significant and large, but one round on a side and within drift_allowance: drift between
  // runs could explain it; re-run both with rounds (--repetitions) to decide
  inconclusive,
  failed,     // timed in OLD, not in NEW (oom, unsupported, error)
  recovered,  // not timed in OLD, timed in NEW
  untimed,    // timed in neither (the status is compared, nothing else)
  missing,    // in OLD only
  added,      // in NEW only
};
const char* verdict_name(Verdict v);  // "FASTER", "SLOWER", ...
// Every verdict in the order tables count them.
inline constexpr Verdict kAllVerdicts[] = {
    Verdict::faster, Verdict::slower,    Verdict::same,    Verdict::noisy,   Verdict::inconclusive,
    Verdict::failed, Verdict::recovered, Verdict::untimed, Verdict::missing, Verdict::added};
// Verdicts of a pair both sides timed (a change and a p value exist).
inline bool is_timed(Verdict v) { return v <= Verdict::inconclusive; }
// Timed pairs whose change is at least min_effect but could not be told from noise or drift.
inline bool is_unjudged(Verdict v) { return v == Verdict::noisy || v == Verdict::inconclusive; }

// A point of one round is tested on the medians of this many blocks of consecutive steps a side
// (batch medians): neighbouring steps share machine state (autocorrelated), so testing every step
// as an independent sample overstates the evidence. 6: fully separated 6 vs 6 gives exact
// p = 2/924 = 0.002, under the default alpha 0.01 (5 vs 5: 0.008, too close to it).
inline constexpr int kRoundBlocks = 6;
inline constexpr int kMinBlockSteps = 2;  // a median of one step is that step: no smoothing
// A group's common move is its points' median change; with 2 points one strategy's real change
// would be half the "common" move, so at least 3.
inline constexpr int kMinGroupForShift = 3;
// A machine move (MachineMove) at least this large is said among the warnings.
inline constexpr double kMachineMoveSaid = 0.02;

// What judge_timing decides a timed pair's verdict from (exposed for table-driven tests).
struct TimingEvidence {
  double change = 0;     // new median / old median - 1
  double noise = 0;      // the larger side's robust_rel_noise
  double p_value = 1;    // U test on the medians below
  bool rounds = false;   // both sides have >= 2 rounds: tested on round medians
  bool testable = true;  // enough medians a side (one round: kRoundBlocks * kMinBlockSteps steps)
};
// SAME under min_effect; NOISY when untestable or not significant; rounds: FASTER / SLOWER; one
// round: NOISY when noisier than max_noise and not beyond 3x the noise, INCONCLUSIVE within
// drift_allowance, else FASTER / SLOWER.
Verdict timing_verdict(const TimingEvidence& e, const CompareOptions& options);

struct PointComparison {
  PointAxes axes;  // of NEW (of OLD for missing points)
  Verdict verdict = Verdict::same;
  std::optional<PointStatus> old_status, new_status;  // nullopt on the side without the point
  std::optional<Provenance> old_provenance, new_provenance;
  SampleSummary old_step, new_step;
  Accuracy old_accuracy, new_accuracy;  // steps_scored 0: no figures on that side
  double change = 0;                    // new median / old median - 1 (+: slower)
  // The point's group moved by group_shift as a whole (within --group-drift), so the point was
  // judged on judged_change = (1 + change) / (1 + group_shift) - 1. Both 0 when not applied.
  bool against_group = false;
  double group_shift = 0, judged_change = 0;
  // Both sides measured the machine control in the point's rounds (StepTiming::control_ns):
  // judged against its group's or the machine's move (MachineMove::judged_shift, in group_shift
  // and judged_change); control_shift is the control's own move (the machine's).
  bool against_control = false;
  double control_shift = 0;
  double change_rel_noise = 0;           // robust_rel_noise() of both added in quadrature
  bool too_noisy = false;                // either side's robust noise above max_noise
  bool single_pass = false;              // a side of one round: tested on its step-block medians
  int old_medians = 0, new_medians = 0;  // medians the U test compared (rounds or blocks)
  double p_value = 1;                    // U test on those medians
  bool exact_test = false;
  bool slowdown_regression = false;               // slower beyond the threshold
  std::vector<std::string> accuracy_regressions;  // one sentence each: "rel_l2 1.0e-03 -> 4.0e-02"
  // Deterministic figures that differ (Point::first_pass_traffic, attended tokens over the same
  // scored steps): the strategy does something else now, whatever the timing noise says.
  std::vector<std::string> behaviour_changes;
  std::vector<std::string> notes;  // informational: provenance changed, not scored, ...
  bool regression() const {
    return slowdown_regression || verdict == Verdict::failed || !accuracy_regressions.empty() ||
           !behaviour_changes.empty();
  }
};

// The geometric mean of new/old median step time over the points both sides timed: one figure
// for "did the PR make things faster". Informational: the exit status stays point by point.
// Verdict rule: SAME when |ratio - 1| < min_effect; else FASTER / SLOWER when |ln ratio| exceeds
// twice its noise (the points' robust noises in quadrature, / n: the noise of a mean of n
// independent log-ratios), INCONCLUSIVE instead when a point is single-pass and the ratio is
// within drift_allowance (that noise ignores drift between runs); else NOISY. n == 0: no figure
// (ratio NaN).
struct GeoMean {
  int n = 0;
  double ratio = 0;      // exp(mean(ln(new median / old median)))
  double rel_noise = 0;  // of the ratio, as above
  Verdict verdict = Verdict::same;
};

// A group's (PointAxes::group_key) common move between the runs; see CompareOptions::group_drift.
struct GroupShift {
  std::string group_key;
  PointAxes axes;        // of one of its NEW points (the strategy aside, the group's axes)
  int points = 0;        // timed with rounds on both sides
  double shift = 0;      // exp(median ln(new / old)) - 1
  bool applied = false;  // within group_drift: its points were judged against it
};

// A group's machine control moved between the runs (StepTiming::control_ns): the machine got
// slower or faster there. Said with its size; never a regression by itself.
struct MachineMove {
  std::string group_key;
  PointAxes axes;           // of one of its NEW points
  double shift = 0;         // NEW's control median / OLD's - 1
  int points = 0;           // points judged against it
  double group_shift = 0;   // the group's common move (GroupShift::shift; 0 below 3 points)
  double beyond = 0;        // (1 + group_shift) / (1 + shift) - 1
  bool with_group = false;  // |beyond| within control_allowance
  double judged_shift = 0;  // what the points were judged against: group_shift, else shift
  // The group's median round (over its points' round medians), each side: what a point is
  // judged against when the group moved with the machine.
  std::vector<double> old_rounds, new_rounds;
  std::vector<std::vector<double>> old_each, new_each;  // each point's, over its OLD median
};

struct CompareResult {
  CompareOptions options;
  AccuracyTarget target;  // the one judged (options.accuracy_target or NEW's)
  GeoMean geomean;
  std::vector<PointComparison> points;     // in axes_less order; missing and added included
  std::vector<GroupShift> group_shifts;    // groups of >= kMinGroupForShift points with rounds
  std::vector<MachineMove> machine_moves;  // groups whose points carry a control on both sides
  std::vector<std::string> warnings;       // context differences that make the comparison weaker
  // Whether the two runs give the same answer: headline per length, speedups against the
  // other's interval. Informational: the exit status is judged point by point.
  RunAgreement agreement;
  int regressions = 0;
  // The command that would decide the INCONCLUSIVE points: NEW's command line with
  // --repetitions 5 (empty when no point is inconclusive).
  std::string deciding_command;
  int count(Verdict v) const;
  int timed_pairs() const;  // points both sides timed
  int unjudged() const;     // of those, NOISY or INCONCLUSIVE
  bool has_regression() const { return regressions > 0; }
  // What a CI acts on (cli maps it to the exit status): a regression beats unjudged points,
  // which count only with options.fail_unjudged.
  enum class Outcome { ok, unjudged, regression };
  Outcome outcome() const;
};

// Throws hb::Error when a report holds two points with the same axes (ambiguous matching).
CompareResult compare_reports(const Report& old_report, const Report& new_report,
                              const CompareOptions& options);

}  // namespace hb::reports
