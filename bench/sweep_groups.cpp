#include "bench/sweep_groups.h"

#include <algorithm>
#include <map>

#include "core/strategy.h"
#include "bench/layer_scope.h"

namespace hb::bench {

std::vector<std::string> resolve_strategies(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  auto add = [&](const std::string& n) {
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  };
  for (const auto& n : names) {
    if (n == "all" || n == "headline") {
      for (const auto& info : StrategyRegistry::instance().all())
        if (n == "all" || info.role != StrategyRole::ablation) add(info.name);
    } else {
      StrategyRegistry::instance().find(n);  // throws with the list of names
      add(n);
    }
  }
  return out;
}

std::vector<SweepGroup> sweep_groups(const SweepSpec& spec) {
  std::vector<SweepGroup> out;
  int64_t index = 0;
  for (const auto& model : spec.models)
    for (const auto& dt : spec.kv_dtypes)
      for (int64_t seq_len : spec.seq_lens)
        for (int batch : spec.batches)
          for (size_t b = 0; b < std::max<size_t>(1, spec.kv_budgets.size()); ++b)
            if (index++ % spec.share_count == spec.share_index)
              out.push_back(
                  {model, dt, seq_len, batch,
                   spec.kv_budgets.empty() ? std::nullopt : std::optional(spec.kv_budgets[b])});
  return out;
}

namespace {

// Layer-scope points carry their scope (attention-scope points carry none, as reports from
// before layer scope existed), so compare never pairs a layer with attention alone.
// A point run under --kv-budget carries the budget as given (points without one carry none, as
// reports from before the option existed).
std::map<std::string, std::string> scope_axes(const SweepSpec& spec, const SweepGroup& g) {
  std::map<std::string, std::string> e;
  if (g.kv_budget) e["kv_budget"] = g.kv_budget->to_string();
  if (spec.scope != Scope::layer) return e;
  e["scope"] = to_string(Scope::layer);
  // The group's setting, shared by its strategies (so they stay compared): the most a strategy
  // cuts the batch into; each point's strategy_params say what it did (LayerScope).
  e["microbatches"] = std::to_string(resolve_microbatches(spec.microbatches, g.batch));
  return e;
}

}  // namespace

reports::PointAxes point_axes(const SweepSpec& spec, const ModelPreset& preset, const SweepGroup& g,
                              const std::string& strategy, const std::string& workload,
                              const std::string& accelerator_kind) {
  return reports::PointAxes{g.model,
                            kModelFamilies.name(preset.family),
                            g.seq_len,
                            g.batch,
                            strategy,
                            std::string(dtype_name(g.kv_dtype)),
                            workload,
                            accelerator_kind,
                            spec.decode_steps,
                            spec.page_tokens,
                            scope_axes(spec, g)};
}

std::vector<reports::PointAxes> planned_axes(const ResolvedSweep& sweep,
                                             const std::string& accelerator_kind) {
  std::vector<reports::PointAxes> out;
  const SweepSpec& spec = sweep.spec;
  const auto names = resolve_strategies(spec.strategies);
  const std::string workload = sweep.workload_label();  // as run_sweep records it
  for (const auto& g : sweep_groups(spec)) {
    const ModelPreset& preset = spec.model(g.model);
    for (const auto& name : names)
      out.push_back(point_axes(spec, preset, g, name, workload, accelerator_kind));
  }
  return out;
}

std::string unit_key(int pass, const SweepGroup& g) {
  std::string k = "pass=" + std::to_string(pass) + ";model=" + g.model +
                  ";kv_dtype=" + std::string(dtype_name(g.kv_dtype)) +
                  ";seq_len=" + std::to_string(g.seq_len) + ";batch=" + std::to_string(g.batch);
  if (g.kv_budget) k += ";kv_budget=" + g.kv_budget->to_string();
  return k;
}

}  // namespace hb::bench
