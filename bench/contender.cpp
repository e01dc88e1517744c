#include "bench/contender.h"

#include <limits>
#include <utility>

#include "core/error.h"
#include "core/stats.h"
#include "kernels/backend.h"
#include "bench/kv_budget.h"
#include "bench/layer_scope.h"
#include "bench/layer_stack.h"

namespace hb::bench {

namespace {

// Layer scope: accelerator memory the layer's own weights, activations and, on a backend whose
// GEMM library takes one, workspace take (0 otherwise). `kind` may be auto (kernels/backend.h:
// the first usable backend).
int64_t layer_bytes(const SweepSpec& spec, const reports::PointAxes& axes, AcceleratorKind kind) {
  if (spec.scope != Scope::layer) return 0;
  const int n = resolve_microbatches(spec.microbatches, axes.batch);
  return layer_work_bytes(spec.model(axes.model), (axes.batch + n - 1) / n) +
         backend(kind).layer_workspace_bytes;
}

// The point's accelerator axis and provenance, from the accelerator it runs on.
void label_point(Contender& c, const SweepContext& ctx, const Problem& problem) {
  auto& p = c.point;
  const auto& ai = c.accelerator->info();
  p.axes.accelerator = ai.kind_name();
  p.provenance = provenance_of(ai, {});
  // A stack's accelerator holds one budget per layer (accelerator_options); the fit is a layer's.
  p.kv_fit_fraction =
      kv_fit_fraction(ai.capacity_bytes / c.layers() -
                          layer_bytes(ctx.spec, p.axes, ai.kind.value_or(AcceleratorKind::cpu)),
                      problem.shape, p.axes.seq_len, problem.batch, ctx.spec.decode_steps);
  p.step.warmup_steps = ctx.spec.stop.warmup_steps;
}

// After an ok plan: builds the caches and records where their memory is, and what that makes
// of the point's provenance (provenance_of).
void load(Contender& c, const RunEnvironment& env) {
  c.strategy->load();
  const std::vector<MemoryRegion> regions = c.strategy->memory_regions();
  for (const auto& r : regions) {
    reports::PlacedRegion pr{r.role, r.intended.to_string(), static_cast<int64_t>(r.bytes), {}};
    if (env.observe_pages && r.intended.kind != MemoryKind::accelerator) {
      const RunEnvironment::ObservedPages seen = env.observe_pages(r.ptr, r.bytes);
      pr.observed_pages_per_node = seen.per_node;
      pr.observed_huge_page_bytes = seen.huge_page_bytes;
    }
    c.point.placement.push_back(std::move(pr));
  }
  c.point.provenance =
      reports::weaker(c.point.provenance, provenance_of(c.accelerator->info(), regions));
  c.active = true;
}

// The KV budget (--accelerator-memory, or the deployment rule's per-model figure); in layer
// scope the layer's own weights and activations come on top of it. A stack of `layers` layers
// gets that much per layer: the budget is a layer's (LayerStack::plan splits it again).
AcceleratorOptions accelerator_options(const SweepContext& ctx, const reports::PointAxes& axes,
                                       int layers) {
  const SweepSpec& spec = ctx.spec;
  AcceleratorOptions o = spec.accelerator;
  if (auto it = ctx.kv_budget_bytes.find(axes.model); it != ctx.kv_budget_bytes.end())
    o.capacity_bytes = it->second;
  if (o.capacity_bytes > 0) o.capacity_bytes += layer_bytes(spec, axes, o.kind);
  if (o.capacity_bytes > 0 && layers > 1) {
    if (o.capacity_bytes > std::numeric_limits<int64_t>::max() / layers)
      throw Error("--layers " + std::to_string(layers) + " x a per-layer budget of " +
                      std::to_string(o.capacity_bytes) + " bytes does not fit 64 bits",
                  "use a smaller --accelerator-memory or fewer --layers");
    o.capacity_bytes *= layers;
  }
  return o;
}

// The strategy a contender steps: the registered one, wrapped in LayerScope in layer scope, and
// with stack layers N such layers in a LayerStack (layer i's weights its own, only the last
// waiting for its own tail).
std::unique_ptr<Strategy> make_point_strategy(const SweepContext& ctx, const std::string& model,
                                              const std::string& name,
                                              std::vector<std::span<const Workload>> stack) {
  const StrategyOptions opts(ctx.spec.strategy_options);
  const StrategyInfo& info = StrategyRegistry::instance().find(name);
  const int layers = static_cast<int>(stack.size()) + 1;
  auto one_layer = [&ctx, &info, opts, model, layers](int layer) -> std::unique_ptr<Strategy> {
    if (ctx.spec.scope != Scope::layer) return info.make(opts);
    return std::make_unique<LayerScope>([&info, opts] { return info.make(opts); },
                                        ctx.spec.model(model), ctx.spec.microbatches,
                                        StackPlace{layer, layer == layers - 1});
  };
  if (stack.empty()) return one_layer(0);
  return std::make_unique<LayerStack>(one_layer, std::move(stack));
}

}  // namespace

reports::Provenance provenance_of(const AcceleratorInfo& accelerator,
                                  const std::vector<MemoryRegion>& regions) {
  if (accelerator.emulated) return reports::Provenance::emulated;
  for (const auto& r : regions)
    if (r.intended.emulated) return reports::Provenance::emulated;
  return reports::Provenance::measured;
}

namespace {

// Runs a step of starting c: memory running out fails it "oom" (hb::CapacityError, by type, not
// by its words), any other hb::Error "error"; its strategy is dropped either way.
template <class F>
void failing_on_errors(Contender& c, F&& start_step) {
  try {
    start_step();
  } catch (const CapacityError& e) {
    fail(c, reports::PointStatus::oom, e.problem());
    c.strategy.reset();
  } catch (const Error& e) {
    fail(c, reports::PointStatus::error, e.problem());
    c.strategy.reset();
  }
}

}  // namespace

std::unique_ptr<Contender> start_contender(const SweepContext& ctx, const Problem& problem,
                                           const std::string& name, reports::PointAxes axes,
                                           const std::function<void()>& loading, bool load_now,
                                           std::vector<std::span<const Workload>> stack_layers) {
  auto c = std::make_unique<Contender>(problem, ctx.spec, std::move(stack_layers));
  c->ctx = &ctx;
  auto& p = c->point;
  p.axes = std::move(axes);
  p.role = StrategyRegistry::instance().find(name).role;  // known: resolve_strategies checked
  failing_on_errors(*c, [&] {
    const AcceleratorOptions o = accelerator_options(ctx, p.axes, c->layers());
    c->accelerator = ctx.env.make_accelerator ? ctx.env.make_accelerator(o) : make_accelerator(o);
    label_point(*c, ctx, problem);
    Platform platform{ctx.tiers, c->accelerator.get(), &ctx.host_pool, ctx.env.cpu_node,
                      ctx.step_times};
    c->strategy = make_point_strategy(ctx, p.axes.model, name, c->stack_layers);
    if (loading) loading();
    PlanResult plan = c->strategy->plan(problem, platform);
    p.strategy_params = plan.parameters;
    p.warnings = plan.warnings;
    if (plan.status != PlanStatus::ok) {
      fail(*c, reports::point_status(plan.status), plan.reason);
    } else if (load_now) {
      load(*c, ctx.env);
    } else {
      c->planned = true;
    }
  });
  return c;
}

void load_contender(Contender& c) {
  if (!c.planned) return;
  c.planned = false;
  failing_on_errors(c, [&] { load(c, c.ctx->env); });
}

void replay(Contender& c, const Problem& problem) {
  if (c.pass == 0) c.point.trajectory = c.strategy->trajectory();
  ++c.pass;
  // The old instance's memory goes before the new one takes its own (the budget is the same).
  c.strategy.reset();
  c.accelerator.reset();
  auto fresh = start_contender(*c.ctx, problem, c.point.axes.strategy, c.point.axes, nullptr, true,
                               c.stack_layers);
  if (!fresh->active) {
    // Keep what was measured: the point stops on the samples it has.
    c.point.warnings.push_back("replay of the decode positions failed (" + fresh->point.reason +
                               "): stopped on the samples it had");
    finish(c, reports::StopReason::max_steps);
    return;
  }
  c.accelerator = std::move(fresh->accelerator);
  c.strategy = std::move(fresh->strategy);
}

void update_model_error(reports::Point& p) {
  const double measured = p.step.summary.median;
  p.modeled.error_vs_measured =
      measured > 0 ? (p.modeled.step.summary.median - measured) / measured : 0;
}

void finish(Contender& c, reports::StopReason stop_reason) {
  if (!c.active) return;
  c.active = false;
  auto& p = c.point;
  p.step.samples_ns = c.samples;
  p.step.summary = summarize(c.samples);
  p.step.stop_reason = stop_reason;
  // Steps past the last closed round (a stop between rounds closes none) form a round of
  // their own, so the rounds always account for every sample.
  p.step.pass_sizes = c.rounds.sizes;
  p.step.round_slots = c.rounds.slots;
  if (c.samples.size() > c.rounds.begin && !c.rounds.sizes.empty())
    p.step.pass_sizes.push_back(static_cast<int64_t>(c.samples.size() - c.rounds.begin));
  if (p.step.pass_sizes.size() < 2) {  // one round: nothing to pair
    p.step.pass_sizes.clear();
    p.step.round_slots.clear();
  }
  for (auto& [name, v] : c.phases) p.phases[name] = reports::Timing::from_samples(v);
  if (!c.samples.empty())
    p.traffic_per_step = c.traffic_sum.scaled(1.0 / static_cast<double>(c.samples.size()));
  // Measured points only: model mode's points share executions (a shared execution's recording
  // contenders own no strategy), and what it prices is modeled anyway.
  const bool deterministic =
      c.strategy && p.provenance != reports::Provenance::modeled && !c.strategy->follows_timings();
  if (deterministic && c.ctx && c.first_pass.steps > 0 &&  // the whole first pass
      c.first_pass.steps == c.ctx->spec.decode_steps - c.ctx->spec.stop.warmup_steps)
    p.first_pass_traffic = c.first_pass.traffic;
  p.accuracy = c.accuracy.result();
  p.attended_tokens = c.accuracy.attended();
  if (c.pass == 0 && c.strategy) p.trajectory = c.strategy->trajectory();  // replays keep pass 0's
}

void fail(Contender& c, reports::PointStatus status, const std::string& reason) {
  c.active = false;
  c.point.status = status;
  c.point.reason = reason;
  c.point.step.stop_reason = reports::StopReason::none;
  c.point.accuracy = {};  // a failed point carries no accuracy figures
  c.point.attended_tokens.reset();
}

}  // namespace hb::bench
