#pragma once
// The exact attention of one query over a workload's keys, for the workload tests.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/workload.h"

namespace hb {

// Softmax probabilities of query head `qh` over the first n tokens of `kv` (double precision).
inline std::vector<double> probs(const Workload& w, const float* q, int qh, int64_t n,
                                 const DenseKv& kv) {
  const int d = w.shape.head_dim, h = w.shape.kv_head_of(qh);
  std::vector<double> s(n);
  double m = -1e300;
  for (int64_t t = 0; t < n; ++t) {
    double dot = 0;
    for (int j = 0; j < d; ++j) dot += double(q[qh * d + j]) * kv.k_row(t, h)[j];
    s[t] = dot / std::sqrt(double(d));
    m = std::max(m, s[t]);
  }
  double l = 0;
  for (auto& x : s) l += (x = std::exp(x - m));
  for (auto& x : s) x /= l;
  return s;
}

}  // namespace hb
