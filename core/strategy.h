#pragma once
// A KV-cache strategy: how one decode step of one attention layer is carried out when the KV
// may not fit the accelerator. Baselines (baselines/) and HybridGen (hybrid/) implement this;
// the sweep engine (bench/, behind `hybridbench run`) drives it. Lifecycle per sweep point:
//   plan() -> load() -> step(0) .. step(n-1)   (each step appends the new token, then attends)
// plan() may decline with a status (oom, unsupported) and a reason; the point is then reported
// with that status instead of silently missing.
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/accelerator.h"
#include "core/kv_cache.h"
#include "core/overlap.h"
#include "core/parse.h"
#include "core/step_times.h"
#include "core/thread_pool.h"
#include "core/traffic.h"
#include "core/vocabulary.h"
#include "core/workload.h"

namespace hb {

// A host memory tier the platform offers for KV (memtier fills these in).
struct HostTier {
  MemoryLocation location;                     // kind, NUMA node, emulated?
  std::shared_ptr<BufferAllocator> allocator;  // allocates on that node (verified placement)
  int64_t free_bytes = -1;                     // -1 unknown
  double read_bandwidth_bytes_per_s = 0;       // 0 unknown (from probe/profile when available)
};

struct Platform {
  std::vector<HostTier> host_tiers;  // fastest first; host_tiers[0] is the default host tier
  Accelerator* accelerator = nullptr;
  ThreadPool* host_pool = nullptr;  // threads for the strategy's CPU-side work
  int cpu_node = -1;                // NUMA node the host threads run on
  // The step times an adaptive strategy balances on (core/step_times.h); null: the wall clock.
  const StepTimeSource* step_times = nullptr;
  const HostTier* tier_of_kind(MemoryKind k) const;  // nullptr when absent
};

struct Problem {
  AttentionShape shape;
  int batch = 1;
  int page_tokens = kDefaultPageTokens;
  // One per sequence, same shape and lengths; a view, so a micro-batch is a sub-span.
  std::span<const Workload> workloads;
  // run --kv-budget: tokens each sparse strategy may attend per decode step and query head
  // (the step's new token included), resolved for this point; 0 = none (each strategy's own
  // defaults). Dense strategies ignore it and say so.
  int64_t kv_budget_tokens = 0;
  int64_t prompt_len() const { return workloads[0].prompt_len(); }
  int decode_steps() const { return static_cast<int>(workloads[0].steps.size()); }
  // Tokens in the context at decode step s (prompt + generated, including step s's token).
  int64_t context_at(int s) const { return prompt_len() + s + 1; }
};

// The largest token count a strategy option may name (a sequence length's limit, 2^40).
inline constexpr int64_t kMaxOptionTokens = int64_t{1} << 40;

// Strategy parameters as given on the command line ("h2o.heavy_ratio=0.2"); each strategy
// reads what it knows with its default, and unknown keys are an error (no silent typos).
class StrategyOptions {
 public:
  StrategyOptions() = default;
  explicit StrategyOptions(std::map<std::string, std::string> kv) : kv_(std::move(kv)) {}
  // Every numeric option goes through core/parse.h's checked conversions, so a value outside its
  // range, a fraction where a count is meant or a number no integer holds (1e19) is refused
  // (exit 2) naming "--opt STRATEGY.KEY", the value and the range; `def` when not given.
  // A real number in `range` (finite, "0.2", "1e-3").
  double number(const std::string& strategy, const std::string& key, double def,
                const parse::RealRange& range = {}) const;
  // A whole count in [min, max] with an optional k/m suffix ("4096", "4k"; "2048.7", "1e3"
  // refused): token counts, pages, intervals.
  int64_t count(const std::string& strategy, const std::string& key, int64_t def, int64_t min,
                int64_t max) const;
  std::string text(const std::string& strategy, const std::string& key,
                   const std::string& def) const;
  // Throws hb::Error for keys addressed to `strategy` that were never read, naming the keys
  // the strategy did ask for (its options).
  void check_all_used(const std::string& strategy) const;
  const std::map<std::string, std::string>& all() const { return kv_; }

