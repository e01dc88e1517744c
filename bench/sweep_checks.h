#pragma once
// The first step of run_sweep: everything a sweep is refused for before its first point runs,
// so nothing is half-run (hb::Error, exit 2, naming the fix).
#include <string>
#include <vector>

#include "bench/run_environment.h"
#include "bench/sweep_spec.h"
#include "bench/unit_runner.h"

namespace hb::bench {

struct ValidSweep {
  std::vector<std::string> strategies;  // resolved ("all" expanded), in sweep order
};

// What SweepSpec::validate() cannot check alone, the sweep being resolved (its fields, its
// workload opened and checked): unknown strategies and options (every strategy reads its options
// once, an option for a strategy not run is refused); host memory for every point's workload
// (env.host_memory_budget_bytes), for the sequences `units` executes of each batch.
ValidSweep validate_sweep(const ResolvedSweep& sweep, const RunEnvironment& env,
                          const UnitRunner& units);

}  // namespace hb::bench
