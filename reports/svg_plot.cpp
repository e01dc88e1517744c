#include "reports/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <numbers>

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

void SvgPlot::set_margins(double left, double right, double top, double bottom) {
  left_ = left, right_ = right, top_ = top, bottom_ = bottom;
}

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
                       bool dashed, double width) {
  if (pts.size() < 2) return;
  std::string p;
  for (const auto& [x, y] : pts) p += num(px(x)) + "," + num(py(y)) + " ";
  body_ += "<polyline fill=\"none\" stroke=\"" + color + "\" stroke-width=\"" +
           format_fixed(width, 1) + "\"" + (dashed ? " stroke-dasharray=\"6 4\"" : "") +
           " points=\"" + p + "\"/>\n";
}

void SvgPlot::marker(double x, double y, const std::string& color, const std::string& tooltip,
                     Shape shape, double size, bool hollow) {
  marker_px(px(x), py(y), color, shape, size, tooltip, hollow);
}

void SvgPlot::marker_px(double x, double y, const std::string& color, Shape shape, double size,
                        const std::string& tooltip, bool hollow) {
  const std::string title = tooltip.empty() ? "" : "<title>" + html_escape(tooltip) + "</title>";
  // A white outline keeps a marker readable where it sits on another series' line.
  const std::string paint = hollow ? "fill=\"#fff\" stroke=\"" + color + "\" stroke-width=\"1.6\""
                                   : "fill=\"" + color + "\" stroke=\"#fff\" stroke-width=\"0.8\"";
  // A regular polygon (or a star: alternate radii) of n corners, the first straight up.
  auto polygon = [&](int n, double inner) {
    std::vector<std::pair<double, double>> v;
    const int corners = inner > 0 ? 2 * n : n;
    for (int i = 0; i < corners; ++i) {
      const double a = -std::numbers::pi / 2 + 2 * std::numbers::pi * i / corners;
      const double r = inner > 0 && i % 2 ? inner : 1.15;
      v.emplace_back(r * std::cos(a), r * std::sin(a));
    }
    return v;
  };
  auto path = [&](const std::vector<std::pair<double, double>>& v) {
    std::string d;
    for (size_t i = 0; i < v.size(); ++i)
      d += (i ? " L" : "M") + num(x + v[i].first * size) + "," + num(y + v[i].second * size);
    body_ += "<path d=\"" + d + " Z\" " + paint + ">" + title + "</path>\n";
  };
  switch (shape) {
    case Shape::circle:
      body_ += "<circle cx=\"" + num(x) + "\" cy=\"" + num(y) + "\" r=\"" + num(size) + "\" " +
               paint + ">" + title + "</circle>\n";
      return;
    case Shape::square:
      return path({{-0.9, -0.9}, {0.9, -0.9}, {0.9, 0.9}, {-0.9, 0.9}});
    case Shape::triangle:
      return path({{0, -1.2}, {1.1, 0.9}, {-1.1, 0.9}});
    case Shape::triangle_down:
      return path({{0, 1.2}, {1.1, -0.9}, {-1.1, -0.9}});
    case Shape::diamond:
      return path({{0, -1.3}, {1.1, 0}, {0, 1.3}, {-1.1, 0}});
    case Shape::pentagon:
      return path(polygon(5, 0));
    case Shape::hexagon:
      return path(polygon(6, 0));
    case Shape::star:
      return path(polygon(5, 0.55));
  }
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
  if (!word.empty())
    body_ += "<text x=\"" + num(x_px) + "\" y=\"" + num(y + 16) +
             "\" text-anchor=\"middle\" font-size=\"9\" fill=\"" + color + "\">" +
             html_escape(word) + "</text>";
  body_ += "</g>\n";
}

void SvgPlot::bar(double x_px, double width_px, double y0, double y1, const std::string& color,
                  const std::string& tooltip) {
  const double a = py(y0), b = py(y1);
  body_ += "<rect x=\"" + num(x_px) + "\" y=\"" + num(std::min(a, b)) + "\" width=\"" +
           num(width_px) + "\" height=\"" + num(std::max(std::fabs(a - b), 1.0)) + "\" fill=\"" +
           color + "\"><title>" + html_escape(tooltip) + "</title></rect>\n";
}

