#pragma once
// One self-contained HTML page for a report: context, and per setting the procurement tables
// plus three inline-SVG charts (step time vs sequence length, speedup vs the reference,
// accuracy vs speed). No scripts, fonts, styles or images from anywhere else: it opens offline.
#include <string>

#include "reports/report.h"
#include "reports/tables.h"

namespace hb::reports {

std::string html_report(const Report& report, const TableOptions& options = {});

// The page's style sheet (one for every page the reports write).
const char* html_style();

}  // namespace hb::reports
