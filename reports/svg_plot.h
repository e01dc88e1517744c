#pragma once
// A minimal SVG plotting surface for the HTML report: two numeric axes (linear or log), lines,
// markers with hover titles, bars, text and a legend, written as inline SVG (no scripts, no
// external resources, so the page renders offline in any browser).
#include <string>
#include <utility>
#include <vector>

namespace hb::reports {

class SvgPlot {
 public:
  struct Tick {
    double value;
    std::string label;
  };

  // Plot area inside margins: left for y tick labels, right for the legend.
  SvgPlot(int width, int height, std::string title, std::string provenance);

  void set_x(double lo, double hi, bool log, std::string label, std::vector<Tick> ticks);
  void set_y(double lo, double hi, bool log, std::string label, std::vector<Tick> ticks);

  // Data -> pixel coordinates (values outside the range are clamped to the plot edge).
  double px(double x) const;
  double py(double y) const;
  double plot_left() const { return left_; }
  double plot_right() const { return width_ - right_; }
  double plot_top() const { return top_; }
  double plot_bottom() const { return height_ - bottom_; }

  // dashed: a second series of the same colour (e.g. the model's prediction next to the
  // measurement).
  void polyline(const std::vector<std::pair<double, double>>& pts, const std::string& color,
                bool dashed = false);
  void marker(double x, double y, const std::string& color, const std::string& tooltip);
  void range_bar(double x, double y_lo, double y_hi, const std::string& color);  // e.g. p10..p90
  // A failed point: an "x" at (pixel x, top of the plot) with a short status word under it.
  void failed_marker(double x_px, const std::string& color, const std::string& word,
                     const std::string& tooltip);
  // Bar between two data y values at pixel x with pixel width.
  void bar(double x_px, double width_px, double y0, double y1, const std::string& color,
           const std::string& tooltip);
  void hline(double y, const std::string& color, bool dashed);
  void text(double x_px, double y_px, const std::string& s, const char* anchor = "start",
            int size = 11, const std::string& color = "#333");
  void legend(const std::vector<std::pair<std::string, std::string>>& name_color);

  std::string str() const;  // the <svg> element

 private:
  struct Axis {
    double lo = 0, hi = 1;
    bool log = false;
    std::string label;
    std::vector<Tick> ticks;
    double map(double v) const;  // to [0, 1]
  };
  int width_, height_;
  double left_ = 72, right_ = 150, top_ = 34, bottom_ = 46;
  std::string title_, provenance_;
  Axis x_, y_;
  std::string body_;
};

// Colour per series: Okabe-Ito (distinguishable with colour-vision deficiencies), then Tol's muted.
std::string series_color(size_t index);

// Decade ticks (1, 10, 100 ... times a power of 10), plus 2 and 5 multiples when the range
// spans fewer than three decades; labels from `fmt`.
std::vector<SvgPlot::Tick> log_ticks(double lo, double hi, std::string (*fmt)(double));

// Expands [lo, hi] outward on a log scale so the data does not touch the frame.
std::pair<double, double> padded_log_range(double lo, double hi);

}  // namespace hb::reports
