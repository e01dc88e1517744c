#pragma once
// The per-point table `hybridbench run` prints after a sweep (one row per point: median, noise,
// accuracy, what was attended), and the line naming, per length, the fastest strategies within
// the accuracy target. The JSON has everything; this is the terminal's view of it.
#include <string>
#include <vector>

#include "reports/report.h"
#include "reports/text_table.h"

namespace hb::reports {

// One row per point, in report order. Columns appear only when some point has them: budget
// (run --kv-budget, as given), kv fit, modeled (err), needle, vs trace o, ran on (fleet reports).
// Noise is robust_rel_noise, marked kUnconvergedMark when the point missed its noise target;
// a point that did not time shows dashes and its status.
TextTable point_table(const Report& r);

// Per setting (procurement_tables), "fastest within TARGET per length (...): 4k A; 32k tie A, B"
// lines; none when no length has a fastest strategy.
std::vector<std::string> fastest_within_target_lines(const Report& r);

}  // namespace hb::reports
