// `run --model PATH` end to end: a Hugging Face config.json (or its folder) sweeps like a preset,
// named by the model and with its file recorded, and a config the layer model cannot represent
// exits 2 naming the keys it needs.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "reports/json_io.h"
#include "tests/cli_fixture.h"

namespace hb::bench {
namespace {

const std::string kFixtures = std::string(HB_SOURCE_DIR) + "/tests/bench/fixtures/hf_configs/";
const std::string kTiny =
    " --seq-len 1k --decode-steps 2 --strategy cpu-only --timeout 2 --warmup 1 --min-samples 1 "
    "--accuracy-steps 1 --accelerator-threads 1 --host-threads 1 --repetitions 1 -q";

class ModelConfigCli : public cli_test::CliTest {};

TEST_F(ModelConfigCli, AConfigFileSweepsLikeAPreset) {
  ASSERT_EQ(run("run --model " + kFixtures + "opt-6.7b.json" + kTiny + " --out " + file("r.json")),
            0)
      << out_;
  const reports::Report r = reports::read_report(file("r.json"));
  ASSERT_EQ(r.points.size(), 1u);
  EXPECT_EQ(r.points[0].axes.model, "facebook/opt-6.7b");
  EXPECT_EQ(r.points[0].status, reports::PointStatus::ok) << r.points[0].reason;
  // The report records the file the model was read from.
  const auto source = r.context.sweep.find("model_source.facebook/opt-6.7b");
  ASSERT_NE(source, r.context.sweep.end());
  EXPECT_NE(source->second.find("opt-6.7b.json"), std::string::npos) << source->second;
}

// The config a run reads is an input: an --out naming it (or the config.json of a --model
// folder) would overwrite it, so it is refused before anything runs and left as it was.
TEST_F(ModelConfigCli, AnOutputThatIsTheConfigIsRefused) {
  std::filesystem::create_directories(file("m"));
  std::filesystem::copy_file(kFixtures + "opt-6.7b.json", file("m/config.json"));
  const std::string before = slurp(file("m/config.json"));
  for (const std::string& model : {file("m/config.json"), file("m")}) {
    SCOPED_TRACE(model);
    EXPECT_EQ(run("run --model " + model + kTiny + " --out " + file("m/config.json")), 2) << out_;
    EXPECT_NE(out_.find("hybridbench: error: "), std::string::npos) << out_;
    EXPECT_EQ(slurp(file("m/config.json")), before);
  }
}

TEST_F(ModelConfigCli, AFolderRunsInModelModeOnAPublishedMachine) {
  ASSERT_EQ(run("run --mode model --platform rtx6000-ada --model " + kFixtures + "Llama-3.1-8B" +
                kTiny + " --out " + file("r.json")),
            0)
      << out_;
  const reports::Report r = reports::read_report(file("r.json"));
  ASSERT_EQ(r.points.size(), 1u);
  EXPECT_EQ(r.points[0].axes.model, "Llama-3.1-8B");
  EXPECT_EQ(r.points[0].provenance, reports::Provenance::modeled);
  // The whole model's ITL from the config's own depth and vocabulary, as for a preset.
  ASSERT_TRUE(r.points[0].whole_model.has_value());
  EXPECT_EQ(r.points[0].whole_model->layers, 32);
  EXPECT_GT(r.points[0].whole_model->outside_layers_ns, 0);
}

TEST_F(ModelConfigCli, AMeasuredRunTimesTheConfigsWholeModel) {
  ASSERT_EQ(run("run --model " + kFixtures + "mistral-7b-v0.1.json" + kTiny +
                " --scope layer --out " + file("r.json")),
            0)
      << out_;
  const reports::Report r = reports::read_report(file("r.json"));
  ASSERT_EQ(r.points.size(), 1u);
  ASSERT_TRUE(r.points[0].whole_model.has_value()) << "no whole-model block";
  EXPECT_EQ(r.points[0].whole_model->layers, 32);
}

TEST_F(ModelConfigCli, UnrepresentableConfigsExitTwoNamingTheKeys) {
  EXPECT_EQ(run("run --model " + kFixtures + "mixtral-8x7b.json" + kTiny), 2) << out_;
  EXPECT_NE(out_.find("model_type \"mixtral\""), std::string::npos) << out_;
  EXPECT_NE(out_.find("num_hidden_layers, hidden_size"), std::string::npos) << out_;
  {
    std::ofstream(file("moe.json")) << R"({"model_type": "qwen2", "num_experts": 60})";
    std::ofstream(file("short.json")) << R"({"model_type": "llama", "hidden_size": 4096})";
    std::ofstream(file("broken.json")) << R"({"model_type": "llama",)";
  }
  EXPECT_EQ(run("run --model " + file("moe.json") + kTiny), 2) << out_;
  EXPECT_NE(out_.find("\"num_experts\" says mixture-of-experts"), std::string::npos) << out_;
  EXPECT_EQ(run("run --model " + file("short.json") + kTiny), 2) << out_;
  EXPECT_NE(out_.find("short.json: missing key \"num_hidden_layers\""), std::string::npos) << out_;
  EXPECT_EQ(run("run --model " + file("broken.json") + kTiny), 2) << out_;
  EXPECT_NE(out_.find("broken.json: not JSON"), std::string::npos) << out_;
  EXPECT_EQ(run("run --model " + file("absent.json") + kTiny), 2) << out_;
  EXPECT_NE(out_.find("cannot read model config"), std::string::npos) << out_;
}

}  // namespace
}  // namespace hb::bench
