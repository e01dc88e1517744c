#pragma once
// A sweep's workload groups and the axes of their points: which strategies run, which groups
// (model x dtype x length x batch x budget) this process runs, and what each point is called.
#include <optional>
#include <string>
#include <vector>

#include "core/model_presets.h"
#include "reports/report.h"
#include "bench/run_environment.h"
#include "bench/sweep_spec.h"

namespace hb::bench {

// Strategy names the spec selects: "all" expands to every registered strategy, "headline" to
// all but the ablations (what the headline and the procurement view compare).
std::vector<std::string> resolve_strategies(const std::vector<std::string>& names);

// One workload group of a sweep: every strategy runs side by side on it. Groups are numbered in
// sweep order (model, dtype, length, batch, budget); spec.share_index/share_count select this
// process's. With --kv-budget, each budget is a group of its own (innermost), so a budget's
// strategies are still compared side by side.
struct SweepGroup {
  std::string model;
  DType kv_dtype = DType::f16;
  int64_t seq_len = 0;
  int batch = 1;
  std::optional<KvBudget> kv_budget;  // none: each strategy's own budget
};
std::vector<SweepGroup> sweep_groups(const SweepSpec& spec);
// The axes of a point of group g, as the runner fills them (accelerator kind known once the
// accelerator exists).
reports::PointAxes point_axes(const SweepSpec& spec, const ModelPreset& preset, const SweepGroup& g,
                              const std::string& strategy, const std::string& workload,
                              const std::string& accelerator_kind);
// The axes of every point the sweep (its share) would produce, in run order: what a fleet run
// reports as failed when the rank that owned them failed.
std::vector<reports::PointAxes> planned_axes(const ResolvedSweep& sweep,
                                             const std::string& accelerator_kind);

// The key of the unit (pass, group) of a sweep.
std::string unit_key(int pass, const SweepGroup& g);

}  // namespace hb::bench
