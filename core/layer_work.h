#pragma once
// The rest of a decoder layer around attention (`run --scope layer`): the QKV projection
// before it, the output projection and the FFN after it, at a model preset's dimensions. The
// accelerator runs them as queued operations (Accelerator::make_layer_work); the runner's
// layer-scope wrapper (bench/layer_scope.h) puts them around any strategy's attention
// with a real layer's dependencies, so every strategy pays the same layer work.
#include <cstdint>
#include <memory>

#include "core/model_presets.h"
#include "core/vocabulary.h"

namespace hb {

// What one timed step covers: attention alone, or the whole decoder layer.
enum class Scope { attention, layer };
inline constexpr Vocabulary<Scope, 2> kScopes{{"attention", "layer"}};
inline const char* to_string(Scope s) { return kScopes.name(s); }

// The GEMM shapes of one decoder layer, y[batch][out] = x[batch][in] W[in][out].
struct LayerDims {
  int hidden = 0;     // model width: QKV's input, O's output, the FFN's input and output
  int qkv_out = 0;    // (q_heads + 2 kv_heads) * head_dim
  int attn_out = 0;   // q_heads * head_dim: O's input
  int ffn = 0;        // FFN intermediate width
  bool gated = true;  // SiLU(x W_gate) * (x W_up) then W_down (Llama, Qwen); OPT: ReLU, no gate

  int64_t weight_elements() const;
  // Multiply-adds x2 for `batch` rows through every GEMM of the layer.
  double flops(int batch) const;
};

LayerDims layer_dims(const ModelPreset& model);

// Weights are stored in fp16 on every accelerator (as the cuBLAS path computes), whatever the
// KV dtype: a serving deployment keeps its weights in 16-bit. Their bytes per layer:
// layer_weight_bytes (core/model_presets.h), which counts layer_dims' elements.
inline constexpr int kLayerWeightBytesPerElement = 2;

// The seed of layer `layer`'s weight values (Accelerator::make_layer_work): layer 0's is the one
// every layer work used before stacks existed; each layer's matrices take seeds from it up to
// it + 15, so two layers never share a matrix's values.
inline constexpr uint64_t layer_weight_seed(int layer) {
  return 1 + 16 * static_cast<uint64_t>(layer < 0 ? 0 : layer);
}

// Weight matrices may be stored with their output columns padded to whole blocks of this many
// (the cpu engine's blocked layout, kernels/cpu/layer_gemv.h).
inline constexpr int kLayerColumnBlock = 64;

// A GEMM library's workspace in accelerator memory (cuBLAS's recommended 32 MiB on Hopper),
// given to it from the accelerator's memory so it counts against the capacity.
inline constexpr int64_t kLayerWorkspaceBytes = int64_t{32} << 20;

// Accelerator memory a LayerWork for up to `max_batch` rows may take: its weights, each matrix
// padded to whole column blocks, plus fp32 activations; with its backend's
// layer_workspace_bytes (kernels/backend.h), an upper bound for every accelerator. The runner adds
// both to the KV budget in layer scope (the other layers' weights are what the deployment rule took
// out already).
int64_t layer_work_bytes(const ModelPreset& model, int max_batch);

// One layer's GEMMs, queued on the accelerator that made it (in its order with attention and
// copies, counted in its synchronize() busy time). Weights and activations live in the
// accelerator's memory and count against its capacity. Activations are random and not wired
// to the attention inputs: this measures the layer's time, not its values.
class LayerWork {
 public:
  virtual ~LayerWork() = default;
  virtual void enqueue_qkv(int batch) = 0;       // x -> qkv
  virtual void enqueue_out_proj(int batch) = 0;  // attention output -> y
  virtual void enqueue_ffn(int batch) = 0;       // y -> FFN -> layer output
  virtual int64_t weight_bytes() const = 0;
  virtual int max_batch() const = 0;
};

}  // namespace hb
