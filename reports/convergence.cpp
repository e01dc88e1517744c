#include "reports/convergence.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/paired_ratio.h"
#include "reports/format.h"

namespace hb::reports {

int noise_min_samples(const ReportContext& c) {
  const auto v = sweep_number(c, "min_samples");
  return v && *v > 2 && *v <= 1e9 ? static_cast<int>(*v) : 2;
}

bool noise_unknown(const Point& p, int min_samples) {
  return p.timed() && p.provenance != Provenance::modeled &&
         static_cast<int64_t>(p.step.samples_ns.size()) < std::max(2, min_samples);
}

std::string noise_text(const Point& p, int min_samples) {
  if (!noise_unknown(p, min_samples)) return format_percent(robust_rel_noise(p.step.summary));
  const size_t n = p.step.samples_ns.size();
  return "unknown (" + std::to_string(n) + " sample" + (n == 1 ? "" : "s") + ")";
}

bool missed_noise_target(const Point& p, std::optional<double> target, int min_samples) {
  if (noise_unknown(p, min_samples)) return true;
  if (!p.timed() || p.provenance == Provenance::modeled || p.step.stop_reason == StopReason::noise)
    return false;
  // Stopped by another rule (max-steps while the accuracy steps were still owed, say) with its
  // noise already within the target: as settled as asked.
  return !target || robust_rel_noise(p.step.summary) > *target;
}

std::optional<double> noise_target(const ReportContext& c) {
  for (const char* key : {"max_noise_fraction", "max_noise"})
    if (const auto v = sweep_number(c, key); v && *v > 0) return v;
  return std::nullopt;
}

std::string convergence_fix(StopReason stop_reason) {
  switch (stop_reason) {
    case StopReason::max_steps:
      return "raise --max-samples (replays the decode positions) or --decode-steps";
    case StopReason::timeout:
      return "raise --timeout";
    case StopReason::noise:
    case StopReason::none:
      break;
  }
  return "raise --decode-steps or --timeout";
}

std::optional<NoiseFloor> noise_floor(const Point& p, std::optional<double> target) {
  constexpr size_t kMinRounds = 6;
  const auto& sizes = p.step.pass_sizes;
  if (!p.timed() || sizes.size() < kMinRounds) return std::nullopt;
  const size_t half = sizes.size() / 2;
  size_t split = 0;
  for (size_t i = 0; i < half; ++i) split += static_cast<size_t>(sizes[i]);
  const auto& s = p.step.samples_ns;
  if (split == 0 || split >= s.size()) return std::nullopt;
  NoiseFloor f;
  f.first_half = robust_rel_noise(summarize({s.begin(), s.begin() + static_cast<long>(split)}));
  f.second_half = robust_rel_noise(summarize({s.begin() + static_cast<long>(split), s.end()}));
  const auto medians = p.step.pass_medians();
  f.median_rel_half_width = median_interval(medians).rel_half_width();
  f.rounds = static_cast<int>(sizes.size());
  const double lo = std::min(f.first_half, f.second_half),
               hi = std::max(f.first_half, f.second_half);
  f.at_floor = (!target || lo > *target) && hi > 0 && (hi - lo) <= 0.25 * hi;
  return f;
}

std::string unconverged_line(const Point& p, std::optional<double> target, int min_samples) {
  const double noise = robust_rel_noise(p.step.summary);
  std::string line = p.axes.strategy + ", seq_len " + format_tokens(p.axes.seq_len) + ", batch " +
                     std::to_string(p.axes.batch) + ": noise " + noise_text(p, min_samples) +
                     (target ? " (target " + format_percent(*target) + ")" : "") + ", stopped on " +
                     to_string(p.step.stop_reason) + "; ";
  if (noise_unknown(p, min_samples))
    return line + "fewer timed steps than the " + std::to_string(std::max(2, min_samples)) +
           " its noise needs (--min-samples): raise --timeout or --max-samples";
  const auto floor = noise_floor(p, target);
  if (!floor || !floor->at_floor) return line + convergence_fix(p.step.stop_reason);
  // The next whole 5% above the noise: what --max-noise would have to accept.
  const double accept = std::ceil(noise * 20 + 1e-9) / 20;
  return line + "this machine's own spread (" + format_percent(floor->first_half) +
         " in the first half of its rounds, " + format_percent(floor->second_half) +
         " in the second), which more samples will not lower; its median is known to ±" +
         format_percent(floor->median_rel_half_width) + " (95% interval of " +
         std::to_string(floor->rounds) +
         " round medians). Run on a quieter machine, or accept it with --max-noise " +
         format_percent(accept);
}

namespace {

// One line per point that stopped short of the target, in report order.
std::vector<std::string> unconverged_lines(const Report& r, std::optional<double> target) {
  const int min_samples = noise_min_samples(r.context);
  std::vector<std::string> lines;
  for (const auto& p : r.points)
    if (missed_noise_target(p, target, min_samples))
      lines.push_back(unconverged_line(p, target, min_samples));
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
