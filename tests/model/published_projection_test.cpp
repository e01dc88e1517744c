// `validate-model --published` (model/published_projection.h): every shipped published row
// projects with model mode, and the projections meet the goal the table is held to: median
// |error| <= 10%, largest <= 25%, each Quest and ShadowKV row within 10%. A change to the model
// or a preset that moves a projection away from what the GPUs measured fails here.
#include "model/published_projection.h"

#include <cmath>

#include <gtest/gtest.h>

#include "baselines/register.h"
#include "core/error.h"
#include "core/model_presets.h"
#include "hybrid/register.h"
#include "model/published_errors.h"
#include "tests/child_process.h"

namespace hb::model {
namespace {

const PublishedValidation& shipped() {
  static const PublishedValidation v = [] {
    register_baselines(StrategyRegistry::instance());
    register_hybrid(StrategyRegistry::instance());
    return project_published(
        parse_published_measurements(embedded_published_measurements(), "measurements.json"),
        bench::RunEnvironment{});
  }();
  return v;
}

// One test, so the projection (about a minute on 2 cores) runs once: ctest runs each test in its
// own process. Not under the sanitizers (same code paths as the model-mode CLI tests there, at
// ten times the minute).
TEST(PublishedProjection, EveryShippedRowProjectsAndTheRowsMeetTheGoal) {
  if (test::kAddressSanitizer) GTEST_SKIP() << "a minute of model mode, ten under AddressSanitizer";
  const auto& v = shipped();
  ASSERT_GE(v.rows.size(), 12u);
  for (const auto& p : v.rows) {
    SCOPED_TRACE(p.row.platform + " " + p.row.model + " " + p.row.strategy + " " +
                 std::to_string(p.row.seq_len));
    if (!p.row.excluded.empty()) continue;  // projected, and says why it cannot stand for it
    EXPECT_EQ(p.status, "ok") << p.reason;
    EXPECT_GT(p.projected, 0);
    EXPECT_NEAR(p.error, (p.projected - p.row.value) / p.row.value, 1e-12);
  }
  EXPECT_LE(v.median_abs_error, kPublishedMedianGoal) << published_text(v);
  EXPECT_LE(v.max_abs_error, kPublishedMaxGoal) << published_text(v);
  EXPECT_TRUE(published_goal_met(v));
  int held = 0;
  for (const auto& p : v.rows) {
    const bool quest = p.row.publication.rfind("Quest", 0) == 0;
    const bool shadowkv = p.row.publication.rfind("ShadowKV", 0) == 0;
    if (!quest && !shadowkv) continue;
    ++held;
    EXPECT_LE(std::fabs(p.error), 0.10)
        << p.row.platform << " " << p.row.strategy << " " << p.row.seq_len << ": projected "
        << p.projected << ", published " << p.row.value;
  }
  EXPECT_EQ(held, 9);  // six Quest rows, three ShadowKV rows
  // The uncertainty every model run records (model/published_errors.cpp) is this projection's.
  for (const auto& r : recorded_published_errors()) {
    const MetricErrors now = metric_errors(v, r.metric);
    EXPECT_EQ(r.rows, now.rows) << r.figure;
    EXPECT_NEAR(r.median_abs_error, now.median_abs_error, 5e-4)
        << r.figure << ": record model/published_errors.cpp again: " << now.rows << " rows, median "
        << now.median_abs_error << ", max " << now.max_abs_error;
    EXPECT_NEAR(r.max_abs_error, now.max_abs_error, 5e-4)
        << r.figure << ": record model/published_errors.cpp again: " << now.rows << " rows, median "
        << now.median_abs_error << ", max " << now.max_abs_error;
  }
  // Excluded rows are shown, not counted.
  const std::string text = published_text(v);
  EXPECT_NE(text.find("not held to the goal"), std::string::npos) << text;
  const std::string json = published_json(v);
  EXPECT_NE(json.find("\"excluded\""), std::string::npos);
  EXPECT_NE(json.find("hybridbench.published-validation/1"), std::string::npos);
}

// The prefill a throughput row counts: 2 flops per weight and token, plus the causal scores.
TEST(PublishedProjection, PrefillIsItsFlopsAtThePrefillRate) {
  const PlatformModel t4 = load_platform_model("t4-pcie3");
  const ModelPreset& opt = find_model_preset("opt-6.7b");
  const double params = static_cast<double>(model_weight_bytes(opt)) / 2;  // fp16
  const double flops = 2 * params * 2 * 512 + 2.0 * 2 * 512 * 512 * opt.hidden * opt.layers;
  EXPECT_NEAR(prefill_ns(t4, opt, 2, 512), flops / (t4.accelerator.prefill_tflops * 1e3), 1);
  PlatformModel none = t4;
  none.accelerator.prefill_tflops = 0;
  EXPECT_THROW(prefill_ns(none, opt, 2, 512), Error);
}

}  // namespace
}  // namespace hb::model
