// `hybridbench run --layers N` through the binary: bad counts exit 2 before anything runs, a
// stack run prints the stacks' table and sentence and writes them into the report, and
// --layers 1 gives exactly the points the code before stacks gave for a fixed seed (a report
// written by that code, tests/bench/fixtures/layers1_before_stacks.json).
#include <filesystem>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "tests/cli_fixture.h"
#include "reports/json_io.h"

namespace hb::bench {
namespace {

// Every deterministic strategy (HybridGen's selection follows its timings), layer scope (the
// default), two lengths and two batches (micro-batches from batch 2), one pass of 5 rounds.
const std::string kGoldenArgs =
    "run -q --model qwen2.5-0.5b --seq-len 256,1024 --batch 1,2 "
    "--strategy full-gpu,cpu-only,offload,h2o,streamingllm,quest,infinigen --decode-steps 6 "
    "--warmup 1 --min-samples 3 --rounds 5 --max-samples 5 --accuracy-steps 2 --seed 42 "
    "--accelerator cpu --accelerator-threads 1 --host-threads 1";

class LayersCli : public cli_test::CliTest {};

TEST_F(LayersCli, BadLayerCountsExitTwoWithoutWriting) {
  const std::string out = file("r.json");
  const std::string base =
      "run -q --model qwen2.5-0.5b --seq-len 256 --strategy cpu-only --accelerator cpu --out " +
      out + " --layers ";
  for (const char* bad : {"0", "-1", "2", "25", "99999", "4x", "nan"}) {
    EXPECT_EQ(run(base + bad), 2) << bad << ": " << out_;
    EXPECT_NE(out_.find("--layers"), std::string::npos) << bad << ": " << out_;
  }
  EXPECT_NE(run(base + "25"), 0);
  EXPECT_NE(out_.find("more than qwen2.5-0.5b's 24 layers"), std::string::npos) << out_;
  EXPECT_EQ(run(base + "4 --mode model --platform presets"), 2) << out_;
  EXPECT_NE(out_.find("--mode model"), std::string::npos) << out_;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST_F(LayersCli, StackRunPrintsAndRecordsTheShortcutError) {
  const std::string out = file("r.json");
  ASSERT_EQ(run("run --model qwen2.5-0.5b --seq-len 256 --strategy cpu-only,full-gpu "
                "--decode-steps 6 --warmup 1 --min-samples 3 --rounds 5 --max-samples 5 "
                "--accelerator cpu --accelerator-threads 1 --host-threads 1 --layers 4 --out " +
                out),
            0)
      << out_;
  EXPECT_NE(stdout_.find("Layer stacks"), std::string::npos) << stdout_;
  EXPECT_NE(stdout_.find("Whole-model shortcut (--layers 4)"), std::string::npos) << stdout_;
  EXPECT_NE(stdout_.find("layer 0"), std::string::npos) << stdout_;
  const reports::Report r = reports::read_report(out);
  ASSERT_EQ(r.points.size(), 2u);
  for (const auto& p : r.points) {
    EXPECT_EQ(p.layer_stack.layers, 4) << p.axes.strategy;
    EXPECT_TRUE(p.layer_stack.shortcut_error.has_value()) << p.axes.strategy;
  }
  ASSERT_EQ(run("report " + out), 0) << out_;
  EXPECT_NE(stdout_.find("## Whole model: measured layer stack vs layers x one layer"),
            std::string::npos);
}

void expect_same_point(const reports::Point& a, const reports::Point& b) {
  SCOPED_TRACE(a.axes.key());
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.provenance, b.provenance);
  EXPECT_EQ(a.kv_fit_fraction, b.kv_fit_fraction);
  EXPECT_EQ(a.strategy_params, b.strategy_params);
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
  EXPECT_FALSE(a.layer_stack.present());
  ASSERT_EQ(a.accuracy.steps_scored, b.accuracy.steps_scored);
  if (a.accuracy.steps_scored == 0) return;  // not scored (an oom point): no figures to compare
  // The same arithmetic on the same data; another CPU's SIMD level may round differently.
  EXPECT_NEAR(a.accuracy.rel_l2, b.accuracy.rel_l2, 1e-6 * b.accuracy.rel_l2 + 1e-9);
  EXPECT_NEAR(a.accuracy.mass_recall, b.accuracy.mass_recall, 1e-9);
  EXPECT_NEAR(a.accuracy.cosine, b.accuracy.cosine, 1e-7);
  EXPECT_EQ(a.attended_tokens.has_value(), b.attended_tokens.has_value());
  if (a.attended_tokens && b.attended_tokens) {
    EXPECT_EQ(a.attended_tokens->min, b.attended_tokens->min);
    EXPECT_EQ(a.attended_tokens->max, b.attended_tokens->max);
  }
}

TEST_F(LayersCli, LayersOneGivesThePointsOfTheCodeBeforeStacks) {
  const reports::Report before = reports::read_report(
      std::string(HB_SOURCE_DIR) + "/tests/bench/fixtures/layers1_before_stacks.json");
  const std::string out = file("r.json");
  ASSERT_EQ(run(kGoldenArgs + " --layers 1 --out " + out), 0) << out_;
  const reports::Report now = reports::read_report(out);
  ASSERT_EQ(now.points.size(), before.points.size());
  std::map<std::string, const reports::Point*> old;
  for (const auto& p : before.points) old[p.axes.key()] = &p;
  for (const auto& p : now.points) {
    ASSERT_TRUE(old.count(p.axes.key())) << p.axes.key();
    expect_same_point(p, *old.at(p.axes.key()));
  }
  EXPECT_EQ(now.context.sweep, before.context.sweep) << "--layers 1 echoes nothing new";
}

}  // namespace
}  // namespace hb::bench
