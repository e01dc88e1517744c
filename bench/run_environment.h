#pragma once
// What the caller of a sweep hands the engine besides the spec: the machine (host tiers, NUMA
// node, page observer, memory budget), progress reports, stop/resume control, and model mode's
// step model and lanes. Shared by runner.h (the API) and the engine's parts, so neither climbs
// back up to the other.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/strategy.h"
#include "kernels/backend.h"
#include "reports/report.h"

namespace hb::bench {

struct SweepSpec;  // bench/sweep_spec.h

struct Progress {
  int64_t done = 0, total = 0;  // strategy-points finished / planned
  std::string label;            // "llama-3.1-8b 32768 tok b1: hybridgen"
  double elapsed_s = 0;
  // The same counts weighted by what a point costs (context tokens x batch: a 32k point takes
  // about 8x a 4k one), for an ETA that does not run ahead on the cheap points.
  double done_cost = 0, total_cost = 0;
};
using ProgressFn = std::function<void(const Progress&)>;

// Model mode (model): every step still runs, so selection, accuracy and traffic are
// real; `price` turns each executed step into a modeled time and phases. replace = true: the
// points carry the modeled timing and provenance "modeled"; false: the measured timing stays
// and the hook only observes (validate-model prices the very steps it measured).
struct StepPrice {
  double total_ns = 0;  // <= 0: this step was not priced
  std::map<std::string, double> phase_ns;
  std::string overlap;  // the overlap structure used, text form
};
struct StepModel {
  bool replace = true;
  std::string accelerator_kind;  // axes.accelerator of modeled points ("" = keep)
  // replace = false: the profile's name; the timed steps' prices then go to Point::modeled.
  std::string platform;
  std::map<std::string, std::string> axes_extra;  // added to axes.extra, e.g. "platform" -> name
  // Step s of the point with these axes (warm-up steps included); throws hb::Error on failure.
  std::function<StepPrice(const reports::PointAxes&, const Strategy&, int s, const StepResult&)>
      price;
  // Added to a planned point's strategy_params (e.g. "model.overlap"); optional.
  std::function<std::map<std::string, std::string>(const Strategy&)> annotate;
};

// A unit of a sweep that finishes as a whole: every strategy's point of one workload group in
// one pass (the strategies step side by side, so they end together).
struct FinishedUnit {
  std::string key;                     // unit_key(): stable across runs of the same sweep
  std::vector<reports::Point> points;  // one per strategy, in sweep order, before pass pooling
};

// How a caller steers a sweep it may have to stop and later resume (`run`: Ctrl-C, the journal,
// --resume). Without one (env.control null) a failure escaping a point propagates as before.
struct SweepControl {
  // Polled between decode steps and between units; true stops the sweep: the unit in progress
  // is dropped and run_sweep returns what finished, marked interrupted. Must be cheap and must
  // not throw (cli: reads a flag a signal handler set).
  std::function<bool()> should_stop;
  // Called once a unit has finished, before the next starts (the journal appends it durably).
  std::function<void(const FinishedUnit&)> on_unit_done;
  // Units an interrupted run already finished, by key: reported as they are instead of run
  // again (a unit whose strategies do not match this sweep's runs again).
  std::map<std::string, std::vector<reports::Point>> finished;
};

// Model mode's sampled batch (model/sampled_batch.h): a unit of a batch of B executes one of its
// sequences on a 1/B share of each lane's KV budget and host tiers, and its traffic and points
// are made the batch's. The engine asks at a unit's start, on each executed step and on each
// point; without one (RunEnvironment::sampler null) every unit executes its batch as it is.
class BatchSampler {
 public:
  virtual ~BatchSampler() = default;
  // How many of a batch of `batch` sequences one executed sequence stands for (1: the unit
  // executes its batch as it is).
  virtual int stands_for(const SweepSpec& spec, int batch) const = 0;
  // A lane's KV budgets (by model) and host tiers, made one of `batch` sequences' share.
  virtual void share(const SweepSpec& spec, int batch,
                     std::map<std::string, int64_t>& kv_budget_bytes,
                     std::vector<HostTier>& tiers) const = 0;
  // The executed sequence's step traffic, as the batch's. `overlap`: the executed strategy's
  // structure (whether micro-batches pay, bench/layer_scope.h).
  virtual Traffic batch_traffic(const SweepSpec& spec, int batch, const Traffic& one,
                                const OverlapStructure& overlap) const = 0;
  // The executed sequence's point, as the batch's.
  virtual void stand_for(reports::Point& p, const SweepSpec& spec, int batch) const = 0;
};

// What the caller resolved about the machine (memtier): where host KV may go and how to check
// where pages really are.
struct RunEnvironment {
  std::vector<HostTier> host_tiers;  // empty: plain host memory as local DRAM
  int cpu_node = -1;
  // Where the pages of [ptr, ptr+bytes) are: pages per NUMA node, and bytes on transparent
  // huge pages (-1 unknown); null = placement not verifiable.
  struct ObservedPages {
    std::map<int, int64_t> per_node;
    int64_t huge_page_bytes = -1;
  };
  std::function<ObservedPages(const void* ptr, size_t bytes)> observe_pages;
  // Bytes of host memory the workloads may use (0 = no check).
  int64_t host_memory_budget_bytes = 0;
  // Model mode: null = measure.
  std::shared_ptr<const StepModel> model;
  // Makes each point's accelerator; null = the backend registry's (make_accelerator). Model
  // mode makes a cpu accelerator that counts the layer's GEMMs without running them.
  std::function<std::unique_ptr<Accelerator>(const AcceleratorOptions&)> make_accelerator;
  // Model mode's sampled batch; null = every batch executes as it is.
  std::shared_ptr<const BatchSampler> sampler;
  // Stop/resume (run's journal); null = run to the end, failures propagate.
  std::shared_ptr<const SweepControl> control;
};

// Model mode over several platforms at once (model): one lane per platform, with its
// own host tiers, step model and per-model KV budget; the rest of the environment (control,
// CPU node, host memory budget) is the sweep's. What does not depend on the platform is done
// once per unit: the workload and the fp64 reference are made once for every lane, and a
// strategy whose plan is the same on several lanes (plan_signature: e.g. every platform where
// the KV fits) executes once, each lane pricing and recording the same steps. The lanes run
// one after another within a unit (a wave per lane, holding at most one lane's strategies in
// memory); the unit's points come lane by lane, each lane's in strategy order, and are what
// one run_sweep per lane would give.
struct Lane {
  std::vector<HostTier> host_tiers;  // empty: plain host memory as local DRAM
  std::shared_ptr<const StepModel> model;
  std::map<std::string, int64_t> kv_budget_bytes;  // by model; one not listed: the sweep's own
  // By model: why nothing of it can run on this lane (e.g. its weights exceed the platform's
  // accelerator memory). Its points are "oom" with that reason, and nothing executes for them.
  std::map<std::string, std::string> refused = {};
};

}  // namespace hb::bench
