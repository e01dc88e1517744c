// The whole model through the binary: run --price/--power/--gpus-per-node and their refusals,
// a profile's economics errors, the blocks of modeled and measured runs, and `report`'s columns
// for them, blank with their reasons, and for a report written before they existed.
#include <gtest/gtest.h>

#include <fstream>

#include "reports/json_io.h"
#include "tests/cli_fixture.h"

namespace hb::model {
namespace {

class WholeModelCli : public hb::cli_test::CliTest {
 protected:
  const std::string tiny =
      " --model qwen2.5-0.5b --seq-len 256 --strategy cpu-only --decode-steps 3 --warmup 1 "
      "--min-samples 1 --accuracy-steps 1 --accelerator-threads 1 --host-threads 1 -q";
};

TEST_F(WholeModelCli, ModeledRunPricesWithTheCommandLinesEconomics) {
  const std::string out = file("m.json");
  ASSERT_EQ(run("run --mode model --platform preset:h200-pcie5-emr --price 10 --gpus-per-node 2 "
                "--power gpu=500,cpu=100,memory=0 --out " +
                out + tiny),
            0)
      << out_;
  const reports::Report r = reports::read_report(out);
  ASSERT_EQ(r.points.size(), 1u);
  ASSERT_TRUE(r.points[0].whole_model);
  const reports::WholeModel& w = *r.points[0].whole_model;
  EXPECT_EQ(w.layers, 24);
  // $10 per node-hour over 2 GPUs; (2 x 500 + 100 + 0) W over 2 GPUs.
  EXPECT_DOUBLE_EQ(*w.accelerator_usd_per_hour, 5);
  EXPECT_DOUBLE_EQ(*w.cost_per_mtok_usd, 5 / (w.tokens_per_s * 3600) * 1e6);
  EXPECT_DOUBLE_EQ(*w.accelerator_watts, 550);
  EXPECT_NE(w.cost_basis.find("given on the command line (--price)"), std::string::npos)
      << w.cost_basis;
  ASSERT_EQ(run("report " + out), 0) << out_;
  for (const char* column : {"ITL", "tokens/s per user", "$/Mtok", "tokens/s per W"})
    EXPECT_NE(stdout_.find(column), std::string::npos) << column << "\n" << stdout_;
  ASSERT_EQ(run("report " + out + " --format csv"), 0) << out_;
  EXPECT_NE(stdout_.find("itl_ns,tokens_per_s,tokens_per_s_per_user,cost_per_mtok_usd"),
            std::string::npos);
}

TEST_F(WholeModelCli, MeasuredRunWithoutEconomicsShowsBlanksWithTheirReason) {
  const std::string out = file("r.json");
  // Layer scope, asked for: the emulated accelerator's default is attention (issue 47).
  ASSERT_EQ(run("run --accelerator cpu --scope layer --out " + out + tiny), 0) << out_;
  const reports::Report r = reports::read_report(out);
  ASSERT_EQ(r.points.size(), 1u);
  ASSERT_TRUE(r.points[0].whole_model);
  EXPECT_EQ(r.points[0].whole_model->outside_layers_provenance, reports::Provenance::emulated);
  EXPECT_FALSE(r.points[0].whole_model->cost_per_mtok_usd);
  ASSERT_EQ(run("report " + out), 0) << out_;
  EXPECT_NE(stdout_.find("- (a)"), std::string::npos) << stdout_;
  EXPECT_NE(stdout_.find("(a) no price: pass --price USD_PER_HOUR"), std::string::npos) << stdout_;
  EXPECT_NE(stdout_.find("(b) no GPU power"), std::string::npos) << stdout_;
}

TEST_F(WholeModelCli, BadEconomicsOptionsAreRefusedWithTheFix) {
  for (const char* bad :
       {"--price nan", "--price -3", "--price 0", "--price inf", "--price purchase=1e5",
        "--price purchase=1e5,years=-1", "--power gpu=-1", "--power gpu=1,gpu=2", "--power volts=3",
        "--power cpu=nan", "--gpus-per-node 0", "--gpus-per-node 1.5"}) {
    EXPECT_EQ(run(std::string("run --mode model --platform preset:gh200-c2c ") + bad + tiny), 2)
        << bad << "\n"
        << out_;
    EXPECT_NE(out_.find("fix:"), std::string::npos) << bad << "\n" << out_;
  }
  EXPECT_EQ(run("run --mode model --platform presets --price 5" + tiny), 2) << out_;
  EXPECT_NE(out_.find("economics"), std::string::npos) << out_;
}

TEST_F(WholeModelCli, ProfileEconomicsErrorsExitTwoWithThePath) {
  std::string text;
  {
    std::ifstream in(std::string(HB_SOURCE_DIR) + "/model/profiles/gh200-c2c.json");
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  const std::string from = "\"value\": 1000,";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "\"value\": -1000,");
  std::ofstream(file("bad.json")) << text;
  EXPECT_EQ(run("run --mode model --platform " + file("bad.json") + tiny), 2) << out_;
  EXPECT_NE(out_.find("bad.json: $.economics.gpu_power_w.value: must be >= 1"), std::string::npos)
      << out_;
}

TEST_F(WholeModelCli, ReportsFromBeforeTheBlockStillRender) {
  const std::string old =
      std::string(HB_SOURCE_DIR) + "/tests/reports/fixtures/report-v2-before-whole-model.json";
  ASSERT_EQ(run("report " + old), 0) << out_;
  EXPECT_EQ(stdout_.find("Whole model"), std::string::npos) << stdout_;
  ASSERT_EQ(run("report " + old + " --format csv"), 0) << out_;
}

}  // namespace
}  // namespace hb::model
