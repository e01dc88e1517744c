#include "bench/runner.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <gtest/gtest.h>

#include "baselines/register.h"
#include "core/error.h"
#include "hybrid/register.h"
#include "kernels/cpu/attention.h"
#include "kernels/reference/attention_ref.h"
#include "bench/accuracy.h"
#include "tests/bench/tiny_spec.h"

namespace hb::bench {
namespace {

SweepSpec tiny_spec() { return testing::tiny_spec({100, 300}); }

// The ETA's weights: a measured group samples until --timeout whatever its length, so a group of
// 3x the context costs about as much, not 3x (the default sweep's ETA ran 8x ahead on its 4k
// group); the context adds its setup (0.1 ms a token).
TEST(Runner, MeasuredGroupsCostTheirTimeoutPlusSetupInTheEta) {
  auto spec = tiny_spec();
  spec.stop.timeout_s = 2;
  std::vector<double> first_group_share;
  run_sweep(spec, RunEnvironment{}, [&](const Progress& p) {
    if (p.done == 2 && first_group_share.empty())
      first_group_share.push_back(p.done_cost / p.total_cost);
  });
  ASSERT_EQ(first_group_share.size(), 1u);
  const double expected = (2 + 1e-4 * 100) / ((2 + 1e-4 * 100) + (2 + 1e-4 * 300));
  EXPECT_NEAR(first_group_share[0], expected, 1e-9);
}

TEST(Runner, ExactStrategiesMatchTheReference) {
  auto report = run_sweep(tiny_spec(), RunEnvironment{});
  ASSERT_EQ(report.points.size(), 4u);
  for (const auto& p : report.points) {
    SCOPED_TRACE(p.axes.strategy + " " + std::to_string(p.axes.seq_len));
    EXPECT_EQ(p.status, reports::PointStatus::ok) << p.reason;
    EXPECT_EQ(p.provenance,
              reports::Provenance::emulated);  // the cpu accelerator is never reported as a GPU
    EXPECT_EQ(p.axes.accelerator, "cpu");
    EXPECT_GE(p.step.summary.count, 3);
    EXPECT_LE(p.step.summary.count, 5);
    EXPECT_EQ(p.accuracy.steps_scored, 2);
    // fp16 KV is stored exactly (the workload is pre-rounded); fp32 accumulation over a few
    // hundred tokens stays far below 1e-4 relative error.
    EXPECT_LT(p.accuracy.rel_l2, 1e-4);
    EXPECT_GT(p.accuracy.cosine, 0.9999);
    EXPECT_DOUBLE_EQ(p.accuracy.mass_recall, 1.0);
    EXPECT_NE(p.step.stop_reason, reports::StopReason::none);
    EXPECT_EQ(p.step.warmup_steps, 1);  // the report says how many steps were not timed
  }
  EXPECT_FALSE(report.speedups.empty());
}

TEST(Runner, CountsTrafficExactly) {
  auto spec = tiny_spec();
  spec.seq_lens = {100};
  auto report = run_sweep(spec, RunEnvironment{});
  const int64_t per_token = 2 * 2 * 64 * 2;  // K+V x 2 KV heads x 64 dims x fp16
  for (const auto& p : report.points) {
    // Steps are timed from step 1 (one warm-up); context at step s is 100 + s + 1.
    const double mean_ctx = [&] {
      double s = 0;
      for (int i = 0; i < p.step.summary.count; ++i) s += 100 + 1 + 1 + i;
      return s / p.step.summary.count;
    }();
    if (p.axes.strategy == "cpu-only") {
      EXPECT_EQ(p.traffic_per_step.h2d_bytes, 14 * 64 * 4);  // the output goes up
      EXPECT_EQ(p.traffic_per_step.d2h_bytes,
                14 * 64 * 4 + 2 * 2 * 64 * 4);  // q and new k, v go down
      EXPECT_NEAR(p.traffic_per_step.bytes_read[0][int(MemoryKind::local_dram)],
                  mean_ctx * per_token, per_token);
    } else {
      EXPECT_EQ(p.traffic_per_step.h2d_bytes, 0);
      EXPECT_NEAR(p.traffic_per_step.bytes_read[1][int(MemoryKind::accelerator)],
                  mean_ctx * per_token, per_token);
    }
  }
}

// --repetitions: every pass's timed steps pooled into one point per axes, nothing else doubled.
TEST(Runner, RepetitionsPoolEachPointsPasses) {
  auto spec = tiny_spec();
  spec.stop.min_samples = 5;  // 5 timed steps per pass: decode_steps 6 - 1 warm-up
  spec.stop.max_noise = 1e-9;
  const auto once = run_sweep(spec, RunEnvironment{});
  spec.repetitions = 3;
  const auto pooled = run_sweep(spec, RunEnvironment{});
  ASSERT_EQ(pooled.points.size(), once.points.size());
  EXPECT_EQ(pooled.context.sweep.at("repetitions"), "3");
  for (size_t i = 0; i < pooled.points.size(); ++i) {
    const auto& p = pooled.points[i];
    SCOPED_TRACE(p.axes.key());
    ASSERT_EQ(p.status, reports::PointStatus::ok) << p.reason;
    EXPECT_EQ(p.axes, once.points[i].axes);
    EXPECT_EQ(p.step.summary.count, 3 * once.points[i].step.summary.count);
    EXPECT_EQ(p.step.samples_ns.size(), static_cast<size_t>(p.step.summary.count));
    // Every pass's rounds (5 of one step each) stay rounds of the pooled point.
    ASSERT_EQ(p.step.pass_sizes.size(), 3 * once.points[i].step.pass_sizes.size());
    EXPECT_EQ(std::accumulate(p.step.pass_sizes.begin(), p.step.pass_sizes.end(), int64_t{0}),
              p.step.summary.count);
    EXPECT_EQ(p.step.round_slots.size(), p.step.pass_sizes.size());
    // Which rounds each pass ran: the passes' spread widens the speedups' intervals.
    const auto per_pass = static_cast<int64_t>(once.points[i].step.pass_sizes.size());
    EXPECT_EQ(p.step.repetition_rounds, (std::vector<int64_t>{per_pass, per_pass, per_pass}));
    for (const auto& [name, t] : p.phases) EXPECT_EQ(t.summary.count, p.step.summary.count) << name;
    EXPECT_EQ(p.accuracy.steps_scored, once.points[i].accuracy.steps_scored);  // the first pass's
    EXPECT_DOUBLE_EQ(p.accuracy.rel_l2, once.points[i].accuracy.rel_l2);  // same seeded workload
    EXPECT_EQ(p.traffic_per_step, once.points[i].traffic_per_step);
  }
  EXPECT_EQ(pooled.speedups.size(), once.speedups.size());
  for (const auto& s : pooled.speedups)
    EXPECT_EQ(s.passes, 3) << s.strategy_a << "/" << s.strategy_b;
  for (const auto& s : once.speedups) EXPECT_EQ(s.passes, 0);
  spec.repetitions = 0;
  EXPECT_THROW(spec.validate(), Error);
}

// --max-samples: a point still short of its noise target when its decode positions run out
// replays them, so its sample count is the cap, not the positions; accuracy stays the first
// pass's.
TEST(Runner, MaxSamplesReplaysTheDecodePositions) {
  auto spec = tiny_spec();
  spec.seq_lens = {100};
  spec.strategies = {"cpu-only", "hybridgen"};
  spec.stop.max_noise = 1e-9;  // never met: every point runs to its cap
  const auto once = run_sweep(spec, RunEnvironment{});
  spec.stop.max_samples = 12;  // 5 timed positions a pass: 5 + 5 + 2
  const auto replayed = run_sweep(spec, RunEnvironment{});
  ASSERT_EQ(replayed.points.size(), once.points.size());
  EXPECT_EQ(replayed.context.sweep.at("max_samples"), "12");
  for (size_t i = 0; i < replayed.points.size(); ++i) {
    const auto &p = replayed.points[i], &o = once.points[i];
    SCOPED_TRACE(p.axes.key());
    ASSERT_EQ(p.status, reports::PointStatus::ok) << p.reason;
    EXPECT_EQ(o.step.summary.count, 5);
    EXPECT_EQ(p.step.summary.count, 12);
    EXPECT_EQ(p.step.stop_reason, reports::StopReason::max_steps);
    EXPECT_EQ(p.axes, o.axes);  // the positions are the same axis
    EXPECT_EQ(p.accuracy.steps_scored, 2);
    EXPECT_DOUBLE_EQ(p.accuracy.rel_l2, o.accuracy.rel_l2);
    EXPECT_EQ(p.trajectory.size(), o.trajectory.size());  // the first pass's
    EXPECT_TRUE(p.warnings.empty());
  }
  // A cap under the positions stops early.
  spec.stop.max_samples = 3;
  for (const auto& p : run_sweep(spec, RunEnvironment{}).points) EXPECT_EQ(p.step.summary.count, 3);
  spec.stop.max_samples = -1;
  EXPECT_THROW(spec.validate(), Error);
}

// --accuracy-steps -1 scores every position, so the noise rule is held for the whole first pass;
// a replay has nothing left to score and lets it stop the point.
// --accuracy-steps -1 (the default): the noise rule waits for every timed position of the first
// pass to be scored, and no longer: the point stops at the end of that pass, without a replay.
TEST(Runner, NoiseWaitsUntilEveryTimedPositionWasScored) {
  auto spec = tiny_spec();
  spec.seq_lens = {100};
  spec.strategies = {"cpu-only"};
  spec.accuracy_steps = -1;
  spec.stop.max_noise = 1.0;  // met by any samples
  spec.stop.max_samples = 20;
  const auto r = run_sweep(spec, RunEnvironment{});
  ASSERT_EQ(r.points.size(), 1u);
  const auto& p = r.points[0];
  EXPECT_EQ(p.step.stop_reason, reports::StopReason::noise);
  // Not before the 5 timed positions were all scored. Usually exactly 5, but --max-noise cannot
  // exceed 100%, and on a loaded 2-core machine steps have spread beyond it (a replay then adds
  // samples, 9 seen), so only "not sooner" is asserted.
  EXPECT_GE(p.step.summary.count, 5);
  EXPECT_EQ(p.accuracy.steps_scored, 5);
  spec.stop.rounds = 7;  // more rounds than a pass holds: a replay supplies them
  const auto more = run_sweep(spec, RunEnvironment{});
  EXPECT_EQ(more.points[0].step.stop_reason, reports::StopReason::noise);
  EXPECT_GE(more.points[0].step.pass_sizes.size(), 7u);
  EXPECT_EQ(more.points[0].step.summary.count,
            static_cast<int64_t>(more.points[0].step.pass_sizes.size()));
  EXPECT_EQ(more.points[0].accuracy.steps_scored, 5);  // replays are not scored again
}

TEST(Runner, FullGpuReportsOomOnASmallBudget) {
  auto spec = tiny_spec();
  spec.accelerator.capacity_bytes = 64 * 1024;
  auto report = run_sweep(spec, RunEnvironment{});
  bool saw_oom = false;
  for (const auto& p : report.points)
    if (p.axes.strategy == "full-gpu" && p.axes.seq_len == 300) {
      EXPECT_EQ(p.status, reports::PointStatus::oom);
      EXPECT_NE(p.reason.find("MiB"), std::string::npos);
      saw_oom = true;
    }
  EXPECT_TRUE(saw_oom);
}

TEST(Runner, SharesPartitionTheSweepByWorkloadGroup) {
  // --distribute points: ranks 0 and 1 of 2 take alternate (model, length, batch) groups, each
  // with every strategy, and together cover the sweep once.
  SweepSpec spec = tiny_spec();
  spec.seq_lens = {100, 200, 300};
  spec.decode_steps = 3;
  spec.share_count = 2;
  std::map<int64_t, int> runs;
  for (int share : {0, 1}) {
    spec.share_index = share;
    const auto report = run_sweep(spec, RunEnvironment{});
    for (const auto& p : report.points) {
      ++runs[p.axes.seq_len];
      EXPECT_EQ(p.axes.seq_len == 200 ? 1 : 0, share) << p.axes.seq_len;
    }
  }
  EXPECT_EQ(runs, (std::map<int64_t, int>{{100, 2}, {200, 2}, {300, 2}}));
  spec.share_index = 2;
  EXPECT_THROW(run_sweep(spec, RunEnvironment{}), Error);
}

// "headline" is what the headline and the procurement view compare: every strategy but the
// ablations (model mode's default, cli/cmd_run.cpp), in registry order, each once.
TEST(Runner, HeadlineStrategiesAreAllButTheAblations) {
  tiny_spec();  // registers every strategy
  const auto all = resolve_strategies({"all"});
  const auto headline = resolve_strategies({"headline"});
  std::vector<std::string> expected;
  for (const auto& n : all)
    if (StrategyRegistry::instance().find(n).role != StrategyRole::ablation) expected.push_back(n);
  EXPECT_EQ(headline, expected);
  EXPECT_LT(headline.size(), all.size());
  for (const char* ablation : {"hybridgen-lse", "hybridgen-static", "hybridgen-naive"})
    EXPECT_EQ(std::count(headline.begin(), headline.end(), ablation), 0) << ablation;
  for (const char* kept : {"hybridgen", "full-gpu", "quest", "infinigen"})
    EXPECT_EQ(std::count(headline.begin(), headline.end(), kept), 1) << kept;
  EXPECT_EQ(resolve_strategies({"headline", "hybridgen-lse", "h2o"}).size(), headline.size() + 1);
}

TEST(Runner, RejectsBadSweepsUpFront) {
  auto spec = tiny_spec();
  spec.strategies = {"flexgen-magic"};
  EXPECT_THROW(run_sweep(spec, RunEnvironment{}), Error);
  spec = tiny_spec();
  spec.strategy_options["cpu-only.bogus"] = "1";
  EXPECT_THROW(run_sweep(spec, RunEnvironment{}), Error);
  spec = tiny_spec();
  spec.decode_steps = 1;
  EXPECT_THROW(run_sweep(spec, RunEnvironment{}), Error);
  spec = tiny_spec();
  RunEnvironment env;
  env.host_memory_budget_bytes = 1024;
  EXPECT_THROW(run_sweep(spec, env), Error);
}

TEST(SweepSpec, ParsesSequenceLengths) {
  EXPECT_EQ(parse_seq_lens("4k:32k:x2"), (std::vector<int64_t>{4096, 8192, 16384, 32768}));
  EXPECT_EQ(parse_seq_lens("1k:3k:+1k,100"), (std::vector<int64_t>{100, 1024, 2048, 3072}));
  EXPECT_EQ(parse_token_count("128K"), 131072);
  EXPECT_THROW(parse_seq_lens("4k:1k:x2"), Error);
  EXPECT_THROW(parse_seq_lens("4q"), Error);
  EXPECT_THROW(parse_seq_lens("4k:8k"), Error);
  EXPECT_THROW(parse_seq_lens(""), Error);
}

}  // namespace
}  // namespace hb::bench
