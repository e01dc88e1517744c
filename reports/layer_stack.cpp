#include "reports/layer_stack.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "core/paired_ratio.h"
#include "core/stats.h"
#include "reports/format.h"

namespace hb::reports {

void update_shortcut_error(Point& p) {
  LayerStackFigures& s = p.layer_stack;
  if (!s.present()) return;
  s.shortcut_error.reset();
  s.error_low = s.error_high = s.coverage = 0;
  s.rounds = 0;
  if (!p.timed() || s.status != PointStatus::ok || s.step.summary.count == 0) return;
  const double n = s.layers;
  // Stepped in the same rounds, the two carry the same round sizes: pair them, so what drifted
  // between rounds cancels (core/paired_ratio.h).
  if (!p.step.pass_sizes.empty() && p.step.pass_sizes == s.step.pass_sizes) {
    std::vector<double> shortcut = block_medians(p.step.samples_ns, p.step.pass_sizes);
    for (double& x : shortcut) x *= n;
    const RatioInterval r =
        paired_ratio(shortcut, block_medians(s.step.samples_ns, s.step.pass_sizes));
    if (r.pairs > 0) {
      s.shortcut_error = r.ratio - 1;
      s.error_low = r.low - 1;
      s.error_high = r.high - 1;
      s.coverage = r.coverage;
      s.rounds = r.pairs;
      return;
    }
  }
  if (p.step.summary.median > 0)
    s.shortcut_error = s.step.summary.median / (n * p.step.summary.median) - 1;
}

std::string layer_stack_time_cell(const Point& p) {
  const LayerStackFigures& s = p.layer_stack;
  if (!s.present()) return "-";
  if (s.status != PointStatus::ok) return to_string(s.status);
  if (s.step.summary.count == 0) return "-";
  return format_duration_ns(s.step.summary.median) + " ± " +
         format_percent(robust_rel_noise(s.step.summary));
}

std::string shortcut_error_cell(const Point& p) {
  const LayerStackFigures& s = p.layer_stack;
  if (!s.present() || !s.shortcut_error) return "-";
  std::string cell = format_percent(*s.shortcut_error, true);
  if (s.rounds > 0)
    cell +=
        " [" + format_percent(s.error_low, true) + ", " + format_percent(s.error_high, true) + "]";
  return cell;
}

TextTable layer_stack_table(const Report& r) {
  std::vector<const Point*> points;
  for (const Point& p : r.points)
    if (p.layer_stack.present()) points.push_back(&p);
  std::sort(points.begin(), points.end(),
            [](const Point* a, const Point* b) { return axes_less(a->axes, b->axes); });
  using A = TextTable::Align;
  TextTable t;
  for (const char* h : {"strategy", "model", "seq_len", "batch"}) t.add_column(h);
  t.add_column("one layer", A::right);
  t.add_column("N x one layer", A::right);
  t.add_column("stack of N", A::right);
  t.add_column("N", A::right);
  t.add_column("error [interval]", A::right);
  for (const Point* p : points) {
    const bool timed = p->timed();
    const int n = p->layer_stack.layers;
    t.add_row({p->axes.strategy, p->axes.model, format_tokens(p->axes.seq_len),
               std::to_string(p->axes.batch),
               timed ? format_duration_ns(p->step.summary.median) + " ± " +
                           format_percent(robust_rel_noise(p->step.summary))
                     : to_string(p->status),
               timed ? format_duration_ns(n * p->step.summary.median) : "-",
               layer_stack_time_cell(*p), std::to_string(n), shortcut_error_cell(*p)});
  }
  return t;
}

namespace {

std::string where(const Point& p) {
  return p.axes.strategy + " at " + format_tokens(p.axes.seq_len) +
         (p.axes.batch > 1 ? " b" + std::to_string(p.axes.batch) : "");
}

// "--layers 4" (or "--layers 4 and 8" for a merge of runs).
std::string layer_counts(const std::set<int>& counts) {
  std::string s;
  for (int n : counts) s += (s.empty() ? "" : " and ") + std::to_string(n);
  return "--layers " + s;
}

}  // namespace

std::string layer_stack_sentence(const Report& r) {
  std::set<int> counts;
  const Point *low = nullptr, *high = nullptr;
  std::vector<const Point*> beyond, not_run;
  for (const Point& p : r.points) {
    if (!p.layer_stack.present()) continue;
    counts.insert(p.layer_stack.layers);
    if (p.layer_stack.status != PointStatus::ok) not_run.push_back(&p);
    const auto& e = p.layer_stack.shortcut_error;
    if (!e) continue;
    if (!low || *e < *low->layer_stack.shortcut_error) low = &p;
    if (!high || *e > *high->layer_stack.shortcut_error) high = &p;
    if (std::abs(*e) > kShortcutErrorGoal) beyond.push_back(&p);
  }
  if (counts.empty()) return "";
  std::string s = "Whole-model shortcut (" + layer_counts(counts) +
                  "): a measured stack of distinct layers (each its own KV, weights and state, "
                  "each after the previous layer's output) against layers x the one-layer step "
                  "of the same strategy, side by side in the same rounds";
  if (low)
    s += ", differs by " + shortcut_error_cell(*low) + " (" + where(*low) + ") to " +
         shortcut_error_cell(*high) + " (" + where(*high) + ")";
  s += ". ";
  if (!low) {
    s += "No point has a shortcut error (the stack or the point did not time). ";
  } else if (beyond.empty()) {
    s += "Every point is within ±" + format_percent(kShortcutErrorGoal) + ". ";
  } else {
    s += "Beyond ±" + format_percent(kShortcutErrorGoal) + ":";
    for (size_t i = 0; i < beyond.size(); ++i)
      s += std::string(i ? "," : "") + " " + where(*beyond[i]) + " (" +
           format_percent(*beyond[i]->layer_stack.shortcut_error, true) + ")";
    s += " (bench/README.md, \"Layer stacks\", says why). ";
  }
  for (const Point* p : not_run)
    s += "The stack of " + where(*p) + " did not run (" + to_string(p->layer_stack.status) +
         (p->layer_stack.reason.empty() ? "" : ": " + p->layer_stack.reason) + "). ";
  return s +
         "Accuracy stays scored on one layer, layer 0 (the point's own workloads, --seed), "
         "as without --layers.";
}

}  // namespace hb::reports
