#pragma once
// The rest of a decode layer around attention, for `run --scope layer`: QKV projection,
// output projection and the FFN at a model preset's dims, as cuBLAS GEMMs (fp16 in, fp32
// accumulate, fp16 out) with random weights, queued on the CUDA accelerator as named
// operations (NVTX ranges, counted in synchronize()'s busy time).
//
// Timing only, by design: the activations are random and not wired to the attention inputs,
// layer norms, RoPE, residual adds and OPT's biases are left out (elementwise work well under
// 1% of a layer's GEMM bytes at decode), and the FFN is gated (SiLU(x W_gate) * x W_up, then
// W_down) for Llama and Qwen, plain (ReLU) for OPT. The weights count against the
// accelerator's capacity budget, as real weights would.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/model_presets.h"
#include "kernels/cuda/cuda_accelerator.h"

namespace hb::cuda {

class LayerGemms {
 public:
  LayerGemms(CudaAccelerator& acc, const ModelPreset& model, int max_batch, uint64_t seed = 1);
  ~LayerGemms();
  LayerGemms(const LayerGemms&) = delete;
  LayerGemms& operator=(const LayerGemms&) = delete;

  void enqueue_qkv(
      int batch);  // x [batch][hidden] -> qkv [batch][(q_heads + 2 kv_heads) * head_dim]
  void enqueue_out_proj(
      int batch);               // attention output [batch][q_heads * head_dim] -> y [batch][hidden]
  void enqueue_ffn(int batch);  // y -> up (and gate) GEMM, activation, down GEMM -> x
  // Everything of a layer but attention, in order (qkv, then out_proj and ffn).
  void enqueue_all(int batch);

  // The named buffer as fp32, after a synchronize (for tests): weights "w_qkv", "w_o",
  // "w_up", "w_down" (row-major [in][out]) or activations "x", "qkv", "attn", "y", "h", "a"
  // ([max_batch][width]).
  std::vector<float> read_back(const std::string& name) const;

  int64_t weight_bytes() const;
  static int64_t weight_bytes(const ModelPreset& model);
  // Multiply-add flops x2 of the GEMMs for one token per sequence.
  static double flops(const ModelPreset& model, int batch);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hb::cuda
