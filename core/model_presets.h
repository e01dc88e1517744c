#pragma once
// Public model configurations (attention shape and layer dims) that sweeps are named by.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/shape.h"
#include "core/vocabulary.h"

namespace hb {

// The architecture family decides the decoder layer's FFN: gate, up and down for llama and qwen,
// fc1 and fc2 for opt (core/layer_work). Its text is written only as the report's `family` axis
// and in `run --list-models`.
// `trace`: a captured trace run at its own attention shape (bench/trace), no layer dims.
enum class ModelFamily { opt, llama, qwen, trace };
inline constexpr Vocabulary<ModelFamily, 4> kModelFamilies{{"opt", "llama", "qwen", "trace"}};

struct ModelPreset {
  std::string name;  // e.g. "llama-3.1-8b"
  ModelFamily family = ModelFamily::llama;
  int layers = 0;
  int hidden = 0;       // model width (q_heads * head_dim for these families)
  int ffn = 0;          // FFN intermediate width
  int max_context = 0;  // positions the released checkpoint supports
  int vocab = 0;        // vocabulary size: the LM head's output width (config.json vocab_size)
  AttentionShape shape;
  std::string source;  // where the figures come from (the public config)
};

std::span<const ModelPreset> model_presets();

// Weight bytes of one decoder layer at the preset's element type (its shape's dtype, fp16 for
// every preset): the QKV projections (hidden x (q_heads + 2 kv_heads) x head_dim), the output
// projection ((q_heads x head_dim) x hidden) and the FFN (gate, up and down for the llama and
// qwen families, fc1 and fc2 for opt). Biases, norms and embeddings are not counted (under 0.1%
// of a layer). One formula for the whole tree: the deployment's KV budget (bench), the
// platform model's budget (model) and the layer GEMMs (kernels/cuda) all read it.
int64_t layer_weight_bytes(const ModelPreset& p);
// Every layer's weights: layers x layer_weight_bytes.
int64_t model_weight_bytes(const ModelPreset& p);
// The LM head's weights, hidden x vocab at the preset's element type: what the decode step
// streams outside the layers (the whole-model ITL, model/whole_model.h). The embedding table has
// the same size but a decode step reads only one row of it per sequence.
int64_t lm_head_weight_bytes(const ModelPreset& p);
// Activation buffers of one layer's decode step for `batch` sequences, reused layer after
// layer: the input and output rows (hidden each), the QKV row, the attention output, the FFN's
// up (twice ffn when gated) and activated rows, at the preset's element type.
int64_t decode_activation_bytes(const ModelPreset& p, int batch);
// Case-insensitive; throws hb::Error listing the known names when there is no match.
const ModelPreset& find_model_preset(std::string_view name);

}  // namespace hb
