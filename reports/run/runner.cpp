#include "reports/run/runner.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "core/error.h"
#include "core/model_presets.h"
#include "core/timer.h"
#include "kernels/backend.h"
#include "reports/run/accuracy.h"
#include "reports/run/trace.h"

namespace hb::run {

std::vector<std::string> resolve_strategies(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  auto add = [&](const std::string& n) {
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  };
  for (const auto& n : names) {
    if (n == "all") {
      for (const auto& info : StrategyRegistry::instance().all()) add(info.name);
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
          if (index++ % spec.share_count == spec.share_index)
            out.push_back({model, dt, seq_len, batch});
  return out;
}

reports::PointAxes point_axes(const SweepSpec& spec, const ModelPreset& preset, const SweepGroup& g,
                              const std::string& strategy, const std::string& workload,
                              const std::string& accelerator_kind) {
  return reports::PointAxes{g.model,
                            preset.family,
                            g.seq_len,
                            g.batch,
                            strategy,
                            std::string(dtype_name(parse_dtype(g.kv_dtype))),
                            workload,
                            accelerator_kind,
                            spec.decode_steps,
                            spec.page_tokens,
                            {}};
}

std::vector<reports::PointAxes> planned_axes(const SweepSpec& spec,
                                             const std::string& accelerator_kind) {
  std::vector<reports::PointAxes> out;
  const auto names = resolve_strategies(spec.strategies);
  const std::string workload =
      workload_axis(spec.workload);  // a trace's identity, as run_sweep records it
  for (const auto& g : sweep_groups(spec)) {
    const ModelPreset& preset = find_model_preset(g.model);
    for (const auto& name : names)
      out.push_back(point_axes(spec, preset, g, name, workload, accelerator_kind));
  }
  return out;
}

std::string unit_key(int pass, const SweepGroup& g, const RunEnvironment& env) {
  std::string k = "pass=" + std::to_string(pass) + ";model=" + g.model + ";kv_dtype=" + g.kv_dtype +
                  ";seq_len=" + std::to_string(g.seq_len) + ";batch=" + std::to_string(g.batch);
  // Model mode runs the same groups once per platform; the platform tells them apart.
  if (env.model)
    for (const auto& [key, value] : env.model->axes_extra) k += ";" + key + "=" + value;
  return k;
}

namespace {

// One strategy's state at the point being run.
struct Contender {
  std::string name;
  std::unique_ptr<Accelerator> accelerator;
  std::unique_ptr<Strategy> strategy;
  reports::Point point;
  std::vector<double> samples;
  std::map<std::string, std::vector<double>> phases;
  // A model observing a measured run (StepModel::replace = false): its price of each timed step.
  std::vector<double> modeled;
  std::map<std::string, std::vector<double>> modeled_phases;
  std::string modeled_overlap;
  Traffic traffic_sum;
  AccuracyAccumulator accuracy;
  int64_t first_timed_ns = 0;
  bool active = false;
  int scored = 0;
  Contender(const Problem& p) : accuracy(p) {}
};

std::vector<Workload> make_workloads(const SweepSpec& spec, const TraceFile* trace,
                                     const AttentionShape& shape, int64_t seq_len, int batch) {
  std::vector<Workload> ws;
  if (trace) {
    Workload w = trace->workload(shape, seq_len, spec.decode_steps);
    for (int b = 1; b < batch; ++b) ws.push_back(w);  // a trace is one sequence; batch repeats it
    ws.push_back(std::move(w));
    return ws;
  }
  WorkloadSpec ws_spec;
  ws_spec.kind = parse_workload_kind(spec.workload);
  for (int b = 0; b < batch; ++b) {
    ws_spec.seed = spec.seed + static_cast<uint64_t>(b) * 7919;
    ws.push_back(make_workload(shape, seq_len, spec.decode_steps, ws_spec));
  }
  return ws;
}

bool converged(const std::vector<double>& s, const StopCriteria& stop, double elapsed_s) {
  if (static_cast<int>(s.size()) < stop.min_samples || elapsed_s < stop.min_time_s) return false;
  return summarize(s).rel_stdev() <= stop.max_noise;
}

// Point::modeled's error from the two medians as they stand now.
void update_model_error(reports::Point& p) {
  const double measured = p.step.summary.median;
  p.modeled.error_vs_measured =
      measured > 0 ? (p.modeled.step.summary.median - measured) / measured : 0;
}

void finish(Contender& c, const std::string& stop_reason, const std::string& platform) {
  if (!c.active) return;
  c.active = false;
  auto& p = c.point;
  p.step.samples_ns = c.samples;
  p.step.summary = summarize(c.samples);
  p.step.stop_reason = stop_reason;
  for (auto& [name, v] : c.phases) p.phases[name] = reports::Timing::from_samples(v);
  if (!c.samples.empty())
    p.traffic_per_step = c.traffic_sum.scaled(1.0 / static_cast<double>(c.samples.size()));
  p.accuracy = c.accuracy.result();
  p.trajectory = c.strategy->trajectory();
  // Side by side only when every timed step was priced: a partial set would compare different
  // steps.
  if (!platform.empty() && !c.modeled.empty() && c.modeled.size() == c.samples.size()) {
    p.modeled.platform = platform;
    p.modeled.overlap = c.modeled_overlap;
    p.modeled.step = reports::Timing::from_samples(c.modeled);
    for (const auto& [name, v] : c.modeled_phases)
      p.modeled.phase_median_ns[name] = summarize(v).median;
    update_model_error(p);
  }
}

// Pools a later pass's point into the first pass's (SweepSpec::repetitions). Timed steps and
// phases are concatenated; a pass that failed makes the point fail (a strategy that errs one
// time in three is broken, not noisy). Traffic, placement, accuracy and trajectory are the
// first pass's: the same seeded workload gives the same ones.
void pool_pass(reports::Point& into, reports::Point&& more) {
  if (into.status != reports::PointStatus::ok) return;
  if (more.status != reports::PointStatus::ok) {
    into.status = more.status;
    into.reason = "in a later --repetitions pass: " + more.reason;
    into.accuracy = {};  // failed: no accuracy figures, not the first pass's
    return;
  }
  auto pool = [](reports::Timing& a, const reports::Timing& b) {
    std::vector<double> v = a.samples_ns;
    v.insert(v.end(), b.samples_ns.begin(), b.samples_ns.end());
    a = reports::Timing::from_samples(std::move(v));
  };
  const std::string stop = more.step.stop_reason;
  if (into.step.pass_sizes.empty())
    into.step.pass_sizes.push_back(static_cast<int64_t>(into.step.samples_ns.size()));
  into.step.pass_sizes.push_back(static_cast<int64_t>(more.step.samples_ns.size()));
  pool(into.step, more.step);
  into.step.stop_reason = stop;
  for (const auto& [name, t] : more.phases) pool(into.phases[name], t);
  if (into.modeled.present() && more.modeled.present()) {
    pool(into.modeled.step, more.modeled.step);
    update_model_error(into);
  }
}

void fail(Contender& c, reports::PointStatus status, const std::string& reason) {
  c.active = false;
  c.point.status = status;
  c.point.reason = reason;
  c.point.step.stop_reason = "none";
  c.point.accuracy = {};  // a failed point carries no accuracy figures
}

// The points a previous run finished for `unit`, when they are this sweep's strategies in its
// order; empty otherwise (the unit then runs).
std::vector<reports::Point> resumed_unit(const SweepControl* control, const std::string& unit,
                                         const std::vector<std::string>& names) {
  if (!control) return {};
  auto it = control->finished.find(unit);
  if (it == control->finished.end() || it->second.size() != names.size()) return {};
  for (size_t i = 0; i < names.size(); ++i)
    if (it->second[i].axes.strategy != names[i]) return {};
  return it->second;
}

}  // namespace

reports::Report run_sweep(const SweepSpec& spec, const RunEnvironment& env,
                          const ProgressFn& progress) {
  spec.validate();
  // A model that only observes (validate-model, run --platform in measure mode) is reported
  // next to the measurement under this platform name.
  const std::string side_platform = env.model && !env.model->replace ? env.model->platform : "";
  const auto names = resolve_strategies(spec.strategies);
  // Option typos are caught before anything runs: every strategy reads its options once.
  {
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
  // A trace is opened once per sweep, and what it cannot serve (shape, lengths, decode steps,
  // NaN/Inf in the rows the points read) is refused before the first point runs.
  std::optional<TraceFile> trace;
  if (spec.workload.rfind("trace:", 0) == 0) {
    trace.emplace(spec.workload.substr(6));
    trace->check_sweep(spec);
  }
  // Host memory for workloads is checked for every point before the first one runs.
  if (env.host_memory_budget_bytes > 0) {
    for (const auto& m : spec.models)
      for (int64_t n : spec.seq_lens)
        for (int b : spec.batches) {
          const auto& preset = find_model_preset(m);
          const int64_t need = static_cast<int64_t>(b) * (n + spec.decode_steps) *
                               preset.shape.kv_heads * preset.shape.head_dim * 4 * 2 *
                               2;  // fp32 workload + cache copies
          if (need > env.host_memory_budget_bytes)
            throw Error("sequence length " + std::to_string(n) + " x batch " + std::to_string(b) +
                            " of " + m + " needs about " + std::to_string(need >> 20) +
                            " MiB of host memory, more than the " +
                            std::to_string(env.host_memory_budget_bytes >> 20) + " MiB available",
                        "use shorter --seq-len or a smaller --batch");
        }
  }

  // The accelerator is had once before anything runs: an unknown kind or `cuda` without a usable
  // GPU is the user's to fix (exit 2), not an error on every point. Released before the sweep.
  AcceleratorInfo accelerator_info = make_accelerator(spec.accelerator)->info();

  reports::Report report;
  report.context.sweep = spec.echo();
  if (env.model && env.model->replace) report.context.sweep["mode"] = "model";
  ThreadPool host_pool(
      spec.host_threads > 0
          ? spec.host_threads
          : std::max<int>(1, static_cast<int>(allowed_cpus().size()) -
                                 std::max(1, spec.accelerator.cpu_threads > 0
                                                 ? spec.accelerator.cpu_threads
                                                 : static_cast<int>(allowed_cpus().size()) / 2)),
      "--host-threads");
  std::vector<HostTier> tiers = env.host_tiers;
  if (tiers.empty())
    tiers.push_back(
        HostTier{MemoryLocation{MemoryKind::local_dram, env.cpu_node, false},
                 host_allocator(MemoryLocation{MemoryKind::local_dram, env.cpu_node, false})});
  bool context_accel_set = false;

  const int64_t total =
      static_cast<int64_t>(sweep_groups(spec).size() * names.size()) * spec.repetitions;
  int64_t done = 0;
  const int64_t t_start = now_ns();
  std::map<std::string, size_t> first_pass;  // point key -> index in report.points
  const SweepControl* control = env.control.get();
  auto stop_requested = [&] { return control && control->should_stop && control->should_stop(); };
  bool stopped = false;

  try {  // with a control, a failure escaping a unit ends the sweep with what finished (below)
    for (int pass = 0; pass < spec.repetitions && !stopped; ++pass)
      for (const SweepGroup& g : sweep_groups(spec)) {
        if (stop_requested()) {
          stopped = true;
          break;
        }
        const std::string& model = g.model;
        const ModelPreset& preset = find_model_preset(model);
        AttentionShape shape = preset.shape;
        shape.kv_dtype = parse_dtype(g.kv_dtype);
        const int64_t seq_len = g.seq_len;
        const int batch = g.batch;
        const std::string where =
            model + " " + std::to_string(seq_len) + " tok b" + std::to_string(batch) +
            (spec.repetitions > 1
                 ? " pass " + std::to_string(pass + 1) + "/" + std::to_string(spec.repetitions)
                 : "");
        const std::string unit = unit_key(pass, g, env);
        std::vector<reports::Point> unit_points = resumed_unit(control, unit, names);
        if (unit_points.empty()) {  // not finished by an interrupted run: run it (block kept flat)
          if (progress)
            progress({done, total, where + ": generating workload", (now_ns() - t_start) * 1e-9});
          const auto workloads =
              make_workloads(spec, trace ? &*trace : nullptr, shape, seq_len, batch);
          Problem problem;
          problem.shape = shape;
          problem.batch = batch;
          problem.page_tokens = spec.page_tokens;
          problem.workloads = &workloads;
          ReferenceOracle oracle(problem, ThreadPool::global());
          const StrategyOptions opts(spec.strategy_options);

          std::vector<std::unique_ptr<Contender>> cs;
          for (const auto& name : names) {
            auto c = std::make_unique<Contender>(problem);
            c->name = name;
            auto& p = c->point;
            p.axes = point_axes(
                spec, preset, g, name,
                workloads[0].source.rfind("trace:", 0) == 0 ? workloads[0].source : spec.workload,
                "");
            try {
              c->accelerator = make_accelerator(spec.accelerator);
              const auto& ai = c->accelerator->info();
              p.axes.accelerator = ai.kind;
              p.provenance =
                  ai.emulated ? reports::Provenance::emulated : reports::Provenance::measured;
              p.step.warmup_steps = spec.stop.warmup_steps;
              if (!context_accel_set) {
                report.context.accelerator = ai;
                context_accel_set = true;
              }
              if (env.model && env.model->replace) {
                p.provenance = reports::Provenance::modeled;
                if (!env.model->accelerator_kind.empty())
                  p.axes.accelerator = env.model->accelerator_kind;
                for (const auto& [k, v] : env.model->axes_extra) p.axes.extra[k] = v;
              }
              Platform platform{tiers, c->accelerator.get(), &host_pool, env.cpu_node};
              c->strategy = StrategyRegistry::instance().find(name).make(opts);
              if (progress)
                progress(
                    {done, total, where + ": " + name + " loading", (now_ns() - t_start) * 1e-9});
              PlanResult plan = c->strategy->plan(problem, platform);
              p.strategy_params = plan.parameters;
              if (env.model && env.model->annotate)
                for (const auto& [k, v] : env.model->annotate(*c->strategy))
                  p.strategy_params[k] = v;
              if (plan.status != PlanStatus::ok) {
                fail(*c, reports::point_status(plan.status), plan.reason);
              } else {
                c->strategy->load();
                for (const auto& r : c->strategy->memory_regions()) {
                  reports::PlacedRegion pr{
                      r.role, r.intended.to_string(), static_cast<int64_t>(r.bytes), {}};
                  if (env.observe_pages && r.intended.kind != MemoryKind::accelerator)
                    pr.observed_pages_per_node = env.observe_pages(r.ptr, r.bytes);
                  p.placement.push_back(std::move(pr));
                }
                c->active = true;
              }
            } catch (const Error& e) {
              const bool oom = std::string(e.what()).find("capacity") != std::string::npos;
              fail(*c, oom ? reports::PointStatus::oom : reports::PointStatus::error, e.problem());
              c->strategy.reset();
            }
            cs.push_back(std::move(c));
          }

          for (int s = 0; s < spec.decode_steps; ++s) {
            // Between steps, not inside one: a stop drops this unit (its points are incomplete).
            if (stop_requested()) {
              stopped = true;
              break;
            }
            bool any = false;
            // Rotate the order each step so no strategy always runs right after another's
            // cache pollution.
            for (size_t i = 0; i < cs.size(); ++i) {
              Contender& c = *cs[(i + static_cast<size_t>(s)) % cs.size()];
              if (!c.active) continue;
              any = true;
              StepResult out;
              try {
                c.strategy->prepare_step(s);
                const int64_t t0 = now_ns();
                c.strategy->step(s, out);
                out.total_ns = now_ns() - t0;
                if (env.model) {
                  const StepPrice m = env.model->price(c.point.axes, *c.strategy, s, out);
                  if (env.model->replace) {
                    out.total_ns = std::llround(m.total_ns);
                    out.phase_ns.clear();
                    for (const auto& [ph, ns] : m.phase_ns) out.phase_ns[ph] = std::llround(ns);
                  } else if (s >= spec.stop.warmup_steps && m.total_ns > 0) {
                    c.modeled.push_back(m.total_ns);
                    for (const auto& [ph, ns] : m.phase_ns) c.modeled_phases[ph].push_back(ns);
                    c.modeled_overlap = m.overlap;
                  }
                }
              } catch (const Error& e) {
                fail(c, reports::PointStatus::error,
                     "step " + std::to_string(s) + ": " + e.problem());
                continue;
              }
              if (s < spec.stop.warmup_steps) continue;
              if (c.samples.empty()) c.first_timed_ns = now_ns() - out.total_ns;
              c.samples.push_back(static_cast<double>(out.total_ns));
              for (const auto& [ph, ns] : out.phase_ns)
                c.phases[ph].push_back(static_cast<double>(ns));
              c.traffic_sum += out.traffic;
              if (spec.accuracy_steps < 0 || c.scored < spec.accuracy_steps) {
                const bool probs = !out.attended.empty();
                c.accuracy.add(oracle.at(s, probs), out);
                ++c.scored;
              }
              const double elapsed = (now_ns() - c.first_timed_ns) * 1e-9;
              // Keep stepping until accuracy has its samples too, then stop on noise or time.
              const bool scored_enough =
                  spec.accuracy_steps < 0 ? false : c.scored >= spec.accuracy_steps;
              if (elapsed >= spec.stop.timeout_s)
                finish(c, "timeout", side_platform);
              else if (scored_enough && converged(c.samples, spec.stop, elapsed))
                finish(c, "noise", side_platform);
            }
            if (progress)
              progress({done, total,
                        where + ": step " + std::to_string(s + 1) + "/" +
                            std::to_string(spec.decode_steps),
                        (now_ns() - t_start) * 1e-9});
            if (!any) break;
          }
          if (stopped) break;
          for (auto& c : cs) {
            finish(*c, "max-steps", side_platform);
            // The point is over: free its memory before the next one.
            c->strategy.reset();
            c->accelerator.reset();
            unit_points.push_back(std::move(c->point));
          }
          // Durable (the journal) before it counts: a stop or crash from here on keeps it.
          if (control && control->on_unit_done) control->on_unit_done({unit, unit_points});
        }
        for (auto& point : unit_points) {
          const std::string key = point.axes.key();
          if (auto it = first_pass.find(key); it != first_pass.end()) {
            pool_pass(report.points[it->second], std::move(point));
          } else {
            first_pass[key] = report.points.size();
            report.points.push_back(std::move(point));
          }
          ++done;
        }
        if (progress) progress({done, total, where + ": done", (now_ns() - t_start) * 1e-9});
      }
  } catch (const Error& e) {
    if (!control) throw;
    report.interruption = {true, e.problem() + (e.fix().empty() ? "" : " (fix: " + e.fix() + ")"),
                           e.exit_code()};
  } catch (const std::exception& e) {
    if (!control) throw;
    report.interruption = {true, std::string("internal error: ") + e.what(), kExitFailure};
  }
  if (stopped) report.interruption = {true, "stopped", kExitFailure};
  if (report.interruption.interrupted)
    report.interruption.reason +=
        " (after " + std::to_string(done) + " of " + std::to_string(total) + " points)";
  // Every unit came from the journal: the context still says which accelerator they ran on.
  if (!context_accel_set) report.context.accelerator = accelerator_info;
  report.speedups = reports::compute_speedups(report.points);
  return report;
}

}  // namespace hb::run
