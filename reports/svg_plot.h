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

  // Marker shapes, so series stay apart without colour (issue 19: twelve colours were too many).
  enum class Shape { circle, square, triangle, diamond, triangle_down, pentagon, hexagon, star };
  static constexpr int kShapes = 8;

  // Plot area inside margins: left for y tick labels, right for the legend or direct labels.
  SvgPlot(int width, int height, std::string title, std::string provenance);
  void set_margins(double left, double right, double top, double bottom);
  // Prefix of the ids this SVG defines (its hatch pattern): inline SVGs share the page's id
  // space, so each plot of a page needs its own.
  void set_id(std::string id) { id_ = std::move(id); }

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
                bool dashed = false, double width = 2);
  // hollow: the outline in `color` on white (a point that misses a target, say).
  void marker(double x, double y, const std::string& color, const std::string& tooltip,
              Shape shape = Shape::circle, double size = 4, bool hollow = false);
  // The same shape at pixel coordinates (a legend sample, a direct label's key).
  void marker_px(double x_px, double y_px, const std::string& color, Shape shape, double size,
                 const std::string& tooltip = "", bool hollow = false);
  void range_bar(double x, double y_lo, double y_hi, const std::string& color);  // e.g. p10..p90
  // A failed point: an "x" at (pixel x, top of the plot) with a short status word under it (none
  // when word is empty).
  void failed_marker(double x_px, const std::string& color, const std::string& word,
                     const std::string& tooltip);
  // Bar between two data y values at pixel x with pixel width.
  void bar(double x_px, double width_px, double y0, double y1, const std::string& color,
           const std::string& tooltip);
  // Horizontal bar between two data x values at pixel y with pixel height; hatched: drawn pale
  // with diagonal hatching (a value within noise of the baseline it is drawn from).
  void hbar(double y_px, double height_px, double x0, double x1, const std::string& color,
            const std::string& tooltip, bool hatched = false);
  // A hatched sample square at pixel coordinates, for a legend line saying what hatching means.
  void hatch_sample(double x_px, double y_px, double size);
  void line_px(double x1, double y1, double x2, double y2, const std::string& color,
               double width = 1);
  void hline(double y, const std::string& color, bool dashed);
  void text(double x_px, double y_px, const std::string& s, const char* anchor = "start",
            int size = 11, const std::string& color = "#333", bool bold = false,
            const std::string& tooltip = "");
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
  std::string hatch_id() const { return id_ + "-hatch"; }
  int width_, height_;
  double left_ = 72, right_ = 150, top_ = 34, bottom_ = 46;
  std::string title_, provenance_, id_ = "hb";
  bool uses_hatch_ = false;
  Axis x_, y_;
  std::string body_;
};

// Label placement, so no two labels of a chart overlap (issue 19: "16k16k").
// 1-D: the labels' wanted y positions (any order) -> positions at least `gap` apart inside
// [lo, hi], each as near its wish as the others allow; the order of the wishes is kept.
std::vector<double> spread_labels(const std::vector<double>& wanted, double gap, double lo,
                                  double hi);
// 2-D: boxes placed one after another; place() returns the y (text baseline) nearest the wished
// one at which a label of that size, starting at x (or ending at x when it is placed to the left)
// overlaps no box placed before, trying above and below in turn.
class LabelPlacer {
 public:
  struct Box {
    double x0, y0, x1, y1;
  };
  LabelPlacer(double lo, double hi) : lo_(lo), hi_(hi) {}
  double place(double x0, double x1, double y, double height);
  void block(Box b) { boxes_.push_back(b); }  // e.g. a marker the labels must not cover
  const std::vector<Box>& boxes() const { return boxes_; }

 private:
  bool free(const Box& b) const;
  double lo_, hi_;
  std::vector<Box> boxes_;
};
// Approximate width of sans-serif text at a font size (no font metrics offline): 0.56 em a char.
double text_width(const std::string& s, double font_size);

// Colour per series: Okabe-Ito (distinguishable with colour-vision deficiencies), then Tol's muted.
std::string series_color(size_t index);

// At least four ticks on any range hi > lo: decades (1, 10, 100 ...) where they give four, else
// the coarsest of 1-2-5, 1-2-3-5-7 and finer multiples that does, else (a range narrower than
// that) five evenly spaced on the log scale, rounded at the range's resolution; labels from `fmt`.
std::vector<SvgPlot::Tick> log_ticks(double lo, double hi, std::string (*fmt)(double));

// Expands [lo, hi] outward on a log scale so the data does not touch the frame.
std::pair<double, double> padded_log_range(double lo, double hi);

}  // namespace hb::reports
