#pragma once
// Points whose timing loop stopped before its noise rule was met (issue 18): the step cap
// (--decode-steps) or the time limit (--timeout) ended them with the noise still above
// --max-noise, or before --min-samples / --min-time. Their medians are less settled than the run
// asked for, so `run` warns on stderr and the markdown / HTML reports mark their cells.
#include <optional>
#include <string>
#include <vector>

#include "reports/report.h"

namespace hb::reports {

// Marker after the step time of a point that missed its noise target.
inline constexpr const char* kUnconvergedMark = " †";

// Timed steps a point needs before its noise means anything: the sweep's --min-samples (echo
// "min_samples"), and at least 2 (one step has no spread; its "0%" would read as settled).
int noise_min_samples(const ReportContext& c);
// A measured or emulated point that timed fewer steps than that: its noise is unknown, not 0%.
bool noise_unknown(const Point& p, int min_samples = 2);
// The point's robust noise ("7.2%"), or "unknown (1 sample)" under noise_unknown.
std::string noise_text(const Point& p, int min_samples = 2);

// A measured or emulated point with timed steps whose stop reason is not "noise", or whose noise
// is unknown (noise_unknown). Modeled points (their steps are computed, not sampled) and points
// that did not run are never flagged.
bool missed_noise_target(const Point& p, std::optional<double> target = std::nullopt,
                         int min_samples = 2);

// The noise target the sweep echo records (fraction, e.g. 0.05), when it does.
std::optional<double> noise_target(const ReportContext& c);

// What would let a point converge, by stop reason: "raise --decode-steps", "raise --timeout", ...
std::string convergence_fix(StopReason stop_reason);

// A point's step-time spread measured apart in the first and the second half of its rounds. When
// both halves miss the target and agree within a quarter, the spread is the machine's own (its
// memory bandwidth moving step to step, say), not a transient: more samples of the same machine
// will not lower it, so "raise --timeout" would be the wrong advice. The median is then still
// known to `median_rel_half_width`: the 95% order-statistic interval of the round medians.
struct NoiseFloor {
  double first_half = 0, second_half = 0;  // robust_rel_noise of each half's samples
  double median_rel_half_width = 0;
  int rounds = 0;
  bool at_floor = false;
};
// nullopt below 6 rounds (too few to split) or for a point that did not time steps.
std::optional<NoiseFloor> noise_floor(const Point& p, std::optional<double> target);

// "cpu-only, seq_len 4k, batch 1: noise 7.2% (target 5.0%), stopped on max-steps; raise
// --decode-steps"
std::string unconverged_line(const Point& p, std::optional<double> target, int min_samples = 2);

// The reports' note under the step-time tables: "† 2 of 6 points stopped before reaching the
// 5.0% noise target: <unconverged_line>; <...>." Empty when every point converged.
std::string unconverged_sentence(const Report& r);

// The stderr warning of `run`: a header line and one line per unconverged point; empty when every
// point converged.
std::string unconverged_warning(const Report& r);

}  // namespace hb::reports
