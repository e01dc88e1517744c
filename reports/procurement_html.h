#pragma once
// The procurement view on the HTML page: per setting the best-per-metric lines, the chart of
// ITL vs $/Mtok (reports/procurement_chart.h) and the ranking table; a section of html_report
// when a report has several platforms, or a page of its own (`report --procurement --html`,
// which may read several reports together).
#include <string>
#include <vector>

#include "reports/procurement_view.h"

namespace hb::reports {

// A <section> with the view; `figure` numbers the figures of the page it goes into.
std::string procurement_section_html(const std::vector<ProcurementSetting>& settings,
                                     const ProcurementOptions& options, int& figure);

// The headline setting's chart as the page's first figure (reports/first_screen.h).
std::string procurement_answer_chart(const ProcurementSetting& s, int& figure);

// A whole self-contained page with the view alone.
std::string procurement_page_html(const std::vector<const Report*>& reports,
                                  const ProcurementOptions& options);

}  // namespace hb::reports
