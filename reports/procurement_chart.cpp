#include "reports/procurement_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "reports/format.h"
#include "reports/svg_plot.h"

namespace hb::reports {

namespace {

using M = ProcurementMetric;

bool has_both(const Candidate& c) {
  return c.figure(M::itl).value && c.figure(M::cost).value && *c.figure(M::itl).value > 0 &&
         *c.figure(M::cost).value > 0;
}

std::string fmt_usd(double v) { return "$" + format_fixed(v, v < 1 ? 3 : v < 10 ? 2 : 1); }
std::string fmt_ns(double v) { return format_duration_ns(v); }

template <class T>
size_t index_of(const std::vector<T>& v, const T& x) {
  return static_cast<size_t>(std::find(v.begin(), v.end(), x) - v.begin());
}

// The shape legend under the platform legend, in the right margin: one marker per strategy,
// then what a hollow marker and the dashed line mean.
void shape_legend(SvgPlot& plot, const std::vector<std::string>& strategies, double y) {
  const double x = plot.plot_right() + 20;
  for (size_t i = 0; i < strategies.size(); ++i, y += 18) {
    plot.marker_px(x, y, "#555", static_cast<SvgPlot::Shape>(i % SvgPlot::kShapes), 5);
    plot.text(x + 12, y + 4, strategies[i]);
  }
  plot.marker_px(x, y + 6, "#555", SvgPlot::Shape::circle, 5, "", true);
  plot.text(x + 12, y + 10, "misses the target");
  plot.line_px(x - 6, y + 26, x + 6, y + 26, "#555", 1.5);
  plot.text(x + 12, y + 30, "Pareto front");
}

}  // namespace

std::vector<const Candidate*> itl_cost_front(const std::vector<Candidate>& candidates) {
  std::vector<const Candidate*> pool;
  for (const auto& c : candidates)
    if (c.eligible && has_both(c)) pool.push_back(&c);
  std::stable_sort(pool.begin(), pool.end(), [](const Candidate* a, const Candidate* b) {
    const double ca = *a->figure(M::cost).value, cb = *b->figure(M::cost).value;
    return ca != cb ? ca < cb : *a->figure(M::itl).value < *b->figure(M::itl).value;
  });
  std::vector<const Candidate*> front;
  double best_itl = std::numeric_limits<double>::infinity();
  for (const Candidate* c : pool)
    if (const double itl = *c->figure(M::itl).value; itl < best_itl)
      front.push_back(c), best_itl = itl;
  return front;
}

std::string procurement_chart(const ProcurementSetting& s, const std::string& id,
                              std::string& why_not) {
  std::vector<const ProcurementEntry*> drawn;  // ran and fit: eligible, or missing the target
  double xlo = std::numeric_limits<double>::infinity(), xhi = 0, ylo = xlo, yhi = 0;
  std::vector<std::string> strategies;
  for (const auto& e : s.entries) {
    const Candidate& c = e.candidate;
    if (!e.fits || !has_both(c)) {
      if (why_not.empty() && e.fits && !c.figure(M::cost).value)
        why_not = c.platform + ": " + c.figure(M::cost).blank_reason;
      continue;
    }
    drawn.push_back(&e);
    xlo = std::min(xlo, *c.figure(M::cost).value), xhi = std::max(xhi, *c.figure(M::cost).value);
    ylo = std::min(ylo, *c.figure(M::itl).value), yhi = std::max(yhi, *c.figure(M::itl).value);
    if (index_of(strategies, c.strategy) == strategies.size()) strategies.push_back(c.strategy);
  }
  if (drawn.empty()) {
    if (why_not.empty()) why_not = "no candidate that fits its memory has both ITL and $/Mtok";
    return "";
  }
  why_not.clear();
  std::sort(strategies.begin(), strategies.end());
  SvgPlot plot(1000, 420, "ITL vs $/Mtok, " + s.title + " (down-left is better)", [&] {
    std::string p;
    for (const auto& x : s.provenances) p += (p.empty() ? "" : ", ") + x;
    return p;
  }());
  plot.set_id(id);
  plot.set_margins(80, 220, 34, 46);
  const auto [x0, x1] = padded_log_range(xlo, xhi);
  const auto [y0, y1] = padded_log_range(ylo, yhi);
  plot.set_x(x0, x1, true, "$ per million tokens (one accelerator's share of its node)",
             log_ticks(x0, x1, fmt_usd));
  plot.set_y(y0, y1, true, "inter-token latency", log_ticks(y0, y1, fmt_ns));
  // The front first, under the markers: a staircase, since between two front points the
  // cheaper one's latency is what that budget buys.
  std::vector<std::pair<double, double>> stairs;
  const std::vector<Candidate> candidates = s.candidates();  // the front points into it
  for (const Candidate* c : itl_cost_front(candidates)) {
    const double cost = *c->figure(M::cost).value, itl = *c->figure(M::itl).value;
    if (!stairs.empty()) stairs.emplace_back(cost, stairs.back().second);
    stairs.emplace_back(cost, itl);
  }
  if (stairs.size() > 1) plot.polyline(stairs, "#555", false, 1.5);
  // The legend names the platforms drawn, not every platform of the setting.
  std::vector<std::pair<std::string, std::string>> legend;
  for (size_t i = 0; i < s.platforms.size(); ++i)
    if (std::any_of(drawn.begin(), drawn.end(), [&](const ProcurementEntry* e) {
          return e->candidate.platform == s.platforms[i];
        }))
      legend.emplace_back(s.platforms[i], series_color(i));
  for (const ProcurementEntry* e : drawn) {
    const Candidate& c = e->candidate;
    const std::string color = series_color(index_of(s.platforms, c.platform));
    const auto shape =
        static_cast<SvgPlot::Shape>(index_of(strategies, c.strategy) % SvgPlot::kShapes);
    const std::string tip = c.platform + " with " + c.strategy + ": ITL " +
                            fmt_ns(*c.figure(M::itl).value) + ", " +
                            fmt_usd(*c.figure(M::cost).value) + "/Mtok, " + e->accuracy +
                            (c.eligible ? "" : " (" + c.why_not + ")");
    plot.marker(*c.figure(M::cost).value, *c.figure(M::itl).value, color, tip, shape, 5,
                !e->meets_target);
  }
  plot.legend(legend);
  shape_legend(plot, strategies, plot.plot_top() + 18.0 * static_cast<double>(legend.size()) + 20);
  return plot.str();
}

}  // namespace hb::reports
