#pragma once
// The system's speedup range over each baseline across a report's settings (issue 46, item 7):
// HybridGen's paper states one range over its six baselines (1.41-3.2x, arXiv 2604.18529), so
// a sweep that poses its regime (model/presets/hybridgen-paper.json) says the same figure per
// baseline: the smallest and largest speedup over every setting (model, length, batch,
// platform, ...) where both ran, with the tokens each attended (the KV budget they were given)
// and the mass recall each reached there, so a speedup bought with accuracy shows beside it.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "reports/report.h"
#include "reports/text_table.h"

namespace hb::reports {

// The paper's stated range, printed beside the measured or modeled one.
inline constexpr double kPaperSpeedupLow = 1.41, kPaperSpeedupHigh = 3.2;

struct SpeedupRange {
  std::string system, baseline;
  int compared = 0;  // settings where both were timed
  // Settings where the system was timed and the baseline did not run, by status ("oom: 3").
  std::vector<std::string> not_run;
  double low = 0, high = 0;     // baseline time / system time (> 1: the system is faster)
  std::string low_at, high_at;  // the settings of the two ends: "opt-2.7b 32k b8 h100-pcie5-cxl"
  // Over the compared settings: tokens attended per step and query head (AttendedTokens::mean)
  // and mass recall, [smallest, largest]; absent when no compared point was scored.
  std::optional<std::pair<double, double>> system_attended, baseline_attended;
  std::optional<std::pair<double, double>> system_recall, baseline_recall;
};

// One row per (system, baseline) pair, systems and baselines in name order. A pair is listed
// when the system was timed in at least one setting where the baseline has a point. The ratio
// of a compared setting is the report's speedups entry (paired rounds) when it has one, the
// ratio of the two medians otherwise.
std::vector<SpeedupRange> speedup_ranges(const Report& report);

// The rows as a table: baseline, settings, speedup range, where each end is, tokens attended and
// recall of both, and what did not run.
TextTable speedup_range_table(const std::vector<SpeedupRange>& rows);

// The markdown section ("## <system>'s speedup over each baseline ...", its reading note, the
// table and the settings where the system did not run, with why); "" unless some system was
// compared with a baseline in more than one setting.
std::string speedup_range_markdown(const Report& report);

}  // namespace hb::reports
