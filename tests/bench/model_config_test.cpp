// A model by its Hugging Face config.json (bench/model_config): each family's public config reads
// to the matching preset's shape, and what the layer model cannot represent is refused (exit 2)
// naming the keys it needs.
#include "bench/model_config.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "bench/sweep_spec.h"
#include "core/error.h"

namespace hb::bench {
namespace {

namespace fs = std::filesystem;

const std::string kFixtures = std::string(HB_SOURCE_DIR) + "/tests/bench/fixtures/hf_configs/";

std::string text_of(const std::string& name) {
  std::ifstream in(kFixtures + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The problem an hb::Error states (with its exit code checked), or "(accepted)".
std::string problem_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage) << e.problem();
    return std::string(e.what());
  }
  return "(accepted)";
}

void expect_same_shape(const ModelPreset& got, const std::string& preset) {
  const ModelPreset& want = find_model_preset(preset);
  EXPECT_EQ(got.family, want.family) << preset;
  EXPECT_EQ(got.layers, want.layers) << preset;
  EXPECT_EQ(got.hidden, want.hidden) << preset;
  EXPECT_EQ(got.ffn, want.ffn) << preset;
  EXPECT_EQ(got.vocab, want.vocab) << preset;
  EXPECT_EQ(got.max_context, want.max_context) << preset;
  EXPECT_EQ(got.shape.q_heads, want.shape.q_heads) << preset;
  EXPECT_EQ(got.shape.kv_heads, want.shape.kv_heads) << preset;
  EXPECT_EQ(got.shape.head_dim, want.shape.head_dim) << preset;
  EXPECT_EQ(layer_weight_bytes(got), layer_weight_bytes(want)) << preset;
  EXPECT_EQ(lm_head_weight_bytes(got), lm_head_weight_bytes(want)) << preset;
}

TEST(ModelConfig, EachFamilyReadsToTheMatchingPresetsShape) {
  const ModelPreset llama = read_model_config(kFixtures + "Llama-3.1-8B");  // a folder
  expect_same_shape(llama, "llama-3.1-8b");
  EXPECT_EQ(llama.name, "Llama-3.1-8B");  // no _name_or_path: the folder's name
  EXPECT_EQ(llama.shape.kv_dtype, DType::bf16);
  EXPECT_NE(llama.source.find("Llama-3.1-8B/config.json"), std::string::npos) << llama.source;

  expect_same_shape(read_model_config(kFixtures + "qwen2.5-7b.json"), "qwen2.5-7b");

  const ModelPreset opt = read_model_config(kFixtures + "opt-6.7b.json");
  expect_same_shape(opt, "opt-6.7b");
  EXPECT_EQ(opt.name, "facebook/opt-6.7b");  // its _name_or_path
  EXPECT_EQ(opt.shape.kv_dtype, DType::f16);
}

TEST(ModelConfig, FamiliesWithoutAPresetReadTheirOwnWidths) {
  const ModelPreset mistral = read_model_config(kFixtures + "mistral-7b-v0.1.json");
  EXPECT_EQ(mistral.name, "mistral-7b-v0.1");  // the file's stem
  EXPECT_EQ(mistral.family, ModelFamily::llama);
  EXPECT_EQ(mistral.max_context, 32768);
  EXPECT_EQ(mistral.ffn, 14336);
  EXPECT_EQ(mistral.shape.kv_heads, 8);
  EXPECT_NE(mistral.source.find("sliding_window not modelled"), std::string::npos);

  // Gemma: head_dim given (16 x 256 = 4096 query width on a 3072-wide model), MHA, gated FFN.
  const ModelPreset gemma = read_model_config(kFixtures + "gemma-7b.json");
  EXPECT_EQ(gemma.family, ModelFamily::llama);
  EXPECT_EQ(gemma.hidden, 3072);
  EXPECT_EQ(gemma.shape.head_dim, 256);
  EXPECT_EQ(gemma.shape.q_heads, 16);
  EXPECT_EQ(gemma.shape.kv_heads, 16);
  EXPECT_EQ(gemma.vocab, 256000);
  EXPECT_EQ(gemma.max_context, 8192);
  EXPECT_NE(gemma.source.find("gated (GeGLU) FFN"), std::string::npos);
  // 3072 x (16 + 32) x 256 QKV + 4096 x 3072 output + 3 x 3072 x 24576 FFN, 2 bytes each.
  EXPECT_EQ(layer_weight_bytes(gemma),
            2 * (int64_t{3072} * 48 * 256 + int64_t{4096} * 3072 + 3 * int64_t{3072} * 24576));
}

TEST(ModelConfig, AbsentKvHeadsMeanMultiHeadAttention) {
  std::string text = text_of("mistral-7b-v0.1.json");
  text.replace(text.find("\"num_key_value_heads\": 8,"), 25, "");
  EXPECT_EQ(parse_model_config(text, "t.json", "t").shape.kv_heads, 32);
}

TEST(ModelConfig, WhatTheLayerModelCannotRepresentIsRefusedNamingTheKeys) {
  const std::string mistral = text_of("mistral-7b-v0.1.json");
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = mistral;
    t.replace(t.find(from), from.size(), to);
    return problem_of([&] { parse_model_config(t, "m/config.json", "m"); });
  };
  const std::string missing = with("\"intermediate_size\": 14336,", "");
  EXPECT_NE(missing.find("m/config.json: missing key \"intermediate_size\""), std::string::npos)
      << missing;
  EXPECT_NE(missing.find("num_hidden_layers, hidden_size"), std::string::npos) << missing;
  EXPECT_NE(with("\"hidden_size\": 4096", "\"hidden_size\": 4096.5").find("not an integer"),
            std::string::npos);
  EXPECT_NE(with("\"num_hidden_layers\": 32", "\"num_hidden_layers\": 0").find("outside 1.."),
            std::string::npos);
  EXPECT_NE(with("\"vocab_size\": 32000", "\"vocab_size\": -5").find("outside 1.."),
            std::string::npos);
  EXPECT_NE(with("\"hidden_size\": 4096", "\"hidden_size\": \"4096\"").find("not an integer"),
            std::string::npos);
  EXPECT_NE(with("\"num_key_value_heads\": 8", "\"num_key_value_heads\": 5").find("shared evenly"),
            std::string::npos);
  EXPECT_NE(with("\"torch_dtype\": \"bfloat16\"", "\"torch_dtype\": \"float8\"").find("float8"),
            std::string::npos);
  // 2^64 - 1 experts once read as -1 (dense) through a signed conversion.
  EXPECT_NE(with("\"num_key_value_heads\": 8,", "\"num_experts\": 18446744073709551615,")
                .find("mixture-of-experts"),
            std::string::npos);
  EXPECT_EQ(with("\"num_key_value_heads\": 8,", "\"num_experts\": 1,"), "(accepted)");
  const std::string moe = with("\"num_key_value_heads\": 8,", "\"num_local_experts\": 8,");
  EXPECT_NE(moe.find("\"num_local_experts\" says mixture-of-experts"), std::string::npos) << moe;
  const std::string mixtral =
      problem_of([] { read_model_config(kFixtures + "mixtral-8x7b.json"); });
  EXPECT_NE(mixtral.find("model_type \"mixtral\""), std::string::npos) << mixtral;
  EXPECT_NE(mixtral.find("model_type (llama, mistral, qwen2, gemma, gemma2 or opt)"),
            std::string::npos)
      << mixtral;
  const std::string bad =
      problem_of([] { parse_model_config("{\"model_type\": ", "x.json", "x"); });
  EXPECT_NE(bad.find("x.json: not JSON"), std::string::npos) << bad;
  EXPECT_NE(problem_of([] { parse_model_config("[1]", "x.json", "x"); }).find("JSON object"),
            std::string::npos);
}

