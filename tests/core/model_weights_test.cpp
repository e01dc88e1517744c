// Weight and activation bytes of a decoder layer (core/model_presets.h), against figures worked
// out by hand from each model's public config.
#include <gtest/gtest.h>

#include "core/model_presets.h"

namespace hb {
namespace {

TEST(ModelWeights, Llama31_8bByHand) {
  const ModelPreset& p = find_model_preset("llama-3.1-8b");
  // hidden 4096, ffn 14336, 32 q heads, 8 kv heads, head_dim 128, 32 layers, fp16.
  // QKV 4096 x (32 + 2 x 8) x 128 = 25,165,824; O 4096 x 4096 = 16,777,216;
  // gate + up + down 3 x 4096 x 14336 = 176,160,768; 218,103,808 parameters x 2 bytes.
  EXPECT_EQ(layer_weight_bytes(p), int64_t{436207616});
  EXPECT_EQ(model_weight_bytes(p), int64_t{13958643712});  // 32 layers, ~14 GB (no embeddings)
  // One decode row: x, y 4096 each, qkv 6144, attention 4096, gate+up 28672, activated 14336
  // = 61,440 values x 2 bytes per sequence.
  EXPECT_EQ(decode_activation_bytes(p, 1), int64_t{122880});
  EXPECT_EQ(decode_activation_bytes(p, 8), int64_t{8 * 122880});
}

TEST(ModelWeights, Opt13bHasTwoFfnMatricesAndFullHeads) {
  const ModelPreset& p = find_model_preset("opt-1.3b");
  // hidden 2048, ffn 8192, 32 heads (no GQA), head_dim 64, 24 layers, fp16.
  // QKV 2048 x 3 x 2048 = 12,582,912; O 2048 x 2048 = 4,194,304; fc1 + fc2 2 x 2048 x 8192 =
  // 33,554,432; 50,331,648 parameters x 2 bytes. 24 layers: 1.21 B parameters, the model's
  // 1.3 B less its 0.1 B of embeddings.
  EXPECT_EQ(layer_weight_bytes(p), int64_t{100663296});
  EXPECT_EQ(model_weight_bytes(p), int64_t{2415919104});
  // x, y 2048 each, qkv 6144, attention 2048, fc1 8192, activated 8192 = 28,672 values.
  EXPECT_EQ(decode_activation_bytes(p, 1), int64_t{57344});
}

TEST(ModelWeights, VocabulariesFromEachConfigAndTheLmHead) {
  // vocab_size of each model's config.json.
  EXPECT_EQ(find_model_preset("opt-66b").vocab, 50272);
  EXPECT_EQ(find_model_preset("llama-2-70b").vocab, 32000);
  EXPECT_EQ(find_model_preset("llama-3.1-8b").vocab, 128256);
  EXPECT_EQ(find_model_preset("llama-3.1-70b").vocab, 128256);
  EXPECT_EQ(find_model_preset("qwen2.5-0.5b").vocab, 151936);
  EXPECT_EQ(find_model_preset("qwen2.5-3b").vocab, 151936);
  EXPECT_EQ(find_model_preset("qwen2.5-7b").vocab, 152064);
  EXPECT_EQ(find_model_preset("qwen2.5-72b").vocab, 152064);
  for (const auto& p : model_presets()) EXPECT_GT(p.vocab, 0) << p.name;
  // llama-3.1-70b: 8192 x 128256 x 2 bytes = 2,101,346,304 (more than one of its layers).
  const ModelPreset& big = find_model_preset("llama-3.1-70b");
  EXPECT_EQ(lm_head_weight_bytes(big), int64_t{2101346304});
  EXPECT_GT(lm_head_weight_bytes(big), layer_weight_bytes(big));
}

}  // namespace
}  // namespace hb
