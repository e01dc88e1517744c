#pragma once
// Model mode's sampled batch: one executed sequence stands for a batch of B. Nothing is timed and
// the batch's sequences are independent draws of one generator, so the unit executes one of them
// on a 1/B share of each platform's KV budget and host tiers (the batch's fit, sequence by
// sequence), prices each step's traffic for the whole batch in its micro-batches
// (Traffic::for_batch), and reports the point as the batch's; its accuracy is the batch's estimate
// (a trace's batch repeats one sequence: exact). This spares (B-1)/B of the unit's workload
// generation, loads, steps and reference. Not for a layer stack (its layers' budgets are split
// again).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/strategy.h"
#include "reports/report.h"
#include "bench/sweep_spec.h"

namespace hb::model {

// The executed sequence's step traffic as a batch of `batch`'s (the step pricer records and
// prices it: model/step_pricer.h). `overlap`: the executed strategy's structure, which says
// whether it cuts the batch in micro-batches (bench/layer_scope.h).
Traffic batch_traffic(const bench::SweepSpec& spec, int batch, const Traffic& one,
                      const OverlapStructure& overlap);

// How many of a batch of `batch` sequences one executed sequence stands for (1: the unit
// executes its batch as it is: a batch of one, or a layer stack).
int stands_for(const bench::SweepSpec& spec, int batch);

// A platform's KV budgets (by model) and host tiers, made one of `batch` sequences' share.
void share_of_one(const bench::SweepSpec& spec, int batch,
                  std::map<std::string, int64_t>& kv_budget_bytes, std::vector<HostTier>& tiers);

// The executed sequence's point, as the batch's.
void stand_for(reports::Point& p, const bench::SweepSpec& spec, int batch);

}  // namespace hb::model
