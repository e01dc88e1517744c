#include "reports/model/model_run.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"

namespace hb::model {

std::shared_ptr<run::StepModel> make_step_model(
    const PlatformModel& m, bool replace,
    std::function<void(const reports::PointAxes&, int, const ModeledStep&)> on_step) {
  auto sm = std::make_shared<run::StepModel>();
  sm->replace = replace;
  if (replace) {
    sm->accelerator_kind = to_string(m.accelerator.kind);  // a point axis: text
    sm->axes_extra["platform"] = m.name;
  } else {
    sm->platform = m.name;
  }
  sm->price = [m, on_step](const reports::PointAxes& axes, const Strategy& s, int step,
                           const StepResult& out) {
    const ModeledStep ms = model_step(out.traffic, overlap_for(s.overlap()), m);
    if (on_step) on_step(axes, step, ms);
    return run::StepPrice{ms.total_ns, ms.phase_ns, ms.overlap};
  };
  sm->annotate = [m](const Strategy& s) {
    std::string from;
    const OverlapStructure o = overlap_for(s.overlap(), &from);
    return std::map<std::string, std::string>{{"model.platform", m.name},
                                              {"model.overlap", o.to_string() + " (" + from + ")"}};
  };
  return sm;
}

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

reports::Report run_model_sweep(const run::SweepSpec& spec,
                                const std::vector<PlatformModel>& platforms,
                                const run::RunEnvironment& env, const run::ProgressFn& progress) {
  spec.validate();
  if (platforms.empty())
    throw Error("model mode needs at least one platform profile", "pass --platform");
  for (const auto& p : platforms) p.validate();
  reports::Report all;
  const int64_t sweeps = static_cast<int64_t>(platforms.size() * spec.models.size());
  int64_t index = 0, done_before = 0;
  std::string names;
  for (const auto& m : platforms) {
    names += (names.empty() ? "" : ",") + m.name;
    for (const auto& model : spec.models) {
      run::SweepSpec s = spec;
      s.models = {model};
      // The strategies execute on the cpu accelerator: what they select and move does not
      // depend on which accelerator runs it; the platform's budget decides what fits.
      s.accelerator.kind = hb::AcceleratorKind::cpu;
      const bool given = spec.accelerator.capacity_bytes > 0;
      s.accelerator.capacity_bytes =
          given ? spec.accelerator.capacity_bytes : kv_budget_per_layer(m, spec.model(model));
      run::RunEnvironment e = env;
      e.host_tiers = host_tiers_for(m);
      e.observe_pages =
          nullptr;  // the tiers are labels on this machine's memory: nothing to verify
      e.model = make_step_model(m, true);
      const std::string label = "[" + m.name + "] ";
      int64_t sub_total = 0;
      reports::Report r = run::run_sweep(s, e, [&](const run::Progress& p) {
        sub_total = p.total;
        if (progress)
          progress({done_before + p.done,
                    std::max<int64_t>(p.total * sweeps, done_before + p.total), label + p.label,
                    p.elapsed_s});
      });
      done_before += sub_total > 0 ? sub_total : static_cast<int64_t>(r.points.size());
      if (index++ == 0) all.context = r.context;
      all.context.sweep["model.kv_budget_bytes." + m.name + "." + model] =
          std::to_string(s.accelerator.capacity_bytes) +
          (given ? " (--accelerator-memory)" : " (profile HBM - weights)");
      for (auto& p : r.points) all.points.push_back(std::move(p));
      // Stopped or failed (run's SweepControl): what finished is the report; nothing more runs.
      if (r.interruption.interrupted) {
        all.interruption = r.interruption;
        break;
      }
    }
    all.context.sweep["model.profile." + m.name] =
        m.origin + " (" + to_string(m.source) + "): " + m.description;
    if (all.interruption.interrupted) break;
  }
  all.context.sweep["models"] = [&] {
    std::string s;
    for (const auto& x : spec.models) s += (s.empty() ? "" : ",") + x;
    return s;
  }();
  all.context.sweep["mode"] = "model";
  all.context.sweep["model.platforms"] = names;
  all.context.sweep["accelerator"] = "cpu (executes the strategies; timings are modeled)";
  if (spec.accelerator.capacity_bytes <= 0)
    all.context.sweep["accelerator_capacity_bytes"] = "per platform and model";
  std::stable_sort(all.points.begin(), all.points.end(),
                   [](const reports::Point& a, const reports::Point& b) {
                     return reports::axes_less(a.axes, b.axes);
                   });
  all.speedups = reports::compute_speedups(all.points);
  return all;
}

}  // namespace hb::model
