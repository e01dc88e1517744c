#pragma once
// The fp64 check every strategy test shares: a step's output against exact attention over the
// tokens the strategy says it attended (StepResult::attended; empty = all of the context).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/strategy.h"
#include "core/workload.h"

namespace hb::test {

// Key / value row of token t (prompt or generated) of a workload, KV head h.
inline const float* workload_k_row(const Workload& w, int64_t t, int h) {
  if (t < w.prompt_len()) return w.prompt.k_row(t, h);
  return w.steps[t - w.prompt_len()].k.data() + static_cast<size_t>(h) * w.shape.head_dim;
}
inline const float* workload_v_row(const Workload& w, int64_t t, int h) {
  if (t < w.prompt_len()) return w.prompt.v_row(t, h);
  return w.steps[t - w.prompt_len()].v.data() + static_cast<size_t>(h) * w.shape.head_dim;
}

// Largest relative L2 error over (sequence, query head) between out.o and exact fp64
// attention over the attended positions of decode step s.
inline double max_error_vs_attended(const Problem& problem, int s, const StepResult& out) {
  const AttentionShape& shape = problem.shape;
  const int Hq = shape.q_heads, d = shape.head_dim;
  const int64_t ctx = problem.context_at(s);
  double worst = 0;
  for (int b = 0; b < problem.batch; ++b)
    for (int h = 0; h < Hq; ++h) {
      const Workload& w = problem.workloads[b];
      const size_t bh = static_cast<size_t>(b) * Hq + h;
      std::vector<int64_t> pos;
      if (out.attended.empty()) {
        for (int64_t t = 0; t < ctx; ++t) pos.push_back(t);
      } else {
        pos = out.attended[bh];
      }
      const float* q = w.steps[s].q.data() + static_cast<size_t>(h) * d;
      const int kvh = shape.kv_head_of(h);
      std::vector<double> lg(pos.size());
      double m = -INFINITY;
      for (size_t i = 0; i < pos.size(); ++i) {
        const float* k = workload_k_row(w, pos[i], kvh);
        double dot = 0;
        for (int j = 0; j < d; ++j) dot += static_cast<double>(q[j]) * k[j];
        lg[i] = dot / std::sqrt(static_cast<double>(d));
        m = std::max(m, lg[i]);
      }
      std::vector<double> o(d, 0.0);
      double l = 0;
      for (size_t i = 0; i < pos.size(); ++i) {
        const double p = std::exp(lg[i] - m);
        l += p;
        const float* v = workload_v_row(w, pos[i], kvh);
        for (int j = 0; j < d; ++j) o[j] += p * v[j];
      }
      double e2 = 0, r2 = 0;
      for (int j = 0; j < d; ++j) {
        const double ref = o[j] / l, e = out.o[bh * d + j] - ref;
        e2 += e * e;
        r2 += ref * ref;
      }
      worst = std::max(worst, std::sqrt(e2 / std::max(r2, 1e-30)));
    }
  return worst;
}

}  // namespace hb::test
