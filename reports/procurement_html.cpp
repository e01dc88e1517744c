#include "reports/procurement_html.h"

#include "reports/html.h"
#include "reports/procurement_chart.h"
#include "reports/procurement_markdown.h"
#include "reports/text_table.h"

namespace hb::reports {

namespace {

std::string list_html(const std::vector<std::string>& lines, const std::string& cls = "") {
  std::string h = "<ul" + (cls.empty() ? "" : " class=\"" + cls + "\"") + ">\n";
  for (const auto& l : lines) h += "<li>" + html_escape(l) + "</li>\n";
  return h + "</ul>\n";
}

}  // namespace

std::string procurement_section_html(const std::vector<ProcurementSetting>& settings,
                                     const ProcurementOptions& options, int& figure) {
  std::string h =
      "<section id=\"procurement\">\n<h2>Procurement: platforms ranked per strategy</h2>\n<p>"
      "Whole-model decode (ITL = layers &times; the layer step + the work outside the layers), "
      "cost and power from each platform's economics, the longest context and largest batch "
      "from each strategy's own plan on the platform's memory. Ranked: strategies that ran, "
      "meet the accuracy target and fit the memory.</p>\n";
  if (settings.empty()) return h + "<p class=\"failed\">No point to rank.</p>\n</section>\n";
  int id = 0;
  for (const auto& s : settings) {
    h += "<h3>" + html_escape(s.title) + "</h3>\n" + list_html(best_lines(s));
    std::string why_not;
    const std::string svg = procurement_chart(s, "hbproc" + std::to_string(++id), why_not);
    if (svg.empty())
      h += "<p class=\"failed\">No ITL vs $/Mtok chart: " + html_escape(why_not) + "</p>\n";
    else
      h += "<figure>\n" + svg + "<figcaption>Figure " + std::to_string(++figure) +
           ": inter-token latency vs $ per million tokens, a colour per platform, a shape per "
           "strategy; hollow markers miss " +
           html_escape(s.target) +
           "; the line is the Pareto front of the ranked points. Points that do not fit their "
           "memory are left out.</figcaption>\n</figure>\n";
    h += procurement_table(s, options).html();
    if (const auto nr = not_ranked_lines(s); !nr.empty())
      h += "<p>Not ranked:</p>\n" + list_html(nr, "failed");
    if (const auto bl = blank_lines(s); !bl.empty()) h += "<p>Blank columns:</p>\n" + list_html(bl);
  }
  return h + "</section>\n";
}

std::string procurement_page_html(const std::vector<const Report*>& reports,
                                  const ProcurementOptions& options) {
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>hybridbench "
      "procurement</title>\n<style>\n" +
      std::string(html_style()) + "\n</style>\n</head>\n<body>\n<h1>hybridbench procurement</h1>\n";
  h += "<p>From " + std::to_string(reports.size()) + " report(s):";
  for (const Report* r : reports)
    h += " " + html_escape(r->context.host + " " + r->context.date_utc) + ";";
  h += "</p>\n";
  int figure = 0;
  h += procurement_section_html(procurement_settings(reports, options), options, figure);
  return h + "</body>\n</html>\n";
}

}  // namespace hb::reports
