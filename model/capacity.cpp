#include "model/capacity.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "core/thread_pool.h"
#include "bench/kv_budget.h"
#include "bench/runner.h"
#include "kernels/backend.h"
#include "model/model_run.h"
#include "reports/procurement_scaling.h"

namespace hb::model {

// The procurement view searches batches as far as capacity does.
static_assert(reports::kMaxBatchSearched == bench::kMaxBatch);

namespace {

std::string gigabytes(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f GB", bytes / 1e9);
  return b;
}

}  // namespace

KvMemory kv_memory(const PlatformModel& m, const ModelPreset& model) {
  KvMemory out;
  out.platform = m.name;
  const double usable =
      static_cast<double>(m.accelerator.memory_bytes) * m.accelerator.memory_usable_share;
  // What the accelerator holds besides KV: the layers, the LM head and the embedding table
  // (counted apart, as untied models have them; the whole-model ITL's caveat counts the same).
  const double weights = static_cast<double>(model_weight_bytes(model)) +
                         2.0 * static_cast<double>(lm_head_weight_bytes(model));
  if (weights >= usable)
    out.weights_note = model.name + "'s weights (" + gigabytes(weights) +
                       ", layers, LM head and embedding) exceed " + m.name +
                       "'s usable accelerator memory (" + gigabytes(usable) + ")";
  else
    out.accelerator_kv_bytes = static_cast<int64_t>(usable - weights);
  out.host_tiers = host_tiers_for(m);
  return out;
}

KvMemory kv_memory(const std::string& platform, int64_t kv_budget_per_layer,
                   std::vector<HostTier> host_tiers, const ModelPreset& model) {
  KvMemory out;
  out.platform = platform;
  out.accelerator_kv_bytes = kv_budget_per_layer * std::max(1, model.layers);
  out.host_tiers = std::move(host_tiers);
  return out;
}

// One layer's share of the memory: an accelerator holding accelerator_kv_bytes / layers and the
// host tiers with free_bytes / layers; `doubled` (to find what binds) gives twice the share of
// the accelerator, of one host tier, or of all of them.
namespace {
struct Doubled {
  bool accelerator = false;
  int tier = -1;  // index into host_tiers
  bool all = false;
};
}  // namespace

struct CapacityPlanner::Memory {
  std::unique_ptr<Accelerator> accelerator;
  std::vector<HostTier> tiers;
  Memory(const KvMemory& m, int layers, Doubled doubled = {}) {
    AcceleratorOptions o;
    o.kind = hb::AcceleratorKind::cpu;
    o.cpu_threads = 1;
    const int64_t acc_factor = doubled.accelerator || doubled.all ? 2 : 1;
    o.capacity_bytes = std::max<int64_t>(1, m.accelerator_kv_bytes / layers * acc_factor);
    accelerator = make_accelerator(o);
    tiers = m.host_tiers;
    for (size_t t = 0; t < tiers.size(); ++t) {
      const bool twice = doubled.all || doubled.tier == static_cast<int>(t);
      if (int64_t& f = tiers[t].free_bytes; f >= 0) f = f / layers * (twice ? 2 : 1);
    }
  }
};

CapacityPlanner::CapacityPlanner(const bench::SweepSpec& spec, const std::string& model,
                                 DType kv_dtype, KvMemory memory)
    : spec_(spec),
      model_label_(model),
      model_(spec.model(model)),
      shape_(model_.shape),
      memory_(std::move(memory)) {
  shape_.kv_dtype = kv_dtype;
  if (model_.layers < 1)
    throw Error("capacity needs the model's layer count; " + model_.name + " has none",
                "capacity applies to model presets, not to a trace's single layer");
  layer_ = std::make_unique<Memory>(memory_, model_.layers);
}

CapacityPlanner::~CapacityPlanner() = default;

CapacityPlanner::Fit CapacityPlanner::fits(const std::string& strategy, int64_t context, int batch,
                                           const std::optional<bench::KvBudget>& kv_budget) {
  return fits_on(*layer_, strategy, context, batch, kv_budget);
}

CapacityPlanner::Fit CapacityPlanner::fits_on(Memory& mem, const std::string& strategy,
                                              int64_t context, int batch,
                                              const std::optional<bench::KvBudget>& kv_budget) {
  if (memory_.accelerator_kv_bytes <= 0) return {false, memory_.weights_note};
  // The prompt and one decode step: plan() sizes what the sequence holds after its last step.
  std::vector<Workload> workloads(static_cast<size_t>(batch));
  for (auto& w : workloads) {
    w.prompt.tokens = std::max<int64_t>(1, context - 1);
    w.prompt.kv_heads = shape_.kv_heads;
    w.prompt.head_dim = shape_.head_dim;
    w.steps.resize(1);
  }
  Problem problem;
  problem.shape = shape_;
  problem.batch = batch;
  problem.page_tokens = spec_.page_tokens;
  problem.workloads = workloads;
  problem.kv_budget_tokens = kv_budget ? kv_budget->tokens_at(problem.prompt_len()) : 0;
  static ThreadPool one_thread(1);  // plan() reads the pool's size, never runs on it
  const Platform platform{mem.tiers, mem.accelerator.get(), &one_thread, -1};
  try {
    const StrategyOptions options(spec_.strategy_options);
    const auto s = StrategyRegistry::instance().find(strategy).make(options);
    const PlanResult r = s->plan(problem, platform);
    return {r.status == PlanStatus::ok, r.reason};
  } catch (const Error& e) {
    return {false, e.problem()};
  }
}

std::string CapacityPlanner::binding(const std::string& strategy, int64_t context, int batch,
                                     const std::optional<bench::KvBudget>& kv_budget,
                                     const std::string& reason) {
  if (memory_.accelerator_kv_bytes <= 0) return "weights: " + memory_.weights_note;
  // A resource binds when twice of it alone would fit what just failed.
  std::string names;
  auto add = [&](const std::string& n) { names += (names.empty() ? "" : " + ") + n; };
  Memory acc(memory_, model_.layers, {.accelerator = true});
  if (fits_on(acc, strategy, context, batch, kv_budget).ok) add("accelerator");
  for (size_t t = 0; t < memory_.host_tiers.size(); ++t) {
    if (memory_.host_tiers[t].free_bytes < 0) continue;
    Memory host(memory_, model_.layers, {.tier = static_cast<int>(t)});
    if (fits_on(host, strategy, context, batch, kv_budget).ok)
      add(std::string(memory_kind_name(memory_.host_tiers[t].location.kind)));
  }
  if (names.empty()) {
    Memory all(memory_, model_.layers, {.all = true});
    if (fits_on(all, strategy, context, batch, kv_budget).ok) names = "every tier together";
  }
  return (names.empty() ? "" : names + ": ") + reason;
}

reports::CapacityRow CapacityPlanner::row(const std::string& strategy,
                                          const std::optional<bench::KvBudget>& kv_budget) const {
  reports::CapacityRow r;
  r.platform = memory_.platform;
  r.model = model_label_;
  r.kv_dtype = std::string(dtype_name(shape_.kv_dtype));
  r.strategy = strategy;
  r.kv_budget = kv_budget ? kv_budget->to_string() : "";
  return r;
}

namespace {

// The largest n in [first, bound] with ok(n), for an ok that holds up to the answer and not
// beyond: doubling from `first`, then bisecting. largest 0: not even `first` fits; failing: the
// first n that does not (0: everything up to the bound fits).
struct Search {
  int64_t largest = 0, failing = 0;
};
Search largest_fitting(int64_t first, int64_t bound, const std::function<bool(int64_t)>& ok) {
  if (!ok(first)) return {0, first};
  int64_t lo = first, hi = first * 2;
  while (hi <= bound && ok(hi)) lo = hi, hi *= 2;
  if (hi > bound) {
    if (lo == bound || ok(bound)) return {bound, 0};
    hi = bound;
  }
  while (hi - lo > 1) {  // lo fits, hi does not
    const int64_t mid = lo + (hi - lo) / 2;
    (ok(mid) ? lo : hi) = mid;
  }
  return {lo, hi};
}

}  // namespace

reports::CapacityRow CapacityPlanner::max_context(const std::string& strategy, int batch,
                                                  const std::optional<bench::KvBudget>& kv_budget) {
  reports::CapacityRow r = row(strategy, kv_budget);
  r.kind = reports::CapacityKind::max_context;
  r.batch = batch;
  // From the shortest context: one prompt token and the decode step's. No further than the
  // positions the model was trained for (max_position_embeddings): memory that would hold more
  // does not make the model attend further.
  const int64_t bound = model_.max_context > 0
                            ? std::min<int64_t>(model_.max_context, kMaxContextSearched)
                            : kMaxContextSearched;
  const Search s =
      largest_fitting(2, bound, [&](int64_t c) { return fits(strategy, c, batch, kv_budget).ok; });
  r.seq_len = s.largest;
  r.none = s.largest == 0;
  r.unbounded = s.failing == 0 && bound == kMaxContextSearched;
  if (s.failing == 0 && bound < kMaxContextSearched)
    r.limit = "model: " + model_.name + " supports " + std::to_string(bound) +
              " positions (max_position_embeddings)";
  if (s.failing > 0)
    r.limit = binding(strategy, s.failing, batch, kv_budget,
                      fits(strategy, s.failing, batch, kv_budget).reason);
  return r;
}

reports::CapacityRow CapacityPlanner::max_batch(const std::string& strategy, int64_t context,
                                                const std::optional<bench::KvBudget>& kv_budget) {
  reports::CapacityRow r = row(strategy, kv_budget);
  r.kind = reports::CapacityKind::max_batch;
  r.seq_len = context;
  const Search s = largest_fitting(1, bench::kMaxBatch, [&](int64_t b) {
    return fits(strategy, context, static_cast<int>(b), kv_budget).ok;
  });
  r.batch = static_cast<int>(s.largest);
  r.none = s.largest == 0;
  r.unbounded = s.failing == 0;
  if (s.failing > 0) {
    const int b = static_cast<int>(s.failing);
    r.limit =
        binding(strategy, context, b, kv_budget, fits(strategy, context, b, kv_budget).reason);
  }
  return r;
}

std::vector<reports::CapacityRow> sweep_capacity(
    const bench::SweepSpec& spec,
    const std::function<KvMemory(const std::string&, const ModelPreset&)>& memory_of) {
  std::vector<reports::CapacityRow> out;
  const auto strategies = bench::resolve_strategies(spec.strategies);
  std::vector<std::optional<bench::KvBudget>> budgets(spec.kv_budgets.begin(),
                                                      spec.kv_budgets.end());
  if (budgets.empty()) budgets.push_back(std::nullopt);  // each strategy's own
  for (const auto& name : spec.models) {
    const ModelPreset& model = spec.model(name);
    if (model.layers < 1) continue;  // a trace's single layer: no whole model to hold
    for (DType dtype : spec.kv_dtypes) {
      CapacityPlanner planner(spec, name, dtype, memory_of(name, model));
      for (const auto& s : strategies)
        for (const auto& budget : budgets) {
          for (int b : spec.batches) out.push_back(planner.max_context(s, b, budget));
          for (int64_t len : spec.seq_lens) out.push_back(planner.max_batch(s, len, budget));
        }
    }
  }
  return out;
}

std::vector<reports::CapacityRow> machine_capacity(const bench::SweepSpec& spec,
                                                   const AcceleratorInfo& accelerator,
                                                   const std::vector<HostTier>& host_tiers) {
  if (host_tiers.empty()) return {};
  const auto budgets = bench::kv_budgets(spec, accelerator);
  return sweep_capacity(spec, [&](const std::string& name, const ModelPreset& p) {
    // The budget the sweep gave this model, else the accelerator's own capacity.
    const auto it = budgets.find(name);
    const int64_t per_layer = it != budgets.end() ? it->second.bytes : accelerator.capacity_bytes;
    return kv_memory("", per_layer, host_tiers, p);
  });
}

}  // namespace hb::model
