#pragma once
// What the caller of a sweep hands the engine besides the spec: the machine (host tiers, NUMA
// node, page observer, memory budget), progress reports, stop/resume control, and a step
// observer. Shared by runner.h (the API) and the engine's parts, so neither climbs back up to
// the other.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/strategy.h"
#include "kernels/backend.h"
#include "reports/report.h"
#include "bench/step_observer.h"

namespace hb::bench {

struct Progress {
  int64_t done = 0, total = 0;  // strategy-points finished / planned
  std::string label;            // "llama-3.1-8b 32768 tok b1: hybridgen"
  double elapsed_s = 0;
  // The same counts weighted by what a point costs (context tokens x batch: a 32k point takes
  // about 8x a 4k one), for an ETA that does not run ahead on the cheap points.
  double done_cost = 0, total_cost = 0;
};
using ProgressFn = std::function<void(const Progress&)>;

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
  // A hook on the executed steps (step_observer.h: a measured sweep modeled beside); null =
  // measure only.
  std::shared_ptr<const StepObserver> observer;
  // Makes each point's accelerator; null = the backend registry's (make_accelerator).
  std::function<std::unique_ptr<Accelerator>(const AcceleratorOptions&)> make_accelerator;
  // Stop/resume (run's journal); null = run to the end, failures propagate.
  std::shared_ptr<const SweepControl> control;
};

}  // namespace hb::bench
