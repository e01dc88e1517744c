#include "reports/svg_plot.h"

#include <algorithm>
#include <cmath>

#include "reports/format.h"
#include "reports/text_table.h"

namespace hb::reports {

namespace {

std::string num(double v) { return format_fixed(v, 1); }

}  // namespace

double SvgPlot::Axis::map(double v) const {
  double t;
  if (log) {
    const double a = std::log(std::max(lo, 1e-300)), b = std::log(std::max(hi, 1e-300));
    t = b > a ? (std::log(std::max(v, 1e-300)) - a) / (b - a) : 0.5;
  } else {
    t = hi > lo ? (v - lo) / (hi - lo) : 0.5;
  }
  return std::clamp(t, 0.0, 1.0);
}

SvgPlot::SvgPlot(int width, int height, std::string title, std::string provenance)
    : width_(width),
      height_(height),
      title_(std::move(title)),
      provenance_(std::move(provenance)) {}

void SvgPlot::set_x(double lo, double hi, bool log, std::string label, std::vector<Tick> ticks) {
  x_ = {lo, hi, log, std::move(label), std::move(ticks)};
}

void SvgPlot::set_y(double lo, double hi, bool log, std::string label, std::vector<Tick> ticks) {
  y_ = {lo, hi, log, std::move(label), std::move(ticks)};
}

double SvgPlot::px(double x) const {
  return plot_left() + x_.map(x) * (plot_right() - plot_left());
}
double SvgPlot::py(double y) const {
  return plot_bottom() - y_.map(y) * (plot_bottom() - plot_top());
}

void SvgPlot::polyline(const std::vector<std::pair<double, double>>& pts, const std::string& color,
                       bool dashed) {
  if (pts.size() < 2) return;
  std::string p;
  for (const auto& [x, y] : pts) p += num(px(x)) + "," + num(py(y)) + " ";
  body_ += "<polyline fill=\"none\" stroke=\"" + color + "\" stroke-width=\"2\"" +
           (dashed ? " stroke-dasharray=\"6 4\"" : "") + " points=\"" + p + "\"/>\n";
}

void SvgPlot::marker(double x, double y, const std::string& color, const std::string& tooltip) {
  body_ += "<circle cx=\"" + num(px(x)) + "\" cy=\"" + num(py(y)) + "\" r=\"4\" fill=\"" + color +
           "\"><title>" + html_escape(tooltip) + "</title></circle>\n";
}

void SvgPlot::range_bar(double x, double y_lo, double y_hi, const std::string& color) {
  body_ += "<line x1=\"" + num(px(x)) + "\" x2=\"" + num(px(x)) + "\" y1=\"" + num(py(y_lo)) +
           "\" y2=\"" + num(py(y_hi)) + "\" stroke=\"" + color +
           "\" stroke-width=\"1\" opacity=\"0.6\"/>\n";
}

void SvgPlot::failed_marker(double x_px, const std::string& color, const std::string& word,
                            const std::string& tooltip) {
  const double y = plot_top() + 8;
  body_ += "<g><title>" + html_escape(tooltip) + "</title><path d=\"M" + num(x_px - 5) + "," +
           num(y - 5) + " L" + num(x_px + 5) + "," + num(y + 5) + " M" + num(x_px - 5) + "," +
           num(y + 5) + " L" + num(x_px + 5) + "," + num(y - 5) + "\" stroke=\"" + color +
           "\" stroke-width=\"2\"/>";
  body_ += "<text x=\"" + num(x_px) + "\" y=\"" + num(y + 16) +
           "\" text-anchor=\"middle\" font-size=\"9\" fill=\"" + color + "\">" + html_escape(word) +
           "</text></g>\n";
}

void SvgPlot::bar(double x_px, double width_px, double y0, double y1, const std::string& color,
                  const std::string& tooltip) {
  const double a = py(y0), b = py(y1);
  body_ += "<rect x=\"" + num(x_px) + "\" y=\"" + num(std::min(a, b)) + "\" width=\"" +
           num(width_px) + "\" height=\"" + num(std::max(std::fabs(a - b), 1.0)) + "\" fill=\"" +
           color + "\"><title>" + html_escape(tooltip) + "</title></rect>\n";
}

void SvgPlot::hline(double y, const std::string& color, bool dashed) {
  body_ += "<line x1=\"" + num(plot_left()) + "\" x2=\"" + num(plot_right()) + "\" y1=\"" +
           num(py(y)) + "\" y2=\"" + num(py(y)) + "\" stroke=\"" + color + "\"" +
           (dashed ? " stroke-dasharray=\"4 3\"" : "") + "/>\n";
}

void SvgPlot::text(double x_px, double y_px, const std::string& s, const char* anchor, int size,
                   const std::string& color) {
  body_ += "<text x=\"" + num(x_px) + "\" y=\"" + num(y_px) + "\" text-anchor=\"" + anchor +
           "\" font-size=\"" + std::to_string(size) + "\" fill=\"" + color + "\">" +
           html_escape(s) + "</text>\n";
}

void SvgPlot::legend(const std::vector<std::pair<std::string, std::string>>& name_color) {
  double y = plot_top() + 4;
  for (const auto& [name, color] : name_color) {
    body_ += "<rect x=\"" + num(plot_right() + 14) + "\" y=\"" + num(y) +
             "\" width=\"12\" height=\"12\" fill=\"" + color + "\"/>\n";
    text(plot_right() + 32, y + 10, name);
    y += 18;
  }
}

std::string SvgPlot::str() const {
  std::string s = "<svg role=\"img\" viewBox=\"0 0 " + std::to_string(width_) + " " +
                  std::to_string(height_) + "\" width=\"" + std::to_string(width_) +
                  "\" height=\"" + std::to_string(height_) +
                  "\" font-family=\"sans-serif\">\n<title>" +
                  html_escape(title_ + " (" + provenance_ + ")") + "</title>\n";
  s += "<rect x=\"0\" y=\"0\" width=\"" + std::to_string(width_) + "\" height=\"" +
       std::to_string(height_) + "\" fill=\"#fff\"/>\n";
  auto t = [&](double x, double y, const std::string& text, const char* anchor, int size,
               const char* extra = "") {
    s += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + anchor +
         "\" font-size=\"" + std::to_string(size) + "\"" + extra + ">" + html_escape(text) +
         "</text>\n";
  };
  t(plot_left(), 18, title_, "start", 13, " font-weight=\"bold\"");
  // The provenance travels inside the figure, so a copied chart keeps its label.
  t(width_ - 8.0, 18, provenance_, "end", 11, " fill=\"#a33\" font-style=\"italic\"");
  // Grid and ticks.
  for (const auto& tk : x_.ticks) {
    const double x = px(tk.value);
    s += "<line x1=\"" + num(x) + "\" x2=\"" + num(x) + "\" y1=\"" + num(plot_top()) + "\" y2=\"" +
         num(plot_bottom()) + "\" stroke=\"#eee\"/>\n";
    t(x, plot_bottom() + 15, tk.label, "middle", 10);
  }
  for (const auto& tk : y_.ticks) {
    const double y = py(tk.value);
    s += "<line x1=\"" + num(plot_left()) + "\" x2=\"" + num(plot_right()) + "\" y1=\"" + num(y) +
         "\" y2=\"" + num(y) + "\" stroke=\"#eee\"/>\n";
    t(plot_left() - 6, y + 3, tk.label, "end", 10);
  }
  s += "<rect x=\"" + num(plot_left()) + "\" y=\"" + num(plot_top()) + "\" width=\"" +
       num(plot_right() - plot_left()) + "\" height=\"" + num(plot_bottom() - plot_top()) +
       "\" fill=\"none\" stroke=\"#999\"/>\n";
  t((plot_left() + plot_right()) / 2, height_ - 8.0, x_.label + (x_.log ? " (log)" : ""), "middle",
    11);
  const std::string ylab = y_.label + (y_.log ? " (log)" : "");
  s += "<text transform=\"translate(14," + num((plot_top() + plot_bottom()) / 2) +
       ") rotate(-90)\" text-anchor=\"middle\" font-size=\"11\">" + html_escape(ylab) + "</text>\n";
  return s + body_ + "</svg>\n";
}

std::string series_color(size_t index) {
  // Okabe-Ito first, then Paul Tol's muted set: 15 distinct colours before any repeats (the
  // default sweep alone has a dozen strategies).
  static const char* palette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
                                  "#56B4E9", "#000000", "#999999", "#332288", "#882255",
                                  "#117733", "#999933", "#AA4499", "#44AA99", "#DDCC77"};
  return palette[index % (sizeof palette / sizeof palette[0])];
}

std::vector<SvgPlot::Tick> log_ticks(double lo, double hi, std::string (*fmt)(double)) {
  std::vector<SvgPlot::Tick> ticks;
  if (!(lo > 0) || !(hi > lo)) return ticks;
  const bool fine = std::log10(hi / lo) < 3;
  for (double decade = std::pow(10.0, std::floor(std::log10(lo))); decade <= hi; decade *= 10)
    for (double m : {1.0, 2.0, 5.0}) {
      if (m != 1.0 && !fine) continue;
      const double v = decade * m;
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) ticks.push_back({v, fmt(v)});
    }
  return ticks;
}

std::pair<double, double> padded_log_range(double lo, double hi) {
  if (!(lo > 0)) lo = hi > 0 ? hi / 10 : 1;
  if (!(hi > lo)) hi = lo * 2, lo = lo / 2;
  const double pad = std::pow(hi / lo, 0.08);
  return {lo / pad, hi * pad};
}

}  // namespace hb::reports
