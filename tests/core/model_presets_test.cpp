#include <gtest/gtest.h>

#include "core/error.h"
#include "core/model_presets.h"

namespace hb {
namespace {

TEST(ModelPresets, PublicConfigsAndLookup) {
  const auto& l = find_model_preset("Llama-3.1-8B");
  EXPECT_EQ(l.shape.q_heads, 32);
  EXPECT_EQ(l.shape.kv_heads, 8);
  EXPECT_EQ(l.shape.head_dim, 128);
  EXPECT_EQ(l.shape.kv_bytes_per_token(),
            4096);  // 4 KiB per token per layer: 2 (K,V) x 8 kv heads x 128 x 2 bytes
  EXPECT_EQ(find_model_preset("opt-13b").layers, 40);
  EXPECT_EQ(find_model_preset("qwen2.5-7b").shape.kv_heads, 4);
  for (const auto& p : model_presets()) {
    EXPECT_NO_THROW(p.shape.validate()) << p.name;
    EXPECT_EQ(p.shape.q_heads * p.shape.head_dim, p.hidden) << p.name;
  }
  try {
    find_model_preset("gpt-5");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(e.fix().find("llama-3.1-8b"), std::string::npos);
  }
}

}  // namespace
}  // namespace hb
