#pragma once
// Points whose strategy ran, but not as its method asks (Point::warnings, from the strategy's
// plan): H2O without prompt queries to seed its prefill scores, InfiniGen without them for its
// skew. Their accuracy is that of the stand-in the strategy names in strategy_params, so the
// markdown and HTML reports list them under the summary and `run` repeats them on stderr.
#include <string>
#include <vector>

#include "reports/report.h"

namespace hb::reports {

// "h2o, seq_len 4k, batch 1: <warning>", one per point and warning, in report order.
std::vector<std::string> point_warning_lines(const Report& r);

// The reports' paragraph: "Warnings: N point(s) ... : <line>; <line>." Empty when none warned.
std::string point_warnings_sentence(const Report& r);

// The stderr warning of `run`: a header line and one indented line per point warning; empty
// when none warned.
std::string point_warnings_text(const Report& r);

}  // namespace hb::reports
