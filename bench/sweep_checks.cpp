#include "bench/sweep_checks.h"

#include <algorithm>

#include "core/error.h"
#include "core/model_presets.h"
#include "core/strategy.h"
#include "bench/sweep_groups.h"

namespace hb::bench {

namespace {

// Option typos are caught before anything runs: every strategy reads its options once.
void check_strategy_options(const SweepSpec& spec, const std::vector<std::string>& names) {
  StrategyOptions opts(spec.strategy_options);
  for (const auto& n : names) {
    StrategyRegistry::instance().find(n).make(opts);
  }
  for (const auto& [k, v] : spec.strategy_options) {
    const std::string owner = k.substr(0, k.find('.'));
    if (std::find(names.begin(), names.end(), owner) == names.end())
      throw Error(
          "option '" + k + "' is for strategy '" + owner + "', which this sweep does not run",
          "add " + owner + " to --strategy or drop the option");
    opts.check_all_used(owner);
  }
}

// Host memory for workloads is checked for every point before the first one runs.
void check_host_memory(const SweepSpec& spec, int64_t budget_bytes, const UnitRunner& units) {
  if (budget_bytes <= 0) return;
  for (const auto& m : spec.models)
    for (int64_t n : spec.seq_lens)
      for (int batch : spec.batches) {
        const int b = units.executed_batch(spec, batch);
        const auto& preset = spec.model(m);
        const int64_t need = static_cast<int64_t>(b) * (n + spec.decode_steps) *
                             preset.shape.kv_heads * preset.shape.head_dim * 4 * 2 *
                             2;  // fp32 workload + cache copies
        if (need > budget_bytes)
          throw Error("sequence length " + std::to_string(n) + " x batch " + std::to_string(batch) +
                          (b != batch ? " (" + std::to_string(b) + " sequences executed)" : "") +
                          " of " + m + " needs about " + std::to_string(need >> 20) +
                          " MiB of host memory, more than the " +
                          std::to_string(budget_bytes >> 20) + " MiB available",
                      "use shorter --seq-len or a smaller --batch");
      }
}

}  // namespace

ValidSweep validate_sweep(const ResolvedSweep& sweep, const RunEnvironment& env,
                          const UnitRunner& units) {
  const SweepSpec& spec = sweep.spec;
  ValidSweep out;
  out.strategies = resolve_strategies(spec.strategies);
  check_strategy_options(spec, out.strategies);
  check_host_memory(spec, env.host_memory_budget_bytes, units);
  return out;
}

}  // namespace hb::bench
