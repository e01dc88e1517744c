// Issue 46, item 7: the shipped sweep preset that poses HybridGen's paper comparison
// (model/presets/hybridgen-paper.json, model/README.md "Sweep presets"): what it poses, and that
// every baseline answers at every point of it (a trimmed run: one length).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/model_presets.h"
#include "model/platform_model.h"
#include "reports/json_io.h"
#include "tests/cli_fixture.h"

namespace hb::model {
namespace {

const std::string kPreset = std::string(HB_SOURCE_DIR) + "/model/presets/hybridgen-paper.json";
const std::set<std::string> kBaselines = {"offload",      "cpu-only",  "h2o",
                                          "streamingllm", "infinigen", "quest"};

nlohmann::json preset() {
  std::ifstream in(kPreset);
  return nlohmann::json::parse(in);
}

int64_t tokens(const std::string& s) {
  return s.back() == 'k' ? std::stoll(s) * 1024 : std::stoll(s);
}

TEST(PaperPreset, PosesThePapersRegime) {
  const nlohmann::json p = preset();
  EXPECT_EQ(p.at("mode"), "model");
  // Three GPU platforms, each with a CXL expander beside local DRAM.
  std::set<std::string> gpus;
  for (const auto& name : p.at("platform")) {
    const PlatformModel m = load_platform_model("preset:" + name.get<std::string>());
    EXPECT_NE(m.tier(MemoryKind::local_dram), nullptr) << name;
    EXPECT_NE(m.tier(MemoryKind::cxl), nullptr) << name;
    gpus.insert(m.accelerator.name);
  }
  EXPECT_EQ(gpus.size(), 3u);
  // Three families, several sizes.
  std::set<ModelFamily> families;
  for (const auto& m : p.at("model"))
    families.insert(find_model_preset(m.get<std::string>()).family);
  EXPECT_EQ(families, (std::set{ModelFamily::opt, ModelFamily::llama, ModelFamily::qwen}));
  EXPECT_GE(p.at("model").size(), 4u);
  // Batch >= 8, lengths from 2K to 32K.
  for (const auto& b : p.at("batch")) EXPECT_GE(b.get<int>(), 8);
  std::set<int64_t> lens;
  for (const auto& s : p.at("seq-len")) lens.insert(tokens(s.get<std::string>()));
  EXPECT_EQ(*lens.begin(), 2048);
  EXPECT_EQ(*lens.rbegin(), 32768);
  // HybridGen and the six baselines, at one KV budget (matched).
  std::set<std::string> strategies;
  for (const auto& s : p.at("strategy")) strategies.insert(s.get<std::string>());
  std::set<std::string> want = kBaselines;
  want.insert("hybridgen");
  EXPECT_EQ(strategies, want);
  EXPECT_EQ(p.at("kv-budget").size(), 1u);
}

class PaperPresetCli : public hb::cli_test::CliTest {};

// The preset as shipped, trimmed (flags win over the file) to its shortest length, 3 decode steps
// and each family's largest model (the tightest beside its weights; the whole preset takes
// minutes, model/README.md): on every platform all six baselines and HybridGen are timed, none
// oom.
TEST_F(PaperPresetCli, EveryBaselineAnswersAtEveryPoint) {
  const std::string out = file("paper.json");
  ASSERT_EQ(
      run("run -q --config " + kPreset +
          " --seq-len 2k --model opt-2.7b,llama-3.1-8b,qwen2.5-14b --decode-steps 3 --warmup 1 "
          "--min-samples 1 --accuracy-steps 1 --out " +
          out),
      0)
      << out_;
  const reports::Report r = reports::read_report(out);
  const size_t settings = preset().at("platform").size() * 3;
  EXPECT_EQ(r.points.size(), settings * (kBaselines.size() + 1));
  std::map<std::string, int> answered;
  for (const auto& pt : r.points) {
    EXPECT_EQ(pt.status, reports::PointStatus::ok) << pt.axes.key() << ": " << pt.reason;
    if (pt.timed()) ++answered[pt.axes.strategy];
  }
  for (const auto& b : kBaselines) EXPECT_EQ(answered[b], static_cast<int>(settings)) << b;
}

}  // namespace
}  // namespace hb::model
