#pragma once
// The attention geometry of one layer: how many query heads share each KV head (GQA) and the
// head width. Every kernel and strategy takes one of these.
#include <cstdint>
#include <string>

#include "core/dtype.h"

namespace hb {

struct AttentionShape {
  int q_heads = 32;
  int kv_heads = 8;
  int head_dim = 128;
  DType kv_dtype = DType::f16;

  int group_size() const { return q_heads / kv_heads; }  // query heads per KV head
  int kv_head_of(int q_head) const {
    return q_head / group_size();
  }                             // GQA mapping (contiguous groups)
  float softmax_scale() const;  // 1/sqrt(head_dim)
  // Bytes of K plus V for one token of one layer, all KV heads.
  int64_t kv_bytes_per_token() const { return 2LL * kv_heads * head_dim * dtype_size(kv_dtype); }
  // Throws hb::Error naming the inconsistency (zero heads, q_heads not a multiple of kv_heads,
  // ...).
  void validate() const;
  std::string to_string() const;  // "32q/8kv x128 fp16"
};

}  // namespace hb
