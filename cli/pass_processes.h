#pragma once
// `hybridbench run --repetitions N` on one machine: each pass in a fresh process. A process
// fixes things for its whole life that no round-level pairing cancels (where its memory landed,
// which CPU each thread settled on): identical runs differed by a ratio SD of 1.9% while one
// run's rounds implied 1.2% (PERFORMANCE-LOG 2026-12-05). Passes in their own processes make
// that shift part of what a run measures, and the speedups' intervals span it (repeated_ratio).
//
// The passes are forked one after another from this process while it is still single-threaded
// and has not touched the accelerator, so each child starts as a fresh `run` would, with the
// parent's journal and signal handlers. A child returns its pass's report through a pipe; the
// parent pools them (bench::pool_pass_report). A stop signal may reach a pass twice (the
// terminal's Ctrl-C goes to the whole process group, and the parent forwards its own): the pass
// counts it once (InterruptGuard::repeated_signals_only_stop). A pass dies with its parent.
#include <functional>
#include <memory>

#include "bench/runner.h"
#include "bench/sweep_spec.h"
#include "reports/report.h"

namespace hb::cli {

struct PassProcessHooks {
  // One pass's sweep (spec.only_pass set), run in the child: its whole report.
  std::function<reports::Report(const bench::ResolvedSweep&)> run_pass;
  // Whether a stop was asked for (the parent then forwards its signal to the running pass).
  std::function<int()> stop_signal;
};

// Runs sweep.spec.repetitions passes, each in a forked child, and returns their pooled report
// (the first pass's context). A child's error (hb::Error), or its death without a report (a
// crash, an OOM kill), is thrown when no pass has finished, else it ends the run like any later
// failure: the report holds what the finished passes pooled, marked interrupted. Either way the
// points the child journaled stay in the journal for --resume. Throws hb::Error (exit 1) when this
// process already runs threads: fork would copy a half-held lock.
reports::Report run_passes_in_processes(const bench::ResolvedSweep& sweep,
                                        const PassProcessHooks& hooks);

}  // namespace hb::cli
