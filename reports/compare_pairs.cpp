#include "reports/compare_pairs.h"

#include <cmath>
#include <map>

#include "core/stats.h"
#include "reports/format.h"

namespace hb::reports {

namespace {

// ln(NEW / OLD) of one pass pair's point, with its control's where both passes carry one.
struct PairRatio {
  const Point* point = nullptr;
  double log_ratio = 0;
  bool has_control = false;
  double control_log_ratio = 0;
};

// One pair's ratios of the points both passes timed, by group, then by point key.
using PairRatios = std::map<std::string, std::map<std::string, PairRatio>>;

PairRatios pair_ratios(const Report& old_pass, const Report& new_pass) {
  std::map<std::string, const Point*> olds;
  for (const auto& p : old_pass.points) olds[p.axes.key()] = &p;
  PairRatios out;
  for (const auto& n : new_pass.points) {
    auto it = olds.find(n.axes.key());
    if (it == olds.end()) continue;
    const Point& o = *it->second;
    if (!o.timed() || !n.timed() || o.step.summary.median <= 0 || n.step.summary.median <= 0)
      continue;
    PairRatio r{&n, std::log(n.step.summary.median / o.step.summary.median)};
    if (!o.step.control_ns.empty() && !n.step.control_ns.empty()) {
      r.has_control = true;
      r.control_log_ratio =
          std::log(quantile(n.step.control_ns, 0.5) / quantile(o.step.control_ns, 0.5));
    }
    out[n.axes.group_key()][n.axes.key()] = r;
  }
  return out;
}

// A point's move in one pair over its reference there; the reference's name.
double relative_log_move(const std::map<std::string, PairRatio>& group, const std::string& key,
                         std::string& reference) {
  const PairRatio& self = group.at(key);
  if (static_cast<int>(group.size()) >= kMinGroupForShift) {
    double sum = 0;
    for (const auto& [k, r] : group)
      if (k != key) sum += r.log_ratio;
    reference = "group";
    return self.log_ratio - sum / static_cast<double>(group.size() - 1);
  }
  reference = self.has_control ? "control" : "none";
  return self.log_ratio - (self.has_control ? self.control_log_ratio : 0.0);
}

Verdict paired_verdict(const PairedPoint& p, int pairs, const CompareOptions& o) {
  const double change = p.median_move - 1;
  if (std::fabs(change) < o.min_effect) return Verdict::same;
  if (p.agreeing < pairs_agreeing_needed(pairs)) return Verdict::noisy;
  if (std::fabs(change) <= o.relative_allowance) return Verdict::inconclusive;
  return change > 0 ? Verdict::slower : Verdict::faster;
}

void judge_point(PairedPoint& p, int pairs, const CompareOptions& o) {
  std::vector<double> logs;
  for (double m : p.moves) logs.push_back(std::log(m));
  const double median = quantile(logs, 0.5);
  p.median_move = std::exp(median);
  for (double l : logs) p.agreeing += (median > 0 && l > 0) || (median < 0 && l < 0);
  p.verdict = paired_verdict(p, pairs, o);
}

// A group's move in one pair: the geometric mean of its points' ratios; its control's.
void add_group_move(const std::string& group_key, const std::map<std::string, PairRatio>& group,
                    std::map<std::string, PairedGroupMove>& moves) {
  PairedGroupMove& g = moves[group_key];
  g.group_key = group_key;
  g.axes = group.begin()->second.point->axes;
  double sum = 0;
  for (const auto& [k, r] : group) sum += r.log_ratio;
  g.group.push_back(std::exp(sum / static_cast<double>(group.size())));
  const PairRatio& first = group.begin()->second;
  if (first.has_control) g.control.push_back(std::exp(first.control_log_ratio));
}

std::string percents(const std::vector<double>& ratios) {
  std::string s;
  for (double r : ratios) s += (s.empty() ? "" : ", ") + format_percent(r - 1, true);
  return s;
}

std::string pairs_note(const PairedPoint& p, int pairs) {
  const char* ref = p.reference == "group"     ? "its group's move"
                    : p.reference == "control" ? "the machine control's move"
                                               : "nothing (fewer than 3 strategies, no control)";
  return "judged by " + std::to_string(pairs) + " pass pairs, each over " + ref +
         " in that pair: " + format_percent(p.median_move - 1, true) + " median, " +
         std::to_string(p.agreeing) + " of " + std::to_string(pairs) + " pairs that way (" +
         percents(p.moves) + ")";
}

}  // namespace

int pairs_agreeing_needed(int pairs) { return (2 * pairs + 2) / 3; }

PairedJudgement judge_pass_pairs(const std::vector<std::pair<Report, Report>>& pairs,
                                 const CompareOptions& options) {
  PairedJudgement out;
  out.pairs = static_cast<int>(pairs.size());
  std::map<std::string, PairedPoint> points;
  std::map<std::string, int> seen;  // pairs each point was timed in
  std::map<std::string, PairedGroupMove> groups;
  for (const auto& [old_pass, new_pass] : pairs)
    for (const auto& [group_key, group] : pair_ratios(old_pass, new_pass)) {
      add_group_move(group_key, group, groups);
      for (const auto& [key, r] : group) {
        PairedPoint& p = points[key];
        p.key = key;
        std::string reference;
        p.moves.push_back(std::exp(relative_log_move(group, key, reference)));
        // The weakest reference any pair used is the one said.
        if (p.reference.empty() || reference == "none" ||
            (reference == "control" && p.reference == "group"))
          p.reference = reference;
        ++seen[key];
      }
    }
  for (auto& [key, p] : points) {
    if (seen[key] != out.pairs) continue;  // not timed in every pair: the pooled verdict stands
    judge_point(p, out.pairs, options);
    out.points.push_back(std::move(p));
  }
  for (auto& [key, g] : groups)
    if (static_cast<int>(g.group.size()) == out.pairs) out.groups.push_back(std::move(g));
  return out;
}

void apply_pass_pairs(const PairedJudgement& pairs, CompareResult& result) {
  const CompareOptions& o = result.options;
  std::map<std::string, const PairedPoint*> by_key;
  for (const auto& p : pairs.points) by_key[p.key] = &p;
  for (auto& c : result.points) {
    auto it = by_key.find(c.axes.key());
    if (it == by_key.end() || !is_timed(c.verdict)) continue;
    const PairedPoint& p = *it->second;
    c.verdict = p.verdict;
    c.judged_change = p.median_move - 1;
    c.slowdown_regression = c.verdict == Verdict::slower && c.judged_change > o.threshold;
    c.notes.clear();
    c.notes.push_back(pairs_note(p, pairs.pairs));
  }
  result.warnings.insert(result.warnings.begin(),
                         "compare --ab: timing verdicts are by pass pairs (each NEW pass over the "
                         "OLD pass beside it); the sentences on pooled rounds describe old.json "
                         "and new.json, not the verdicts");
  result.regressions = 0;
  for (const auto& c : result.points) result.regressions += c.regression();
  for (const auto& g : pairs.groups)
    result.warnings.push_back(
        g.axes.model + " " + format_tokens(g.axes.seq_len) + " batch " +
        std::to_string(g.axes.batch) + " moved " + percents(g.group) + " as a whole in the " +
        std::to_string(pairs.pairs) + " pass pairs" +
        (g.control.empty() ? "" : " (machine control " + percents(g.control) + ")") +
        ": the machine's move, judged out pair by pair, which fails nothing");
}

}  // namespace hb::reports