TEST(ModelConfig, ANameTheModelListCannotHoldFallsBackToTheFilesName) {
  std::string text = text_of("opt-6.7b.json");
  const std::string from = "facebook/opt-6.7b";
  text.replace(text.find(from), from.size(), "a,b");
  EXPECT_EQ(parse_model_config(text, "o.json", "o").name, "o");
  text.replace(text.find("a,b"), 3, "./ckpt/my-opt/");
  EXPECT_EQ(parse_model_config(text, "o.json", "o").name, "my-opt");
}

TEST(ModelConfig, OnlyABoundedRegularFileIsRead) {
  const fs::path dir =
      fs::temp_directory_path() / ("hb-model-config-" + std::to_string(::getpid()));
  fs::create_directories(dir / "empty");
  EXPECT_NE(problem_of([&] { read_model_config((dir / "empty").string()); }).find("config.json"),
            std::string::npos);
  EXPECT_NE(problem_of([] { read_model_config("/dev/null"); }).find("not a regular file"),
            std::string::npos);
  {
    std::ofstream big(dir / "big.json");
    big << std::string(kMaxModelConfigBytes + 1, ' ');
  }
  EXPECT_NE(problem_of([&] { read_model_config((dir / "big.json").string()); }).find("bytes"),
            std::string::npos);
  fs::remove_all(dir);
}

TEST(ModelConfig, PathsResolveToOwnModelsAndPresetsStayNames) {
  EXPECT_FALSE(is_model_config_path("llama-3.1-8b"));
  EXPECT_FALSE(is_model_config_path("LLAMA-3.1-8B"));
  EXPECT_TRUE(is_model_config_path("x/config.json"));
  EXPECT_TRUE(is_model_config_path("model.json"));
  SweepSpec spec;
  spec.models = {"llama-3.1-8b", kFixtures + "opt-6.7b.json", kFixtures + "opt-6.7b.json"};
  resolve_model_configs(spec);
  ASSERT_EQ(spec.own_models.size(), 1u);
  EXPECT_EQ(spec.models[1], "facebook/opt-6.7b");
  EXPECT_EQ(spec.models[2], "facebook/opt-6.7b");
  EXPECT_EQ(spec.model("facebook/opt-6.7b").ffn, 16384);
  resolve_model_configs(spec);  // already resolved: names stay, nothing is read again
  EXPECT_EQ(spec.own_models.size(), 1u);
  spec.validate();
}

}  // namespace
}  // namespace hb::bench
