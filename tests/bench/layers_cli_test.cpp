// `hybridbench run --layers N` through the binary: bad counts exit 2 before anything runs, a
// stack run prints the stacks' table and sentence and writes them into the report, and
// --layers 1 gives exactly the points the code before stacks gave for a fixed seed (a report
// written by that code, tests/bench/fixtures/layers1_before_stacks.json).
#include <filesystem>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "tests/bench/same_point.h"
#include "tests/cli_fixture.h"
#include "reports/json_io.h"

namespace hb::bench {
namespace {

// Every deterministic strategy (HybridGen's selection follows its timings), layer scope (asked
// for: the cpu accelerator's default is attention since issue 47), two lengths and two batches
// (micro-batches from batch 2), one pass of 5 rounds.
const std::string kGoldenArgs =
    "run -q --model qwen2.5-0.5b --seq-len 256,1024 --batch 1,2 "
    "--strategy full-gpu,cpu-only,offload,h2o,streamingllm,quest,infinigen --decode-steps 6 "
    "--warmup 1 --min-samples 3 --rounds 5 --max-samples 5 --accuracy-steps 2 --seed 42 "
    "--accelerator cpu --accelerator-threads 1 --host-threads 1 --repetitions 1 --timeout 30 "
    "--scope layer";

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

TEST_F(LayersCli, LayersOneGivesThePointsOfTheCodeBeforeStacks) {
  const reports::Report before = reports::read_report(
      std::string(HB_SOURCE_DIR) + "/tests/bench/fixtures/layers1_before_stacks.json");
  const std::string out = file("r.json");
  // The fixture cut every batch of 2 in two micro-batches, the default then; since, only
  // strategies whose CPU work overlaps the accelerator are cut by default, so ask for two.
  ASSERT_EQ(run(kGoldenArgs + " --layers 1 --microbatches 2 --out " + out), 0) << out_;
  const reports::Report now = reports::read_report(out);
  testing::expect_same_points(now, before);
  for (const auto& p : now.points) EXPECT_FALSE(p.layer_stack.present()) << p.axes.key();
  auto echo = now.context.sweep;
  echo.erase("tie_margin_fraction");  // echoed since issue 33's --tie-margin, after the fixture
  EXPECT_EQ(echo.at("microbatches"), "2");
  echo["microbatches"] = before.context.sweep.at("microbatches");
  EXPECT_EQ(echo, before.context.sweep) << "--layers 1 echoes nothing new";
}

}  // namespace
}  // namespace hb::bench
