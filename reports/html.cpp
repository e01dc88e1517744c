#include "reports/html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <utility>

#include "reports/convergence.h"
#include "reports/first_screen.h"
#include "reports/format.h"
#include "reports/point_warnings.h"
#include "reports/procurement_html.h"
#include "reports/summary.h"
#include "reports/whole_model_table.h"
#include "reports/svg_plot.h"
#include "reports/text_table.h"

namespace hb::reports {

namespace {

std::string fmt_duration(double ns) { return format_duration_ns(ns); }
std::string fmt_ratio(double r) { return format_ratio(r); }

std::string point_tooltip(const Point& p) {
  std::string s = p.axes.strategy + " at " + format_tokens(p.axes.seq_len) + ": ";
  if (!p.timed()) return s + status_cell(p);
  return s + time_cell(&p) + " (p10 " + format_duration_ns(p.step.summary.p10) + ", p90 " +
         format_duration_ns(p.step.summary.p90) + ", " + std::to_string(p.step.summary.count) +
         " samples, " + to_string(p.provenance) + ")";
}

// How a strategy is drawn. Issue 19: twelve colours told apart by hue alone were unreadable, so
// only the strategies the summary talks about get colour and a shape of their own; the rest
// are grey context, named by direct labels, never by a legend to decode.
struct Style {
  std::string color;
  SvgPlot::Shape shape = SvgPlot::Shape::circle;
  bool emphasized = false;
};
using Styles = std::map<std::string, Style>;
constexpr const char* kGrey = "#a9a9a9";
constexpr size_t kMaxEmphasized = 6;

// The reference, then per column the fastest within the target, the best baseline within it
// and the fastest overall, then the system and its ablations, at most kMaxEmphasized; colours
// and shapes in that order.
Styles styles_for(const ProcurementTable& t) {
  std::vector<std::string> chosen;
  auto add = [&](const std::string& s) {
    if (!s.empty() && chosen.size() < kMaxEmphasized &&
        std::find(chosen.begin(), chosen.end(), s) == chosen.end())
      chosen.push_back(s);
  };
  add(t.reference);
  for (const auto& [len, host] : t.columns()) add(t.fastest_within_target(len, host));
  for (const auto& [len, host] : t.columns())
    add(best_baseline(t, len, host, t.fastest_within_target(len, host)));
  for (const auto& [len, host] : t.columns()) add(t.fastest(len, host));
  // The system and, in the ablation charts, each of its ablations: what those charts are about.
  for (const auto& s : t.strategies)
    if (t.role_of(s) != StrategyRole::baseline) add(s);
  static const char* colors[] = {"#000000", "#D55E00", "#0072B2", "#009E73", "#CC79A7", "#E69F00"};
  static const SvgPlot::Shape shapes[] = {SvgPlot::Shape::square,        SvgPlot::Shape::circle,
                                          SvgPlot::Shape::diamond,       SvgPlot::Shape::triangle,
                                          SvgPlot::Shape::triangle_down, SvgPlot::Shape::circle};
  Styles st;
  for (const auto& s : t.strategies) st[s] = Style{kGrey, SvgPlot::Shape::circle, false};
  for (size_t i = 0; i < chosen.size(); ++i) st[chosen[i]] = Style{colors[i], shapes[i], true};
  return st;
}

// Grey first, so the emphasized series are drawn on top.
std::vector<std::string> drawing_order(const ProcurementTable& t, const Styles& st) {
  std::vector<std::string> order = t.strategies;
  std::stable_partition(order.begin(), order.end(),
                        [&](const std::string& s) { return !st.at(s).emphasized; });
  return order;
}

// x positions shared by the sequence-length charts: one tick per length (thinned when crowded).
void set_seq_len_axis(SvgPlot& plot, const ProcurementTable& t) {
  const double lo = static_cast<double>(t.seq_lens.front()),
               hi = static_cast<double>(t.seq_lens.back());
  std::vector<SvgPlot::Tick> ticks;
  const size_t step = t.seq_lens.size() > 10 ? 2 : 1;
  for (size_t i = 0; i < t.seq_lens.size(); i += step)
    ticks.push_back({static_cast<double>(t.seq_lens[i]), format_tokens(t.seq_lens[i])});
  plot.set_x(lo == hi ? lo / 1.5 : lo / 1.15, lo == hi ? hi * 1.5 : hi * 1.15, true,
             "sequence length (tokens)", ticks);
}

std::string time_chart(const ProcurementTable& t, const Styles& st, const std::string& id) {
  SvgPlot plot(1000, 380, "Decode step time vs sequence length", provenance_heading(t));
  plot.set_id(id);
  plot.set_margins(72, 200, 34, 46);
  set_seq_len_axis(plot, t);
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const auto& [k, p] : t.cells)
    if (p->timed()) {
      lo = std::min(lo, p->step.summary.p10), hi = std::max(hi, p->step.summary.p90);
      if (p->modeled.present())
        lo = std::min(lo, p->modeled.step.summary.median),
        hi = std::max(hi, p->modeled.step.summary.median);
    }
  auto [ylo, yhi] = padded_log_range(std::isfinite(lo) ? lo : 1e3, hi > 0 ? hi : 1e6);
  // Failed points are drawn in a band at the top; keep the data out of it.
  const bool any_failed =
      std::any_of(t.cells.begin(), t.cells.end(), [](const auto& c) { return !c.second->timed(); });
  if (any_failed) yhi *= std::pow(yhi / ylo, 0.15);
  plot.set_y(ylo, yhi, true, "step time (median, p10-p90)", log_ticks(ylo, yhi, fmt_duration));
  // Direct labels at the right edge, at the height of each series' last timed point.
  std::vector<std::string> labelled;
  std::vector<double> wanted;
  const auto order = drawing_order(t, st);
  for (size_t i = 0; i < order.size(); ++i) {
    const std::string& s = order[i];
    const Style& style = st.at(s);
    // Several strategies can fail at one length: spread their markers so none hides another.
    const double spread =
        (static_cast<double>(i) - (static_cast<double>(order.size()) - 1) / 2) * 12;
    std::vector<std::pair<double, double>> line;
    for (auto len : t.seq_lens) {
      const Point* p = t.at(s, len);
      if (!p) continue;
      const double x = static_cast<double>(len);
      if (p->timed()) {
        line.emplace_back(x, p->step.summary.median);
        plot.range_bar(x, p->step.summary.p10, p->step.summary.p90, style.color);
      } else {
        // Shown, not hidden; only emphasized series print the status word, so the grey ones'
        // words do not pile up ("oomoom").
        plot.failed_marker(plot.px(x) + spread, style.color,
                           style.emphasized ? to_string(p->status) : "", point_tooltip(*p));
      }
    }
    plot.polyline(line, style.color, false, style.emphasized ? 2.4 : 1.2);
    std::vector<std::pair<double, double>> modeled;
    for (auto len : t.seq_lens)
      if (const Point* p = t.at(s, len); p && p->timed() && p->modeled.present())
        modeled.emplace_back(static_cast<double>(len), p->modeled.step.summary.median);
    plot.polyline(modeled, style.color, true, style.emphasized ? 2 : 1.2);
    for (auto len : t.seq_lens)
      if (const Point* p = t.at(s, len); p && p->timed())
        plot.marker(static_cast<double>(len), p->step.summary.median, style.color,
                    point_tooltip(*p), style.shape, style.emphasized ? 4.5 : 3);
    if (!line.empty()) labelled.push_back(s), wanted.push_back(plot.py(line.back().second));
  }
  const auto y = spread_labels(wanted, 11, plot.plot_top() + 6, plot.plot_bottom());
  for (size_t i = 0; i < labelled.size(); ++i) {
    const Style& style = st.at(labelled[i]);
    const double x = plot.plot_right();
    plot.line_px(x + 1, wanted[i], x + 12, y[i] - 3, style.color, 0.8);
    plot.marker_px(x + 18, y[i] - 3.5, style.color, style.shape, 3.5);
    plot.text(x + 25, y[i], labelled[i], "start", style.emphasized ? 11 : 10,
              style.emphasized ? style.color : "#777", style.emphasized);
  }
  return plot.str();
}

using Columns = std::vector<std::pair<int64_t, std::string>>;

// What a speedup panel at (len, host) is against: the reference where it ran, else the best
// baseline within the target, else the fastest strategy ("" when none ran).
std::string speedup_base(const ProcurementTable& t, int64_t len, const std::string& host) {
  const Point* ref = t.at(t.reference, len, host);
  if (ref && ref->timed()) return t.reference;
  const std::string b = best_baseline(t, len, host, "");
  return b.empty() ? t.fastest(len, host) : b;
}

// The strategies other than the reference, in one row order for every panel: by speedup at the
// longest length the reference ran.
std::vector<std::string> speedup_rows(const ProcurementTable& t, const Columns& cols) {
  std::vector<std::string> others;
  for (const auto& s : t.strategies)
    if (s != t.reference) others.push_back(s);
  for (auto it = cols.rbegin(); it != cols.rend(); ++it) {
    const Point* ref = t.at(t.reference, it->first, it->second);
    if (!ref || !ref->timed()) continue;
    auto key = [&](const std::string& s) {
      const auto sp = t.speedup(s, it->first, it->second);
      return sp ? sp->first : 0.0;
    };
    std::stable_sort(others.begin(), others.end(),
                     [&](const auto& a, const auto& b) { return key(a) > key(b); });
    break;
  }
  return others;
}

// The log axis the panels share: every speedup and 1x, with room at both ends for the labels.
std::pair<double, double> speedup_range(const ProcurementTable& t,
                                        const std::vector<std::string>& others,
                                        const Columns& cols) {
  double lo = 1, hi = 1;
  for (const auto& s : others)
    for (const auto& [len, host] : cols)
      if (auto sp = t.ratio(s, speedup_base(t, len, host), len, host))
        lo = std::min(lo, sp->first), hi = std::max(hi, sp->first);
  return {lo / std::pow(hi / lo, 0.18) / 1.05, hi * std::pow(hi / lo, 0.22) * 1.05};
}

// One strategy's row of a speedup panel: its name, then its bar and value, its status, or a
// note that it is the base.
void speedup_row(SvgPlot& plot, const ProcurementTable& t, const Style& style, const std::string& s,
                 double y, double row, const std::string& base, int64_t len,
                 const std::string& host, const std::string& at) {
  const double one = plot.px(1.0);
  plot.text(plot.plot_left() - 6, y + row * 0.7, s, "end", 10,
            style.emphasized ? style.color : "#555", style.emphasized);
  const Point* p = t.at(s, len, host);
  if (base.empty()) return;
  if (s == base) {
    plot.text(one + 4, y + row * 0.7, "(the base here)", "start", 9, "#555");
  } else if (auto sp = t.ratio(s, base, len, host)) {
    const bool noisy = within_noise(sp->first, sp->second);
    plot.hbar(y + 2, row - 4, 1.0, sp->first, style.color,
              s + " at " + at + ": " + format_ratio(sp->first) + " ± " +
                  format_percent(sp->second) + " vs " + base + (noisy ? " (within noise)" : ""),
              noisy);
    const double end = plot.px(sp->first);
    const bool right = sp->first >= 1;
    plot.text(end + (right ? 3 : -3), y + row * 0.7, format_ratio(sp->first),
              right ? "start" : "end", 9, "#222", style.emphasized);
  } else if (p) {
    plot.text(one + 4, y + row * 0.7, to_string(p->status), "start", 9, "#a33");
  }
}

// Speedups as small multiples, one panel per length: a horizontal bar per strategy from 1x to
// its speedup on a log axis shared by the panels, its value at the bar's end, hatched where it
// is within noise of 1x (within_noise). Where the reference did not run (full-gpu oom), the
// panel is against the best baseline within the target instead, as the summary's sentence is,
// and its title says so: an empty panel would hide what the summary states.
std::string speedup_panels(const ProcurementTable& t, const Styles& st, int& ids) {
  const auto cols = t.columns();
  const std::vector<std::string> others = speedup_rows(t, cols);
  if (others.empty()) return "";
  const auto [xlo, xhi] = speedup_range(t, others, cols);
  const int width = cols.size() == 1 ? 760 : cols.size() == 2 ? 640 : 430;
  const double row = 17, top = 40, bottom = 62;
  const int height = static_cast<int>(top + row * static_cast<double>(others.size()) + bottom);
  std::string out = "<div class=\"panels\">\n";
  for (const auto& [len, host] : cols) {
    const std::string at = format_tokens(len) + (host.empty() ? "" : " @ " + host);
    const Point* ref = t.at(t.reference, len, host);
    const std::string base = speedup_base(t, len, host);
    const std::string base_name = base.empty() ? t.reference : base;
    const std::string why =
        base_name == t.reference
            ? ""
            : " (" + t.reference + " " + (ref ? to_string(ref->status) : "absent") + ")";
    SvgPlot plot(width, height, "Speedup vs " + base_name + " at " + at + why,
                 provenance_heading(t));
    plot.set_id("hb" + std::to_string(++ids));
    plot.set_margins(112, 18, top, bottom);
    plot.set_x(xlo, xhi, true, "speedup (" + base_name + " time / time; > 1: faster)",
               log_ticks(xlo, xhi, fmt_ratio));
    plot.set_y(0, static_cast<double>(others.size()), false, "", {});
    const double one = plot.px(1.0);
    plot.line_px(one, plot.plot_top(), one, plot.plot_bottom(), "#666", 1);
    for (size_t j = 0; j < others.size(); ++j)
      speedup_row(plot, t, st.at(others[j]), others[j],
                  plot.plot_top() + row * static_cast<double>(j), row, base, len, host, at);
    if (base.empty())
      plot.text((plot.plot_left() + plot.plot_right()) / 2, plot.plot_top() + 16,
                "no strategy ran here", "middle", 10, "#a33");
    const double ly = plot.plot_bottom() + 32;  // between the ticks and the axis title
    plot.hatch_sample(plot.plot_left(), ly - 9, 10);
    plot.text(plot.plot_left() + 14, ly, "within noise of 1x (|ln speedup| <= 2 x its noise)",
              "start", 10, "#444");
    out += plot.str();
  }
  return out + "</div>\n";
}

// The accuracy panels' figure of a point: the target's metric (cosine, or mass recall).
struct AccuracyFigure {
  bool cosine;
  double operator()(const Point& p) const {
    return cosine ? p.accuracy.cosine : p.accuracy.mass_recall;
  }
  bool scored(const Point& p) const {
    return p.timed() && p.accuracy.steps_scored > 0 && std::isfinite((*this)(p));
  }
};

// The y axis the accuracy panels share: from a little below the lowest point or the target up
// to 1 (the points that matter sit near 1, and an axis from 0 squashed them into one band).
struct AccuracyAxis {
  double y0, y1;
  std::vector<SvgPlot::Tick> ticks;
};

AccuracyAxis accuracy_axis(const ProcurementTable& t, const AccuracyFigure& figure) {
  double ylo = t.target.threshold;
  for (const auto& [k, p] : t.cells)
    if (figure.scored(*p)) ylo = std::min(ylo, figure(*p));
  AccuracyAxis a;
  a.y0 = figure.cosine ? std::max(-1.0, ylo - 0.05 * (1 - ylo) - 1e-4)
                       : std::max(0.0, ylo - 0.08 * (1 - ylo) - 0.01);
  a.y1 = 1.0;
  for (int i = 0; i <= 4; ++i) {
    const double v = a.y0 + (a.y1 - a.y0) * i / 4;
    a.ticks.push_back({v, format_fixed(v, figure.cosine || a.y1 - a.y0 < 0.2 ? 4 : 2)});
  }
  return a;
}

// The step-time axis of one panel, from its scored points' medians.
void accuracy_x_axis(SvgPlot& plot, const std::vector<const Point*>& pts) {
  double xlo = std::numeric_limits<double>::infinity(), xhi = 0;
  for (const Point* p : pts)
    xlo = std::min(xlo, p->step.summary.median), xhi = std::max(xhi, p->step.summary.median);
  auto [x0, x1] = padded_log_range(std::isfinite(xlo) ? xlo : 1e3, xhi > 0 ? xhi : 1e6);
  x1 *= std::pow(x1 / x0, 0.12);  // room for labels right of the slowest point
  // A narrow range holds no 1-2-5 tick: then the fastest and slowest medians are the ticks.
  auto xticks = log_ticks(x0, x1, fmt_duration);
  if (xticks.size() < 2 && std::isfinite(xlo) && xhi > xlo)
    xticks = {{xlo, fmt_duration(xlo)}, {xhi, fmt_duration(xhi)}};
  plot.set_x(x0, x1, true, "step time (median)", xticks);
}

// The Pareto front as a staircase through its points, fastest first.
void pareto_stairs(SvgPlot& plot, const ProcurementTable& t, const std::vector<const Point*>& pts,
                   int64_t len, const std::string& host, const AccuracyFigure& figure) {
  std::vector<const Point*> front;
  for (const Point* p : pts)
    if (t.on_pareto_front(p->axes.strategy, len, host)) front.push_back(p);
  std::sort(front.begin(), front.end(), [](const Point* a, const Point* b) {
    return a->step.summary.median < b->step.summary.median;
  });
  std::vector<std::pair<double, double>> stairs;
  for (const Point* p : front) {
    if (!stairs.empty()) stairs.emplace_back(p->step.summary.median, stairs.back().second);
    stairs.emplace_back(p->step.summary.median, figure(*p));
  }
  plot.polyline(stairs, "#333", false, 1.6);
}

// Points within a few pixels of each other are one spot with one label.
struct Spot {
  double x, y;
  std::vector<const Point*> members;
  bool emphasized = false;
};

std::vector<Spot> spots_of(const SvgPlot& plot, const Styles& st,
                           const std::vector<const Point*>& pts, const AccuracyFigure& figure) {
  std::vector<Spot> spots;
  for (auto it = pts.rbegin(); it != pts.rend(); ++it) {  // emphasized first: they lead a spot
    const double mx = plot.px((*it)->step.summary.median), my = plot.py(figure(**it));
    auto near = std::find_if(spots.begin(), spots.end(), [&](const Spot& s) {
      return std::fabs(s.x - mx) < 7 && std::fabs(s.y - my) < 7;
    });
    if (near == spots.end()) spots.push_back({mx, my, {}, false}), near = spots.end() - 1;
    near->members.push_back(*it);
    near->emphasized = near->emphasized || st.at((*it)->axes.strategy).emphasized;
  }
  return spots;
}

// A spot's label, placed clear of the markers and the other labels, with a leader line when
// it had to move away from its spot.
void label_spot(SvgPlot& plot, const ProcurementTable& t, const Styles& st, const Spot& spot,
                LabelPlacer& placer, int64_t len, const std::string& host) {
  std::string names, all;
  bool front_member = false;
  for (size_t i = 0; i < spot.members.size(); ++i) {
    const std::string& s = spot.members[i]->axes.strategy;
    all += (i ? ", " : "") + s;
    front_member = front_member || t.on_pareto_front(s, len, host);
  }
  names = all;
  // A pile of many: the first two and a count; the tooltip names them all.
  if (spot.members.size() > 3)
    names = spot.members[0]->axes.strategy + ", " + spot.members[1]->axes.strategy + " +" +
            std::to_string(spot.members.size() - 2) + " more";
  if (front_member) names += kParetoMark;
  const Style& lead = st.at(spot.members[0]->axes.strategy);
  const int size = spot.emphasized ? 10 : 9;
  const double w = text_width(names, size);
  const bool left = spot.x + 7 + w > plot.plot_right();
  const double tx0 = left ? spot.x - 7 - w : spot.x + 7;
  const double ty = placer.place(tx0, tx0 + w, spot.y + 3.5, size * 1.25);
  if (std::fabs(ty - (spot.y + 3.5)) > 6)
    plot.line_px(spot.x, spot.y, left ? tx0 + w : tx0, ty - 3, "#999", 0.6);
  plot.text(left ? tx0 + w : tx0, ty, names, left ? "end" : "start", size,
            spot.members.size() > 1 ? "#333" : (lead.emphasized ? lead.color : "#777"),
            spot.emphasized, all);
}

// One accuracy panel: the scored points of one length (and host), the target, the front, the
// markers and their labels.
std::string accuracy_panel(const ProcurementTable& t, const Styles& st, int64_t len,
                           const std::string& host, const AccuracyAxis& axis, int width,
                           const AccuracyFigure& figure, int& ids) {
  const std::string at = format_tokens(len) + (host.empty() ? "" : " @ " + host);
  std::vector<const Point*> pts;
  for (const auto& s : t.strategies)
    if (const Point* p = t.at(s, len, host); p && figure.scored(*p)) pts.push_back(p);
  SvgPlot plot(width, 330, "Accuracy vs speed at " + at + " (up-left is better)",
               provenance_heading(t));
  plot.set_id("hb" + std::to_string(++ids));
  plot.set_margins(58, 16, 48, 46);
  accuracy_x_axis(plot, pts);
  plot.set_y(axis.y0, axis.y1, false,
             figure.cosine ? "output cosine similarity" : "attention-mass recall", axis.ticks);
  plot.hline(t.target.threshold, "#888", true);
  // The key, between the title and the plot.
  plot.line_px(plot.plot_left(), 34, plot.plot_left() + 22, 34, "#333", 1.6);
  plot.text(plot.plot_left() + 26, 38, "Pareto front", "start", 10, "#333");
  plot.line_px(plot.plot_left() + 110, 34, plot.plot_left() + 132, 34, "#888", 1);
  plot.text(plot.plot_left() + 136, 38, "target: " + t.target.describe(), "start", 10, "#555");
  pareto_stairs(plot, t, pts, len, host, figure);
  // Markers: grey first, emphasized on top.
  std::stable_sort(pts.begin(), pts.end(), [&](const Point* a, const Point* b) {
    return !st.at(a->axes.strategy).emphasized && st.at(b->axes.strategy).emphasized;
  });
  LabelPlacer placer(plot.plot_top(), plot.plot_bottom());
  for (const Point* p : pts) {
    const Style& style = st.at(p->axes.strategy);
    const double mx = plot.px(p->step.summary.median), my = plot.py(figure(*p));
    plot.marker(p->step.summary.median, figure(*p), style.color,
                point_tooltip(*p) + "; " + accuracy_cell(p), style.shape,
                style.emphasized ? 4.5 : 3.2);
    placer.block({mx - 4, my - 4, mx + 4, my + 4});
  }
  for (const Spot& spot : spots_of(plot, st, pts, figure))
    label_spot(plot, t, st, spot, placer, len, host);
  return plot.str();
}

// The target's metric (mass recall by default, or cosine) against step time, one panel per
// length: the threshold dashed, the Pareto front drawn as a staircase, and one label per spot
// (strategies whose points coincide share it), nudged so no two labels overlap. rel_l2 is no
// axis here (reports/README.md: it measures the value distribution as much as the strategy).
std::string accuracy_panels(const ProcurementTable& t, const Styles& st, int& ids) {
  const AccuracyFigure figure{t.target.metric == AccuracyTarget::Metric::cosine};
  const AccuracyAxis axis = accuracy_axis(t, figure);
  const auto cols = t.columns();
  const int width = cols.size() == 1 ? 760 : cols.size() == 2 ? 640 : 430;
  std::string out = "<div class=\"panels\">\n";
  for (const auto& [len, host] : cols)
    out += accuracy_panel(t, st, len, host, axis, width, figure, ids);
  return out + "</div>\n";
}

const char* kStyle =
    R"(body{font-family:sans-serif;margin:16px auto;max-width:1340px;padding:0 12px;color:#222;line-height:1.4}
h1{margin:4px 0 8px;font-size:26px}
.summary{font-size:16px;background:#f4f7fb;border-left:5px solid #0072B2;padding:6px 18px 6px 8px;margin:0 0 10px}
.summary li{margin:3px 0}
details{margin:0 0 12px;font-size:14px}details>summary{cursor:pointer;color:#0b4f8a}
table{border-collapse:collapse;margin:8px 0 16px}th,td{border:1px solid #ccc;padding:3px 8px;font-size:13px}
th{background:#f3f3f3}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
figure{margin:10px 0}figcaption{font-size:12px;color:#555}.prov{color:#a33;font-style:italic}
.panels{display:flex;flex-wrap:wrap;gap:6px}
.facts td:first-child{font-weight:bold;white-space:nowrap}.failed{color:#a33})";

// The page's head, the summary (the answer first, issue 19), the run's context collapsed under
// it, and the points that stopped early or warned.
std::string html_head(const Report& report) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
         "charset=\"utf-8\">\n<title>hybridbench "
         "report " +
         html_escape(report.context.host + " " + report.context.date_utc) + "</title>\n<style>\n" +
         kStyle + "\n</style>\n</head>\n<body>\n<h1>hybridbench report</h1>\n";
}

std::string html_opening(const Report& report, const TableOptions& options) {
  std::string h = "<ul class=\"summary\" id=\"summary\">\n";
  for (const auto& s : summary_sentences(report, options)) h += "<li>" + html_escape(s) + "</li>\n";
  h += "</ul>\n<details><summary>Run context (tool, host, accelerator, memory, settings, command) "
       "and how to read the figures</summary>\n<table class=\"facts\">\n";
  for (const auto& [k, v] : context_facts(report.context))
    h += "<tr><td>" + html_escape(k) + "</td><td>" + html_escape(v) + "</td></tr>\n";
  h += "</table>\n<p>Step time is one decode step of one layer for the whole batch (scope layer: "
       "the whole decoder layer; scope attention: attention alone; what each sequence waits per "
       "generated token, per layer): median, with p10&ndash;p90 bars in the charts and noise "
       "(IQR / 1.349 median) in the tables. Every figure says whether it is <i>measured</i> (this "
       "run, this hardware), <i>emulated</i> (a stand-in played a memory tier or the GPU) or "
       "<i>modeled</i>. Points that did not run are drawn as &times; with their status. In the "
       "charts the reference, the fastest strategies within the accuracy target and the best "
       "baselines have a colour and a marker shape of their own; the other strategies are grey, "
       "named at their line's end or next to their point.</p>\n</details>\n";
  // The summary already counts them; the list (one line per point, with its fix) is collapsed
  // so it cannot push the charts off the first screen.
  if (const std::string u = unconverged_sentence(report); !u.empty())
    h += "<details><summary class=\"failed\">" + std::string(kUnconvergedMark + 1) +
         " Points that stopped before their noise target, with the fix for each</summary>\n<p "
         "class=\"failed\">" +
         html_escape(u) + "</p>\n</details>\n";
  if (const std::string w = point_warnings_sentence(report); !w.empty())
    h += "<p class=\"failed\">" + html_escape(w) + "</p>\n";
  return h;
}

// Appends numbered figures with their captions and the table's provenance to a page.
struct FigureWriter {
  std::string& h;
  int& fig;
  std::string prov;
  void operator()(const std::string& svg, const std::string& caption) {
    if (svg.empty()) return;
    h += "<figure>\n" + svg + "<figcaption>Figure " + std::to_string(++fig) + ": " +
         html_escape(caption) + " Figures: " + prov + ".</figcaption>\n</figure>\n";
  }
};

// The headline charts of one host: speedups, step times, accuracy against speed.
void headline_charts(const ProcurementTable& t, const std::string& host, FigureWriter& figure,
                     int& ids) {
  const ProcurementTable one = t.for_host(host).headline_part();
  const Styles styles = styles_for(one);
  const std::string on = host.empty() ? "" : " (" + host + ")";
  const std::string modeled_on = modeled_platforms(one);
  figure(speedup_panels(one, styles, ids),
         "Speedup of each strategy over " + t.reference + ", one panel per sequence length" + on +
             " (where " + t.reference +
             " did not run: over the best baseline within the accuracy target, named in the "
             "panel's title); hatched bars are within noise of 1x.");
  figure(time_chart(one, styles, "hb" + std::to_string(++ids)),
         "Median decode step time per strategy (log-log); bars span p10 to p90" + on + "." +
             (modeled_on.empty()
                  ? std::string()
                  : " Dashed: the median modeled on " + modeled_on + " for the same steps."));
  figure(accuracy_panels(one, styles, ids),
         (t.target.metric == AccuracyTarget::Metric::cosine
              ? std::string("Output cosine similarity against fp64")
              : std::string("Attention-mass recall")) +
             " vs step time, one panel per sequence length; dashed: the accuracy target (" +
             t.target.describe() +
             "); the solid staircase is the Pareto front, its points' "
             "labels marked" +
             std::string(kParetoMark) + on + ".");
}

// HybridGen beside its own ablations, per host, where there are any.
void ablation_charts(const ProcurementTable& t, const std::vector<std::string>& hosts,
                     FigureWriter& figure, int& ids) {
  bool ablations_headed = false;
  for (const auto& host : hosts) {
    const ProcurementTable abl = t.for_host(host).ablation_part();
    if (abl.strategies.size() < 3) continue;  // the system and the reference alone: no ablation
    if (!std::exchange(ablations_headed, true))
      figure.h +=
          "<h3>Ablations</h3>\n<p>HybridGen beside its own ablations (each turns one "
          "mechanism off or swaps it); they never take the headline above.</p>\n";
    const Styles styles = styles_for(abl);
    const std::string on = host.empty() ? "" : " (" + host + ")";
    figure(speedup_panels(abl, styles, ids), "Ablations: speedup over " + t.reference +
                                                 ", one panel per sequence length" + on +
                                                 "; hatched bars are within noise of 1x.");
    figure(time_chart(abl, styles, "hb" + std::to_string(++ids)),
           "Ablations: median decode step time (log-log); bars span p10 to p90" + on + ".");
  }
}

// The table's grids: step time, the whole model, speedups, pairwise ratios, accuracy, the
// modeled figures, where points ran and the points that did not run.
std::string table_grids(const ProcurementTable& t, const std::vector<std::string>& hosts) {
  std::string h = "<h3>Step time (median &plusmn; noise)</h3>\n" + time_grid(t).html();
  if (const std::string b = kv_boundary_line(t); !b.empty()) h += "<p>" + html_escape(b) + "</p>\n";
  if (const WholeModelSection w = whole_model_section(t); !w.empty()) {
    h += "<h3>" + html_escape(w.heading) + "</h3>\n" + w.table.html();
    for (const auto& r : w.reasons) h += "<p>" + html_escape(r) + "</p>\n";
  }
  h += "<h3>Speedup vs " + html_escape(t.reference) + "</h3>\n" + speedup_grid(t).html();
  for (const auto& host : hosts) {
    const ProcurementTable one = t.for_host(host);
    if (const int64_t len = one.pairwise_length(); len > 0)
      h += "<h3>Pairwise at " + format_tokens(len) +
           html_escape(host.empty() ? "" : " on " + host) +
           " (time of b / time of a; &gt; 1: a is faster)</h3>\n" + pairwise_grid(one, len).html();
  }
  h += "<h3>Accuracy vs the fp64 reference</h3>\n<p>Attention-mass recall, output cosine "
       "similarity and, where planted, needle retrieval (rel_l2 is in the JSON and CSV only). " +
       html_escape(std::string(kParetoMark + 1)) +
       " marks the step time vs accuracy Pareto front of each column; the step-time table's "
       "&ldquo;fastest within " +
       html_escape(t.target.describe()) +
       "&rdquo; row names the fastest point meeting the accuracy target.</p>\n" +
       accuracy_grid(t).html();
  if (const std::string m = modeled_platforms(t); !m.empty())
    h += "<h3>Measured | modeled on " + html_escape(m) + " (error of the modeled median)</h3>\n" +
         modeled_grid(t).html();
  if (auto where = ran_on_grid(t))
    h += "<h3>Where each point ran (rank, host)</h3>\n" + where->html();
  const auto not_run = not_run_lines(t);
  if (!not_run.empty()) {
    h += "<h3>Points that did not run</h3>\n<ul class=\"failed\">\n";
    for (const auto& l : not_run) h += "<li>" + html_escape(l) + "</li>\n";
    h += "</ul>\n";
  }
  return h;
}

// One procurement table's section: its charts (one set per host of a fleet: charts and pairwise
// ratios compare strategies on one machine), then its grids.
std::string table_section(const ProcurementTable& t, int& fig, int& ids) {
  const std::string prov = "<span class=\"prov\">" + html_escape(provenance_heading(t)) + "</span>";
  std::string h =
      "<section>\n<h2>" + html_escape(t.title) + "</h2>\n<p>Figures: " + prov + ".</p>\n";
  FigureWriter figure{h, fig, prov};
  const std::vector<std::string> hosts = t.hosts.empty() ? std::vector<std::string>{""} : t.hosts;
  for (const auto& host : hosts) headline_charts(t, host, figure, ids);
  ablation_charts(t, hosts, figure, ids);
  h += table_grids(t, hosts);
  return h + "</section>\n";
}

// Several platforms (issue 49): the answer in three lines and its chart on the first screen,
// every other part collapsed under its own heading.
std::string first_screen_page(const Report& report, const TableOptions& options,
                              const FirstScreen& first) {
  std::string h = html_head(report) + "<ul class=\"summary\" id=\"summary\">\n";
  for (const auto& l : first.answer) h += "<li>" + html_escape(l) + "</li>\n";
  h += "</ul>\n";
  int fig = 0, ids = 0;
  h += procurement_answer_chart(*first.headline, fig);
  // The full summary keeps its list, under another id: the answer above is the page's summary.
  std::string rest = html_opening(report, options);
  rest.replace(rest.find("id=\"summary\""), 12, "id=\"summary-all\"");
  h += "<details><summary>Summary, run context and how to read the figures</summary>\n" + rest +
       "</details>\n";
  const ProcurementOptions po{options.itl_slo_ns};
  h += "<details><summary>Procurement: every setting, its chart and every platform "
       "ranked</summary>\n" +
       procurement_section_html(procurement_settings({&report}, po), po, fig) + "</details>\n";
  if (!report.context.assumptions.empty())
    h += "<details><summary>Assumptions: each platform's price, power and bandwidth, with "
         "sources and dates</summary>\n" +
         assumptions_table(report.context, true).html() + "</details>\n";
  for (const auto& t : procurement_tables(report, options))
    h += "<details><summary>" + html_escape(t.title) +
         ": step times, speedups, accuracy</summary>\n" + table_section(t, fig, ids) +
         "</details>\n";
  return h + "</body>\n</html>\n";
}

}  // namespace

std::string html_report(const Report& report, const TableOptions& options) {
  if (const FirstScreen first = first_screen(report, options); first.headline)
    return first_screen_page(report, options, first);
  const auto tables = procurement_tables(report, options);
  std::string h = html_head(report) + html_opening(report, options);
  if (tables.empty()) h += "<p class=\"failed\">The report has no points.</p>\n";
  int fig = 0, ids = 0;
  for (const auto& t : tables) h += table_section(t, fig, ids);
  if (report_platforms(report).size() > 1)  // several platforms, none with a point to rank
    h += procurement_section_html(procurement_settings({&report}, {options.itl_slo_ns}),
                                  {options.itl_slo_ns}, fig);
  return h + "</body>\n</html>\n";
}

const char* html_style() { return kStyle; }

}  // namespace hb::reports
