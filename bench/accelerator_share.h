#pragma once
// One micro-batch's view of the accelerator in layer scope (layer_scope.h): the same queue and
// memory as the real one, but (1) a 1/N share of the capacity that was free when the point was
// planned, so N strategy instances planning one after another do not each claim all of it,
// and (2) a synchronize() that also hands over the busy time the layer wrapper's own
// synchronizes consumed (the previous output projection and FFN), so a strategy that steers by
// the accelerator's busy time (HybridGen's scheduler) sees the whole layer's accelerator work,
// as the port's estimator has it (device latency = merged attention + FFN); and (3) it holds
// the previous micro-batch's output projection and FFN (`defer`) until this micro-batch has
// queued its first compute operation or synchronized, so its q download queues ahead of them
// and its CPU part can run while the accelerator does them: the ping-pong of CPU-attention
// systems (NEO, FastDecode) with a single in-order queue, and no dependency broken (the held
// work needs nothing of this micro-batch, and this micro-batch's accelerator attention still
// queues behind it).
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

#include "core/accelerator.h"

namespace hb::bench {

// Busy time (ns) the wrapper took out of the queue and owes to the next strategy synchronize.
struct BusyCarry {
  int64_t ns = 0;
};

class AcceleratorShare final : public Accelerator {
 public:
  AcceleratorShare(Accelerator& real, int64_t capacity_bytes, std::shared_ptr<BusyCarry> carry);

  const AcceleratorInfo& info() const override { return info_; }
  std::shared_ptr<BufferAllocator> memory() override { return real_.memory(); }
  int64_t bytes_in_use() const override { return real_.bytes_in_use(); }
  std::shared_ptr<BufferAllocator> staging_memory(int numa_node) override {
    return real_.staging_memory(numa_node);
  }
  // Forwarded so offload's host KV stays pinned under CUDA in layer scope (the default); the
  // base class's default would hand back unpinned memory and lose the copy/compute overlap.
  std::shared_ptr<BufferAllocator> staging_over(std::shared_ptr<BufferAllocator> host) override {
    return real_.staging_over(std::move(host));
  }
  void copy_to_device(void* dst, const void* src, size_t bytes) override {
    real_.copy_to_device(dst, src, bytes);
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    real_.copy_to_host(dst, src, bytes);
  }
  void copy_to_device_async(void* dst, const void* src, size_t bytes) override {
    real_.copy_to_device_async(dst, src, bytes);
  }
  void order_side_copies() override { real_.order_side_copies(); }
  void decode_attention(const DecodeAttentionArgs* seqs, int batch) override {
    flush();
    real_.decode_attention(seqs, batch);
  }
  void score_logits(const float* q, int q_heads, const PagedKvView& kv, int64_t begin, int64_t end,
                    float scale, float* logits, int64_t stride) override {
    flush();
    real_.score_logits(q, q_heads, kv, begin, end, scale, logits, stride);
  }
  void logit_merge_attention(const LogitMergeArgs& args) override {
    flush();
    real_.logit_merge_attention(args);
  }
  void merge_partials(int n_parts, const float* const* o_parts, const float* const* lse_parts,
                      int heads, int head_dim, float* o_out, float* lse_out) override {
    flush();
    real_.merge_partials(n_parts, o_parts, lse_parts, heads, head_dim, o_out, lse_out);
  }
  int64_t synchronize() override;

  // Work to queue on the real accelerator at this share's first compute operation or right
  // after its first synchronize, whichever comes first; or at flush().
  void defer(std::function<void()> work);
  void flush();
  // Every op (core/accelerator_ops.h), a new one included: the real accelerator's support and
  // fallback, queued behind the held work like every compute operation.
  bool supports(OpKind op) const override { return real_.supports(op); }
  void enqueue(const AcceleratorOp& op) override {
    flush();
    real_.enqueue(op);
  }
  std::unique_ptr<LayerWork> make_layer_work(const ModelPreset& model, int max_batch,
                                             int layer) override {
    return real_.make_layer_work(model, max_batch, layer);
  }

 private:
  Accelerator& real_;
  AcceleratorInfo info_;
  std::shared_ptr<BusyCarry> carry_;
  std::function<void()> deferred_;
};

}  // namespace hb::bench
