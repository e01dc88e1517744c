#include "core/model_presets.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "core/error.h"
#include "core/layer_work.h"

namespace hb {

namespace {

ModelPreset preset(const char* name, ModelFamily family, int layers, int hidden, int ffn, int ctx,
                   int vocab, int q_heads, int kv_heads, int head_dim, const char* source) {
  ModelPreset p;
  p.name = name;
  p.family = family;
  p.layers = layers;
  p.hidden = hidden;
  p.ffn = ffn;
  p.max_context = ctx;
  p.vocab = vocab;
  p.shape = AttentionShape{q_heads, kv_heads, head_dim, DType::f16};
  p.source = source;
  return p;
}

// Figures from each model's config.json on its public model card (num_hidden_layers,
// hidden_size, intermediate_size / ffn_dim, max_position_embeddings, vocab_size,
// num_attention_heads, num_key_value_heads). head_dim = hidden / heads for all of these. The
// vocabularies: 50272 for every OPT (padded from GPT-2's 50265), 32000 for Llama 2, 128256 for
// Llama 3.1, 151936 for Qwen2.5 0.5B and 3B (tied embeddings), 152064 for Qwen2.5 7B and up.
const std::vector<ModelPreset>& table() {
  static const std::vector<ModelPreset> t = {
      preset("opt-1.3b", ModelFamily::opt, 24, 2048, 8192, 2048, 50272, 32, 32, 64,
             "facebook/opt-1.3b config.json"),
      preset("opt-2.7b", ModelFamily::opt, 32, 2560, 10240, 2048, 50272, 32, 32, 80,
             "facebook/opt-2.7b config.json"),
      preset("opt-6.7b", ModelFamily::opt, 32, 4096, 16384, 2048, 50272, 32, 32, 128,
             "facebook/opt-6.7b config.json"),
      preset("opt-13b", ModelFamily::opt, 40, 5120, 20480, 2048, 50272, 40, 40, 128,
             "facebook/opt-13b config.json"),
      preset("opt-30b", ModelFamily::opt, 48, 7168, 28672, 2048, 50272, 56, 56, 128,
             "facebook/opt-30b config.json"),
      preset("opt-66b", ModelFamily::opt, 64, 9216, 36864, 2048, 50272, 72, 72, 128,
             "facebook/opt-66b config.json"),
      preset("llama-2-7b", ModelFamily::llama, 32, 4096, 11008, 4096, 32000, 32, 32, 128,
             "meta-llama/Llama-2-7b-hf config.json"),
      preset("llama-2-13b", ModelFamily::llama, 40, 5120, 13824, 4096, 32000, 40, 40, 128,
             "meta-llama/Llama-2-13b-hf config.json"),
      preset("llama-2-70b", ModelFamily::llama, 80, 8192, 28672, 4096, 32000, 64, 8, 128,
             "meta-llama/Llama-2-70b-hf config.json"),
      preset("llama-3.1-8b", ModelFamily::llama, 32, 4096, 14336, 131072, 128256, 32, 8, 128,
             "meta-llama/Llama-3.1-8B config.json"),
      preset("llama-3.1-70b", ModelFamily::llama, 80, 8192, 28672, 131072, 128256, 64, 8, 128,
             "meta-llama/Llama-3.1-70B config.json"),
      preset("qwen2.5-0.5b", ModelFamily::qwen, 24, 896, 4864, 32768, 151936, 14, 2, 64,
             "Qwen/Qwen2.5-0.5B config.json"),
      preset("qwen2.5-3b", ModelFamily::qwen, 36, 2048, 11008, 32768, 151936, 16, 2, 128,
             "Qwen/Qwen2.5-3B config.json"),
      preset("qwen2.5-7b", ModelFamily::qwen, 28, 3584, 18944, 131072, 152064, 28, 4, 128,
             "Qwen/Qwen2.5-7B-Instruct config.json (YaRN to 128K)"),
      preset("qwen2.5-14b", ModelFamily::qwen, 48, 5120, 13824, 131072, 152064, 40, 8, 128,
             "Qwen/Qwen2.5-14B-Instruct config.json (YaRN to 128K)"),
      preset("qwen2.5-32b", ModelFamily::qwen, 64, 5120, 27648, 131072, 152064, 40, 8, 128,
             "Qwen/Qwen2.5-32B-Instruct config.json (YaRN to 128K)"),
      preset("qwen2.5-72b", ModelFamily::qwen, 80, 8192, 29568, 131072, 152064, 64, 8, 128,
             "Qwen/Qwen2.5-72B-Instruct config.json (YaRN to 128K)"),
  };
  return t;
}

std::string lower(std::string_view s) {
  std::string r(s);
  std::transform(r.begin(), r.end(), r.begin(), [](unsigned char c) { return std::tolower(c); });
  return r;
}

}  // namespace

std::span<const ModelPreset> model_presets() { return table(); }

int64_t layer_weight_bytes(const ModelPreset& p) {
  return layer_dims(p).weight_elements() * static_cast<int64_t>(dtype_size(p.shape.kv_dtype));
}

int64_t model_weight_bytes(const ModelPreset& p) { return p.layers * layer_weight_bytes(p); }

int64_t lm_head_weight_bytes(const ModelPreset& p) {
  return int64_t{p.hidden} * p.vocab * static_cast<int64_t>(dtype_size(p.shape.kv_dtype));
}

int64_t decode_activation_bytes(const ModelPreset& p, int batch) {
  const LayerDims d = layer_dims(p);
  const int64_t up = (d.gated ? 2 : 1) * int64_t{d.ffn};
  const int64_t row = 2 * int64_t{d.hidden} + d.qkv_out + d.attn_out + up + d.ffn;
  return int64_t{batch} * row * static_cast<int64_t>(dtype_size(p.shape.kv_dtype));
}

const ModelPreset& find_model_preset(std::string_view name) {
  const std::string want = lower(name);
  for (const auto& p : table())
    if (p.name == want) return p;
  std::string known;
  for (const auto& p : table()) known += (known.empty() ? "" : ", ") + p.name;
  throw Error("unknown model '" + std::string(name) + "'", "use one of: " + known);
}

}  // namespace hb
