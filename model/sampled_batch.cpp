#include "model/sampled_batch.h"

#include <cmath>
#include <string>

#include "bench/layer_scope.h"
#include "bench/sweep_spec.h"

namespace hb::model {

namespace {

// The micro-batches LayerScope would cut the whole batch into.
int microbatches(const bench::SweepSpec& spec, int batch, const OverlapStructure& overlap) {
  return bench::resolve_microbatches(spec.microbatches, batch,
                                     bench::gains_from_microbatches(overlap));
}

}  // namespace

int stands_for(const bench::SweepSpec& spec, int batch) {
  return batch <= 1 || spec.layers > 1 ? 1 : batch;
}

void share_of_one(const bench::SweepSpec& spec, int batch,
                  std::map<std::string, int64_t>& kv_budget_bytes, std::vector<HostTier>& tiers) {
  for (const std::string& m : spec.models)
    if (!kv_budget_bytes.count(m) && spec.accelerator.capacity_bytes > 0)
      kv_budget_bytes[m] = spec.accelerator.capacity_bytes;
  for (auto& [model, bytes] : kv_budget_bytes) bytes /= batch;
  for (HostTier& t : tiers)
    if (t.free_bytes > 0) t.free_bytes /= batch;
}

// The batch's axes, the batch's placement, and what was done said on the point.
void stand_for(reports::Point& p, const bench::SweepSpec& spec, int batch) {
  p.axes.batch = batch;
  // The axis is the group's setting (bench/sweep_groups.cpp: every strategy of a group shares
  // it, so they stay compared); the parameter is what this strategy cut the batch into, as
  // its priced traffic has it (batch_traffic read the layer's weights once per micro-batch).
  if (p.axes.extra.count("microbatches"))
    p.axes.extra["microbatches"] =
        std::to_string(bench::resolve_microbatches(spec.microbatches, batch));
  const auto layer = p.strategy_params.find("layer_weight_bytes");
  if (p.strategy_params.count("microbatches") && layer != p.strategy_params.end() &&
      std::stoll(layer->second) > 0)
    p.strategy_params["microbatches"] =
        std::to_string(std::llround(static_cast<double>(p.traffic_per_step.weight_bytes) /
                                    static_cast<double>(std::stoll(layer->second))));
  for (auto& r : p.placement) r.bytes *= batch;
  const std::string how = "model mode executed 1 of the batch's " + std::to_string(batch) +
                          " sequences on a 1/" + std::to_string(batch) +
                          " share of the budget and priced its traffic for the batch";
  p.strategy_params["model.batch"] = how;
  if (p.status != reports::PointStatus::ok) p.reason += " (per sequence: " + how + ")";
}

// Layer scope splits the batch in micro-batches (LayerScope); the executed sequence is one,
// and the layer waits for its tail once a step (a stack's last layer; one layer is).
Traffic batch_traffic(const bench::SweepSpec& spec, int batch, const Traffic& one,
                      const OverlapStructure& overlap) {
  if (spec.scope != Scope::layer) return one.for_batch(batch);
  return one.for_batch(batch, microbatches(spec, batch, overlap), 1);
}

}  // namespace hb::model
