#include "hybrid/feedback_scheduler.h"

#include <algorithm>
#include <cmath>

namespace hb::hybrid {

std::map<std::string, double> SchedulerRow::as_map() const {
  return {{"step", static_cast<double>(step)},
          {"ratio", ratio},
          {"boundary", static_cast<double>(boundary)},
          {"gpu_window", static_cast<double>(gpu_window)},
          {"cpu_tokens", cpu_tokens},
          {"gpu_tokens", gpu_tokens},
          {"cpu_ns", cpu_ns},
          {"accelerator_ns", accelerator_ns},
          {"next_ratio", next_ratio},
          {"next_gpu_window", static_cast<double>(next_gpu_window)},
          {"equalising_gpu_tokens", equalising_gpu_tokens},
          {"ratio_ceiling", ratio_ceiling},
          {"cpu_k_cap", static_cast<double>(cpu_k_cap)},
          {"next_cpu_k_cap", static_cast<double>(next_cpu_k_cap)},
          {"transfer_ns", transfer_ns},
          {"rows_ns", rows_ns},
          {"ratio_held", ratio_held ? 1.0 : 0.0}};
}

FeedbackScheduler::FeedbackScheduler(const SchedulerConfig& cfg, double ratio, int64_t gpu_window)
    : cfg_(cfg), ratio_(ratio), ratio_ceiling_(cfg.ratio_max), window_(gpu_window) {
  cfg_.interval = std::max(1, cfg_.interval);
  cfg_.granule = std::max<int64_t>(1, cfg_.granule);
  cfg_.cpu_k_cap_min = std::max<int64_t>(1, cfg_.cpu_k_cap_min);
  if (cfg_.cpu_k_cap > 0) cap_ = std::max(cfg_.cpu_k_cap, cfg_.cpu_k_cap_min);
}

void FeedbackScheduler::set_ratio_limit(double limit) {
  ratio_ceiling_ = std::max(cfg_.ratio_min, std::min(cfg_.ratio_max, limit));
  if (cfg_.adaptive && cfg_.adapt_ratio) ratio_ = std::min(ratio_, ratio_ceiling_);
}

void FeedbackScheduler::set_cap_limit(int64_t max_tokens) {
  cap_limit_ = std::max(cfg_.cpu_k_cap_min, max_tokens);
  if (cap_ > 0) cap_ = std::min(cap_, cap_limit_);
}

void FeedbackScheduler::set_window_limits(int64_t min_tokens, int64_t max_tokens) {
  min_window_ = std::max<int64_t>(0, min_tokens);
  max_window_ = std::max(min_window_, max_tokens);
  window_ = std::clamp(window_, min_window_, max_window_);
}

int64_t FeedbackScheduler::round_to_granule(double tokens) const {
  const double g = static_cast<double>(cfg_.granule);
  return static_cast<int64_t>(std::llround(tokens / g)) * cfg_.granule;
}

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace

void FeedbackScheduler::update_ratio(SchedulerRow& row, bool cpu_hidden) {
  // The port's feedback_update. With no CPU tokens the CPU side is trivially hidden; the ratio
  // still moves so it is ready when tokens reach the host. Its ceiling is what the buffers hold.
  // Ours: no step down when the rows are too small a share of the bottleneck to matter.
  row.ratio_held = !cpu_hidden && row.rows_ns >= 0 && row.rows_ns <= cfg_.hold_share * row.cpu_ns;
  if (row.ratio_held) return;
  ratio_ = cpu_hidden ? std::min(ratio_ * cfg_.ratio_up, ratio_ceiling_)
                      : std::max(ratio_ * cfg_.ratio_down, cfg_.ratio_min);
}

void FeedbackScheduler::update_cap(bool cpu_hidden) {
  const double next = cpu_hidden ? std::ceil(static_cast<double>(cap_) * cfg_.cap_up)
                                 : std::floor(static_cast<double>(cap_) * cfg_.cap_down);
  const double hi = static_cast<double>(cap_limit_);
  cap_ = static_cast<int64_t>(std::clamp(next, static_cast<double>(cfg_.cpu_k_cap_min), hi));
}

// Boundary (ours): toward the split that equalises both sides.
void FeedbackScheduler::update_boundary(SchedulerRow& row) {
  if (!(row.cpu_tokens > 0 && row.gpu_tokens > 0 && row.cpu_ns > 0 && row.accelerator_ns > 0))
    return;
  const double cw = std::clamp(cfg_.cost_weight, 0.0, 1.0);
  const double c_new = row.cpu_ns / row.cpu_tokens, a_new = row.accelerator_ns / row.gpu_tokens;
  c_est_ = c_est_ < 0 ? c_new : (1 - cw) * c_est_ + cw * c_new;
  a_est_ = a_est_ < 0 ? a_new : (1 - cw) * a_est_ + cw * a_new;
  const double total = row.cpu_tokens + row.gpu_tokens;
  row.equalising_gpu_tokens = total * c_est_ / (c_est_ + a_est_);
  const double imbalance =
      std::fabs(row.cpu_ns - row.accelerator_ns) / std::max(row.cpu_ns, row.accelerator_ns);
  if (imbalance <= cfg_.dead_band) return;
  const double delta = cfg_.boundary_gain * (row.equalising_gpu_tokens - row.gpu_tokens);
  int64_t next = round_to_granule(static_cast<double>(window_) + delta);
  // Always make progress of at least one page when outside the dead band.
  if (next == window_) next = window_ + (delta > 0 ? cfg_.granule : -cfg_.granule);
  window_ = std::clamp(next, min_window_, max_window_);
}

bool FeedbackScheduler::record(int step, double cpu_ns, double accelerator_ns, int64_t cpu_tokens,
                               int64_t gpu_tokens, double transfer_ns, double rows_ns) {
  cpu_ns_.push_back(cpu_ns);
  rows_ns_.push_back(rows_ns);
  acc_ns_.push_back(accelerator_ns);
  up_ns_.push_back(transfer_ns);
  cpu_tok_ += static_cast<double>(cpu_tokens);
  gpu_tok_ += static_cast<double>(gpu_tokens);
  const int n = static_cast<int>(cpu_ns_.size());
  if (n < cfg_.interval) return false;

  SchedulerRow row;
  row.step = step;
  row.ratio = ratio_;
  row.ratio_ceiling = ratio_ceiling_;
  row.cpu_k_cap = cap_;
  row.gpu_window = window_;
  row.cpu_ns = median(cpu_ns_);
  row.accelerator_ns = median(acc_ns_);
  row.transfer_ns = median(up_ns_);
  row.rows_ns = *std::min_element(rows_ns_.begin(), rows_ns_.end()) < 0 ? -1 : median(rows_ns_);
  row.cpu_tokens = cpu_tok_ / n;
  row.gpu_tokens = gpu_tok_ / n;
  // The window may exceed the tokens (all fit, or a minimum window): the boundary is then 0.
  row.boundary = std::max<int64_t>(
      0, static_cast<int64_t>(std::llround(row.cpu_tokens + row.gpu_tokens)) - window_);

  if (cfg_.adaptive) {
    const bool cpu_hidden = row.cpu_ns <= row.accelerator_ns;
    if (cfg_.adapt_ratio) update_ratio(row, cpu_hidden);
    if (cap_ > 0 && cfg_.adapt_cpu_k_cap) update_cap(cpu_hidden);
    if (cfg_.adapt_boundary) update_boundary(row);
  }
  row.next_ratio = ratio_;
  row.next_gpu_window = window_;
  row.next_cpu_k_cap = cap_;
  rows_.push_back(row);
  cpu_ns_.clear();
  acc_ns_.clear();
  up_ns_.clear();
  rows_ns_.clear();
  cpu_tok_ = gpu_tok_ = 0;
  return true;
}

}  // namespace hb::hybrid
