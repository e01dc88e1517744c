#include "cli/fleet_comm.h"

#include <chrono>
#include <climits>
#include <cstdlib>
#include <thread>

#include "core/error.h"

#if HB_HAVE_MPI
// The C API only: OpenMPI's and MPICH's deprecated C++ bindings would need their own library.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace hb::cli {

int launcher_world_size() {
  // OpenMPI's mpirun (also under srun with OpenMPI) and PMI launchers (MPICH's hydra, srun
  // --mpi=pmi2). Not SLURM_NTASKS: a batch script's own commands see it without being ranks.
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* v = std::getenv(var); v && std::atoi(v) > 0) return std::atoi(v);
  return 1;
}

#if HB_HAVE_MPI

namespace {

constexpr int kResultTag = 17;
using Clock = std::chrono::steady_clock;

// Polls `req` until it completes or the deadline passes. Sleeping between polls keeps a
// waiting rank from stealing the CPU of a rank still measuring on the same host.
bool wait_until(MPI_Request& req, Clock::time_point deadline) {
  for (;;) {
    int done = 0;
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

}  // namespace

bool mpi_built() { return true; }

FleetComm::FleetComm() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) MPI_Init(nullptr, nullptr);
  finalize_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  // Ranks sharing memory share a host: their order there picks each one's GPU and NUMA node.
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &local_rank_);
  MPI_Comm_size(local, &local_size_);
  MPI_Comm_free(&local);
}

FleetComm::~FleetComm() {
  if (finalize_) MPI_Finalize();
}

std::string FleetComm::broadcast(const std::string& text, double timeout_s) {
  const auto deadline = after(timeout_s);
  unsigned long long n = text.size();
  MPI_Request req;
  MPI_Ibcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD, &req);
  auto timed_out = [&] {
    return Error("rank " + std::to_string(rank_) + ": no word from rank 0 within " +
                     std::to_string(int(timeout_s)) + " s while agreeing on the sweep",
                 "check that every rank started (the launcher's output), then run again",
                 kExitFailure);
  };
  if (!wait_until(req, deadline)) throw timed_out();
  if (n > static_cast<unsigned long long>(INT_MAX))
    throw Error("the sweep description is too large to broadcast", "use a smaller sweep",
                kExitFailure);
  std::string out = rank_ == 0 ? text : std::string(n, '\0');
  MPI_Ibcast(out.data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD, &req);
  if (!wait_until(req, deadline)) throw timed_out();
  return out;
}

void FleetComm::send_to_root(const std::string& text) {
  if (text.size() > static_cast<size_t>(INT_MAX))
    throw Error("rank " + std::to_string(rank_) + "'s report is over 2 GiB", "split the sweep",
                kExitFailure);
  MPI_Request req;
  MPI_Isend(text.data(), static_cast<int>(text.size()), MPI_CHAR, 0, kResultTag, MPI_COMM_WORLD,
            &req);
  wait_until(req, Clock::time_point::max());
}

std::vector<std::optional<std::string>> FleetComm::gather_at_root(const std::string& own,
                                                                  double timeout_s) {
  std::vector<std::optional<std::string>> out(static_cast<size_t>(size_));
  out[0] = own;
  int missing = size_ - 1;
  const auto deadline = after(timeout_s);
  // Messages are taken in arrival order (sizes differ and are unknown in advance), each probed
  // first; a rank that never sends leaves its slot empty once the deadline passes.
  while (missing > 0 && Clock::now() < deadline) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, kResultTag, MPI_COMM_WORLD, &flag, &st);
    if (!flag) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    int count = 0;
    MPI_Get_count(&st, MPI_CHAR, &count);
    std::string text(static_cast<size_t>(count), '\0');
    MPI_Recv(text.data(), count, MPI_CHAR, st.MPI_SOURCE, kResultTag, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    if (!out[static_cast<size_t>(st.MPI_SOURCE)]) --missing;
    out[static_cast<size_t>(st.MPI_SOURCE)] = std::move(text);
  }
  return out;
}

void FleetComm::abort(int exit_code) {
  finalize_ = false;
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

#else  // built without MPI: the same interface, and a clear refusal

bool mpi_built() { return false; }

FleetComm::FleetComm() {
  throw Error(
      "MPI mode is unavailable: this hybridbench was built without MPI, so --distribute cannot be "
      "used",
      "install libopenmpi-dev and openmpi-bin (scripts/install-deps.sh does) and rebuild with "
      "-DHYBRIDBENCH_MPI=ON, or drop --distribute to run on this machine only");
}
FleetComm::~FleetComm() = default;
std::string FleetComm::broadcast(const std::string& text, double) { return text; }
void FleetComm::send_to_root(const std::string&) {}
std::vector<std::optional<std::string>> FleetComm::gather_at_root(const std::string& own, double) {
  return {own};
}
void FleetComm::abort(int exit_code) { std::_Exit(exit_code); }

#endif

}  // namespace hb::cli
