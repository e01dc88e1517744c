#pragma once
// One unit of a measured sweep: every strategy on one workload group (model x dtype x length x
// batch x budget), side by side, round after round; and the unit's inputs, for any runner.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "reports/report.h"
#include "bench/accuracy.h"
#include "bench/sweep_run.h"
#include "bench/unit_runner.h"

namespace hb::bench {

// What a unit's strategies run on, apart from their budgets: the executed sequences' workloads,
// the problem over them and its fp64 reference.
struct UnitInputs {
  std::string key;  // what they were made for (a caller's, to share them between units)
  std::vector<Workload> workloads;
  Problem problem;
  std::unique_ptr<ReferenceOracle> oracle;
};

// The inputs of group g of `sweep` (workloads seeded --seed). keep_all_references: the oracle
// keeps every step's reference, for strategies stepped one after another, each from step 0.
std::shared_ptr<UnitInputs> make_unit_inputs(const ResolvedSweep& sweep, const SweepGroup& g,
                                             bool keep_all_references);

// run_sweep's units: measured, every strategy side by side.
class MeasuredUnits final : public UnitRunner {
 public:
  int points_per_strategy() const override { return 1; }
  std::string unit_key(int pass, const SweepGroup& g) const override;
  // A measured group samples until --timeout, whatever its length: its cost is that time plus
  // its setup, or the 32k group of the default sweep would weigh 8x the 4k one.
  double point_cost(const SweepRun& run, const SweepGroup& g) const override;
  // Its points in sweep order.
  std::optional<std::vector<reports::Point>> run(SweepRun& run, const SweepGroup& g,
                                                 const std::string& where) override;
};

}  // namespace hb::bench
