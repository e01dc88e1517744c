#pragma once
// The accuracy a point must reach to count in "fastest within target" (run --accuracy-target).
// Default: attention-mass recall >= 0.9. Mass recall (share of the exact softmax mass on the
// tokens a strategy attended) is what sparse-attention papers report and does not depend on the
// value vectors; rel_l2 does, and explodes under diffuse attention with zero-mean values (any
// renormalised subset below ~0.5 recall scores > 1), so it is no target (reports/README.md).
#include <string>

#include "reports/report.h"

namespace hb::reports {

struct AccuracyTarget {
  enum class Metric { recall, cosine };
  Metric metric = Metric::recall;
  double threshold = 0.9;

  // "recall >= 0.9"
  std::string describe() const;
  // Canonical text, "recall:0.9", that parse() reads back (the report's sweep echo).
  std::string text() const;
  // The point ran, has accuracy figures (steps_scored > 0) and meets the threshold.
  bool met_by(const Point& p) const;
};

// "recall:0.9", "cosine:0.99", or a bare number meaning recall ("0.9"); thresholds in [0, 1].
// Throws hb::Error (problem + fix) on anything else.
AccuracyTarget parse_accuracy_target(const std::string& text);

// The sweep echo key (ReportContext::sweep) that carries the target's text().
inline constexpr const char* kAccuracyTargetKey = "accuracy_target";

// The target a report was run with (its sweep echo), or the default when the report predates
// the option. An unreadable value throws hb::Error (read_report refuses such a file).
AccuracyTarget report_accuracy_target(const Report& r);

}  // namespace hb::reports
