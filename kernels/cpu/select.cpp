#include "kernels/cpu/select.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/cpu/kv_access.h"

namespace hb::cpu {

void score_logits(const float* q, int q_heads, const PagedKvView& kv, int64_t begin, int64_t end, float scale,
                  float* logits, int64_t stride, ThreadPool& pool) {
  const int d = kv.head_dim, g = q_heads / kv.kv_heads;
  scale = default_scale(scale, d);
  pool.parallel_for(q_heads, [&](int64_t h, int) {
    const KvHeadView& head = kv.heads[h / g];
    const int64_t b = std::clamp<int64_t>(begin, 0, head.num_tokens);
    const int64_t e = end < 0 ? head.num_tokens : std::clamp<int64_t>(end, b, head.num_tokens);
    for (int64_t t = b; t < e; ++t) logits[h * stride + (t - begin)] = score_token(kv, head, q + h * d, scale, t);
  });
}

void topk_rows(const float* values, int rows, int64_t n, int64_t stride, int64_t k, int32_t* idx_out,
               float* val_out, ThreadPool* pool) {
  k = std::clamp<int64_t>(k, 0, n);
  auto one_row = [&](int64_t r, int) {
    const float* v = values + r * stride;
    // Total order: numbers before NaNs, larger first, then lower index (deterministic ties).
    auto before = [v](int32_t a, int32_t b) {
      const bool na = std::isnan(v[a]), nb = std::isnan(v[b]);
      if (na != nb) return nb;
      if (!na && v[a] != v[b]) return v[a] > v[b];
      return a < b;
    };
    std::vector<int32_t> idx(n);
    for (int64_t i = 0; i < n; ++i) idx[i] = static_cast<int32_t>(i);
    std::nth_element(idx.begin(), idx.begin() + k, idx.end(), before);
    std::sort(idx.begin(), idx.begin() + k, before);
    for (int64_t i = 0; i < k; ++i) {
      idx_out[r * k + i] = idx[i];
      if (val_out) val_out[r * k + i] = v[idx[i]];
    }
  };
  if (pool) pool->parallel_for(rows, one_row);
  else for (int r = 0; r < rows; ++r) one_row(r, 0);
}

void gather_rows(const PagedKvView& kv, int kv_head, const int32_t* tokens, int64_t count, void* v_out,
                 void* k_out) {
  const int d = kv.head_dim, P = kv.page_tokens;
  const size_t es = dtype_size(kv.dtype);
  const KvHeadView& head = kv.heads[kv_head];
  auto* vo = static_cast<std::byte*>(v_out);
  auto* ko = static_cast<std::byte*>(k_out);
  for (int64_t i = 0; i < count; ++i) {
    const PageRef& p = head.pages[tokens[i] / P];
    const int slot = tokens[i] % P;
    std::memcpy(vo + i * d * es, p.v + v_block_offset(0, slot, d) * es, d * es);
    if (ko)  // K is a column of the blocked page: one element per dim
      for (int j = 0; j < d; ++j) std::memcpy(ko + (i * d + j) * es, p.k + k_block_offset(j, slot, P) * es, es);
  }
}

void logit_merge_attention(const LogitMergeArgs& a, ThreadPool& pool) {
  const PagedKvView& kv = a.local;
  const int d = kv.head_dim;
  const float scale = default_scale(a.scale, d);
  const size_t es = dtype_size(a.ext_dtype);
  pool.parallel_for(a.q_heads, [&](int64_t h, int) {
    const KvHeadView* head = kv.kv_heads > 0 && kv.heads ? &kv.heads[h / (a.q_heads / kv.kv_heads)] : nullptr;
    const int64_t n_loc = head ? head->num_tokens : 0;
    const float* ext = a.ext_logits + h * a.n_ext;
    std::vector<float> s(n_loc);
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < a.n_ext; ++i) m = std::max(m, ext[i]);
    for (int64_t t = 0; t < n_loc; ++t) m = std::max(m, s[t] = score_token(kv, *head, a.q + h * d, scale, t));
    float* o = a.o + h * d;
    std::fill(o, o + d, 0.0f);
    if (m == -std::numeric_limits<float>::infinity()) {
      a.lse[h] = m;
      return;
    }
    float l = 0;
    const auto* ev = static_cast<const std::byte*>(a.ext_v) + static_cast<size_t>(h) * a.n_ext * d * es;
    for (int64_t i = 0; i < a.n_ext; ++i) {
      const float p = std::exp(ext[i] - m);
      l += p;
      for (int j = 0; j < d; ++j) o[j] += p * load_elem(a.ext_dtype, ev, i * d + j);
    }
    for (int64_t t = 0; t < n_loc; ++t) {
      const float p = std::exp(s[t] - m);
      l += p;
      accumulate_v(kv, *head, t, p, o);
    }
    for (int j = 0; j < d; ++j) o[j] /= l;
    a.lse[h] = m + std::log(l);
  });
}

}  // namespace hb::cpu
