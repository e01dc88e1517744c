#pragma once
// Element access to a paged KV view for the portable (non-SIMD) code paths.
#include <cstdint>
#include <cstring>

#include "core/dtype.h"
#include "core/kv_cache.h"

namespace hb::cpu {

// Element `i` of a block stored in `t`, as fp32.
inline float load_elem(DType t, const std::byte* block, size_t i) {
  if (t == DType::f32) {
    float f;
    std::memcpy(&f, block + i * 4, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, block + i * 2, 2);
  return t == DType::f16 ? fp16_to_fp32(h) : bf16_to_fp32(h);
}

// scale * q . k_t for token t of one KV head (K is [head_dim][page_tokens] per page).
inline float score_token(const PagedKvView& kv, const KvHeadView& head, const float* q, float scale, int64_t t) {
  const PageRef& p = head.pages[t / kv.page_tokens];
  const int slot = static_cast<int>(t % kv.page_tokens);
  float s = 0;
  for (int j = 0; j < kv.head_dim; ++j) s += q[j] * load_elem(kv.dtype, p.k, k_block_offset(j, slot, kv.page_tokens));
  return s * scale;
}

// out += w * v_t for token t of one KV head.
inline void accumulate_v(const PagedKvView& kv, const KvHeadView& head, int64_t t, float w, float* out) {
  const PageRef& p = head.pages[t / kv.page_tokens];
  const int slot = static_cast<int>(t % kv.page_tokens);
  for (int j = 0; j < kv.head_dim; ++j) out[j] += w * load_elem(kv.dtype, p.v, v_block_offset(j, slot, kv.head_dim));
}

inline float default_scale(float scale, int head_dim) {
  return scale > 0 ? scale : 1.0f / __builtin_sqrtf(static_cast<float>(head_dim));
}

}  // namespace hb::cpu
