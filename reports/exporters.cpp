#include "reports/exporters.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "reports/format.h"
#include "reports/html.h"
#include "reports/labels.h"

namespace hb::reports {

using json = nlohmann::ordered_json;

namespace {

// A Bencher measure {value, lower_value, upper_value}.
json measure(double value, double lower, double upper) {
  return {{"value", value}, {"lower_value", lower}, {"upper_value", upper}};
}

// The whole model's ITL (ns) had the layer step taken `layer_ns`: layers x it + the work outside
// the layers (reports/whole_model.h).
double itl_at(const WholeModel& w, double layer_ns) {
  return w.layers * layer_ns + w.outside_layers_ns;
}

}  // namespace

std::string bmf_json_text(const Report& report) {
  json j = json::object();
  for (const auto& p : report.points) {
    if (!p.timed()) continue;
    const auto& s = p.step.summary;
    // Tokens per second: each decode step yields one token per sequence of the batch. The
    // slowest steps (p90) bound throughput from below. Where the point has the whole model's
    // figures, latency is its ITL and throughput its tokens/s, the units a model is judged in
    // (a layer's step alone made a 0.79 tokens/s model read 29 tokens/s); the layer's step is
    // layer-latency then. Without them (attention scope, the default on an emulated
    // accelerator; a model that is no preset) there is no throughput: a layer's or its
    // attention's batch / step is no model's tokens/s.
    const WholeModel* w = p.whole_model ? &*p.whole_model : nullptr;
    auto latency = [&](double ns) { return w ? itl_at(*w, ns) : ns; };
    auto tps = [&](double ns) { return p.axes.batch * 1e9 / latency(ns); };
    json measures = {{"latency", measure(latency(s.median), latency(s.p10), latency(s.p90))}};
    if (w && s.median > 0) measures["throughput"] = measure(tps(s.median), tps(s.p90), tps(s.p10));
    if (w) measures["layer-latency"] = measure(s.median, s.p10, s.p90);
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
                 {"extra", extra + (p.whole_model ? "; one layer" : "")}});
    // The whole model's inter-token latency where the point has it: the figure a model is judged
    // by (smaller is better, as this format wants; its tokens/s is batch / ITL).
    if (const auto& w = p.whole_model)
      j.push_back({{"name", name + " ITL"},
                   {"unit", "ns"},
                   {"value", w->itl_ns},
                   {"range", "± " + format_fixed(w->layers * s.stdev, 0)},
                   {"extra", std::to_string(w->layers) + " layers x the step + " +
                                 format_duration_ns(w->outside_layers_ns) +
                                 " outside the layers; " + format_fixed(w->tokens_per_s, 2) +
                                 " tokens/s at batch " + std::to_string(p.axes.batch)}});
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