 private:
  std::map<std::string, std::string> kv_;
  mutable std::map<std::string, bool> used_;
  mutable std::set<std::string> asked_;  // "strategy.key" for every key read, given or not
};

// Whether plan() accepted the point; oom and unsupported decline it (with a reason).
enum class PlanStatus { ok, oom, unsupported };
inline constexpr Vocabulary<PlanStatus, 3> kPlanStatuses{{"ok", "oom", "unsupported"}};
inline const char* to_string(PlanStatus s) { return kPlanStatuses.name(s); }

struct PlanResult {
  PlanStatus status = PlanStatus::ok;
  std::string reason;
  std::map<std::string, std::string> parameters;  // effective parameters, for the report
  // What a reader of this point's figures must know: the strategy could not do what its method
  // asks and did something else (said in `parameters` too), e.g. H2O without prompt queries to
  // seed its scores. The report lists them under the tables and `run` on stderr.
  std::vector<std::string> warnings;
};

// What one decode step produced, for every sequence of the batch.
struct StepResult {
  std::vector<float> o;                     // [batch][q_heads][head_dim]
  int64_t total_ns = 0;                     // filled by the runner
  std::map<std::string, int64_t> phase_ns;  // keys: core/phase_names.h
  Traffic traffic;
  // Tokens attended per (sequence, query head), by original position; empty = all tokens
  // (dense). Used for attention-mass recall.
  std::vector<std::vector<int64_t>> attended;  // [batch * q_heads]

  // Ready for another step as a fresh StepResult, keeping its buffers' memory: at 128k a step's
  // attended lists are 1 MiB a row, and faulting them in afresh every step cost more than the
  // fp64 reference (model mode). A cleared row reads as dense, as a missing one does.
  void clear_keeping_memory() {
    o.clear();
    total_ns = 0;
    phase_ns.clear();
    traffic = {};
    for (auto& row : attended) row.clear();
  }
  // Whether any row lists its attended tokens (none: every row attended densely).
  bool lists_attended() const {
    for (const auto& row : attended)
      if (!row.empty()) return true;
    return false;
  }
};

// A region of memory whose page placement the runner verifies and reports.
struct MemoryRegion {
  const void* ptr = nullptr;
  size_t bytes = 0;
  MemoryLocation intended;
  std::string role;  // "K", "V", "K+V", "partial-K", ...
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;
  virtual PlanResult plan(const Problem& problem, const Platform& platform) = 0;
  virtual void load() = 0;  // after an ok plan: build the caches from the prompt
  // Untimed: put step s's inputs (q and the new token's k, v) where a real model would have
  // produced them (accelerator memory), so step() moves them as the real system would.
  virtual void prepare_step(int s) {}
  // Timed: append the new token, attend, leave the output in out.o (host memory), and add
  // the exact traffic and per-phase times.
  virtual void step(int s, StepResult& out) = 0;
  // Untimed, right after step(s) and only for steps the runner scores: fill out.attended here
  // when listing the attended positions would cost the timed step (HybridGen expands its
  // accelerator window per query head). Default: step() filled it already, or it is dense.
  virtual void fill_attended(int s, StepResult& out) {}
  // Host/accelerator memory holding KV, for placement verification.
  virtual std::vector<MemoryRegion> memory_regions() const { return {}; }
  // Per-interval rows of controller state (HybridGen's scheduler); empty for static ones.
  virtual std::vector<std::map<std::string, double>> trajectory() const { return {}; }
  // Which of the step's resources run concurrently (core/overlap.h), for the projection model
  // (model): e.g. OverlapStructure::parse("cpu|accelerator > transfer > sync"). Valid
  // after plan(). Default: undeclared (the model falls back to its table, then to serial).
  virtual OverlapStructure overlap() const { return {}; }
  // Whether what it does (its traffic, the tokens it attends) follows its measured step times
  // (HybridGen's feedback scheduler): two runs then differ there by design, so compare does
  // not hold it to the exact figures of another run (reports' Point::first_pass_traffic).
  virtual bool follows_timings() const { return false; }
};

// What a strategy is in a comparison: the system under study (HybridGen), one of its modes or
// ablations (each changes one thing of it), a baseline from the literature, or the reference
// every other is measured against (all KV in accelerator memory). The headline compares the
// system with the baselines and the reference; ablations get their own section.
enum class StrategyRole { system, ablation, baseline, reference };
inline constexpr Vocabulary<StrategyRole, 4> kStrategyRoles{
    {"system", "ablation", "baseline", "reference"}};
inline const char* to_string(StrategyRole r) { return kStrategyRoles.name(r); }

struct StrategyInfo {
  std::string name;
  std::string summary;  // one line for --help and `hybridbench run --list-strategies`
  std::string family;   // "reference", "offload", "pruning", "selection", "hybrid"
  std::function<std::unique_ptr<Strategy>(const StrategyOptions&)> make;
  StrategyRole role = StrategyRole::baseline;
};

// Name-based registry (ggml-style backends). Folders register explicitly
// (register_baselines(), register_hybrid()) because self-registering globals in static
// libraries are dropped by the linker.
class StrategyRegistry {
 public:
  static StrategyRegistry& instance();
  void add(StrategyInfo info);
  const StrategyInfo& find(const std::string& name) const;  // throws hb::Error listing names
  const std::vector<StrategyInfo>& all() const { return infos_; }

 private:
  std::vector<StrategyInfo> infos_;
};

}  // namespace hb
