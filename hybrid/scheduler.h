#pragma once
// HybridGen's feedback-driven scheduler (mechanism 2), as a small class on its own so it can be
// tested with injected times. Every `interval` decode steps it compares the measured CPU-side
// time (scoring, top-k, gather, copy of the shipped rows) with the accelerator-side time
// (attention over the accelerator-resident tokens) averaged over the interval, then
//   * top-k ratio: x ratio_up when the CPU side was hidden (cpu <= accelerator), x ratio_down
//     when it was the bottleneck, clamped to [ratio_min, ratio_max]   ([PORT] feedback_update);
//   * boundary (ours, REFERENCES §11 [INF]): the number of recent tokens kept on the
//     accelerator moves `boundary_gain` of the way toward the split that equalises the two
//     sides under a per-token cost model fitted from the interval (cost_cpu = c * cpu_tokens,
//     cost_acc = a * gpu_tokens => gpu* = total * c / (c + a)), in whole pages, within
//     [min_gpu_tokens, max_gpu_tokens] (max = what accelerator capacity allows). It only moves
//     when both sides hold tokens (both costs measured) and the imbalance exceeds `dead_band`.
//     The per-token costs are smoothed over intervals (EMA, weight `cost_weight` for the new one).
// The interval's times are medians of its steps (ours: one preempted step on a shared machine
// must not flip a decision); the rows report those medians.
// Static mode records the same rows but never changes anything (ablation).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace hb::hybrid {

struct SchedulerConfig {
  bool adaptive = true;        // false: --opt hybridgen.scheduler=static
  bool adapt_ratio = true;     // the port's rule
  bool adapt_boundary = true;  // ours; --opt hybridgen.boundary=fixed turns it off
  int interval = 4;            // decode steps per decision
  double ratio_up = 1.2, ratio_down = 0.8;
  double ratio_min = 0.01, ratio_max = 0.5;
  double boundary_gain = 0.5;  // share of the gap to the equalising split closed per interval
  double dead_band = 0.1;    // relative imbalance |cpu - acc| / max below which the boundary stays
  double cost_weight = 0.5;  // EMA weight of the newest interval's per-token costs
  int64_t granule = 16;      // boundary moves in whole pages of this many tokens
};

// One decision interval, as it appears in the report's trajectory.
struct SchedulerRow {
  int step = 0;                           // last decode step of the interval
  double ratio = 0;                       // top-k ratio in effect during the interval
  int64_t boundary = 0;                   // first token position of the accelerator's recent window
  int64_t gpu_window = 0;                 // recent tokens targeted on the accelerator
  double cpu_tokens = 0, gpu_tokens = 0;  // interval means (gpu includes promoted pages)
  double cpu_ns = 0, accelerator_ns = 0;  // interval medians
  double next_ratio = 0;
  int64_t next_gpu_window = 0;
  double equalising_gpu_tokens = -1;  // the split the boundary rule aimed at (-1: not computed)
  std::map<std::string, double> as_map() const;
};

class FeedbackScheduler {
 public:
  FeedbackScheduler(const SchedulerConfig& cfg, double ratio, int64_t gpu_window);
  // Bounds of the recent window (tokens); the window is clamped into them immediately.
  void set_window_limits(int64_t min_tokens, int64_t max_tokens);

  // Records one decode step's measurements. At the end of every interval it decides, appends a
  // trajectory row and returns true. total_tokens = cpu_tokens + gpu_tokens of the step.
  bool record(int step, double cpu_ns, double accelerator_ns, int64_t cpu_tokens,
              int64_t gpu_tokens);

  double ratio() const { return ratio_; }
  int64_t gpu_window() const { return window_; }
  const SchedulerConfig& config() const { return cfg_; }
  const std::vector<SchedulerRow>& rows() const { return rows_; }

 private:
  int64_t round_to_granule(double tokens) const;
  SchedulerConfig cfg_;
  double ratio_;
  int64_t window_;
  int64_t min_window_ = 0, max_window_ = INT64_MAX;
  // The current interval's samples.
  std::vector<double> cpu_ns_, acc_ns_;
  double cpu_tok_ = 0, gpu_tok_ = 0;
  double c_est_ = -1, a_est_ = -1;  // smoothed per-token costs (-1: none yet)
  std::vector<SchedulerRow> rows_;
};

}  // namespace hb::hybrid
