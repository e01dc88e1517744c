#pragma once
// How a sweep runs its units (a unit: every strategy's points of one workload group in one pass).
// run_sweep's own measures each unit's strategies side by side (bench/unit.h); a caller may run
// them otherwise (model/model_sweep.h) while the sweep keeps its passes, progress, journal and
// report.
#include <optional>
#include <string>
#include <vector>

#include "reports/report.h"
#include "bench/sweep_groups.h"
#include "bench/sweep_spec.h"

namespace hb::bench {

struct SweepRun;  // sweep_run.h

class UnitRunner {
 public:
  virtual ~UnitRunner() = default;
  // The points a unit gives per strategy: its points are that many runs of the sweep's
  // strategies, each in sweep order.
  virtual int points_per_strategy() const = 0;
  // The key of unit (pass, g), stable across runs of the same sweep (the journal's).
  virtual std::string unit_key(int pass, const SweepGroup& g) const = 0;
  // The sequences a unit of a `batch` executes, and makes workloads and references for: the
  // batch, unless the runner executes one sequence standing for several (model/sampled_batch.h).
  virtual int executed_batch(const SweepSpec& /*spec*/, int batch) const { return batch; }
  // What a point of group g costs relative to others, for the progress ETA.
  virtual double point_cost(const SweepRun& run, const SweepGroup& g) const = 0;
  // Runs the unit until every point stopped; nothing when a stop was requested (run.stopped is
  // then set).
  virtual std::optional<std::vector<reports::Point>> run(SweepRun& run, const SweepGroup& g,
                                                         const std::string& where) = 0;
};

}  // namespace hb::bench
