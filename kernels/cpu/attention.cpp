#include "kernels/cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/kv_access.h"

namespace hb::cpu {

void decode_attention(const DecodeAttentionArgs* seqs, int batch, ThreadPool& pool, SimdLevel simd) {
  (void)simd;
  int q_heads_max = 0;
  for (int b = 0; b < batch; ++b) q_heads_max = std::max(q_heads_max, seqs[b].q_heads);
  pool.parallel_for(static_cast<int64_t>(batch) * q_heads_max, [&](int64_t task, int) {
    const DecodeAttentionArgs& a = seqs[task / q_heads_max];
    const int h = static_cast<int>(task % q_heads_max);
    if (h >= a.q_heads) return;
    const PagedKvView& kv = a.kv;
    const int d = kv.head_dim;
    const KvHeadView& head = kv.heads[h / (a.q_heads / kv.kv_heads)];
    const int64_t begin = std::clamp<int64_t>(a.token_begin, 0, head.num_tokens);
    const int64_t end = a.token_end < 0 ? head.num_tokens : std::clamp<int64_t>(a.token_end, begin, head.num_tokens);
    const float scale = default_scale(a.scale, d);
    const float* q = a.q + static_cast<size_t>(h) * d;
    float* o = a.o + static_cast<size_t>(h) * d;
    std::fill(o, o + d, 0.0f);
    if (end <= begin) {
      a.lse[h] = -std::numeric_limits<float>::infinity();
      return;
    }
    std::vector<float> s(end - begin);
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t t = begin; t < end; ++t) m = std::max(m, s[t - begin] = score_token(kv, head, q, scale, t));
    if (a.logits_out) std::copy(s.begin(), s.end(), a.logits_out + h * a.logits_stride);
    float l = 0;
    for (int64_t t = begin; t < end; ++t) {
      const float p = std::exp(s[t - begin] - m);
      l += p;
      accumulate_v(kv, head, t, p, o);
    }
    for (int j = 0; j < d; ++j) o[j] /= l;
    a.lse[h] = m + std::log(l);
  });
}

uint64_t stream_read(const void* p, size_t bytes, ThreadPool& pool) {
  const auto* w = static_cast<const uint64_t*>(p);
  const int64_t words = static_cast<int64_t>(bytes / 8);
  const int n = pool.size();
  std::vector<uint64_t> sums(n, 0);
  pool.parallel_for(n, [&](int64_t i, int) {
    uint64_t s = 0;
    for (int64_t k = words * i / n; k < words * (i + 1) / n; ++k) s ^= w[k];
    sums[i] = s;
  });
  uint64_t s = 0;
  for (uint64_t x : sums) s ^= x;
  return s;
}

}  // namespace hb::cpu
