#include "reports/convergence.h"

#include <cstdlib>
#include <vector>

#include "reports/format.h"

namespace hb::reports {

bool missed_noise_target(const Point& p, std::optional<double> target) {
  if (!p.timed() || p.provenance == Provenance::modeled || p.step.stop_reason == StopReason::noise)
    return false;
  // Stopped by another rule (max-steps while the accuracy steps were still owed, say) with its
  // noise already within the target: as settled as asked.
  return !target || robust_rel_noise(p.step.summary) > *target;
}

std::optional<double> noise_target(const ReportContext& c) {
  for (const char* key : {"max_noise_fraction", "max_noise"}) {
    const auto it = c.sweep.find(key);
    if (it == c.sweep.end()) continue;
    char* end = nullptr;
    const double v = std::strtod(it->second.c_str(), &end);
    if (end != it->second.c_str() && v > 0) return v;
  }
  return std::nullopt;
}

std::string convergence_fix(StopReason stop_reason) {
  switch (stop_reason) {
    case StopReason::max_steps:
      return "raise --max-samples (replays the decode positions) or --decode-steps";
    case StopReason::timeout:
      return "raise --timeout";
    case StopReason::min_samples:
      return "raise --min-samples or --decode-steps";
    case StopReason::min_time:
      return "raise --min-time or --decode-steps";
    case StopReason::noise:
    case StopReason::none:
      break;
  }
  return "raise --decode-steps or --timeout";
}

std::string unconverged_line(const Point& p, std::optional<double> target) {
  return p.axes.strategy + ", seq_len " + format_tokens(p.axes.seq_len) + ", batch " +
         std::to_string(p.axes.batch) + ": noise " +
         format_percent(robust_rel_noise(p.step.summary)) +
         (target ? " (target " + format_percent(*target) + ")" : "") + ", stopped on " +
         to_string(p.step.stop_reason) + "; " + convergence_fix(p.step.stop_reason);
}

namespace {

// One line per point that stopped short of the target, in report order.
std::vector<std::string> unconverged_lines(const Report& r, std::optional<double> target) {
  std::vector<std::string> lines;
  for (const auto& p : r.points)
    if (missed_noise_target(p, target)) lines.push_back(unconverged_line(p, target));
  return lines;
}

}  // namespace

std::string unconverged_sentence(const Report& r) {
  const auto target = noise_target(r.context);
  const std::vector<std::string> lines = unconverged_lines(r, target);
  if (lines.empty()) return "";
  std::string list;
  for (const auto& l : lines) list += (list.empty() ? "" : "; ") + l;
  return std::string(kUnconvergedMark + 1) + " " + std::to_string(lines.size()) + " of " +
         std::to_string(r.points.size()) + " point(s) stopped before reaching the " +
         (target ? format_percent(*target) + " " : std::string()) +
         "noise target, so their medians are less settled than asked: " + list + ".";
}

std::string unconverged_warning(const Report& r) {
  const auto target = noise_target(r.context);
  const std::vector<std::string> lines = unconverged_lines(r, target);
  if (lines.empty()) return "";
  std::string text = "warning: " + std::to_string(lines.size()) + " of " +
                     std::to_string(r.points.size()) +
                     " point(s) stopped before reaching the noise target" +
                     (target ? " of " + format_percent(*target) : std::string()) +
                     " (their medians are less settled than asked):\n";
  for (const auto& l : lines) text += "  " + l + "\n";
  return text;
}

}  // namespace hb::reports
