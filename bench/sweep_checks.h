#pragma once
// The first step of run_sweep: everything a sweep is refused for before its first point runs,
// so nothing is half-run (hb::Error, exit 2, naming the fix).
#include <optional>
#include <string>
#include <vector>

#include "bench/runner.h"
#include "bench/trace.h"

namespace hb::bench {

struct ValidSweep {
  std::vector<std::string> strategies;  // resolved ("all" expanded), in sweep order
  std::optional<TraceFile> trace;       // opened once per sweep for "trace:FILE"
};

// In order: the spec's own fields; unknown strategies and options (every strategy reads its
// options once, an option for a strategy not run is refused); what the trace cannot serve
// (shape, lengths, decode steps, NaN/Inf in the rows the points read); host memory for every
// point's workload (env.host_memory_budget_bytes).
ValidSweep validate_sweep(const SweepSpec& spec, const RunEnvironment& env);

}  // namespace hb::bench
