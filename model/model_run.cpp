#include "model/model_run.h"

#include <algorithm>
#include <map>

#include "core/error.h"
#include "kernels/cpu/cpu_accelerator.h"
#include "model/capacity.h"
#include "model/model_sweep.h"
#include "model/step_pricer.h"

namespace hb::model {

std::vector<HostTier> host_tiers_for(const PlatformModel& m) {
  std::vector<HostTier> out;
  for (const auto& t : m.tiers) {
    const MemoryLocation loc{t.kind, t.node, true};
    HostTier h{loc, host_allocator(loc)};
    h.free_bytes = t.capacity_bytes;
    h.read_bandwidth_bytes_per_s = t.read_gbps * 1e9;
    out.push_back(std::move(h));
  }
  return out;
}

reports::Report run_model_sweep(const bench::SweepSpec& spec,
                                const std::vector<PlatformModel>& platforms,
                                const bench::RunEnvironment& env, const bench::ProgressFn& progress,
                                const std::vector<DeploymentRequest>& requests) {
  return run_model_sweep(spec.validate(), platforms, env, progress, requests);
}

namespace {

// Whether the weights of `model` fit the GPUs of some tp of m's node (at the request's types).
bool fits_some_tp(const PlatformModel& m, const ModelPreset& model, const DeploymentRequest& r) {
  if (model.layers <= 0) return true;
  for (int t = 1; t <= m.node.gpus; ++t)
    if (tp_problem(m, model, t).empty() && rank_kv_room(m, model, t, r.weights) > 0) return true;
  return false;
}

// Platform m as a lane of the sweep: its tiers, its step pricer, each model's KV budget (the
// profile's, or --accelerator-memory), and the models whose weights it cannot hold.
Lane lane_for(const PlatformModel& m, const bench::SweepSpec& spec,
              const DeploymentRequest& request) {
  const bool given = spec.accelerator.capacity_bytes > 0;
  Lane lane;
  lane.host_tiers = host_tiers_for(m);
  PricerOptions o;
  o.sweep = &spec;
  lane.pricer = make_step_pricer(m, o);
  // --accelerator-memory gives the budget: one GPU, fp16, as before deployments.
  if (!given) {
    lane.platform = &m;
    lane.request = request;
    lane.pricer_options = o;
    for (const auto& model : spec.models)
      if (const ModelPreset& p = spec.model(model); request.tp > 0 && p.layers > 0)
        if (std::string why = tp_problem(m, p, request.tp); !why.empty())
          throw Error(why,
                      "pick a --tp that divides every platform's GPUs per node and the "
                      "model's heads, or --tp auto");
  }
  for (const auto& model : spec.models) {
    lane.kv_budget_bytes[model] =
        given ? spec.accelerator.capacity_bytes : kv_budget_per_layer(m, spec.model(model));
    // A model whose weights exceed the accelerator runs no strategy there (capacity.h says so
    // too); --accelerator-memory gives every layer its budget whatever the weights.
    // On a multi-GPU node the deployment decides per unit (model_sweep.cpp); recorded here
    // when no tp of the node holds the weights (the context and the progress's cost).
    if (std::string note = kv_memory(m, spec.model(model)).weights_note;
        !given && !note.empty() && !fits_some_tp(m, spec.model(model), request))
      lane.refused[model] = note + ": nothing of the model runs there (a platform with more " +
                            "accelerator memory, or a smaller model)";
  }
  return lane;
}

// What model mode refuses before anything runs.
void check_model_sweep(const bench::SweepSpec& spec, const std::vector<PlatformModel>& platforms,
                       const std::vector<DeploymentRequest>& requests) {
  if (requests.empty()) throw Error("model mode needs a deployment", "a bug: report it");
  if (platforms.empty())
    throw Error("model mode needs at least one platform profile", "pass --platform");
  for (const auto& p : platforms) p.validate();
  if (spec.layers > 1)
    throw Error("--layers " + std::to_string(spec.layers) +
                    " measures a stack of layers, and --mode model prices one layer's step",
                "drop --layers (the model's whole-model figures are layers x the step), or "
                "measure without --mode model");
}

// The run's --tp and precisions, for the report's context.
std::string deployment_context(const std::vector<DeploymentRequest>& requests) {
  std::string precisions;
  for (const auto& r : requests)
    precisions += std::string(precisions.empty() ? "" : ", ") + "weights " +
                  kPricedDtypes.name(r.weights) + " KV " + kPricedDtypes.name(r.kv);
  const int tp = requests.front().tp;
  return std::string(tp > 0 ? "--tp " + std::to_string(tp) : "--tp auto") + "; " + precisions +
         " (each point's strategy_params[model.deployment] on a multi-GPU node; axes.extra dtypes "
         "when not fp16)";
}

}  // namespace

reports::Report run_model_sweep(const bench::ResolvedSweep& sweep,
                                const std::vector<PlatformModel>& platforms,
                                const bench::RunEnvironment& env, const bench::ProgressFn& progress,
                                const std::vector<DeploymentRequest>& requests) {
  const bench::SweepSpec& spec = sweep.spec;
  check_model_sweep(spec, platforms, requests);
  const DeploymentRequest& request = requests.front();
  bench::ResolvedSweep executed = sweep;
  bench::SweepSpec& s = executed.spec;
  // The strategies execute on the cpu accelerator: what they select and move does not depend
  // on which accelerator runs it; the platform's budget decides what fits.
  s.accelerator.kind = hb::AcceleratorKind::cpu;
  const bool given = spec.accelerator.capacity_bytes > 0;
  std::vector<Lane> lanes;
  std::string names;
  for (const auto& m : platforms) {
    names += (names.empty() ? "" : ",") + m.name;
    // One lane per precision: its points carry it (axes.extra "dtypes").
    for (const DeploymentRequest& r : given ? std::vector{request} : requests)
      lanes.push_back(lane_for(m, spec, r));
  }
  bench::RunEnvironment e = env;
  e.observe_pages = nullptr;  // the tiers are labels on this machine's memory: nothing to verify
  // Modeled timings never read the layer's GEMMs (their traffic is counted from the shapes):
  // they are queued as nothing and their weights only charged to the budget, never filled.
  e.make_accelerator = [](const AcceleratorOptions& o) {
    return cpu::make_cpu_accelerator(o.capacity_bytes, o.cpu_threads, /*run_layer_gemms=*/false);
  };
  // One sweep over every platform: each unit's workload, reference and every execution that
  // the platforms' plans share are done once (model_sweep.h).
  ModelSweep units(lanes, e);
  reports::Report all = bench::run_sweep(executed, e, units, progress);
  // The lanes bring their own budgets (below), not the sweep's deployment rule's.
  std::erase_if(all.context.sweep, [](const auto& kv) {
    return kv.first.rfind("accelerator_kv_budget_bytes.", 0) == 0;
  });
  for (size_t i = 0; i < platforms.size(); ++i) {
    const PlatformModel& m = platforms[i];
    const Lane& lane = lanes[i * (lanes.size() / platforms.size())];
    for (const auto& [model, bytes] : lane.kv_budget_bytes)
      all.context.sweep["model.kv_budget_bytes." + m.name + "." + model] =
          lane.refused.count(model) ? "0 (the weights do not fit)"
                                    : std::to_string(bytes) + (given ? " (--accelerator-memory)"
                                                                     : " (profile HBM - weights)");
    all.context.sweep["model.profile." + m.name] =
        m.origin + " (" + to_string(m.source) + "): " + m.description;
  }
  all.context.sweep["models"] = [&] {
    std::string list;
    for (const auto& x : spec.models) list += (list.empty() ? "" : ",") + x;
    return list;
  }();
  all.context.sweep["mode"] = "model";
  if (!given) all.context.sweep["model.deployment"] = deployment_context(requests);
  if (std::any_of(spec.batches.begin(), spec.batches.end(), [](int b) { return b > 1; }))
    all.context.sweep["model.batch"] =
        "a batch of B executes one of its sequences on a 1/B share of the KV budget and tiers; "
        "its traffic is priced for the batch (model/sampled_batch.h)";
  all.context.sweep["model.platforms"] = names;
  all.context.sweep["accelerator"] = "cpu (executes the strategies; timings are modeled)";
  if (spec.accelerator.capacity_bytes <= 0)
    all.context.sweep["accelerator_capacity_bytes"] = "per platform and model";
  std::stable_sort(all.points.begin(), all.points.end(),
                   [](const reports::Point& a, const reports::Point& b) {
                     return reports::axes_less(a.axes, b.axes);
                   });
  all.speedups = reports::compute_speedups(all.points);
  for (const auto& m : platforms) {
    auto rows = sweep_capacity(spec, [&](const std::string&, const ModelPreset& p) {
      // --accelerator-memory is a per-layer KV budget: every layer has it, whatever the weights.
      return given ? kv_memory(m.name, spec.accelerator.capacity_bytes, host_tiers_for(m), p)
                   : kv_memory(m, p);
    });
    all.capacity.insert(all.capacity.end(), rows.begin(), rows.end());
  }
  return all;
}

}  // namespace hb::model
