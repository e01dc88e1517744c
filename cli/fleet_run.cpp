#include "cli/fleet_run.h"

#include <chrono>
#include <iostream>
#include <optional>

#include "cli/fleet_comm.h"
#include "cli/platform_setup.h"
#include "core/build_info.h"
#include "core/error.h"
#include "kernels/backend.h"
#include "reports/fleet.h"
#include "reports/json_io.h"
#include "bench/runner.h"

namespace hb::cli {

namespace {

// Long enough for every rank to start its process and read its options.
constexpr double kAgreeTimeoutS = 120;

// What every rank must agree on, one "key=value" line each: the sweep as echoed in reports,
// the strategies "all" expands to, and the build (a fleet of mixed versions would compare
// different code).
std::string sweep_fingerprint(const bench::ResolvedSweep& sweep, reports::FleetMode mode) {
  auto echo = sweep.echo();
  echo["distribute"] = reports::to_string(mode);
  std::string strategies;
  for (const auto& s : bench::resolve_strategies(sweep.spec.strategies))
    strategies += (strategies.empty() ? "" : ",") + s;
  echo["resolved_strategies"] = strategies;
  echo["tool"] = build_info().version + " " + build_info().git_commit;
  std::string text;
  for (const auto& [k, v] : echo) text += k + "=" + v + "\n";
  return text;
}

// "" when equal, else the first line that differs, for the error message.
std::string first_difference(const std::string& mine, const std::string& root) {
  size_t a = 0, b = 0;
  while (a < mine.size() || b < root.size()) {
    const size_t ea = mine.find('\n', a), eb = root.find('\n', b);
    const std::string la = mine.substr(a, ea - a), lb = root.substr(b, eb - b);
    if (la != lb) return "here '" + la + "', on rank 0 '" + lb + "'";
    if (ea == std::string::npos || eb == std::string::npos) break;
    a = ea + 1, b = eb + 1;
  }
  return mine == root ? "" : "the option lists differ in length";
}

// --kv-node "0,7": one node per rank (a single value applies to every rank).
std::vector<int> kv_node_of_rank(const std::vector<int>& nodes, int rank, int size) {
  if (nodes.size() <= 1) return nodes;
  if (static_cast<int>(nodes.size()) != size)
    throw Error("--kv-node lists " + std::to_string(nodes.size()) + " nodes for " +
                    std::to_string(size) + " ranks",
                "give one node for every rank, or a single node for all (e.g. --kv-node 0)");
  return {nodes[static_cast<size_t>(rank)]};
}

// A rank's report when it failed: its host facts and the reason, no points.
reports::Report failed_report(int rank, const std::string& binding, const std::string& why) {
  reports::Report r;
  reports::fill_host_context(r.context);
  reports::HostRecord h = reports::host_record(r.context, rank, binding);
  h.status = reports::HostStatus::error;
  h.error = why;
  r.context.hosts = {h};
  return r;
}

// The points a failed rank owned, marked error with its reason, so they are never silently
// missing from the report (DESIGN: a point that cannot run appears with status and reason).
void add_planned_points(reports::Report& failed, const bench::ResolvedSweep& sweep,
                        reports::FleetMode mode, int rank, int size,
                        AcceleratorKind accelerator_kind) {
  bench::ResolvedSweep s = sweep;
  if (mode == reports::FleetMode::points) s.spec.share_index = rank, s.spec.share_count = size;
  const auto& h = failed.context.hosts.at(0);
  for (auto& axes : bench::planned_axes(s, kAcceleratorKinds.name(accelerator_kind))) {
    reports::Point p;
    p.axes = std::move(axes);
    p.status = reports::PointStatus::error;
    p.reason = "rank " + std::to_string(rank) + " on " + h.host + " failed: " + h.error;
    p.provenance = backend(accelerator_kind).emulated ? reports::Provenance::emulated
                                                      : reports::Provenance::measured;
    failed.points.push_back(std::move(p));
  }
}

std::string error_text(const Error& e) {
  return e.problem() + (e.fix().empty() ? "" : " (fix: " + e.fix() + ")");
}

}  // namespace

void check_fleet_arguments(const bench::SweepSpec& spec, const std::string& distribute) {
  if (!distribute.empty()) return;
  if (const int n = launcher_world_size(); n > 1)
    throw Error("this process is one of " + std::to_string(n) +
                    " ranks started by mpirun/srun, but --distribute was not given (every rank "
                    "would run the whole "
                    "sweep and write the same file)",
                "add --distribute points (split the sweep over the ranks) or --distribute "
                "replicate (every rank "
                "runs it: fleet comparison), or start hybridbench without a launcher");
  if (spec.kv_nodes.size() > 1) {
    std::string nodes;
    for (int n : spec.kv_nodes) {
      if (!nodes.empty()) nodes += ',';
      nodes += std::to_string(n);
    }
    throw Error("--kv-node '" + nodes + "' lists one node per rank, which only a fleet run has",
                "pass a single node, or run under mpirun with --distribute");
  }
}

namespace {

// This rank's report: its share (or all of the sweep) run on its own hardware once it agrees
// with rank 0 on the sweep, else a failed report saying why (`error` then holds the failure).
reports::Report run_own_share(FleetComm& comm, const bench::ResolvedSweep& sweep,
                              const FleetRunOptions& o, const SweepFn& run_sweep,
                              std::optional<Error>& error) {
  const int rank = comm.rank();
  std::string binding = "not bound";
  // Agreement first: rank 0's sweep is the one; a rank with another reports why and runs nothing.
  const std::string fp = sweep_fingerprint(sweep, o.mode);
  std::string root_fp;
  try {
    root_fp = comm.broadcast(fp, kAgreeTimeoutS);
  } catch (const Error& e) {  // rank 0 is gone: nobody would gather, so end the job
    std::cerr << "hybridbench: error: " << e.problem() << "\n  fix: " << e.fix() << "\n";
    comm.abort(kExitFailure);
  }
  try {
    if (const std::string diff = first_difference(fp, root_fp); !diff.empty())
      throw Error("rank " + std::to_string(rank) + "'s sweep differs from rank 0's: " + diff,
                  "give every rank the same options, config file and hybridbench build");
    bench::ResolvedSweep mine = sweep;
    bench::SweepSpec& s = mine.spec;
    s.kv_nodes = kv_node_of_rank(sweep.spec.kv_nodes, rank, comm.size());
    if (o.mode == reports::FleetMode::points) s.share_index = rank, s.share_count = comm.size();
    binding = place_rank(s, comm.local_rank(), comm.local_size(), o.device_given);
    reports::Report r = run_sweep(mine, rank == 0);
    r.context.hosts = {reports::host_record(r.context, rank, binding)};
    return r;
  } catch (const Error& e) {
    error = e;
  } catch (const std::exception& e) {
    error = Error(std::string("internal error: ") + e.what(), "", kExitFailure);
  }
  return failed_report(rank, binding, error_text(*error));
}

// Rank 0's gather: every rank's report, a failed one (with the points it owned) for a rank that
// failed or never answered; `failed` lists them, `missing` says whether one never answered.
std::vector<reports::Report> gather_ranks(FleetComm& comm, reports::Report mine, double timeout,
                                          std::vector<std::string>& failed, bool& missing) {
  const auto texts = comm.gather_at_root(reports::to_json_text(mine), timeout);
  std::vector<reports::Report> ranks;
  for (size_t r = 0; r < texts.size(); ++r) {
    if (!texts[r]) {
      missing = true;
      ranks.push_back(reports::failed_rank_report(
          static_cast<int>(r), "",
          "no result within " + std::to_string(static_cast<int>(timeout)) +
              " s after rank 0 finished its share (the rank hung, died or is far slower; raise "
              "--gather-timeout)"));
    } else if (r == 0) {
      ranks.push_back(std::move(mine));
    } else {
      try {
        ranks.push_back(
            reports::from_json_text(*texts[r], "rank " + std::to_string(r) + "'s result"));
      } catch (const Error& e) {
        ranks.push_back(reports::failed_rank_report(static_cast<int>(r), "",
                                                    "its result was unreadable: " + e.problem()));
      }
    }
    const auto& h = ranks.back().context.hosts.at(0);
    if (h.status != reports::HostStatus::ok)
      failed.push_back("rank " + std::to_string(r) + " on " + h.host + ": " + h.error);
  }
  return ranks;
}

}  // namespace

int run_fleet(const bench::ResolvedSweep& sweep, const FleetRunOptions& o, const SweepFn& run_sweep,
              const std::function<void(const reports::Report&)>& summary) {
  FleetComm comm;  // throws the "unavailable" error in a build without MPI
  const int rank = comm.rank();
  const auto t0 = std::chrono::steady_clock::now();
  // Every rank ends up here with either its points or the reason it has none, so rank 0's
  // gather never waits on a rank that gave up.
  std::optional<Error> my_error;
  reports::Report mine = run_own_share(comm, sweep, o, run_sweep, my_error);
  if (rank != 0) {
    comm.send_to_root(reports::to_json_text(mine));
    if (my_error) throw *my_error;  // the lead writes it into the report; this rank still fails
    return kExitOk;
  }

  const double own_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double timeout = o.gather_timeout_s > 0 ? o.gather_timeout_s : std::max(300.0, 2 * own_s);
  std::vector<std::string> failed;
  bool missing = false;
  std::vector<reports::Report> ranks =
      gather_ranks(comm, std::move(mine), timeout, failed, missing);
  const size_t answered = ranks.size();
  // The accelerator the failed ranks' points would have had: rank 0's, else what was asked for
  // (auto: the backend auto tries first, a real device, which the launcher may not have).
  const AcceleratorKind kind = ranks[0].context.accelerator.kind.value_or(
      sweep.spec.accelerator.kind == AcceleratorKind::auto_select ? backends().front().kind
                                                                  : sweep.spec.accelerator.kind);
  for (size_t r = 0; r < ranks.size(); ++r)
    if (ranks[r].context.hosts.at(0).status != reports::HostStatus::ok && ranks[r].points.empty())
      add_planned_points(ranks[r], sweep, o.mode, static_cast<int>(r),
                         static_cast<int>(ranks.size()), kind);
  const reports::Report merged = reports::merge_fleet(std::move(ranks), o.mode);
  reports::write_report(o.out, merged);
  summary(merged);
  std::cerr << "hybridbench: wrote " << o.out << " (" << merged.points.size() << " points from "
            << answered - failed.size() << " of " << answered << " ranks)\n";
  if (missing) {
    std::cerr
        << "hybridbench: error: some ranks never answered; ending the job so it does not hang\n";
    for (const auto& f : failed) std::cerr << "  " << f << "\n";
    comm.abort(kExitFailure);
  }
  if (!failed.empty()) {
    std::string list;
    for (const auto& f : failed) list += "\n  " + f;
    throw Error(std::to_string(failed.size()) + " of " + std::to_string(answered) +
                    " ranks failed; the report holds the others' points and each failure:" + list,
                "fix the failing ranks' placement or options and run again", kExitFailure);
  }
  return kExitOk;
}

}  // namespace hb::cli
