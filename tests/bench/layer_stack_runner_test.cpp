// run --layers N through the runner (bench/unit.cpp, bench/stack_memory.h): every point carries
// its stack's step and the shortcut's error, paired over the same rounds; the points themselves
// are what a run without stacks gives; and what cannot run is refused up front, exit 2.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/error.h"
#include "reports/json_io.h"
#include "bench/runner.h"
#include "bench/stack_memory.h"
#include "tests/bench/tiny_spec.h"

namespace hb::bench {
namespace {

SweepSpec layer_spec(int layers) {
  SweepSpec s = testing::tiny_spec({200});
  s.scope = Scope::layer;  // the default scope, where the dependency runs through the queue
  s.layers = layers;
  return s;
}

TEST(LayerStackRun, EveryPointCarriesItsStackPairedOverTheSameRounds) {
  const reports::Report r = run_sweep(layer_spec(4), RunEnvironment{});
  ASSERT_EQ(r.points.size(), 2u) << "the stacks are folded into their points, not points";
  EXPECT_EQ(r.context.sweep.at("layers"), "4");
  for (const auto& p : r.points) {
    SCOPED_TRACE(p.axes.strategy);
    ASSERT_EQ(p.status, reports::PointStatus::ok) << p.reason;
    const reports::LayerStackFigures& s = p.layer_stack;
    ASSERT_TRUE(s.present());
    EXPECT_EQ(s.layers, 4);
    EXPECT_EQ(s.scored_layer, 0);
    ASSERT_EQ(s.status, reports::PointStatus::ok) << s.reason;
    EXPECT_EQ(s.step.samples_ns.size(), p.step.samples_ns.size()) << "stopped together";
    EXPECT_EQ(s.step.pass_sizes, p.step.pass_sizes) << "the same rounds";
    ASSERT_TRUE(s.shortcut_error.has_value());
    EXPECT_EQ(s.rounds, 5);
    EXPECT_LE(s.error_low, *s.shortcut_error);
    EXPECT_GE(s.error_high, *s.shortcut_error);
    // (No bound on the error itself: on a loaded test machine a round's median can be anything.)
    EXPECT_EQ(p.accuracy.steps_scored, 2) << "the point is scored as without --layers";
  }
  // The report's JSON keeps the stacks (an optional field; reports/README.md).
  const reports::Report back = reports::from_json_text(reports::to_json_text(r), "mem");
  ASSERT_TRUE(back.points[0].layer_stack.present());
  EXPECT_EQ(back.points[0].layer_stack.step.samples_ns, r.points[0].layer_stack.step.samples_ns);
  EXPECT_EQ(back.points[0].layer_stack.shortcut_error, r.points[0].layer_stack.shortcut_error);
}

// The stack rides beside the point without changing it: the deterministic figures of every
// point (accuracy, traffic, parameters, attended tokens, rounds) are those of a run without it.
TEST(LayerStackRun, PointsAreThoseOfARunWithoutStacks) {
  const reports::Report one = run_sweep(layer_spec(1), RunEnvironment{});
  const reports::Report four = run_sweep(layer_spec(4), RunEnvironment{});
  ASSERT_EQ(one.points.size(), four.points.size());
  EXPECT_EQ(one.context.sweep.count("layers"), 0u) << "--layers 1 echoes nothing new";
  for (size_t i = 0; i < one.points.size(); ++i) {
    const auto &a = one.points[i], &b = four.points[i];
    SCOPED_TRACE(a.axes.strategy);
    EXPECT_FALSE(a.layer_stack.present());
    EXPECT_EQ(a.axes, b.axes);
    EXPECT_EQ(a.accuracy.rel_l2, b.accuracy.rel_l2);
    EXPECT_EQ(a.accuracy.mass_recall, b.accuracy.mass_recall);
    EXPECT_EQ(a.traffic_per_step.h2d_bytes, b.traffic_per_step.h2d_bytes);
    EXPECT_EQ(a.traffic_per_step.accelerator_flops, b.traffic_per_step.accelerator_flops);
    EXPECT_EQ(a.strategy_params, b.strategy_params);
    EXPECT_EQ(a.kv_fit_fraction, b.kv_fit_fraction);
    EXPECT_EQ(a.step.samples_ns.size(), b.step.samples_ns.size());
    EXPECT_EQ(a.step.pass_sizes, b.step.pass_sizes);
  }
}

TEST(LayerStackRun, BadLayerCountsAreRefusedUpFront) {
  for (int n : {0, -1, 2, 3, 25, kMaxStackLayers + 1}) {
    SweepSpec s = layer_spec(n);
    try {
      s.validate();
      ADD_FAILURE() << "--layers " << n << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitUsage) << n;
      EXPECT_NE(e.problem().find("--layers " + std::to_string(n)), std::string::npos);
      EXPECT_FALSE(e.fix().empty());
    }
  }
  for (int n : {1, 4, 24}) EXPECT_NO_THROW(layer_spec(n).validate()) << n;  // qwen has 24 layers
  SweepSpec trace = layer_spec(4);
  trace.workload = "trace:layer.safetensors";
  EXPECT_THROW(trace.check_layers(), Error) << "a trace holds one layer's KV";
}

// (1 + N) instances per strategy, each with its KV (and on the emulated accelerator its budget's
// share and the layer's bytes, host memory there), plus N layers' fp32 workloads.
TEST(LayerStackRun, GroupMemoryIsEstimatedAndRefusedWithTheFix) {
  SweepSpec s = layer_spec(4);
  s.scope = Scope::attention;
  const ModelPreset& m = find_model_preset("qwen2.5-0.5b");
  // 1000 prompt + 24 steps = 1024 tokens; KV 1024 x 2 x 2 heads x 64 x 2 B = 512 KiB; fp32 K, V
  // 1 MiB; a 1 MiB budget holds all 512 KiB: 4 x 1 MiB + 2 x 5 x (512 + 512) KiB = 14 MiB.
  s.decode_steps = 24;
  const StackMemory need = stack_group_memory(s, m, DType::f16, 1000, 1, 2, 1 << 20, true);
  EXPECT_DOUBLE_EQ(need.host_bytes, 14.0 * (1 << 20));
  EXPECT_DOUBLE_EQ(need.accelerator_bytes, 0);
  const StackMemory gpu = stack_group_memory(s, m, DType::f16, 1000, 1, 2, 1 << 20, false);
  EXPECT_DOUBLE_EQ(gpu.host_bytes, 4.0 * (1 << 20) + 10 * (512 << 10));
  EXPECT_DOUBLE_EQ(gpu.accelerator_bytes, 10.0 * (1 << 20));

  AcceleratorInfo emulated{AcceleratorKind::cpu, "cpu", true, 1 << 20, 0, -1, ""};
  s.seq_lens = {1000};
  const std::map<std::string, int64_t> budgets = {{"qwen2.5-0.5b", 1 << 20}};
  try {
    check_stack_memory(s, 2, emulated, budgets, 8 << 20);
    ADD_FAILURE() << "14 MiB fit in 8 MiB";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(e.problem().find("host memory"), std::string::npos) << e.problem();
    EXPECT_NE(e.fix().find("fewer strategies"), std::string::npos) << e.fix();
  }
  EXPECT_NO_THROW(check_stack_memory(s, 2, emulated, budgets, 16 << 20));
  // A real accelerator under the deployment's budget: 10 MiB of instances in 8 MiB.
  AcceleratorInfo gpu_info{AcceleratorKind::cuda, "gpu", false, 8 << 20, 0, -1, ""};
  EXPECT_THROW(check_stack_memory(s, 2, gpu_info, budgets, 0), Error);
  s.layers = 1;
  EXPECT_NO_THROW(check_stack_memory(s, 2, emulated, budgets, 1)) << "no stack, no check";
}

}  // namespace
}  // namespace hb::bench
