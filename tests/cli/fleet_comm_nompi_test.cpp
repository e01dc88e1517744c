// Fleet mode in a build without MPI (HYBRIDBENCH_MPI=OFF or no MPI library): cli/fleet_comm.cpp
// is compiled here with HB_HAVE_MPI=0 in every build, so the refusal users of such a binary see
// is tested even where CI has MPI. The MPI side is tested end to end by tests/mpi/.
#include <cstdlib>

#include <gtest/gtest.h>

#include "cli/fleet_comm.h"
#include "core/error.h"

namespace hb::cli {
namespace {

TEST(FleetWithoutMpi, SaysMpiModeIsUnavailableAndHowToGetIt) {
  EXPECT_FALSE(mpi_built());
  try {
    FleetComm comm;
    FAIL() << "FleetComm started without MPI";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(e.problem().find("MPI mode is unavailable"), std::string::npos) << e.problem();
    EXPECT_NE(e.fix().find("HYBRIDBENCH_MPI=ON"), std::string::npos) << e.fix();
  }
}

TEST(FleetWithoutMpi, LauncherSizeComesFromTheEnvironment) {
  ::unsetenv("PMI_SIZE");
  ::setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  EXPECT_EQ(launcher_world_size(), 4);
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  EXPECT_EQ(launcher_world_size(), 1);
}

}  // namespace
}  // namespace hb::cli
