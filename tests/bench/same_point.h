#pragma once
// Whether two reports' points are the same measurement apart from the timings: what a fixed seed
// fixes (statuses, parameters, round orders, traffic, placement, accuracy, what was attended).
// The golden-report tests compare the points of today's code with a report written by older
// code (tests/bench/fixtures/).
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "reports/report.h"

namespace hb::bench::testing {

// Parameters `a` may add to an older `b`'s: a deployment record (h2o and streamingllm gained an
// offloaded deployment after the fixtures were written; a resident one executes as before).
inline std::map<std::string, std::string> params_as_recorded_by(
    std::map<std::string, std::string> a, const std::map<std::string, std::string>& b) {
  if (!b.count("deployment") && a.count("deployment") && a.at("deployment") == "resident") {
    a.erase("deployment");
    a.erase("deployment_reason");
  }
  return a;
}

inline void expect_same_point(const reports::Point& a, const reports::Point& b) {
  SCOPED_TRACE(a.axes.key());
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.provenance, b.provenance);
  EXPECT_EQ(a.kv_fit_fraction, b.kv_fit_fraction);
  EXPECT_EQ(params_as_recorded_by(a.strategy_params, b.strategy_params), b.strategy_params);
  EXPECT_EQ(a.warnings, b.warnings);
  EXPECT_EQ(a.step.samples_ns.size(), b.step.samples_ns.size());
  EXPECT_EQ(a.step.pass_sizes, b.step.pass_sizes);
  EXPECT_EQ(a.step.round_slots, b.step.round_slots) << "the same seeded round orders";
  EXPECT_EQ(a.step.warmup_steps, b.step.warmup_steps);
  EXPECT_EQ(a.traffic_per_step.h2d_bytes, b.traffic_per_step.h2d_bytes);
  EXPECT_EQ(a.traffic_per_step.d2h_bytes, b.traffic_per_step.d2h_bytes);
  EXPECT_EQ(a.traffic_per_step.weight_bytes, b.traffic_per_step.weight_bytes);
  EXPECT_EQ(a.traffic_per_step.accelerator_flops, b.traffic_per_step.accelerator_flops);
  ASSERT_EQ(a.placement.size(), b.placement.size());
  for (size_t i = 0; i < a.placement.size(); ++i) {
    EXPECT_EQ(a.placement[i].role, b.placement[i].role);
    EXPECT_EQ(a.placement[i].bytes, b.placement[i].bytes);
  }
  ASSERT_EQ(a.accuracy.steps_scored, b.accuracy.steps_scored);
  if (a.accuracy.steps_scored == 0) return;  // not scored (an oom point): no figures to compare
  // The same arithmetic on the same data, but rel_l2 here is fp32's rounding noise (~1e-7), and
  // another summation order moves it by a good share of itself: another CPU's SIMD level,
  // another compiler (clang's sanitizer build against a fixture GCC wrote: 1.4e-9 apart at
  // 5e-7), or the AVX2 path's 8-wide lanes (2.7e-8 apart at 2.4e-7 on a 2-core AVX2 host). A
  // real accuracy change moves it by orders of magnitude.
  EXPECT_NEAR(a.accuracy.rel_l2, b.accuracy.rel_l2, 0.25 * b.accuracy.rel_l2 + 1e-8);
  EXPECT_NEAR(a.accuracy.mass_recall, b.accuracy.mass_recall, 1e-9);
  EXPECT_NEAR(a.accuracy.cosine, b.accuracy.cosine, 1e-7);
  EXPECT_EQ(a.attended_tokens.has_value(), b.attended_tokens.has_value());
  if (a.attended_tokens && b.attended_tokens) {
    EXPECT_EQ(a.attended_tokens->min, b.attended_tokens->min);
    EXPECT_EQ(a.attended_tokens->max, b.attended_tokens->max);
  }
}

// Every point of `now` is one of `before` (by its axes, extras included) with the same figures.
inline void expect_same_points(const reports::Report& now, const reports::Report& before) {
  ASSERT_EQ(now.points.size(), before.points.size());
  std::map<std::string, const reports::Point*> old;
  for (const auto& p : before.points) old[p.axes.key()] = &p;
  for (const auto& p : now.points) {
    ASSERT_TRUE(old.count(p.axes.key())) << p.axes.key();
    expect_same_point(p, *old.at(p.axes.key()));
    EXPECT_EQ(p.axes.extra, old.at(p.axes.key())->axes.extra) << p.axes.key();
  }
}

}  // namespace hb::bench::testing