void SvgPlot::hbar(double y_px, double height_px, double x0, double x1, const std::string& color,
                   const std::string& tooltip, bool hatched) {
  const double a = px(x0), b = px(x1);
  const std::string geometry = "x=\"" + num(std::min(a, b)) + "\" y=\"" + num(y_px) +
                               "\" width=\"" + num(std::max(std::fabs(a - b), 1.0)) +
                               "\" height=\"" + num(height_px) + "\"";
  const std::string title = "<title>" + html_escape(tooltip) + "</title>";
  if (!hatched) {
    body_ += "<rect " + geometry + " fill=\"" + color + "\">" + title + "</rect>\n";
    return;
  }
  uses_hatch_ = true;
  body_ += "<g>" + title + "<rect " + geometry + " fill=\"" + color +
           "\" fill-opacity=\"0.35\"/><rect " + geometry + " fill=\"url(#" + hatch_id() +
           ")\" stroke=\"" + color + "\" stroke-width=\"0.8\"/></g>\n";
}

void SvgPlot::hatch_sample(double x_px, double y_px, double size) {
  uses_hatch_ = true;
  body_ += "<rect x=\"" + num(x_px) + "\" y=\"" + num(y_px) + "\" width=\"" + num(size) +
           "\" height=\"" + num(size) + "\" fill=\"url(#" + hatch_id() +
           ")\" stroke=\"#555\" stroke-width=\"0.8\"/>\n";
}

void SvgPlot::line_px(double x1, double y1, double x2, double y2, const std::string& color,
                      double width) {
  body_ += "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" +
           num(y2) + "\" stroke=\"" + color + "\" stroke-width=\"" + format_fixed(width, 1) +
           "\"/>\n";
}

void SvgPlot::hline(double y, const std::string& color, bool dashed) {
  body_ += "<line x1=\"" + num(plot_left()) + "\" x2=\"" + num(plot_right()) + "\" y1=\"" +
           num(py(y)) + "\" y2=\"" + num(py(y)) + "\" stroke=\"" + color + "\"" +
           (dashed ? " stroke-dasharray=\"4 3\"" : "") + "/>\n";
}

void SvgPlot::text(double x_px, double y_px, const std::string& s, const char* anchor, int size,
                   const std::string& color, bool bold, const std::string& tooltip) {
  body_ += "<text x=\"" + num(x_px) + "\" y=\"" + num(y_px) + "\" text-anchor=\"" + anchor +
           "\" font-size=\"" + std::to_string(size) + "\" fill=\"" + color + "\"" +
           (bold ? " font-weight=\"bold\"" : "") + ">" +
           (tooltip.empty() ? "" : "<title>" + html_escape(tooltip) + "</title>") + html_escape(s) +
           "</text>\n";
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
  if (uses_hatch_)
    s += "<defs><pattern id=\"" + hatch_id() +
         "\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\" "
         "patternTransform=\"rotate(45)\"><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"5\" "
         "stroke=\"#444\" stroke-width=\"1.2\"/></pattern></defs>\n";
  s += "<rect x=\"0\" y=\"0\" width=\"" + std::to_string(width_) + "\" height=\"" +
       std::to_string(height_) + "\" fill=\"#fff\"/>\n";
  auto t = [&](double x, double y, const std::string& text, const char* anchor, int size,
               const char* extra = "") {
    s += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + anchor +
         "\" font-size=\"" + std::to_string(size) + "\"" + extra + ">" + html_escape(text) +
         "</text>\n";
  };
  // From the left edge, not the plot's: a narrow panel's title then clears the provenance label.
  t(8, 18, title_, "start", 13, " font-weight=\"bold\"");
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

std::vector<double> spread_labels(const std::vector<double>& wanted, double gap, double lo,
                                  double hi) {
  std::vector<size_t> order(wanted.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return wanted[a] < wanted[b]; });
  std::vector<double> y(wanted.size());
  // Push down from the top, then back up from the bottom where the stack ran past it; a stack
  // taller than [lo, hi] starts at lo and runs past hi rather than overlapping.
  double prev = lo - gap;
  for (size_t i : order) prev = y[i] = std::max(std::clamp(wanted[i], lo, hi), prev + gap);
  double next = hi + gap;
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    next = y[*it] = std::min(y[*it], next - gap);
  prev = lo - gap;
  for (size_t i : order) prev = y[i] = std::max(y[i], prev + gap);
  return y;
}

