#pragma once
// Fleet mode of `hybridbench run` (--distribute points|replicate under mpirun or srun): each
// rank places itself on its host's hardware, agrees with rank 0 on the sweep, runs its share
// (or all of it), and rank 0 writes one report of every rank's points and hosts. The
// transport is cli/fleet_comm.*, the merge reports/fleet.*; this file is the order of events.
#include <functional>
#include <string>

#include "reports/fleet.h"
#include "reports/report.h"
#include "bench/sweep_spec.h"

namespace hb::cli {

struct FleetRunOptions {
  reports::FleetMode mode = reports::FleetMode::points;
  double gather_timeout_s = 0;  // rank 0's wait for the others after its own share; 0 = auto
  bool device_given = false;    // --device on the command line: do not pick by node-local rank
  std::string out;              // report path (written by rank 0)
};

// Measures `sweep` on this process's platform and returns the report with its context filled
// (host, topology, settings, command line); throws hb::Error on failure.
using SweepFn =
    std::function<reports::Report(const bench::ResolvedSweep& sweep, bool show_progress)>;

// Returns the exit code of this rank; throws hb::Error for this rank's own failure (after the
// others were told). `summary` prints the merged report on rank 0.
int run_fleet(const bench::ResolvedSweep& sweep, const FleetRunOptions& options,
              const SweepFn& run_sweep, const std::function<void(const reports::Report&)>& summary);

// The error `run` gives when --distribute is missing under a launcher, or a per-rank list is
// given outside fleet mode; empty when the arguments are consistent.
void check_fleet_arguments(const bench::SweepSpec& spec, const std::string& distribute);

}  // namespace hb::cli
