#pragma once
// Public model configurations (attention shape and layer dims) that sweeps are named by.
#include <span>
#include <string>
#include <string_view>

#include "core/shape.h"

namespace hb {

struct ModelPreset {
  std::string name;    // e.g. "llama-3.1-8b"
  std::string family;  // "opt", "llama", "qwen"
  int layers = 0;
  int hidden = 0;       // model width (q_heads * head_dim for these families)
  int ffn = 0;          // FFN intermediate width
  int max_context = 0;  // positions the released checkpoint supports
  AttentionShape shape;
  std::string source;  // where the figures come from (the public config)
};

std::span<const ModelPreset> model_presets();
// Case-insensitive; throws hb::Error listing the known names when there is no match.
const ModelPreset& find_model_preset(std::string_view name);

}  // namespace hb
