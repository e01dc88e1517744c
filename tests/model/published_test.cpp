// The published measurements table (model/published/measurements.json, model/published.h): every
// row loads, names a shipped platform preset, a model preset and a registered strategy, and a row
// that does not is refused with its JSON path.
#include "model/published.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "baselines/register.h"
#include "core/error.h"
#include "core/strategy.h"
#include "hybrid/register.h"

namespace hb::model {
namespace {

std::string shipped_text() {
  std::ifstream in(std::string(HB_SOURCE_DIR) + "/model/published/measurements.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string error_of(const std::string& text) {
  try {
    parse_published_measurements(text, "pub.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    return e.what();
  }
  return "(accepted)";
}

TEST(Published, EveryShippedRowLoadsAndNamesKnownPresets) {
  register_baselines(StrategyRegistry::instance());
  register_hybrid(StrategyRegistry::instance());
  const auto rows = parse_published_measurements(shipped_text(), "measurements.json");
  int quest = 0, shadowkv = 0, flexgen = 0;
  for (const auto& r : rows) {
    SCOPED_TRACE(r.publication + " " + r.where + " " + std::to_string(r.seq_len));
    EXPECT_NO_THROW(StrategyRegistry::instance().find(r.strategy)) << r.strategy;
    EXPECT_GT(r.value, 0);
    if (r.platform == "rtx6000-ada" && r.model == "llama-2-7b" && r.batch == 1 &&
        r.metric == PublishedMetric::ms_per_token)
      ++quest;
    if (r.platform == "a100-80gb-sxm" && r.model == "llama-3.1-8b" &&
        r.metric == PublishedMetric::tokens_per_s)
      ++shadowkv;
    if (r.platform == "t4-pcie3" && r.read == PublishedReading::printed) ++flexgen;
  }
  EXPECT_EQ(quest, 6);  // full KV and a 2048-token budget at 8K, 16K, 32K
  EXPECT_EQ(shadowkv, 3);
  EXPECT_EQ(flexgen, 3);
  EXPECT_DOUBLE_EQ(rows.front().value, 21.6);
  // NVIDIA NIM's Llama-3.3-70B on 2 x H100: tensor parallel over 2 GPUs, fp8 weights.
  const auto tp = std::find_if(rows.begin(), rows.end(), [](const auto& r) { return r.tp > 1; });
  ASSERT_NE(tp, rows.end());
  EXPECT_EQ(tp->tp, 2);
  EXPECT_EQ(tp->weights, PricedDtype::fp8);
  EXPECT_EQ(tp->kv, PricedDtype::fp16);
  EXPECT_DOUBLE_EQ(tp->value, 18.58);
  EXPECT_EQ(rows.back().model, "opt-30b");
  EXPECT_EQ(rows.back().batch, 144);
  EXPECT_DOUBLE_EQ(rows.back().value, 7.32);
}

TEST(Published, RowsNamingUnknownThingsAreRefusedWithTheirPath) {
  const std::string text = shipped_text();
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    return error_of(t);
  };
  const std::string platform = with("\"rtx6000-ada\"", "\"rtx9000\"");
  EXPECT_NE(platform.find("pub.json: $.rows[0].platform"), std::string::npos) << platform;
  EXPECT_NE(with("\"llama-2-7b\"", "\"llama-9b\"").find("unknown model"), std::string::npos);
  EXPECT_NE(with("\"ms_per_token\"", "\"ms\"").find("not one of ms_per_token"), std::string::npos);
  EXPECT_NE(with("\"value\": 21.6", "\"value\": -1").find("positive"), std::string::npos);
  EXPECT_NE(with("\"batch\": 1", "\"batch\": 1.5").find("whole number"), std::string::npos);
  EXPECT_NE(with("\"read\": \"plot\"", "\"red\": \"plot\"").find("unknown member \"red\""),
            std::string::npos);
  EXPECT_NE(error_of("{").find("pub.json: not JSON"), std::string::npos);
  // A whole generation's figure (gen_len) is a throughput, not a step's latency.
  const std::string gen = with("\"batch\": 1,", "\"batch\": 1, \"gen_len\": 32,");
  EXPECT_NE(gen.find("$.rows[0].gen_len"), std::string::npos) << gen;
  EXPECT_NE(gen.find("tokens_per_s"), std::string::npos) << gen;
}

TEST(Published, GenerationLengthAndExclusionAreRead) {
  const auto rows = parse_published_measurements(shipped_text(), "measurements.json");
  int flexgen = 0, excluded = 0;
  for (const auto& r : rows) {
    if (r.platform == "t4-pcie3") flexgen += r.gen_len == 32;
    excluded += !r.excluded.empty();
  }
  EXPECT_EQ(flexgen, 3);   // prompt 512, 32 tokens generated
  EXPECT_EQ(excluded, 1);  // OPT-30B: FlexGen offloads its weights, which no strategy here does
  EXPECT_FALSE(rows.back().excluded.empty());
}

}  // namespace
}  // namespace hb::model
