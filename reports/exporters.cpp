#include "reports/exporters.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "reports/format.h"
#include "reports/html.h"
#include "reports/labels.h"

namespace hb::reports {

using json = nlohmann::ordered_json;

std::string bmf_json_text(const Report& report) {
  json j = json::object();
  for (const auto& p : report.points) {
    if (!p.timed()) continue;
    const auto& s = p.step.summary;
    json measures = {
        {"latency", {{"value", s.median}, {"lower_value", s.p10}, {"upper_value", s.p90}}}};
    // Tokens per second: each decode step yields one token per sequence of the batch. The
    // slowest steps (p90) bound throughput from below.
    auto tps = [&](double ns) { return ns > 0 ? p.axes.batch * 1e9 / ns : 0.0; };
    if (s.median > 0)
      measures["throughput"] = {
          {"value", tps(s.median)}, {"lower_value", tps(s.p90)}, {"upper_value", tps(s.p10)}};
    if (p.accuracy.steps_scored > 0 && std::isfinite(p.accuracy.rel_l2))
      measures["rel-l2"] = {{"value", p.accuracy.rel_l2}};
    j[benchmark_name(p.axes)] = std::move(measures);
  }
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string github_benchmark_json_text(const Report& report) {
  json j = json::array();
  for (const auto& p : report.points) {
    if (!p.timed()) continue;
    const auto& s = p.step.summary;
    const std::string name = benchmark_name(p.axes);
    const std::string extra =
        to_string(p.provenance) + std::string("; ") + std::to_string(s.count) + " samples, noise " +
        format_percent(robust_rel_noise(s)) + ", stop " + to_string(p.step.stop_reason);
    j.push_back({{"name", name + " step time"},
                 {"unit", "ns"},
                 {"value", s.median},
                 {"range", "± " + format_fixed(s.stdev, 0)},
                 {"extra", extra}});
    if (p.accuracy.steps_scored > 0 && std::isfinite(p.accuracy.rel_l2))
      j.push_back({{"name", name + " rel_l2"},
                   {"unit", "rel_l2"},
                   {"value", p.accuracy.rel_l2},
                   {"extra", to_string(p.provenance)}});
  }
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

const std::vector<std::string>& report_formats() {
  static const std::vector<std::string> formats(kReportFormats.names.begin(),
                                                kReportFormats.names.end());
  return formats;
}

std::string render_report(const Report& report, ReportFormat format, const TableOptions& options) {
  switch (format) {
    case ReportFormat::md:
      return markdown_report(report, options);
    case ReportFormat::csv:
      return csv_report(report, options);
    case ReportFormat::html:
      return html_report(report, options);
    case ReportFormat::bmf:
      return bmf_json_text(report);
    case ReportFormat::github_benchmark:
      return github_benchmark_json_text(report);
  }
  throw Error("internal: report format out of range", {}, kExitFailure);
}

}  // namespace hb::reports
