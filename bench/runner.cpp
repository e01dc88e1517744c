#include "bench/runner.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>

#include "core/error.h"
#include "core/model_presets.h"
#include "core/timer.h"
#include "kernels/backend.h"
#include "reports/layer_stack.h"
#include "bench/layer_scope.h"
#include "bench/accuracy.h"
#include "bench/contender.h"
#include "bench/kv_budget.h"
#include "bench/stack_memory.h"
#include "bench/sweep_run.h"
#include "bench/unit.h"
#include "bench/sweep_checks.h"
#include "bench/trace.h"

namespace hb::bench {

namespace {

void pool_timing(reports::Timing& a, const reports::Timing& b) {
  std::vector<double> v = a.samples_ns;
  v.insert(v.end(), b.samples_ns.begin(), b.samples_ns.end());
  a = reports::Timing::from_samples(std::move(v));
}

// A later pass's step after the first's: samples concatenated, each pass's rounds kept as rounds
// of the pooled step (a pass of one round is one block), the later pass's stop reason.
void pool_step(reports::StepTiming& into, const reports::StepTiming& more) {
  auto blocks = [](const reports::StepTiming& t) {
    return t.pass_sizes.empty() ? std::vector<int64_t>{static_cast<int64_t>(t.samples_ns.size())}
                                : t.pass_sizes;
  };
  std::vector<int64_t> sizes = blocks(into);
  for (int64_t n : blocks(more)) sizes.push_back(n);
  // Which rounds came from which pass: a pass's rounds share its process and minute.
  std::vector<int64_t> passes = into.repetition_rounds;
  if (passes.empty()) passes.push_back(static_cast<int64_t>(blocks(into).size()));
  passes.push_back(static_cast<int64_t>(blocks(more).size()));
  pool_timing(into, more);
  into.pass_sizes = std::move(sizes);
  into.repetition_rounds = std::move(passes);
  // Each pass's rounds had their own orders; a pass without them leaves the record incomplete.
  if (!into.round_slots.empty() && !more.round_slots.empty())
    into.round_slots.insert(into.round_slots.end(), more.round_slots.begin(),
                            more.round_slots.end());
  else
    into.round_slots.clear();
  // So had their machine controls; a pass without one leaves the point without a control.
  if (!into.control_ns.empty() && !more.control_ns.empty())
    into.control_ns.insert(into.control_ns.end(), more.control_ns.begin(), more.control_ns.end());
  else
    into.control_ns.clear();
  into.stop_reason = more.stop_reason;
}

// run --layers: the later pass's stack pooled as the point's step is (a stack that failed in
// either pass stays failed, with no error figure).
void pool_stack(reports::Point& into, const reports::Point& more) {
  reports::LayerStackFigures& s = into.layer_stack;
  const reports::LayerStackFigures& m = more.layer_stack;
  if (!s.present() || !m.present()) return;
  if (s.status == reports::PointStatus::ok && m.status != reports::PointStatus::ok) {
    s.status = m.status;
    s.reason = "in a later --repetitions pass: " + m.reason;
  }
  if (s.status == reports::PointStatus::ok) {
    pool_step(s.step, m.step);
    for (const auto& [name, t] : m.phases) pool_timing(s.phases[name], t);
  }
  reports::update_shortcut_error(into);
}

// Pools a later pass's point into the first pass's (SweepSpec::repetitions). Timed steps, their
// rounds and phases are concatenated; a pass that failed makes the point fail (a strategy that errs
// one time in three is broken, not noisy). Traffic, placement, accuracy and trajectory are the
// first pass's: the same seeded workload gives the same ones.
void pool_pass(reports::Point& into, reports::Point&& more) {
  if (into.status != reports::PointStatus::ok) return;
  if (more.status != reports::PointStatus::ok) {
    into.status = more.status;
    into.reason = "in a later --repetitions pass: " + more.reason;
    into.accuracy = {};  // failed: no accuracy figures, not the first pass's
    into.attended_tokens.reset();
    reports::update_shortcut_error(into);  // the point no longer times: no error figure
    return;
  }
  pool_step(into.step, more.step);
  for (const auto& [name, t] : more.phases) pool_timing(into.phases[name], t);
  if (into.modeled.present() && more.modeled.present()) {
    pool_timing(into.modeled.step, more.modeled.step);
    update_model_error(into);
  }
  pool_stack(into, more);
}

}  // namespace

void pool_pass_report(reports::Report& into, reports::Report&& pass) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < into.points.size(); ++i) index[into.points[i].axes.key()] = i;
  for (auto& point : pass.points) {
    const std::string key = point.axes.key();
    if (auto it = index.find(key); it != index.end()) {
      pool_pass(into.points[it->second], std::move(point));
    } else {
      index[key] = into.points.size();
      into.points.push_back(std::move(point));
    }
  }
  into.speedups = reports::compute_speedups(into.points);
}

