// The cpu accelerator under a memory or thread limit (ulimit -v): whichever of its threads the
// system refuses (a pool worker, the queue thread, the copy thread), making it throws an
// hb::Error (exit 2) naming --accelerator-threads and leaves no thread behind. Before, a refused
// copy thread unwound the constructor with the queue thread still joinable: std::terminate,
// "terminate called without an active exception", exit 134.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/error.h"
#include "kernels/cpu/cpu_accelerator.h"
#include "tests/child_process.h"

namespace hb {
namespace {

// In a child: cap the address space `headroom` bytes above what is mapped now, then make the
// accelerator. 0: made, or refused with the documented error; anything else says what broke.
int child_makes_accelerator(rlim_t headroom) {
  long pages = 0;
  std::ifstream("/proc/self/statm") >> pages;
  const rlim_t now = static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE));
  const rlimit lim{now + headroom, now + headroom};
  if (::setrlimit(RLIMIT_AS, &lim) != 0) return 10;
  try {
    auto acc = cpu::make_cpu_accelerator(int64_t{1} << 20, 4, false);
    return acc ? 0 : 11;
  } catch (const Error& e) {
    if (e.problem().find("--accelerator-threads") == std::string::npos) return 12;
    if (e.fix().find("lower --accelerator-threads") == std::string::npos) return 13;
    if (e.exit_code() != kExitUsage) return 14;
    return 0;
  } catch (const std::bad_alloc&) {
    return 0;  // the limit bit before any thread: an ordinary out-of-memory
  } catch (...) {
    return 15;
  }
}

// Every headroom from none to enough for all six threads (stacks of 8 MiB, arenas of 64 MiB),
// so each thread in turn is the one refused.
TEST(CpuAcceleratorLimits, ARefusedThreadIsAnErrorNeverAnAbort) {
  if (test::kAddressSanitizer)
    GTEST_SKIP() << "AddressSanitizer reserves the address space this test limits";
  for (rlim_t mib = 0; mib <= 480; mib += 6) {
    const auto end =
        test::run_in_child([mib] { return child_makes_accelerator(mib << 20); }, 10000);
    ASSERT_FALSE(end.hung) << "headroom " << mib
                           << " MiB: the child hung after a thread was refused";
    ASSERT_TRUE(end.exited) << "headroom " << mib << " MiB: the child died of signal " << end.signal
                            << " (std::terminate from a half-built accelerator?)";
    EXPECT_EQ(end.exit_code, 0) << "headroom " << mib
                                << " MiB: 10 setrlimit, 12-14 message/code, 15 other exception";
  }
}

}  // namespace
}  // namespace hb
