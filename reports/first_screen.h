#pragma once
// A report's first screen (issue 49 item 6): the answer in at most three lines, then the one
// chart that shows it; everything else follows (collapsed in the HTML, under --full in the
// markdown). Over several platforms the answer is the procurement view's at its headline
// setting (the largest batch at the longest context with a ranked platform): the most tokens/s
// and the lowest $/Mtok; over one platform, the summary's first three sentences.
#include <optional>
#include <string>
#include <vector>

#include "reports/procurement_view.h"
#include "reports/report.h"
#include "reports/tables.h"
#include "reports/text_table.h"

namespace hb::reports {

struct FirstScreen {
  std::vector<std::string> answer;             // at most three lines
  std::optional<ProcurementSetting> headline;  // the setting answered (several platforms)
};

FirstScreen first_screen(const Report& report, const TableOptions& options);
// The procurement answer over settings already built (`report --procurement` of several
// reports); empty `answer` when there is no setting.
FirstScreen procurement_first_screen(const std::vector<ProcurementSetting>& settings);

// The setting a procurement answer is about: the last (largest batch, longest context) where
// some platform is ranked on tokens/s; null when there is none (no whole-model figures: the
// report then opens with its summary, as over one platform).
const ProcurementSetting* headline_setting(const std::vector<ProcurementSetting>& settings);

// The answer's chart as text (a code block): per platform its best ranked tokens/s at the
// setting, a bar each, longest first, and one line naming the platforms with none.
std::string tokens_bars_markdown(const ProcurementSetting& s);

// A bar of `width` characters at most for `value` of `max` (at least one character).
std::string text_bar(double value, double max, int width);

}  // namespace hb::reports

namespace hb::reports {

// The report's assumptions (ReportContext::assumptions): each platform's price, power and
// bandwidth. `full`: every figure with its source and date, a row each; otherwise one row per
// platform with the values alone. "" when the report records none.
TextTable assumptions_table(const ReportContext& c, bool full);
std::string assumptions_markdown(const ReportContext& c, bool full);

}  // namespace hb::reports