namespace {

// What makes a journaled point not one of group g's ("seq_len 3000, the unit's is 1024"), or "".
std::string foreign_axis(const reports::PointAxes& a, const SweepGroup& g) {
  auto differs = [](const char* name, const std::string& got, const std::string& want) {
    return std::string(name) + " " + got + ", the unit's is " + want;
  };
  if (a.model != g.model) return differs("model", a.model, g.model);
  if (a.kv_dtype != dtype_name(g.kv_dtype))
    return differs("kv_dtype", a.kv_dtype, std::string(dtype_name(g.kv_dtype)));
  if (a.seq_len != g.seq_len)
    return differs("seq_len", std::to_string(a.seq_len), std::to_string(g.seq_len));
  if (a.batch != g.batch) return differs("batch", std::to_string(a.batch), std::to_string(g.batch));
  return "";
}

// The points a previous run finished for `unit`, when they are this sweep's strategies in its
// order; empty otherwise (the unit then runs). A journaled point of another group than its unit's
// was edited or damaged: it is refused, never reported as a point that ran.
std::vector<reports::Point> resumed_unit(const SweepControl* control, const std::string& unit,
                                         const SweepGroup& g,
                                         const std::vector<std::string>& names) {
  if (!control) return {};
  auto it = control->finished.find(unit);
  if (it == control->finished.end() || it->second.size() != names.size()) return {};
  for (size_t i = 0; i < names.size(); ++i)
    if (it->second[i].axes.strategy != names[i]) return {};
  for (const auto& point : it->second)
    if (const std::string why = foreign_axis(point.axes, g); !why.empty())
      throw Error("--resume: the journal's unit '" + unit + "' holds a " + point.axes.strategy +
                      " point of " + why +
                      ": the journal was edited or damaged, so none of its points can be trusted",
                  "delete the journal (OUT.partial.jsonl) and run the sweep again without "
                  "--resume");
  return it->second;
}

// Threads for the strategies' CPU side: --host-threads, else the CPUs the accelerator leaves.
int host_threads(const SweepSpec& spec) {
  if (spec.host_threads > 0) return spec.host_threads;
  const int cpus = static_cast<int>(allowed_cpus().size());
  return std::max<int>(
      1, cpus - std::max(
                    1, spec.accelerator.cpu_threads > 0 ? spec.accelerator.cpu_threads : cpus / 2));
}

// One unit of pass `pass`: taken from an interrupted run's journal, or run and handed to the
// journal; its points then join the report (a later pass's pooled into the first's).
void run_group(SweepRun& run, UnitRunner& units, int pass, const SweepGroup& g) {
  const SweepSpec& spec = run.ctx.spec;
  const SweepControl* control = run.ctx.env.control.get();
  const std::string where =
      g.model + " " + std::to_string(g.seq_len) + " tok b" + std::to_string(g.batch) +
      (g.kv_budget ? " budget " + g.kv_budget->to_string() : "") +
      (spec.repetitions > 1
           ? " pass " + std::to_string(pass + 1) + "/" + std::to_string(spec.repetitions)
           : "");
  const std::string unit = units.unit_key(pass, g);
  std::vector<std::string> names;  // the unit's points' strategies
  for (int r = 0; r < units.points_per_strategy(); ++r)
    names.insert(names.end(), run.sweep.strategies.begin(), run.sweep.strategies.end());
  std::vector<reports::Point> unit_points = resumed_unit(control, unit, g, names);
  if (unit_points.empty()) {  // not finished by an interrupted run: run it
    auto points = units.run(run, g, where);
    if (!points) return;  // stopped: the unit is dropped
    unit_points = std::move(*points);
    // Durable (the journal) before it counts: a stop or crash from here on keeps it.
    if (control && control->on_unit_done) control->on_unit_done({unit, unit_points});
  }
  for (auto& point : unit_points) {
    const std::string key = point.axes.key();
    if (auto it = run.first_pass.find(key); it != run.first_pass.end()) {
      pool_pass(run.report.points[it->second], std::move(point));
    } else {
      run.first_pass[key] = run.report.points.size();
      run.report.points.push_back(std::move(point));
    }
    ++run.done;
    run.done_cost += units.point_cost(run, g);
  }
  run.tell(where + ": done");
}

// Every pass over every workload group, until the end or a stop request.
void run_passes(SweepRun& run, UnitRunner& units) {
  const SweepSpec& spec = run.ctx.spec;
  const int first = spec.only_pass >= 0 ? spec.only_pass : 0;
  const int end = spec.only_pass >= 0 ? spec.only_pass + 1 : spec.repetitions;
  for (int pass = first; pass < end && !run.stopped; ++pass)
    for (const SweepGroup& g : sweep_groups(run.ctx.spec)) {
      if (run.stop_requested()) {
        run.stopped = true;
        break;
      }
      run_group(run, units, pass, g);
      if (run.stopped) break;
    }
}

}  // namespace

