#pragma once
// Drives baseline strategies directly with the cpu accelerator on a small problem, and checks
// outputs against exact fp64 attention over the tokens a strategy says it attended.
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "baselines/register.h"
#include "core/model_presets.h"
#include "core/strategy.h"
#include "core/workload.h"
#include "kernels/backend.h"

namespace hb::test {

struct Harness {
  AttentionShape shape;
  std::vector<Workload> ws;
  Problem problem;
  std::unique_ptr<Accelerator> acc;
  ThreadPool pool{1};
  Platform platform;

  Harness(const std::string& model, int64_t prompt, int steps, int batch, WorkloadSpec::Kind kind,
          int64_t capacity = 0, uint64_t seed = 42) {
    register_baselines(StrategyRegistry::instance());
    shape = find_model_preset(model).shape;
    WorkloadSpec spec;
    spec.kind = kind;
    for (int b = 0; b < batch; ++b) {
      spec.seed = seed + 7919 * static_cast<uint64_t>(b);
      ws.push_back(make_workload(shape, prompt, steps, spec));
    }
    problem.shape = shape;
    problem.batch = batch;
    problem.workloads = ws;
    AcceleratorOptions ao;
    ao.kind = AcceleratorKind::cpu;
    ao.cpu_threads = 1;
    ao.capacity_bytes = capacity;
    acc = make_accelerator(ao);
    platform.host_tiers.push_back(
        HostTier{MemoryLocation{MemoryKind::local_dram, -1, false}, host_allocator()});
    platform.accelerator = acc.get();
    platform.host_pool = &pool;
  }

  std::unique_ptr<Strategy> make(const std::string& name,
                                 std::map<std::string, std::string> opts = {}) {
    StrategyOptions o(std::move(opts));
    auto s = StrategyRegistry::instance().find(name).make(o);
    o.check_all_used(name);
    return s;
  }

  // Key / value row of token t (prompt or generated) of sequence b, KV head h.
  const float* k_row(int b, int64_t t, int h) const {
    const Workload& w = ws[b];
    if (t < w.prompt_len()) return w.prompt.k_row(t, h);
    return w.steps[t - w.prompt_len()].k.data() + static_cast<size_t>(h) * shape.head_dim;
  }
  const float* v_row(int b, int64_t t, int h) const {
    const Workload& w = ws[b];
    if (t < w.prompt_len()) return w.prompt.v_row(t, h);
    return w.steps[t - w.prompt_len()].v.data() + static_cast<size_t>(h) * shape.head_dim;
  }

  // Largest relative L2 error over (sequence, query head) between out.o and exact attention
  // over the attended positions (all of [0, ctx) when out.attended is empty).
  double max_error_vs_attended(int s, const StepResult& out) const {
    const int Hq = shape.q_heads, d = shape.head_dim;
    const int64_t ctx = problem.context_at(s);
    double worst = 0;
    for (int b = 0; b < problem.batch; ++b)
      for (int h = 0; h < Hq; ++h) {
        const size_t bh = static_cast<size_t>(b) * Hq + h;
        std::vector<int64_t> pos;
        if (out.attended.empty()) {
          for (int64_t t = 0; t < ctx; ++t) pos.push_back(t);
        } else {
          pos = out.attended[bh];
        }
        const float* q = ws[b].steps[s].q.data() + static_cast<size_t>(h) * d;
        const int kvh = shape.kv_head_of(h);
        std::vector<double> lg(pos.size());
        double m = -INFINITY;
        for (size_t i = 0; i < pos.size(); ++i) {
          const float* k = k_row(b, pos[i], kvh);
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
          const float* v = v_row(b, pos[i], kvh);
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
};

}  // namespace hb::test
