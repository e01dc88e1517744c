#pragma once
// Drives baseline strategies directly with the cpu accelerator on a small problem, and checks
// outputs against exact fp64 attention over the tokens a strategy says it attended.
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "baselines/register.h"
#include "tests/baselines/attended_reference.h"
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

  double max_error_vs_attended(int s, const StepResult& out) const {
    return test::max_error_vs_attended(problem, s, out);
  }
  // Decode step i of a loaded strategy as the runner drives it, with the tokens it attended.
  static StepResult run_step(Strategy& s, int i) {
    StepResult out;
    s.prepare_step(i);
    s.step(i, out);
    s.fill_attended(i, out);
    return out;
  }
};

}  // namespace hb::test
