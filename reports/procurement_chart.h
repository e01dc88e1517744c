#pragma once
// The procurement chart (issue 34 item 4): inter-token latency against $/Mtok for one setting,
// a colour per platform, a marker shape per strategy, hollow where the accuracy target is
// missed, and the Pareto front of the ranked candidates drawn through them (no other ranked
// candidate is both cheaper and faster). Inline SVG (reports/svg_plot.h) for the HTML page.
#include <string>
#include <vector>

#include "reports/procurement_view.h"

namespace hb::reports {

// Candidates on the ITL-$/Mtok Pareto front among the eligible ones with both figures,
// cheapest first (ITL falls along it). Ties on both figures keep the first. The pointers are
// into `candidates`, which must outlive them.
std::vector<const Candidate*> itl_cost_front(const std::vector<Candidate>& candidates);

// The chart, or "" with `why_not` set when no candidate that fits has both figures (the blank
// reason of the first one, e.g. no price in the profiles).
std::string procurement_chart(const ProcurementSetting& s, const std::string& id,
                              std::string& why_not);

}  // namespace hb::reports
