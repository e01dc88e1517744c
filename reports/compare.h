#pragma once
// compare(OLD, NEW): the CI regression check. Points are matched by their axes; each matched
// pair of timed points is judged with a Mann-Whitney U test plus a minimum effect size, so
// neither a tiny-but-significant shift nor a large-but-noisy one fails a build. Runs made with
// --repetitions are judged on their pass medians; a single pass on either side cannot tell a
// change from drift between runs, so its differences are INCONCLUSIVE. Accuracy is
// compared too: a strategy that got less accurate is a regression even when it got faster.
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "reports/accuracy_target.h"
#include "reports/report.h"

namespace hb::reports {

struct CompareOptions {
  double threshold = 0.05;   // a significant slowdown beyond this relative change is a regression
  double alpha = 0.01;       // significance level of the U test
  double min_effect = 0.02;  // relative median changes below this are SAME even when significant
  // Robust relative noise (robust_rel_noise) above which a run is not trusted: an unproven change
  // is NOISY, not SAME, and a significant one counts only beyond 3x the noise.
  double max_noise = 0.10;
  // A single pass on either side: steps inside one run share its machine state, and two runs of
  // one binary minutes apart differed by up to 21% on a quiet 2-core build VM (noise inside each
  // run 8-9%) and by 2.6x when other jobs came and went. A significant change within this
  // fraction is INCONCLUSIVE (never a regression); beyond it, it is judged as usual. Default
  // infinite: every single-pass change is INCONCLUSIVE. 0: judge every one.
  double drift_allowance = std::numeric_limits<double>::infinity();
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
  same,    // change under min_effect (significant or not, and not too noisy to tell)
  noisy,   // not significant but the change or the noise is too large to call it the same
  // significant and large, but a single pass on a side and within drift_allowance: drift between
  // runs could explain it; re-run both with --repetitions to decide
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

struct PointComparison {
  PointAxes axes;  // of NEW (of OLD for missing points)
  Verdict verdict = Verdict::same;
  std::optional<PointStatus> old_status, new_status;  // nullopt on the side without the point
  std::optional<Provenance> old_provenance, new_provenance;
  SampleSummary old_step, new_step;
  Accuracy old_accuracy, new_accuracy;  // steps_scored 0: no figures on that side
  double change = 0;                    // new median / old median - 1 (+: slower)
  double change_rel_noise = 0;          // robust_rel_noise() of both added in quadrature
  bool too_noisy = false;               // either side's robust noise above max_noise
  bool single_pass = false;  // a side without --repetitions passes: judged on its raw samples
  double p_value = 1;        // U test on the raw step samples
  bool exact_test = false;
  bool slowdown_regression = false;               // slower beyond the threshold
  std::vector<std::string> accuracy_regressions;  // one sentence each: "rel_l2 1.0e-03 -> 4.0e-02"
  std::vector<std::string> notes;  // informational: provenance changed, not scored, ...
  bool regression() const {
    return slowdown_regression || verdict == Verdict::failed || !accuracy_regressions.empty();
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

struct CompareResult {
  CompareOptions options;
  AccuracyTarget target;  // the one judged (options.accuracy_target or NEW's)
  GeoMean geomean;
  std::vector<PointComparison> points;  // in axes_less order; missing and added included
  std::vector<std::string> warnings;    // context differences that make the comparison weaker
  int regressions = 0;
  // The command that would decide the INCONCLUSIVE points: NEW's command line with
  // --repetitions 5 (empty when no point is inconclusive).
  std::string deciding_command;
  int count(Verdict v) const;
  bool has_regression() const { return regressions > 0; }
};

// Throws hb::Error when a report holds two points with the same axes (ambiguous matching).
CompareResult compare_reports(const Report& old_report, const Report& new_report,
                              const CompareOptions& options);

}  // namespace hb::reports
