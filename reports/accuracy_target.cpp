#include "reports/accuracy_target.h"

#include <cstdio>

#include "core/error.h"
#include "core/parse.h"

namespace hb::reports {

namespace {

const char* metric_name(AccuracyTarget::Metric m) {
  return m == AccuracyTarget::Metric::cosine ? "cosine" : "recall";
}

// Short text that reads back closely enough for a threshold ("0.9", not "0.90000000000000002").
std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

}  // namespace

std::string AccuracyTarget::describe() const {
  return std::string(metric_name(metric)) + " >= " + short_number(threshold);
}

std::string AccuracyTarget::text() const {
  return std::string(metric_name(metric)) + ":" + short_number(threshold);
}

bool AccuracyTarget::met_by(const Point& p) const {
  if (p.status != PointStatus::ok || p.accuracy.steps_scored <= 0) return false;
  const double v = metric == Metric::cosine ? p.accuracy.cosine : p.accuracy.mass_recall;
  return v >= threshold;  // false for NaN
}

AccuracyTarget parse_accuracy_target(const std::string& text) {
  const std::string fix =
      "give METRIC:THRESHOLD with METRIC recall or cosine and THRESHOLD in [0, 1], e.g. "
      "recall:0.9 or cosine:0.99 (a bare number means recall)";
  AccuracyTarget t;
  std::string number = text;
  if (const auto colon = text.find(':'); colon != std::string::npos) {
    const std::string metric = text.substr(0, colon);
    if (metric == "recall" || metric == "mass_recall")
      t.metric = AccuracyTarget::Metric::recall;
    else if (metric == "cosine")
      t.metric = AccuracyTarget::Metric::cosine;
    else
      throw Error("unknown accuracy metric '" + metric + "' in '" + text + "'", fix);
    number = text.substr(colon + 1);
  }
  try {
    t.threshold = parse::real(number, "accuracy threshold", parse::RealRange::between(0, 1));
  } catch (const Error& e) {
    throw Error("bad accuracy target '" + text + "': " + e.problem(), fix);
  }
  return t;
}

AccuracyTarget report_accuracy_target(const Report& r) {
  const auto it = r.context.sweep.find(kAccuracyTargetKey);
  if (it == r.context.sweep.end()) return {};
  return parse_accuracy_target(it->second);  // read_report refused a target that does not parse
}

}  // namespace hb::reports
