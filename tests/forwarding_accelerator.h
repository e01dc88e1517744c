#pragma once
// For tests that tap a few of an accelerator's operations: every operation Accelerator requires,
// and every op (supports, enqueue: core/accelerator_ops.h), passed through to a real one (the
// other optional methods keep the base class's defaults unless a test forwards them too;
// tests/repo/share_forwards.py checks supports and enqueue are forwarded). A tap derives from
// it, overrides what it records and calls real_.
#include <memory>

#include "core/accelerator.h"

namespace hb::test {

class ForwardingAccelerator : public Accelerator {
 public:
  explicit ForwardingAccelerator(Accelerator& real) : real_(real) {}

  const AcceleratorInfo& info() const override { return real_.info(); }
  std::shared_ptr<BufferAllocator> memory() override { return real_.memory(); }
  int64_t bytes_in_use() const override { return real_.bytes_in_use(); }
  std::shared_ptr<BufferAllocator> staging_memory(int node) override {
    return real_.staging_memory(node);
  }
  void copy_to_device(void* d, const void* s, size_t n) override { real_.copy_to_device(d, s, n); }
  void copy_to_host(void* d, const void* s, size_t n) override { real_.copy_to_host(d, s, n); }
  void decode_attention(const DecodeAttentionArgs* a, int b) override {
    real_.decode_attention(a, b);
  }
  void score_logits(const float* q, int h, const PagedKvView& kv, int64_t b, int64_t e, float sc,
                    float* l, int64_t st) override {
    real_.score_logits(q, h, kv, b, e, sc, l, st);
  }
  void logit_merge_attention(const LogitMergeArgs& a) override { real_.logit_merge_attention(a); }
  void merge_partials(int n, const float* const* o, const float* const* l, int h, int d, float* oo,
                      float* lo) override {
    real_.merge_partials(n, o, l, h, d, oo, lo);
  }
  int64_t synchronize() override { return real_.synchronize(); }
  bool supports(OpKind op) const override { return real_.supports(op); }
  void enqueue(const AcceleratorOp& op) override { real_.enqueue(op); }

 protected:
  Accelerator& real_;
};

}  // namespace hb::test
