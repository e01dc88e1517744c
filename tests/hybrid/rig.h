#pragma once
// A small platform for driving HybridGen directly (no runner): workloads, a cpu accelerator
// with a small budget, one or two host tiers, and an fp64 oracle over any token subset.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/strategy.h"
#include "core/workload.h"
#include "hybrid/hybridgen.h"
#include "kernels/cpu/cpu_accelerator.h"

namespace hb::test {

inline HostTier tier(MemoryKind kind, int node, bool emulated = false) {
  MemoryLocation loc{kind, node, emulated};
  return HostTier{loc, host_allocator(loc)};
}

struct Rig {
  std::vector<Workload> ws;
  Problem problem;
  std::unique_ptr<Accelerator> acc;
  ThreadPool pool{1};
  Platform platform;

  Rig(const AttentionShape& shape, int64_t prompt, int steps, int64_t accel_bytes,
      std::vector<HostTier> tiers, WorkloadSpec spec = {}, int batch = 1) {
    for (int b = 0; b < batch; ++b) {
      WorkloadSpec sb = spec;
      sb.seed = spec.seed + static_cast<uint64_t>(b) * 7919;
      ws.push_back(make_workload(shape, prompt, steps, sb));
    }
    problem.shape = shape;
    problem.batch = batch;
    problem.workloads = ws;
    acc = cpu::make_cpu_accelerator(accel_bytes, 1);
    platform.host_tiers = std::move(tiers);
    platform.accelerator = acc.get();
    platform.host_pool = &pool;
    platform.cpu_node = 0;
  }

  // K (or V) row of token t (original position) of KV head h in sequence b.
  const float* k_row(int b, int64_t t, int h) const {
    const Workload& w = ws[b];
    const int d = w.shape.head_dim;
    if (t < w.prompt_len()) return w.prompt.k_row(t, h);
    return w.steps[t - w.prompt_len()].k.data() + static_cast<size_t>(h) * d;
  }
  const float* v_row(int b, int64_t t, int h) const {
    const Workload& w = ws[b];
    const int d = w.shape.head_dim;
    if (t < w.prompt_len()) return w.prompt.v_row(t, h);
    return w.steps[t - w.prompt_len()].v.data() + static_cast<size_t>(h) * d;
  }

  // fp64 softmax attention of step s's query head qh over exactly `positions`.
  std::vector<double> attend(int b, int s, int qh, const std::vector<int64_t>& positions) const {
    const auto& shape = problem.shape;
    const int d = shape.head_dim, h = shape.kv_head_of(qh);
    const float* q = ws[b].steps[s].q.data() + static_cast<size_t>(qh) * d;
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    std::vector<double> logit(positions.size());
    double m = -INFINITY;
    for (size_t i = 0; i < positions.size(); ++i) {
      const float* k = k_row(b, positions[i], h);
      double dot = 0;
      for (int j = 0; j < d; ++j) dot += static_cast<double>(q[j]) * k[j];
      logit[i] = dot * scale;
      m = std::max(m, logit[i]);
    }
    std::vector<double> o(d, 0.0);
    double l = 0;
    for (size_t i = 0; i < positions.size(); ++i) {
      const double p = std::exp(logit[i] - m);
      l += p;
      const float* v = v_row(b, positions[i], h);
      for (int j = 0; j < d; ++j) o[j] += p * v[j];
    }
    for (auto& x : o) x /= l;
    return o;
  }
  // All positions of the context at step s.
  std::vector<int64_t> all_positions(int s) const {
    std::vector<int64_t> p(static_cast<size_t>(problem.context_at(s)));
    for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<int64_t>(i);
    return p;
  }
};

// Max |a - b| / max|b| over one head's output.
inline double rel_err(const float* a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (size_t j = 0; j < b.size(); ++j) {
    num = std::max(num, std::fabs(a[j] - b[j]));
    den = std::max(den, std::fabs(b[j]));
  }
  return den > 0 ? num / den : num;
}

inline std::unique_ptr<hybrid::HybridGen> make_hybridgen(
    const std::map<std::string, std::string>& opts, const hybrid::HybridGenConfig& defaults = {}) {
  StrategyOptions o(opts);
  auto h = std::make_unique<hybrid::HybridGen>(
      "hybridgen", hybrid::HybridGenConfig::from_options(o, "hybridgen", defaults));
  o.check_all_used("hybridgen");
  return h;
}

}  // namespace hb::test
