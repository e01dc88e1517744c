#pragma once
// run --layers N (bench/layer_stack.h): the measured N-layer stack beside each point
// (Point::layer_stack), and the error of the whole-model shortcut "N layers = N x one layer's
// step" it measures; the cells and the sentence `run`'s summary and the markdown report print.
#include <string>

#include "reports/report.h"
#include "reports/text_table.h"

namespace hb::reports {

// The error issue 34 asks of the shortcut on the measuring machine, for every strategy.
inline constexpr double kShortcutErrorGoal = 0.10;

// Fills p.layer_stack's shortcut error from p.step and p.layer_stack.step: stack / (N x point)
// - 1, paired by round when both carry the same rounds (StepTiming::pass_sizes), else from the
// two medians without an interval; cleared when either did not time. Nothing without a stack.
void update_shortcut_error(Point& p);

// The stack's step: "812 ms ± 1.2%", or its status when it did not run, "-" without a stack.
std::string layer_stack_time_cell(const Point& p);
// "+2.1% [+0.5%, +3.9%]" (paired), "+2.1%" (unpaired), "-" without a figure.
std::string shortcut_error_cell(const Point& p);

// One row per point with a stack, in reading order (axes_less): strategy, length, batch, the
// one-layer step, N x it (the shortcut), the stack's step and the shortcut's error with its
// interval. `run` prints it plain under its summary, `report` as markdown. No rows: no stacks.
TextTable layer_stack_table(const Report& r);

// One sentence over every point with a stack: the layers, the range of the shortcut's error
// (strategy and length at each end), the points beyond kShortcutErrorGoal or that every one is
// within it, and which layer the accuracy is scored on. "" when no point has a stack.
std::string layer_stack_sentence(const Report& r);

}  // namespace hb::reports
