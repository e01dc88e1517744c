#pragma once
// One sweep in progress, as the runner's parts share it (runner.cpp: passes, groups, the report;
// a UnitRunner: one unit's strategies).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/timer.h"
#include "reports/report.h"
#include "bench/contender.h"
#include "bench/run_environment.h"
#include "bench/sweep_groups.h"
#include "bench/sweep_checks.h"

namespace hb::bench {

// One sweep in progress (nvbench's runner): what it shares, the report it fills, its count.
struct SweepRun {
  SweepRun(const SweepContext& c, const ResolvedSweep& rs, const ValidSweep& v, const ProgressFn& p,
           reports::Report& r)
      : ctx(c), resolved(rs), sweep(v), progress(p), report(r) {}
  const SweepContext& ctx;        // the spec and what every contender shares
  const ResolvedSweep& resolved;  // the workload (a trace opened once), typed values
  const ValidSweep& sweep;
  const ProgressFn& progress;
  reports::Report& report;
  int64_t total = 0;
  int64_t done = 0;
  double total_cost = 0, done_cost = 0;  // Progress::done_cost
  int64_t t_start = now_ns();
  bool context_accel_set = false;  // report.context.accelerator is the first point's
  bool stopped = false;
  std::map<std::string, size_t> first_pass;  // point key -> index in report.points

  void tell(const std::string& label) const {
    if (progress)
      progress({done, total, label, (now_ns() - t_start) * 1e-9, done_cost, total_cost});
  }
  bool stop_requested() const {
    const SweepControl* control = ctx.env.control.get();
    return control && control->should_stop && control->should_stop();
  }
};

// Where host KV may go: env's tiers, else plain host memory as local DRAM.
std::vector<HostTier> host_tiers(const RunEnvironment& env);

}  // namespace hb::bench
