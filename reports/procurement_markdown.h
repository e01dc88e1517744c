#pragma once
// The procurement view as text (`hybridbench report FILE --procurement`, and a section of the
// markdown report when it has several platforms): per setting one line per metric naming the
// best platform and strategy and how far ahead it is, then a table ranking the platforms for
// each strategy within the accuracy target, then what was not ranked and why, and what every
// blank column lacks.
#include <string>
#include <vector>

#include "reports/procurement_view.h"
#include "reports/text_table.h"

namespace hb::reports {

// "Most tokens/s: h200 with full-gpu, 312 tokens/s, 1.21x ahead of gh200 with hybridgen (258
// tokens/s; ± 3.0%)." One per ProcurementMetric, in its order.
std::vector<std::string> best_lines(const ProcurementSetting& s);

// A figure as its cell reads ("312", "25.6 ms", "$0.421", "1.81M", "≥ 1G"; "-" when blank).
std::string figure_text(ProcurementMetric m, const Figure& f);

// Per strategy (best first) its platforms ranked by tokens/s, every ranked figure, what binds
// the longest context, the ITL and cost there, and the largest batch with its ITL and cost.
TextTable procurement_table(const ProcurementSetting& s, const ProcurementOptions& options);
// "h100, every strategy: does not fit ..." / "a100 with quest: misses recall >= 0.9 (0.85)".
std::vector<std::string> not_ranked_lines(const ProcurementSetting& s);
// "$/Mtok blank: no price ... (a100, h100)": each reason a ranked column is blank, and where.
std::vector<std::string> blank_lines(const ProcurementSetting& s);

// The whole view: a heading, what the figures are, then each setting.
std::string procurement_markdown(const std::vector<ProcurementSetting>& settings,
                                 const ProcurementOptions& options = {});

}  // namespace hb::reports
