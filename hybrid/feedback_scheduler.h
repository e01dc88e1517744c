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
//     Lowering the ratio only pays through the rows it ships: when the CPU side is the
//     bottleneck but its row-dependent part (`rows_ns`: the gather of the selected V rows)
//     is at most `hold_share` of it, fewer rows cannot shorten the step by more than that,
//     so the ratio holds instead of trading accuracy for nothing (ours: a scan-bound CPU side
//     otherwise walks the ratio to its floor);
//   * ratio ceiling: set_ratio_limit() lowers ratio_max to what the shipped-row buffers hold,
//     so the ratio never climbs past a k the step cannot ship (no wind-up);
//   * cpu_k_cap ([PORT, likely the porter's addition]; off unless cpu_k_cap > 0): the CPU scores
//     only the newest `cap` host tokens per head; the cap halves when the CPU side was the
//     bottleneck and grows x1.2 otherwise, within [cpu_k_cap_min, set_cap_limit()].
// The CPU side is what runs beside the accelerator's attention (scoring, top-k, gather, or the
// exact partial); its upload runs on the copy engine beside that attention, and the q download
// before both is serial whatever the split, so it is recorded (transfer_ns) but not balanced
// (hybrid/README.md, "Critical path").
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
  double hold_share = 0.1;   // ratio holds when the rows' share of the CPU side is at most this
  double cost_weight = 0.5;  // EMA weight of the newest interval's per-token costs
  int64_t granule = 16;      // boundary moves in whole pages of this many tokens
  int64_t cpu_k_cap = 0;     // [PORT] initial CPU scan cap in host tokens per head; 0 = off
  bool adapt_cpu_k_cap = true;
  int64_t cpu_k_cap_min = 32;
  double cap_up = 1.2, cap_down = 0.5;
};

// One decision interval, as it appears in the report's trajectory.
struct SchedulerRow {
  int step = 0;            // last decode step of the interval
  double ratio = 0;        // top-k ratio in effect during the interval
  int64_t boundary = 0;    // first token position of the accelerator's recent window (>= 0)
  int64_t gpu_window = 0;  // recent tokens targeted on the accelerator
  double cpu_tokens = 0, gpu_tokens = 0;  // interval means (gpu includes promoted pages)
  double cpu_ns = 0, accelerator_ns = 0;  // interval medians
  double next_ratio = 0;
  int64_t next_gpu_window = 0;
  double equalising_gpu_tokens = -1;  // the split the boundary rule aimed at (-1: not computed)
  double ratio_ceiling = 0;           // min(ratio_max, the buffers' limit) in effect
  int64_t cpu_k_cap = 0, next_cpu_k_cap = 0;  // 0: off
  double transfer_ns = 0;                     // interval median of the q download (not balanced)
  double rows_ns = -1;      // interval median of the CPU side's row-dependent part (-1: not given)
  bool ratio_held = false;  // the CPU side was the bottleneck, but its rows too small a share
  std::map<std::string, double> as_map() const;
};

class FeedbackScheduler {
 public:
  FeedbackScheduler(const SchedulerConfig& cfg, double ratio, int64_t gpu_window);
  // Bounds of the recent window (tokens); the window is clamped into them immediately.
  void set_window_limits(int64_t min_tokens, int64_t max_tokens);

  // Records one decode step's measurements. At the end of every interval it decides, appends a
  // trajectory row and returns true. total_tokens = cpu_tokens + gpu_tokens of the step.
  // rows_ns: the part of cpu_ns that scales with the rows shipped (< 0: unknown, the port's
  // rule alone).
  bool record(int step, double cpu_ns, double accelerator_ns, int64_t cpu_tokens,
              int64_t gpu_tokens, double transfer_ns = 0, double rows_ns = -1);
  // The largest ratio the shipped-row buffers serve (k is capped above it): the ratio's
  // ceiling becomes min(ratio_max, limit), never below ratio_min; the ratio is clamped now.
  void set_ratio_limit(double limit);
  // Upper bound of cpu_k_cap (e.g. the most host tokens a head can have).
  void set_cap_limit(int64_t max_tokens);

  double ratio() const { return ratio_; }
  double ratio_ceiling() const { return ratio_ceiling_; }
  int64_t cpu_k_cap() const { return cap_; }  // 0: off (the CPU scores all its tokens)
  int64_t gpu_window() const { return window_; }
  const SchedulerConfig& config() const { return cfg_; }
  const std::vector<SchedulerRow>& rows() const { return rows_; }

 private:
  int64_t round_to_granule(double tokens) const;
  SchedulerConfig cfg_;
  void update_ratio(SchedulerRow& row, bool cpu_hidden);
  void update_cap(bool cpu_hidden);
  void update_boundary(SchedulerRow& row);
  double ratio_;
  double ratio_ceiling_;
  int64_t cap_ = 0, cap_limit_ = INT64_MAX;
  int64_t window_;
  int64_t min_window_ = 0, max_window_ = INT64_MAX;
  // The current interval's samples.
  std::vector<double> cpu_ns_, acc_ns_, up_ns_, rows_ns_;
  double cpu_tok_ = 0, gpu_tok_ = 0;
  double c_est_ = -1, a_est_ = -1;  // smoothed per-token costs (-1: none yet)
  std::vector<SchedulerRow> rows_;
};

}  // namespace hb::hybrid
