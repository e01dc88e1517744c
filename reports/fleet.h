#pragma once
// Fleet reports: what `mpirun -np N hybridbench run --distribute ...` turns N ranks' results
// into. Each rank makes an ordinary report of its own share (its context describing its host,
// with one HostRecord, status ok or error); rank 0 merges them here into ONE report whose
// context lists every host and whose points say where they ran. No MPI here: the transport
// lives in cli/fleet_comm.*, so merging is testable and the non-MPI build shares it.
#include <string>
#include <vector>

#include "reports/report.h"

namespace hb::reports {

// The PointAxes::extra key that carries HostRecord::label in replicate mode (every rank runs the
// whole sweep, so the same point exists once per host and must stay apart).
inline constexpr const char* kHostAxis = "host";

// How a fleet shares the sweep: points = split over the ranks; replicate = every rank runs all of
// it (`run --distribute`, written to the report as sweep["distribute"]).
enum class FleetMode { points, replicate };
inline constexpr Vocabulary<FleetMode, 2> kFleetModes{{"points", "replicate"}};
inline const char* to_string(FleetMode m) { return kFleetModes.name(m); }

// The record of the process that filled `ctx` (host facts, topology, settings, accelerator).
HostRecord host_record(const ReportContext& ctx, int rank, const std::string& binding);

// A rank that failed before or while sweeping (or never answered): no points, the reason kept.
Report failed_rank_report(int rank, const std::string& host, const std::string& error);

// Merges the ranks' reports (any order; each must hold exactly one HostRecord) into one:
// rank 0's context is the base, `hosts` lists every rank with a unique label, `host` names every
// distinct host, sweep gains "distribute" and "ranks"; points are tagged with ran_on and, for
// mode replicate, axes.extra["host"] = label; speedups are recomputed (within one host only).
// Throws hb::Error when two ranks reported the same point (a distribution bug).
Report merge_fleet(std::vector<Report> ranks, FleetMode mode);

// Label each record uniquely: the host name when it is the only rank there, else host/gpuN (a
// CUDA device) or host/rN.
void assign_host_labels(std::vector<HostRecord>& hosts);

// The labels of the report's host axis in rank order (empty when the points have none).
std::vector<std::string> host_axis_labels(const Report& report);

}  // namespace hb::reports
