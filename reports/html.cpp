#include "reports/html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "reports/convergence.h"
#include "reports/point_warnings.h"
#include "reports/format.h"
#include "reports/svg_plot.h"
#include "reports/text_table.h"

namespace hb::reports {

namespace {

using Colors = std::map<std::string, std::string>;

std::string fmt_duration(double ns) { return format_duration_ns(ns); }
std::string fmt_ratio(double r) { return format_ratio(r); }

std::string point_tooltip(const Point& p) {
  std::string s = p.axes.strategy + " at " + format_tokens(p.axes.seq_len) + ": ";
  if (!p.timed()) return s + status_cell(p);
  return s + time_cell(&p) + " (p10 " + format_duration_ns(p.step.summary.p10) + ", p90 " +
         format_duration_ns(p.step.summary.p90) + ", " + std::to_string(p.step.summary.count) +
         " samples, " + to_string(p.provenance) + ")";
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

std::vector<std::pair<std::string, std::string>> legend_of(const ProcurementTable& t,
                                                           const Colors& colors) {
  std::vector<std::pair<std::string, std::string>> l;
  for (const auto& s : t.strategies) l.emplace_back(s, colors.at(s));
  return l;
}

std::string time_chart(const ProcurementTable& t, const Colors& colors) {
  SvgPlot plot(760, 340, "Decode step time vs sequence length", provenance_heading(t));
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
  for (size_t i = 0; i < t.strategies.size(); ++i) {
    const std::string& s = t.strategies[i];
    const std::string& c = colors.at(s);
    // Several strategies can fail at one length: spread their markers so none hides another.
    const double spread =
        (static_cast<double>(i) - (static_cast<double>(t.strategies.size()) - 1) / 2) * 12;
    std::vector<std::pair<double, double>> line;
    for (auto len : t.seq_lens) {
      const Point* p = t.at(s, len);
      if (!p) continue;
      const double x = static_cast<double>(len);
      if (p->timed()) {
        line.emplace_back(x, p->step.summary.median);
        plot.range_bar(x, p->step.summary.p10, p->step.summary.p90, c);
        plot.marker(x, p->step.summary.median, c, point_tooltip(*p));
      } else {
        plot.failed_marker(plot.px(x) + spread, c, to_string(p->status),
                           point_tooltip(*p));  // shown, not hidden
      }
    }
    plot.polyline(line, c);
    std::vector<std::pair<double, double>> modeled;
    for (auto len : t.seq_lens)
      if (const Point* p = t.at(s, len); p && p->timed() && p->modeled.present())
        modeled.emplace_back(static_cast<double>(len), p->modeled.step.summary.median);
    plot.polyline(modeled, c, true);
  }
  plot.legend(legend_of(t, colors));
  return plot.str();
}

std::string speedup_chart(const ProcurementTable& t, const Colors& colors) {
  std::vector<std::string> others;
  for (const auto& s : t.strategies)
    if (s != t.reference) others.push_back(s);
  SvgPlot plot(760, 320, "Speedup vs " + t.reference + " (> 1: faster)", provenance_heading(t));
  const double n = static_cast<double>(t.seq_lens.size());
  std::vector<SvgPlot::Tick> xt;
  for (size_t i = 0; i < t.seq_lens.size(); ++i)
    xt.push_back({i + 0.5, format_tokens(t.seq_lens[i])});
  plot.set_x(0, n, false, "sequence length (tokens)", xt);
  double lo = 1, hi = 1;
  for (const auto& s : others)
    for (auto len : t.seq_lens)
      if (auto sp = t.speedup(s, len)) lo = std::min(lo, sp->first), hi = std::max(hi, sp->first);
  const auto [ylo, yhi] = padded_log_range(lo, hi);
  plot.set_y(ylo, yhi, true, "speedup (" + t.reference + " time / time)",
             log_ticks(ylo, yhi, fmt_ratio));
  plot.hline(1.0, "#666", true);
  const double group = (plot.plot_right() - plot.plot_left()) / n;
  const double width = others.empty() ? 0 : group * 0.8 / static_cast<double>(others.size());
  for (size_t i = 0; i < t.seq_lens.size(); ++i) {
    const int64_t len = t.seq_lens[i];
    const double x0 = plot.plot_left() + group * (static_cast<double>(i) + 0.1);
    const Point* ref = t.at(t.reference, len);
    if (!ref || !ref->timed()) {
      plot.text(x0 + group * 0.4, plot.py(1.0) - 6,
                t.reference + " " + (ref ? to_string(ref->status) : "absent") + ": n/a", "middle",
                10, "#a33");
      continue;
    }
    for (size_t j = 0; j < others.size(); ++j) {
      const double x = x0 + width * static_cast<double>(j);
      const Point* p = t.at(others[j], len);
      if (auto sp = t.speedup(others[j], len)) {
        plot.bar(x, width * 0.9, 1.0, sp->first, colors.at(others[j]),
                 others[j] + " at " + format_tokens(len) + ": " + format_ratio(sp->first) + " ± " +
                     format_percent(sp->second) + " vs " + t.reference);
      } else if (p) {
        plot.text(x + width * 0.45, plot.py(1.0) - 4, to_string(p->status), "middle", 9,
                  colors.at(others[j]));
      }
    }
  }
  std::vector<std::pair<std::string, std::string>> legend;
  for (const auto& s : others) legend.emplace_back(s, colors.at(s));
  plot.legend(legend);
  return plot.str();
}

// The target's metric (mass recall by default, or cosine) against step time, the threshold
// dashed: points above it and to the left are fast and accurate enough. rel_l2 is no axis here
// (reports/README.md: it measures the value distribution as much as the strategy).
std::string accuracy_chart(const ProcurementTable& t, const Colors& colors) {
  const bool cosine = t.target.metric == AccuracyTarget::Metric::cosine;
  auto figure = [&](const Point& p) { return cosine ? p.accuracy.cosine : p.accuracy.mass_recall; };
  SvgPlot plot(760, 340, "Accuracy vs speed (up-left is better)", provenance_heading(t));
  double xlo = std::numeric_limits<double>::infinity(), xhi = 0, ylo = t.target.threshold;
  std::vector<const Point*> pts;
  for (const auto& [k, p] : t.cells)
    if (p->timed() && p->accuracy.steps_scored > 0 && std::isfinite(figure(*p))) {
      pts.push_back(p);
      xlo = std::min(xlo, p->step.summary.median), xhi = std::max(xhi, p->step.summary.median);
      ylo = std::min(ylo, figure(*p));
    }
  const auto [x0, x1] = padded_log_range(std::isfinite(xlo) ? xlo : 1e3, xhi > 0 ? xhi : 1e6);
  // Recall spans [0, 1]; cosine sits near 1, so its axis starts a little below the lowest point.
  const double y0 = cosine ? std::max(-1.0, ylo - 0.05 * (1 - ylo) - 1e-4) : 0.0, y1 = 1.0;
  std::vector<SvgPlot::Tick> yticks;
  for (int i = 0; i <= 4; ++i) {
    const double v = y0 + (y1 - y0) * i / 4;
    char buf[16];
    std::snprintf(buf, sizeof buf, cosine ? "%.4f" : "%.2f", v);
    yticks.push_back({v, buf});
  }
  plot.set_x(x0, x1, true, "step time (median)", log_ticks(x0, x1, fmt_duration));
  plot.set_y(y0, y1, false, cosine ? "output cosine similarity" : "attention-mass recall", yticks);
  plot.hline(t.target.threshold, "#888", true);
  plot.text(plot.plot_left() + 4, plot.py(t.target.threshold) - 4, "target: " + t.target.describe(),
            "start", 9, "#555");
  for (const Point* p : pts) {
    const std::string c = colors.at(p->axes.strategy);
    plot.marker(p->step.summary.median, figure(*p), c, point_tooltip(*p) + "; " + accuracy_cell(p));
    plot.text(plot.px(p->step.summary.median) + 6, plot.py(figure(*p)) - 4,
              format_tokens(p->axes.seq_len) +
                  (t.on_pareto_front(p->axes.strategy, p->axes.seq_len) ? kParetoMark : ""),
              "start", 9, c);
  }
  plot.legend(legend_of(t, colors));
  return plot.str();
}

const char* kStyle =
    R"(body{font-family:sans-serif;margin:24px auto;max-width:1000px;color:#222;line-height:1.4}
table{border-collapse:collapse;margin:8px 0 16px}th,td{border:1px solid #ccc;padding:3px 8px;font-size:13px}
th{background:#f3f3f3}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
figure{margin:12px 0}figcaption{font-size:12px;color:#555}.prov{color:#a33;font-style:italic}
.facts td:first-child{font-weight:bold;white-space:nowrap}.failed{color:#a33})";

}  // namespace

std::string html_report(const Report& report, const TableOptions& options) {
  const auto tables = procurement_tables(report, options);
  Colors colors;
  {
    std::vector<std::string> names;
    for (const auto& p : report.points) names.push_back(p.axes.strategy);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    for (size_t i = 0; i < names.size(); ++i) colors[names[i]] = series_color(i);
  }
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>hybridbench "
      "report " +
      html_escape(report.context.host + " " + report.context.date_utc) + "</title>\n<style>\n" +
      kStyle +
      "\n</style>\n</head>\n<body>\n<h1>hybridbench report</h1>\n<table class=\"facts\">\n";
  for (const auto& [k, v] : context_facts(report.context))
    h += "<tr><td>" + html_escape(k) + "</td><td>" + html_escape(v) + "</td></tr>\n";
  h += "</table>\n<p>Step time is one decode step of one layer for the whole batch (scope layer: "
       "the "
       "whole decoder layer; scope attention: attention alone; what "
       "each sequence "
       "waits per generated token, per layer): median, with p10&ndash;p90 bars in the charts and "
       "noise (IQR / 1.349 median) in "
       "the tables. Every figure says whether it is <i>measured</i> (this run, this hardware), "
       "<i>emulated</i> (a "
       "stand-in played a memory tier or the GPU) or <i>modeled</i>. Points that did not run are "
       "drawn as &times; "
       "with their status.</p>\n";
  if (const std::string u = unconverged_sentence(report); !u.empty())
    h += "<p class=\"failed\">" + html_escape(u) + "</p>\n";
  if (const std::string w = point_warnings_sentence(report); !w.empty())
    h += "<p class=\"failed\">" + html_escape(w) + "</p>\n";
  if (tables.empty()) h += "<p class=\"failed\">The report has no points.</p>\n";
  int fig = 0;
  for (const auto& t : tables) {
    const std::string prov =
        "<span class=\"prov\">" + html_escape(provenance_heading(t)) + "</span>";
    h += "<section>\n<h2>" + html_escape(t.title) + "</h2>\n<p>Figures: " + prov + ".</p>\n";
    auto figure = [&](const std::string& svg, const std::string& caption) {
      h += "<figure>\n" + svg + "<figcaption>Figure " + std::to_string(++fig) + ": " +
           html_escape(caption) + " Figures: " + prov + ".</figcaption>\n</figure>\n";
    };
    // Charts and pairwise ratios compare strategies on one machine: one set per host of a fleet.
    const std::vector<std::string> hosts = t.hosts.empty() ? std::vector<std::string>{""} : t.hosts;
    for (const auto& host : hosts) {
      const ProcurementTable one = t.for_host(host);
      const std::string on = host.empty() ? "" : " (" + host + ")";
      const std::string modeled_on = modeled_platforms(one);
      figure(time_chart(one, colors),
             "Median decode step time per strategy (log-log); bars span p10 to p90" + on + "." +
                 (modeled_on.empty()
                      ? std::string()
                      : " Dashed: the median modeled on " + modeled_on + " for the same steps."));
      figure(speedup_chart(one, colors), "Speedup of each strategy over " + t.reference +
                                             " at each sequence length" + on + ".");
      figure(accuracy_chart(one, colors),
             (t.target.metric == AccuracyTarget::Metric::cosine
                  ? std::string("Output cosine similarity against fp64")
                  : std::string("Attention-mass recall")) +
                 " vs step time; dashed: the accuracy target (" + t.target.describe() +
                 "); labels marked" + std::string(kParetoMark) + " are on the Pareto front" + on +
                 ".");
    }
    h += "<h3>Step time (median &plusmn; noise)</h3>\n" + time_grid(t).html();
    if (const std::string b = kv_boundary_line(t); !b.empty())
      h += "<p>" + html_escape(b) + "</p>\n";
    h += "<h3>Speedup vs " + html_escape(t.reference) + "</h3>\n" + speedup_grid(t).html();
    for (const auto& host : hosts) {
      const ProcurementTable one = t.for_host(host);
      if (const int64_t len = one.pairwise_length(); len > 0)
        h += "<h3>Pairwise at " + format_tokens(len) +
             html_escape(host.empty() ? "" : " on " + host) +
             " (time of b / time of a; &gt; 1: a is faster)</h3>\n" +
             pairwise_grid(one, len).html();
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
    h += "</section>\n";
  }
  return h + "</body>\n</html>\n";
}

}  // namespace hb::reports
