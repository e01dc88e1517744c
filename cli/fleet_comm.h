#pragma once
// The MPI transport of fleet runs (`mpirun -np N hybridbench run --distribute ...`): start-up,
// node-local rank, a broadcast and a gather of text (reports as JSON), every wait bounded. The
// only file that includes <mpi.h>; built without MPI (HB_HAVE_MPI 0) it keeps the same
// interface and FleetComm's constructor says MPI mode is unavailable, so nothing else needs an
// #if. What travels is decided in cli/fleet_run.cpp; merging lives in reports/fleet.*.
#include <optional>
#include <string>
#include <vector>

namespace hb::cli {

// Whether this binary can run fleet mode.
bool mpi_built();
// How many processes the launcher (mpirun, srun) started in this job according to its
// environment; 1 when the process was started on its own. Needs no MPI library.
int launcher_world_size();

class FleetComm {
 public:
  // Initialises MPI. Throws hb::Error (usage) when the build has no MPI.
  FleetComm();
  // Finalises MPI unless abort() ran. Call after the report is on disk: finalising waits for
  // every rank.
  ~FleetComm();
  FleetComm(const FleetComm&) = delete;
  FleetComm& operator=(const FleetComm&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }  // among the ranks on this host
  int local_size() const { return local_size_; }

  // Rank 0's `text` on every rank. Waits at most timeout_s; throws hb::Error on timeout.
  std::string broadcast(const std::string& text, double timeout_s);
  // Non-root ranks: hands `text` to rank 0 and waits until it took it (no deadline: rank 0 is
  // the one that gives up, and then aborts the job).
  void send_to_root(const std::string& text);
  // Rank 0: every rank's text by rank (its own at 0); a rank that sent nothing within
  // timeout_s is nullopt.
  std::vector<std::optional<std::string>> gather_at_root(const std::string& own, double timeout_s);
  // Ends every rank of the job (after rank 0 wrote what it had, when a rank never answered).
  [[noreturn]] void abort(int exit_code);

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  bool finalize_ = false;
};

}  // namespace hb::cli
