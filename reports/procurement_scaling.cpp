#include "reports/procurement_scaling.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "reports/format.h"

namespace hb::reports {

double piecewise_linear(std::vector<std::pair<double, double>> pts, double x) {
  std::sort(pts.begin(), pts.end());
  size_t i = 1;  // the segment [i-1, i] that holds x, or the end one beyond
  while (i + 1 < pts.size() && x > pts[i].first) ++i;
  const auto [x0, y0] = pts[i - 1];
  const auto [x1, y1] = pts[i];
  return x1 == x0 ? y1 : y0 + (y1 - y0) * (x - x0) / (x1 - x0);
}

void whole_model_figures(const Point& p, Candidate& c) {
  const WholeModel& w = *p.whole_model;
  // Only the layers' part of the ITL was timed: its noise, diluted by the constant rest.
  const double layers_share = w.itl_ns > 0 ? w.layers * w.layer_step_ns / w.itl_ns : 1;
  const double noise = robust_rel_noise(p.step.summary) * layers_share;
  std::vector<double> itl_rounds;
  for (double m : p.step.pass_medians()) itl_rounds.push_back(w.layers * m + w.outside_layers_ns);
  // A figure proportional to ITL^power (tokens/s: -1; ITL and cost: 1) at equal batch and price.
  auto figure = [&](const std::optional<double>& v, const std::string& reason, int power) {
    if (!v) return Figure::blank(reason);
    Figure f{v, "", {}, noise, false};
    for (double itl : itl_rounds) f.rounds.push_back(*v * std::pow(itl / w.itl_ns, power));
    return f;
  };
  c.figure(ProcurementMetric::tokens_per_s) = figure(w.tokens_per_s, "", -1);
  c.figure(ProcurementMetric::itl) = figure(w.itl_ns, "", 1);
  c.figure(ProcurementMetric::cost) = figure(w.cost_per_mtok_usd, w.cost_blank_reason, 1);
  c.figure(ProcurementMetric::tokens_per_w) =
      figure(w.tokens_per_s_per_w, w.power_blank_reason, -1);
}

namespace {

bool scalable(const Point& q) { return q.timed() && q.whole_model.has_value(); }

// The sweep axes that say which deployment a point is, without those that follow from its
// batch (layer scope's micro-batches: 1 at batch 1, 2 from batch 2 on).
std::map<std::string, std::string> deployment_axes(const Point& p) {
  auto extra = p.axes.extra;
  extra.erase("microbatches");
  return extra;
}

// The family's (x, ITL) points of the same setting but for one axis: context (same batch) or
// batch (same context).
std::vector<std::pair<double, double>> itl_points(const Point& p,
                                                  const std::vector<const Point*>& family,
                                                  bool along_context) {
  std::vector<std::pair<double, double>> pts;
  for (const Point* q : family) {
    if (!scalable(*q) || q->axes.model != p.axes.model || q->axes.kv_dtype != p.axes.kv_dtype ||
        q->axes.workload != p.axes.workload || deployment_axes(*q) != deployment_axes(p))
      continue;
    if (along_context ? q->axes.batch != p.axes.batch : q->axes.seq_len != p.axes.seq_len) continue;
    const double x = along_context ? static_cast<double>(q->axes.seq_len) : q->axes.batch;
    pts.emplace_back(x, q->whole_model->itl_ns);
  }
  return pts;
}

// "ITL 310 ms, 25.8 tokens/s, $2.100/Mtok": p's figures at another ITL and batch (the price per
// hour and the power stay the platform's).
std::string at_text(const Point& p, double itl_ns, int batch) {
  using M = ProcurementMetric;
  std::string s = "ITL " + metric_text(M::itl, itl_ns) + ", " +
                  metric_text(M::tokens_per_s, batch / (itl_ns * 1e-9)) + " tokens/s";
  if (const auto& c = p.whole_model->cost_per_mtok_usd)
    s += ", " +
         metric_text(M::cost, *c * (itl_ns / p.whole_model->itl_ns) *
                                  (static_cast<double>(p.axes.batch) / batch)) +
         "/Mtok";
  return s;
}

// The resources a capacity row names before its reason ("accelerator + cxl: ...").
std::string bound_of(const CapacityRow& fit) {
  const auto colon = fit.limit.find(": ");
  return colon == std::string::npos ? "" : fit.limit.substr(0, colon);
}

}  // namespace

void context_figures(const Point& p, const std::vector<const Point*>& family,
                     const CapacityRow* fit, ProcurementEntry& e) {
  Figure& f = e.candidate.figure(ProcurementMetric::max_context);
  if (!fit) {
    f = Figure::blank("no capacity in the report (written before it, or by a sweep of a trace)");
    e.max_context_note = f.blank_reason;
    return;
  }
  f = Figure{static_cast<double>(fit->seq_len), "", {}, 0, fit->unbounded};
  e.max_context_bound = bound_of(*fit);
  if (fit->none || fit->unbounded) {
    e.max_context_note =
        fit->none ? "nothing fits: " + fit->limit : "no memory limit up to the search bound";
    return;
  }
  const auto pts = itl_points(p, family, true);
  const double itl = pts.size() >= 2 ? piecewise_linear(pts, static_cast<double>(fit->seq_len)) : 0;
  if (!scalable(p) || !(itl > 0)) {
    e.at_max_context = "ITL unknown: " + std::to_string(pts.size()) + " timed context(s) here";
    e.max_context_note =
        "two timed contexts at this batch are needed to extrapolate; " + fit->limit;
    return;
  }
  const auto [lo, hi] = std::minmax_element(pts.begin(), pts.end());
  e.at_max_context = at_text(p, itl, p.axes.batch);
  e.max_context_note = "ITL linear in the context, from " +
                       format_tokens(static_cast<int64_t>(lo->first)) + "-" +
                       format_tokens(static_cast<int64_t>(hi->first)) + "; " + fit->limit;
}

void batch_figures(const Point& p, const std::vector<const Point*>& family, const CapacityRow* fit,
                   const ProcurementOptions& o, ProcurementEntry& e) {
  const int memory_max = !fit ? kMaxBatchSearched : fit->none ? 0 : fit->batch;
  const std::string memory_note = !fit ? "memory not checked (no capacity in the report)"
                                  : fit->unbounded ? "memory holds every batch searched"
                                                   : "memory binds: " + fit->limit;
  const auto pts = itl_points(p, family, false);
  if (!o.itl_slo_ns) {
    e.slo_batch = fit ? Figure{static_cast<double>(memory_max), "", {}, 0, fit->unbounded}
                      : Figure::blank(memory_note);
    e.slo_note = "memory only (no --itl-slo); " + memory_note;
    return;
  }
  if (!scalable(p) || pts.empty()) {
    e.slo_batch = Figure::blank("no timed point with whole-model figures at this context");
    e.slo_note = e.slo_batch.blank_reason;
    return;
  }
  const double slo = *o.itl_slo_ns;
  const bool one = pts.size() == 1;
  if (one && pts[0].first > 1 && pts[0].second > slo) {
    e.slo_batch = Figure::blank("over the SLO at the report's only batch here (" +
                                format_fixed(pts[0].first, 0) + "); run smaller batches");
    e.slo_note = e.slo_batch.blank_reason;
    return;
  }
  // With one batch in the report only that batch is known to meet the SLO.
  auto itl_at = [&](int b) { return one ? pts[0].second : piecewise_linear(pts, b); };
  const int top = one ? std::min(memory_max, static_cast<int>(pts[0].first)) : memory_max;
  int best = 0;
  for (int b = top; b >= 1 && best == 0; --b)
    if (itl_at(b) <= slo) best = b;
  e.slo_batch = Figure{static_cast<double>(best), "", {}, 0, one && best > 0};
  if (best == 0) {
    e.slo_note =
        memory_max == 0
            ? "nothing fits: " + memory_note
            : "no batch meets the SLO (ITL at batch 1: " + format_duration_ns(itl_at(1)) + ")";
    return;
  }
  e.at_slo_batch = at_text(p, itl_at(best), best);
  e.slo_note = best == memory_max ? memory_note
               : one              ? "one batch in the report here: at least this"
                                  : "the SLO binds (ITL linear in the batch between the report's "
                                    "batches)";
}

}  // namespace hb::reports
