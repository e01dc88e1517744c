#pragma once
// The sweep engine behind `hybridbench run`: for each point, build the workload, let every
// strategy plan and load, then step all strategies side by side (interleaved, so machine noise
// hits them alike), time each step, score it against the fp64 reference and stop each
// strategy when its step-time noise converges (nvbench-style) or a limit is reached.
// The API: run_sweep and its relatives. The types a caller fills are in run_environment.h,
// sweep_groups.h and unit_runner.h, which this header brings along.
#include <string>
#include <vector>

#include "reports/report.h"
#include "bench/run_environment.h"
#include "bench/sweep_groups.h"
#include "bench/sweep_spec.h"
#include "bench/unit_runner.h"

namespace hb::bench {

// Runs the sweep; fills report.points and report.speedups and the accelerator / sweep parts of
// the context (the caller fills host, topology and settings). Throws hb::Error up front for
// an impossible sweep (nothing is half-run): unknown strategy or option, an option a strategy
// refuses, an accelerator that cannot be had (unknown kind, cuda without a usable GPU).
// With env.control: should_stop() or a failure escaping a point (hb::Error or any
// std::exception, e.g. thread creation failing) ends the sweep early; the report then holds the
// finished units and report.interruption says why (exit code 130/143 is the caller's to set for
// signals; a failure's is its hb::Error code, 1 for other exceptions).
reports::Report run_sweep(const ResolvedSweep& sweep, const RunEnvironment& env,
                          const ProgressFn& progress = {});
// run_sweep(spec.validate(), ...).
reports::Report run_sweep(const SweepSpec& spec, const RunEnvironment& env,
                          const ProgressFn& progress = {});
// A later --repetitions pass's report (SweepSpec::only_pass) pooled into the earlier passes':
// each point's timed steps, rounds and phases appended as run_sweep pools its own passes (a
// failed pass fails the point), points new to `into` added, speedups recomputed.
void pool_pass_report(reports::Report& into, reports::Report&& pass);

// run_sweep with its units run by `units` (UnitRunner; model mode's: model/model_sweep.h).
reports::Report run_sweep(const ResolvedSweep& sweep, const RunEnvironment& env, UnitRunner& units,
                          const ProgressFn& progress = {});

}  // namespace hb::bench
