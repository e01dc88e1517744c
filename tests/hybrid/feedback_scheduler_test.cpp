// The feedback scheduler alone, driven by a synthetic cost model with a known optimum.
#include "hybrid/feedback_scheduler.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

namespace hb::hybrid {
namespace {

// Per-step costs in ns for `gpu` of `total` tokens on the accelerator at top-k ratio r:
//   cpu = cpu_scan * C + cpu_sel * r * C        (scan every CPU token; top-k/gather/copy ~ k)
//   acc = acc_tok * R + acc_sel * r * C         (own tokens; softmax over the shipped k rows)
struct CostModel {
  double total = 10000;
  double cpu_scan = 50, cpu_sel = 200, acc_tok = 100, acc_sel = 20;
  double cpu(double gpu, double r) const { return (cpu_scan + cpu_sel * r) * (total - gpu); }
  double acc(double gpu, double r) const { return acc_tok * gpu + acc_sel * r * (total - gpu); }
  // The split where both sides take equally long (the optimum of max(cpu, acc) for a fixed r).
  double equalising(double r) const {
    const double c = cpu_scan + cpu_sel * r - acc_sel * r;
    return total * c / (c + acc_tok);
  }
};

// Runs `intervals` decision intervals of the model through the scheduler.
void drive(FeedbackScheduler& s, const CostModel& m, int intervals) {
  int step = 0;
  for (int i = 0; i < intervals; ++i)
    for (int k = 0; k < s.config().interval; ++k, ++step) {
      const double gpu = static_cast<double>(s.gpu_window());
      s.record(step, m.cpu(gpu, s.ratio()), m.acc(gpu, s.ratio()),
               static_cast<int64_t>(m.total - gpu), static_cast<int64_t>(gpu));
    }
}

TEST(FeedbackScheduler, DecidesOncePerIntervalOnIntervalMedians) {
  SchedulerConfig cfg;
  cfg.adapt_boundary = false;
  FeedbackScheduler s(cfg, 0.05, 1024);
  EXPECT_FALSE(s.record(0, 100, 300, 500, 1024));
  EXPECT_FALSE(s.record(1, 200, 300, 500, 1024));
  EXPECT_FALSE(s.record(2, 300, 300, 500, 1024));
  EXPECT_TRUE(s.record(3, 400, 300, 500, 1024));
  ASSERT_EQ(s.rows().size(), 1u);
  const auto& r = s.rows()[0];
  EXPECT_EQ(r.step, 3);
  EXPECT_DOUBLE_EQ(r.cpu_ns, 250);
  EXPECT_DOUBLE_EQ(r.accelerator_ns, 300);
  EXPECT_DOUBLE_EQ(r.ratio, 0.05);
  EXPECT_DOUBLE_EQ(r.next_ratio, 0.05 * 1.2);  // CPU hidden on average: ratio x1.2
  EXPECT_EQ(r.boundary, 500);                  // first token of the window: 1524 - 1024
  const auto row = r.as_map();
  for (const char* k : {"step", "ratio", "boundary", "cpu_ns", "accelerator_ns"})
    EXPECT_TRUE(row.count(k)) << k;
}

TEST(FeedbackScheduler, OnePreemptedStepDoesNotFlipTheDecision) {
  SchedulerConfig cfg;
  cfg.adapt_boundary = false;
  FeedbackScheduler s(cfg, 0.05, 1024);
  // The CPU side is hidden in three steps of four; one step was preempted (50x).
  s.record(0, 100, 300, 500, 1024);
  s.record(1, 15000, 300, 500, 1024);
  s.record(2, 100, 300, 500, 1024);
  s.record(3, 100, 300, 500, 1024);
  EXPECT_DOUBLE_EQ(s.rows().back().cpu_ns, 100);
  EXPECT_DOUBLE_EQ(s.ratio(), 0.05 * 1.2);
}

TEST(FeedbackScheduler, RatioFollowsThePortsRuleWithinItsClamp) {
  SchedulerConfig cfg;
  cfg.adapt_boundary = false;
  // CPU always the bottleneck: x0.8 per interval down to 0.01, never below.
  FeedbackScheduler slow(cfg, 0.05, 1024);
  CostModel m;
  m.cpu_scan = 1000;
  drive(slow, m, 3);
  EXPECT_NEAR(slow.ratio(), 0.05 * 0.8 * 0.8 * 0.8, 1e-12);
  drive(slow, m, 20);
  EXPECT_DOUBLE_EQ(slow.ratio(), 0.01);
  // CPU always hidden: x1.2 per interval up to 0.5, never above.
  FeedbackScheduler fast(cfg, 0.05, 1024);
  m.cpu_scan = 1;
  m.cpu_sel = 1;
  drive(fast, m, 2);
  EXPECT_NEAR(fast.ratio(), 0.05 * 1.2 * 1.2, 1e-12);
  drive(fast, m, 30);
  EXPECT_DOUBLE_EQ(fast.ratio(), 0.5);
}

TEST(FeedbackScheduler, BoundaryConvergesToTheEqualisingSplit) {
  CostModel m;
  SchedulerConfig cfg;
  cfg.adapt_ratio = false;
  cfg.dead_band = 0.02;
  for (int64_t start : {16, 4096, 9984}) {
    SCOPED_TRACE("start " + std::to_string(start));
    FeedbackScheduler s(cfg, 0.05, start);
    s.set_window_limits(16, 10000);
    drive(s, m, 40);
    const double want = m.equalising(0.05);
    // Within the dead band: |cpu - acc| <= 2% of the larger, i.e. a few pages of the optimum.
    const double gpu = static_cast<double>(s.gpu_window());
    const double c = m.cpu(gpu, 0.05), a = m.acc(gpu, 0.05);
    EXPECT_LE(std::fabs(c - a) / std::max(c, a), 0.02 + 1e-9);
    EXPECT_NEAR(gpu, want, 3 * 16.0);
    EXPECT_EQ(s.gpu_window() % 16, 0);
    // And it stays there.
    const int64_t settled = s.gpu_window();
    drive(s, m, 10);
    EXPECT_EQ(s.gpu_window(), settled);
  }
}

TEST(FeedbackScheduler, CapacityBoundsTheBoundaryAndTheRatioAbsorbsTheRest) {
  // The equalising split (~3400-5800 tokens) does not fit: 2000 tokens of capacity.
  CostModel m;
  SchedulerConfig cfg;
  FeedbackScheduler s(cfg, 0.05, 1024);
  s.set_window_limits(512, 2000);
  drive(s, m, 30);
  EXPECT_EQ(s.gpu_window(), 2000 / 16 * 16);  // as much as capacity allows (whole pages)
  EXPECT_DOUBLE_EQ(s.ratio(), 0.01);          // the CPU stays the bottleneck
  for (const auto& r : s.rows()) {
    EXPECT_LE(r.next_gpu_window, 2000);
    EXPECT_GE(r.next_gpu_window, 512);
  }
}

TEST(FeedbackScheduler, JointAdaptationReachesTheOptimumForItsRatio) {
  // Ample capacity: the boundary tracks the equalising split while the ratio moves.
  CostModel m;
  SchedulerConfig cfg;
  cfg.dead_band = 0.05;
  FeedbackScheduler s(cfg, 0.05, 9000);
  s.set_window_limits(16, 10000);
  drive(s, m, 60);
  // Over the last intervals, each step's time max(cpu, acc) is within 15% of the best
  // achievable at the ratio then in effect (min over the split = the equalising split).
  const auto& rows = s.rows();
  ASSERT_GE(rows.size(), 60u);
  for (size_t i = rows.size() - 10; i < rows.size(); ++i) {
    const double r = rows[i].ratio, gpu = rows[i].gpu_tokens;
    const double best = m.cpu(m.equalising(r), r);
    EXPECT_LE(std::max(m.cpu(gpu, r), m.acc(gpu, r)), 1.15 * best) << "interval " << i;
    EXPECT_GE(r, 0.01);
    EXPECT_LE(r, 0.5);
  }
}

TEST(FeedbackScheduler, StaticModeRecordsButNeverChanges) {
  CostModel m;
  SchedulerConfig cfg;
  cfg.adaptive = false;
  FeedbackScheduler s(cfg, 0.05, 1024);
  s.set_window_limits(16, 10000);
  drive(s, m, 10);
  EXPECT_DOUBLE_EQ(s.ratio(), 0.05);
  EXPECT_EQ(s.gpu_window(), 1024);
  EXPECT_EQ(s.rows().size(), 10u);
  for (const auto& r : s.rows()) EXPECT_DOUBLE_EQ(r.next_ratio, 0.05);
}

TEST(FeedbackScheduler, BoundaryStaysWhenOneSideIsEmpty) {
  // Everything on the accelerator (no CPU tokens): no cost to equalise against.
  SchedulerConfig cfg;
  FeedbackScheduler s(cfg, 0.05, 4096);
  s.set_window_limits(16, 4096);
  for (int i = 0; i < 16; ++i) s.record(i, 0, 1000, 0, 4096);
  EXPECT_EQ(s.gpu_window(), 4096);
  EXPECT_DOUBLE_EQ(s.rows().back().equalising_gpu_tokens, -1);
}

// Issue 15: when the shipped-row buffers cap k, the ratio's ceiling is what they hold, so the
// ratio does not wind up past it and answers a bottleneck in the very next interval.
TEST(FeedbackScheduler, RatioLimitPreventsWindUp) {
  SchedulerConfig cfg;
  cfg.adapt_boundary = false;
  cfg.interval = 1;
  FeedbackScheduler s(cfg, 0.05, 1000);
  s.set_ratio_limit(0.08);
  EXPECT_DOUBLE_EQ(s.ratio_ceiling(), 0.08);
  for (int i = 0; i < 20; ++i) s.record(i, 1.0, 2.0, 100, 100);  // CPU hidden: ratio up
  EXPECT_DOUBLE_EQ(s.ratio(), 0.08);
  s.record(20, 3.0, 2.0, 100, 100);  // CPU the bottleneck: down at once
  EXPECT_DOUBLE_EQ(s.ratio(), 0.08 * 0.8);
  EXPECT_DOUBLE_EQ(s.rows().back().ratio_ceiling, 0.08);
  // A limit below ratio_min keeps ratio_min reachable; one above ratio_max changes nothing.
  FeedbackScheduler lo(cfg, 0.05, 1000);
  lo.set_ratio_limit(0.001);
  EXPECT_DOUBLE_EQ(lo.ratio_ceiling(), cfg.ratio_min);
  EXPECT_DOUBLE_EQ(lo.ratio(), cfg.ratio_min);
  FeedbackScheduler hi(cfg, 0.05, 1000);
  hi.set_ratio_limit(0.9);
  EXPECT_DOUBLE_EQ(hi.ratio_ceiling(), cfg.ratio_max);
}

// The boundary (first position of the recent window) is never negative, even when the window
// is larger than the context (everything fits, or a minimum window).
TEST(FeedbackScheduler, BoundaryIsNeverNegative) {
  SchedulerConfig cfg;
  cfg.interval = 2;
  FeedbackScheduler s(cfg, 0.05, 4096);
  s.record(0, 0, 5.0, 0, 1000);
  s.record(1, 0, 5.0, 0, 1001);
  ASSERT_EQ(s.rows().size(), 1u);
  EXPECT_EQ(s.rows()[0].boundary, 0);
  FeedbackScheduler t(cfg, 0.05, 256);
  t.record(0, 1.0, 1.0, 744, 256);
  t.record(1, 1.0, 1.0, 744, 256);
  EXPECT_EQ(t.rows()[0].boundary, 744);
}

// [PORT] cpu_k_cap: halves when the CPU side is the bottleneck, x1.2 otherwise, within
// [32, limit]; off (0) unless configured, and then never moves.
TEST(FeedbackScheduler, CpuKCapHalvesOnBottleneckAndGrowsOtherwise) {
  SchedulerConfig cfg;
  cfg.adapt_boundary = false;
  cfg.adapt_ratio = false;
  cfg.interval = 1;
  FeedbackScheduler off(cfg, 0.05, 1000);
  off.record(0, 3.0, 1.0, 100, 100);
  EXPECT_EQ(off.cpu_k_cap(), 0);
  cfg.cpu_k_cap = 1000;
  FeedbackScheduler s(cfg, 0.05, 1000);
  s.set_cap_limit(5000);
  s.record(0, 3.0, 1.0, 100, 100);  // CPU bottleneck
  EXPECT_EQ(s.cpu_k_cap(), 500);
  s.record(1, 1.0, 3.0, 100, 100);  // hidden
  EXPECT_EQ(s.cpu_k_cap(), 600);
  EXPECT_EQ(s.rows().back().cpu_k_cap, 500);
  EXPECT_EQ(s.rows().back().next_cpu_k_cap, 600);
  for (int i = 0; i < 20; ++i) s.record(2 + i, 3.0, 1.0, 100, 100);
  EXPECT_EQ(s.cpu_k_cap(), 32);
  for (int i = 0; i < 60; ++i) s.record(30 + i, 1.0, 3.0, 100, 100);
  EXPECT_EQ(s.cpu_k_cap(), 5000);
  // The static scheduler keeps it.
  cfg.adaptive = false;
  FeedbackScheduler st(cfg, 0.05, 1000);
  st.record(0, 3.0, 1.0, 100, 100);
  EXPECT_EQ(st.cpu_k_cap(), 1000);
}

// Issue 15: a scan-bound CPU side (the window at capacity, so only the ratio can move). The
// rows cost cpu_sel * r * C of cpu = (scan + sel * r) * C; lowering r pays only through them.
// The known optimum under the hold rule: the first ratio of 0.05 * 0.8^n whose rows are at
// most hold_share of the CPU side, i.e. sel * r <= 0.1 * (scan + sel * r) <=> r <= scan / (9
// sel). The port's rule alone (no rows_ns) walks on to the floor.
TEST(FeedbackScheduler, RatioHoldsWhereFewerRowsNoLongerPay) {
  SchedulerConfig cfg;
  cfg.adapt_boundary = false;
  const double scan = 50, sel = 200, C = 20000, acc = 100 * 4000;  // CPU always the bottleneck
  double optimum = 0.05;
  while (sel * optimum > cfg.hold_share * (scan + sel * optimum)) optimum *= cfg.ratio_down;
  ASSERT_GT(optimum, cfg.ratio_min * 1.5);  // the model's optimum is in the interior
  ASSERT_LT(optimum, 0.05 * cfg.ratio_down);
  for (bool give_rows : {true, false}) {
    FeedbackScheduler s(cfg, 0.05, 4000);
    int step = 0;
    for (int i = 0; i < 30; ++i)
      for (int k = 0; k < cfg.interval; ++k, ++step) {
        const double rows = sel * s.ratio() * C, cpu = scan * C + rows;
        ASSERT_GT(cpu, acc);
        s.record(step, cpu, acc, static_cast<int64_t>(C), 4000, 0, give_rows ? rows : -1);
      }
    if (give_rows) {
      EXPECT_NEAR(s.ratio(), optimum, 1e-12);
      EXPECT_TRUE(s.rows().back().ratio_held);
      EXPECT_GT(s.rows().back().rows_ns, 0);
      bool moved = false;  // the trajectory shows it getting there
      for (const auto& r : s.rows()) moved |= r.next_ratio < r.ratio;
      EXPECT_TRUE(moved);
    } else {
      EXPECT_DOUBLE_EQ(s.ratio(), cfg.ratio_min);
      EXPECT_FALSE(s.rows().back().ratio_held);
      EXPECT_EQ(s.rows().back().rows_ns, -1);
    }
  }
  // A hidden CPU side still climbs, rows or not.
  FeedbackScheduler up(cfg, 0.05, 4000);
  for (int k = 0; k < cfg.interval; ++k) up.record(k, 10, 100, 1000, 4000, 0, 1);
  EXPECT_DOUBLE_EQ(up.ratio(), 0.05 * cfg.ratio_up);
}

}  // namespace
}  // namespace hb::hybrid
