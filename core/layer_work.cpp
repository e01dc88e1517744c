#include "core/layer_work.h"

#include "core/accelerator.h"

namespace hb {

LayerDims layer_dims(const ModelPreset& model) {
  const AttentionShape& s = model.shape;
  LayerDims d;
  d.hidden = model.hidden;
  d.qkv_out = (s.q_heads + 2 * s.kv_heads) * s.head_dim;
  d.attn_out = s.q_heads * s.head_dim;
  d.ffn = model.ffn;
  d.gated = model.family != ModelFamily::opt;
  return d;
}

int64_t LayerDims::weight_elements() const {
  const int64_t h = hidden;
  return h * qkv_out + int64_t{attn_out} * h + (gated ? 3 : 2) * h * ffn;
}

double LayerDims::flops(int batch) const {
  return 2.0 * batch * static_cast<double>(weight_elements());
}

int64_t layer_work_bytes(const ModelPreset& model, int max_batch) {
  const LayerDims d = layer_dims(model);
  auto padded = [](int64_t cols) {
    return (cols + kLayerColumnBlock - 1) / kLayerColumnBlock * kLayerColumnBlock;
  };
  const int64_t weights =
      int64_t{d.hidden} * padded(d.qkv_out) + int64_t{d.attn_out} * padded(d.hidden) +
      (d.gated ? 2 : 1) * int64_t{d.hidden} * padded(d.ffn) + int64_t{d.ffn} * padded(d.hidden);
  // x, qkv, attention output, y, up, gate, layer output
  const int64_t activations =
      int64_t{max_batch} * (3 * d.hidden + d.qkv_out + d.attn_out + 2 * d.ffn);
  return weights * kLayerWeightBytesPerElement + activations * int64_t{sizeof(float)};
}

}  // namespace hb
