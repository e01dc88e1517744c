#pragma once
// One unit of a sweep: every strategy on one workload group (model x dtype x length x batch x
// budget), side by side; with several lanes (model mode's platforms), wave after wave, a lane
// whose plan matches an earlier lane's recording that execution instead of running its own.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "reports/report.h"
#include "bench/accuracy.h"
#include "bench/sweep_run.h"

namespace hb::bench {

// What a unit's strategies run on, apart from their budgets: the executed sequences' workloads,
// the problem over them and its fp64 reference. Model mode's sampled batch executes the same one
// sequence at every batch of a length (stands_for_batch), so the next unit with the same key
// takes them over instead of generating and computing them again.
struct UnitInputs {
  std::string key;  // empty: not shared
  std::vector<Workload> workloads;
  Problem problem;
  std::unique_ptr<ReferenceOracle> oracle;
};

// Runs the unit until every contender stopped: its points, lane by lane, each lane's in sweep
// order; nothing when a stop was requested (run.stopped is then set).
std::optional<std::vector<reports::Point>> run_unit(SweepRun& run, const SweepGroup& g,
                                                    const std::string& where);

// The batch a unit's one executed sequence stands for (model mode's sampled batch,
// RunEnvironment::sampler); 1 when the unit executes its batch as it is.
int stands_for_batch(const SweepRun& run, const SweepGroup& g);

}  // namespace hb::bench
