#include "kernels/cpu/token_select.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hb::cpu {

void accumulate_probabilities(const float* logits, int64_t logit_stride, const float* lse,
                              int q_heads, int kv_heads, int64_t n, float* scores,
                              int64_t score_stride, ThreadPool* pool) {
  const int G = q_heads / kv_heads;
  auto head = [&](int64_t h, int) {
    float* s = scores + h * score_stride;
    for (int g = 0; g < G; ++g) {
      const int qh = static_cast<int>(h) * G + g;
      const float* lg = logits + qh * logit_stride;
      const float m = lse[qh];
      if (!std::isfinite(m)) continue;  // nothing attended
      for (int64_t t = 0; t < n; ++t) s[t] += std::exp(lg[t] - m);
    }
  };
  if (pool)
    pool->parallel_for(kv_heads, head);
  else
    for (int h = 0; h < kv_heads; ++h) head(h, 0);
}

int64_t argmin_tagged(const float* values, const int64_t* tags, int64_t n, int64_t tag_limit) {
  int64_t best = -1;
  for (int64_t i = 0; i < n; ++i)
    if (tags[i] < tag_limit && (best < 0 || values[i] < values[best])) best = i;
  return best;
}

void group_max_rows(const float* in, int rows, int group, int64_t n, int64_t stride, float* out,
                    int64_t out_stride) {
  for (int r = 0; r < rows / group; ++r) {
    float* o = out + r * out_stride;
    std::copy(in + static_cast<int64_t>(r) * group * stride,
              in + static_cast<int64_t>(r) * group * stride + n, o);
    for (int g = 1; g < group; ++g) {
      const float* x = in + (static_cast<int64_t>(r) * group + g) * stride;
      for (int64_t t = 0; t < n; ++t) o[t] = std::max(o[t], x[t]);
    }
  }
}

int64_t count_within(const float* v, int64_t n, float alpha) {
  if (n <= 0) return 0;
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) m = std::max(m, v[i]);
  const float cut = m - alpha;
  int64_t c = 0;
  for (int64_t i = 0; i < n; ++i) c += v[i] > cut || v[i] == m;
  return c;
}

}  // namespace hb::cpu
