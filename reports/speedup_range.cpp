#include "reports/speedup_range.h"

#include <algorithm>
#include <map>

#include "reports/format.h"

namespace hb::reports {

namespace {

// "opt-2.7b 32k b8 h100-pcie5-cxl": what tells a report's settings apart at a glance.
std::string setting_label(const PointAxes& a) {
  std::string s = a.model + " " + format_tokens(a.seq_len) + " b" + std::to_string(a.batch);
  if (const auto it = a.extra.find("platform"); it != a.extra.end()) s += " " + it->second;
  return s;
}

void widen(std::optional<std::pair<double, double>>& r, double v) {
  if (!r)
    r = std::pair{v, v};
  else
    r = std::pair{std::min(r->first, v), std::max(r->second, v)};
}

// The speedups entry of a over b in a group, or the ratio of the medians.
double ratio_of(const Report& report, const Point& a, const Point& b) {
  const std::string g = a.axes.group_key();
  for (const Speedup& s : report.speedups)
    if (s.group_key == g && s.strategy_a == a.axes.strategy && s.strategy_b == b.axes.strategy)
      return s.ratio;
  return b.step.summary.median / a.step.summary.median;
}

void add_setting(SpeedupRange& row, const Report& report, const Point& sys, const Point& base) {
  if (!base.timed()) {
    row.not_run.push_back(to_string(base.status));
    return;
  }
  const double r = ratio_of(report, sys, base);
  if (row.compared == 0 || r < row.low) row.low = r, row.low_at = setting_label(sys.axes);
  if (row.compared == 0 || r > row.high) row.high = r, row.high_at = setting_label(sys.axes);
  ++row.compared;
  if (sys.attended_tokens) widen(row.system_attended, sys.attended_tokens->mean);
  if (base.attended_tokens) widen(row.baseline_attended, base.attended_tokens->mean);
  if (sys.accuracy.steps_scored > 0) widen(row.system_recall, sys.accuracy.mass_recall);
  if (base.accuracy.steps_scored > 0) widen(row.baseline_recall, base.accuracy.mass_recall);
}

// "oom: 3, error: 1" from the statuses counted.
std::string not_run_text(const std::vector<std::string>& statuses) {
  std::map<std::string, int> n;
  for (const auto& s : statuses) ++n[s];
  std::vector<std::string> parts;
  for (const auto& [s, c] : n) parts.push_back(s + ": " + std::to_string(c));
  return parts.empty() ? "-" : format_list(parts);
}

std::string range_text(const std::optional<std::pair<double, double>>& r, bool percent) {
  if (!r) return "-";
  auto f = [&](double v) { return percent ? format_percent(v) : format_token_count(v); };
  return r->first == r->second ? f(r->first) : f(r->first) + "-" + f(r->second);
}

}  // namespace

std::vector<SpeedupRange> speedup_ranges(const Report& report) {
  // group key -> strategy -> point
  std::map<std::string, std::map<std::string, const Point*>> groups;
  for (const Point& p : report.points) groups[p.axes.group_key()][p.axes.strategy] = &p;
  std::map<std::pair<std::string, std::string>, SpeedupRange> rows;
  for (const auto& [key, by_strategy] : groups)
    for (const auto& [sys_name, sys] : by_strategy) {
      if (sys->role != StrategyRole::system || !sys->timed()) continue;
      for (const auto& [base_name, base] : by_strategy) {
        if (base->role != StrategyRole::baseline) continue;
        SpeedupRange& row = rows[{sys_name, base_name}];
        row.system = sys_name;
        row.baseline = base_name;
        add_setting(row, report, *sys, *base);
      }
    }
  std::vector<SpeedupRange> out;
  for (auto& [k, row] : rows) out.push_back(std::move(row));
  return out;
}

TextTable speedup_range_table(const std::vector<SpeedupRange>& rows) {
  TextTable t;
  for (const char* c :
       {"system", "over", "settings", "speedup", "slowest at", "fastest at", "attended (system)",
        "attended (baseline)", "recall (system)", "recall (baseline)", "did not run"})
    t.add_column(c);
  for (const auto& r : rows) {
    const std::string speedup =
        r.compared == 0 ? "-"
                        : format_ratio(r.low) + (r.low == r.high ? "" : "-" + format_ratio(r.high));
    t.add_row({r.system, r.baseline, std::to_string(r.compared), speedup,
               r.compared ? r.low_at : "-", r.compared ? r.high_at : "-",
               range_text(r.system_attended, false), range_text(r.baseline_attended, false),
               range_text(r.system_recall, true), range_text(r.baseline_recall, true),
               not_run_text(r.not_run)});
  }
  return t;
}

std::string speedup_range_markdown(const Report& report) {
  const auto rows = speedup_ranges(report);
  const bool several =
      std::any_of(rows.begin(), rows.end(), [](const SpeedupRange& r) { return r.compared > 1; });
  if (!several) return "";
  std::string md = "## " + rows.front().system + "'s speedup over each baseline\n\n";
  md +=
      "Baseline time / system time (> 1: the system is faster), smallest and largest over every "
      "setting (model, length, batch, platform, KV budget) where both ran; each compared at the "
      "same setting, so at the same --kv-budget. Attended tokens (per step and query head) and "
      "mass recall say what each bought its speed with. For scale: HybridGen's paper (arXiv "
      "2604.18529) reports " +
      format_ratio(kPaperSpeedupLow) + "-" + format_ratio(kPaperSpeedupHigh) +
      " end to end over its six baselines on real GPUs with CXL memory; these are one decoder "
      "layer's step.\n\n";
  md += speedup_range_table(rows).markdown();
  // Settings the ranges leave out because the system itself did not run there.
  std::vector<std::string> missing;
  for (const Point& p : report.points)
    if (p.role == StrategyRole::system && !p.timed())
      missing.push_back(p.axes.strategy + " at " + setting_label(p.axes) + ": " + p.reason);
  if (!missing.empty()) {
    md += "\nSettings without the system (not in the ranges):\n\n";
    for (const auto& m : missing) md += "- " + m + "\n";
  }
  return md;
}

}  // namespace hb::reports
