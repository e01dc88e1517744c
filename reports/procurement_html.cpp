#include "reports/procurement_html.h"

#include "reports/first_screen.h"
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

// The setting's ITL vs $/Mtok chart as a numbered figure, or why there is none.
std::string setting_chart_html(const ProcurementSetting& s, const std::string& id, int& figure) {
  std::string why_not;
  const std::string svg = procurement_chart(s, id, why_not);
  if (svg.empty())
    return "<p class=\"failed\">No ITL vs $/Mtok chart: " + html_escape(why_not) + "</p>\n";
  return "<figure>\n" + svg + "<figcaption>Figure " + std::to_string(++figure) +
         ": inter-token latency vs $ per million tokens, a colour per platform, a shape per "
         "strategy; hollow markers miss " +
         html_escape(s.target) +
         "; the line is the Pareto front of the ranked points. Points that do not fit their "
         "memory are left out.</figcaption>\n</figure>\n";
}

}  // namespace

std::string procurement_answer_chart(const ProcurementSetting& s, int& figure) {
  return setting_chart_html(s, "hbanswer", figure);
}

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
    h += setting_chart_html(s, "hbproc" + std::to_string(++id), figure);
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
  std::string from = "<p>From " + std::to_string(reports.size()) + " report(s):";
  for (const Report* r : reports)
    from += " " + html_escape(r->context.host + " " + r->context.date_utc) + ";";
  from += "</p>\n";
  int figure = 0;
  const auto settings = procurement_settings(reports, options);
  // The answer and its chart on the first screen (issue 49), the view collapsed below.
  if (const FirstScreen first = procurement_first_screen(settings); first.headline) {
    h += "<ul class=\"summary\" id=\"summary\">\n";
    for (const auto& l : first.answer) h += "<li>" + html_escape(l) + "</li>\n";
    h += "</ul>\n" + procurement_answer_chart(*first.headline, figure) +
         "<details><summary>Every setting, its chart and every platform ranked</summary>\n" + from +
         procurement_section_html(settings, options, figure) + "</details>\n";
    return h + "</body>\n</html>\n";
  }
  h += from + procurement_section_html(settings, options, figure);
  return h + "</body>\n</html>\n";
}

}  // namespace hb::reports
