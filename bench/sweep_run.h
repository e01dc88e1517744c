#pragma once
// One sweep in progress, as the runner's parts share it (runner.cpp: passes, groups, the report;
// unit.cpp: one unit's strategies side by side).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/timer.h"
#include "reports/report.h"
#include "bench/contender.h"
#include "bench/run_environment.h"
#include "bench/sweep_groups.h"
#include "bench/sweep_checks.h"

namespace hb::bench {

struct UnitInputs;  // unit.h

// One sweep in progress (nvbench's runner): what it shares, the report it fills, its count.
struct SweepRun {
  SweepRun(const std::vector<SweepContext>& l, const ResolvedSweep& rs, const ValidSweep& v,
           const ProgressFn& p, reports::Report& r)
      : lanes(l), ctx(l.front()), resolved(rs), sweep(v), progress(p), report(r) {}
  const std::vector<SweepContext>& lanes;  // one per platform in model mode, else one
  const SweepContext& ctx;                 // lanes[0]: the spec and what every lane shares
  const ResolvedSweep& resolved;           // the workload (a trace opened once), typed values
  const ValidSweep& sweep;
  const ProgressFn& progress;
  reports::Report& report;
  int64_t total = 0;
  int64_t done = 0;
  double total_cost = 0, done_cost = 0;  // Progress::done_cost
  int64_t t_start = now_ns();
  bool context_accel_set = false;
  bool stopped = false;
  std::map<std::string, size_t> first_pass;  // point key -> index in report.points
  std::shared_ptr<UnitInputs> last_inputs;   // the latest unit's, for the next to share (unit.h)

  void tell(const std::string& label) const {
    if (progress)
      progress({done, total, label, (now_ns() - t_start) * 1e-9, done_cost, total_cost});
  }
  bool stop_requested() const {
    const SweepControl* control = ctx.env.control.get();
    return control && control->should_stop && control->should_stop();
  }
  // " [platform]" for lane l's progress labels when there are several.
  std::string lane_tag(size_t l) const {
    if (lanes.size() < 2 || !lanes[l].env.observer) return "";
    std::string t;
    for (const auto& [key, value] : lanes[l].env.observer->lane_axes()) t += " [" + value + "]";
    return t;
  }
};

// Whether every lane's timings are modeled (model mode): nothing is timed.
bool timings_modeled(const SweepRun& run);

}  // namespace hb::bench