bool LabelPlacer::free(const Box& b) const {
  return std::none_of(boxes_.begin(), boxes_.end(), [&](const Box& o) {
    return b.x0 < o.x1 && o.x0 < b.x1 && b.y0 < o.y1 && o.y0 < b.y1;
  });
}

double LabelPlacer::place(double x0, double x1, double y, double height) {
  // Baseline y: the text spans [y - 0.8 h, y + 0.2 h].
  for (int k = 0; k < 40; ++k) {
    const double dy = (k % 2 ? 1 : -1) * height * 0.5 * ((k + 1) / 2);
    const double c = y + dy;
    if (c - 0.8 * height < lo_ || c + 0.2 * height > hi_) continue;
    const Box b{x0, c - 0.8 * height, x1, c + 0.2 * height};
    if (free(b)) {
      boxes_.push_back(b);
      return c;
    }
  }
  boxes_.push_back({x0, y - 0.8 * height, x1, y + 0.2 * height});
  return y;  // nowhere free: at its wish (a crowded chart; the tooltips still tell)
}

double text_width(const std::string& s, double font_size) {
  size_t chars = 0;
  for (unsigned char c : s) chars += (c & 0xC0) != 0x80;  // UTF-8 code points
  return 0.56 * font_size * static_cast<double>(chars);
}

std::string series_color(size_t index) {
  // Okabe-Ito first, then Paul Tol's muted set: 15 distinct colours before any repeats (the
  // procurement chart marks a dozen strategies).
  static const char* palette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
                                  "#56B4E9", "#000000", "#999999", "#332288", "#882255",
                                  "#117733", "#999933", "#AA4499", "#44AA99", "#DDCC77"};
  return palette[index % (sizeof palette / sizeof palette[0])];
}

namespace {

// The ticks at `mantissas` times each power of 10 within [lo, hi].
std::vector<SvgPlot::Tick> ticks_at(double lo, double hi, const std::vector<double>& mantissas,
                                    std::string (*fmt)(double)) {
  std::vector<SvgPlot::Tick> ticks;
  for (double decade = std::pow(10.0, std::floor(std::log10(lo))); decade <= hi; decade *= 10)
    for (double m : mantissas)
      if (const double v = decade * m; v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9))
        ticks.push_back({v, fmt(v)});
  return ticks;
}

// `v` rounded to a power of 10 at about a quarter of the range's width.
double rounded_in(double v, double lo, double hi) {
  const double step = std::pow(10.0, std::floor(std::log10((hi - lo) / 4)));
  return std::round(v / step) * step;
}

}  // namespace

std::vector<SvgPlot::Tick> log_ticks(double lo, double hi, std::string (*fmt)(double)) {
  if (!(lo > 0) || !(hi > lo)) return {};
  // The coarsest steps that give a reader at least four values to read the axis by.
  static const std::vector<std::vector<double>> kSteps = {
      {1},
      {1, 2, 5},
      {1, 2, 3, 5, 7},
      {1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9},
      {1, 1.2, 1.4, 1.6, 1.8, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9}};
  for (const auto& steps : kSteps)
    if (auto ticks = ticks_at(lo, hi, steps, fmt); ticks.size() >= 4) return ticks;
  // A range narrower than those steps: five ticks evenly spaced on the log scale, rounded.
  std::vector<SvgPlot::Tick> ticks;
  for (int i = 0; i < 5; ++i) {
    const double v = rounded_in(lo * std::pow(hi / lo, (0.5 + i) / 5.0), lo, hi);
    if (v >= lo && v <= hi && (ticks.empty() || v > ticks.back().value))
      ticks.push_back({v, fmt(v)});
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