std::vector<HostTier> host_tiers(const RunEnvironment& env) {
  std::vector<HostTier> tiers = env.host_tiers;
  if (tiers.empty())
    tiers.push_back(
        HostTier{MemoryLocation{MemoryKind::local_dram, env.cpu_node, false},
                 host_allocator(MemoryLocation{MemoryKind::local_dram, env.cpu_node, false})});
  return tiers;
}

reports::Report run_sweep(const ResolvedSweep& sweep, const RunEnvironment& env,
                          const ProgressFn& progress) {
  MeasuredUnits units;
  return run_sweep(sweep, env, units, progress);
}

reports::Report run_sweep(const SweepSpec& spec, const RunEnvironment& env,
                          const ProgressFn& progress) {
  return run_sweep(spec.validate(), env, progress);
}

reports::Report run_sweep(const ResolvedSweep& resolved, const RunEnvironment& env,
                          UnitRunner& units, const ProgressFn& progress) {
  const SweepSpec& spec = resolved.spec;
  const ValidSweep sweep = validate_sweep(resolved, env, units);
  // The accelerator is had once before anything runs: an unknown kind or `cuda` without a usable
  // GPU is the user's to fix (exit 2), not an error on every point. Released before the sweep.
  AcceleratorInfo accelerator_info = make_accelerator(spec.accelerator)->info();
  // Each model's KV budget, from the deployment unless --accelerator-memory gives it.
  const std::map<std::string, KvMemoryBudget> budgets = kv_budgets(spec, accelerator_info);
  std::map<std::string, int64_t> budget_bytes;
  for (const auto& [m, b] : budgets) budget_bytes[m] = b.bytes;
  check_stack_memory(spec, sweep.strategies.size(), accelerator_info, budget_bytes,
                     env.host_memory_budget_bytes);
  if (!spec.models.empty() && budgets.count(spec.models[0]))
    accelerator_info.capacity_bytes = budgets.at(spec.models[0]).bytes;

  reports::Report report;
  report.context.sweep = resolved.echo();
  if (spec.accelerator.capacity_bytes <= 0)
    for (const auto& [m, b] : budgets)
      report.context.sweep["accelerator_kv_budget_bytes." + m] =
          std::to_string(b.bytes) + " (" + b.rule + ")";
  ThreadPool host_pool(host_threads(spec), "--host-threads");
  const SweepContext ctx{spec, env, host_tiers(env), host_pool, budget_bytes};
  SweepRun run(ctx, resolved, sweep, progress, report);
  const auto per_group =
      static_cast<int64_t>(sweep.strategies.size()) * units.points_per_strategy();
  const int passes = spec.only_pass >= 0 ? 1 : spec.repetitions;
  run.total = static_cast<int64_t>(sweep_groups(spec).size()) * per_group * passes;
  for (const SweepGroup& g : sweep_groups(spec))
    run.total_cost += units.point_cost(run, g) * static_cast<double>(per_group * passes);

  try {  // with a control, a failure escaping a unit ends the sweep with what finished
    run_passes(run, units);
  } catch (const Error& e) {
    if (!env.control) throw;
    report.interruption = {true, e.problem() + (e.fix().empty() ? "" : " (fix: " + e.fix() + ")"),
                           e.exit_code()};
  } catch (const std::exception& e) {
    if (!env.control) throw;
    report.interruption = {true, std::string("internal error: ") + e.what(), kExitFailure};
  }
  if (run.stopped) report.interruption = {true, "stopped", kExitFailure};
  if (report.interruption.interrupted)
    report.interruption.reason +=
        " (after " + std::to_string(run.done) + " of " + std::to_string(run.total) + " points)";
  // Every unit came from the journal: the context still says which accelerator they ran on.
  if (!run.context_accel_set) report.context.accelerator = accelerator_info;
  report.speedups = reports::compute_speedups(report.points);
  return report;
}

}  // namespace hb::bench
