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

#if defined(__SANITIZE_ADDRESS__)
#define HB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HB_ASAN 1
#endif
#endif

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
#ifdef HB_ASAN
  GTEST_SKIP() << "AddressSanitizer reserves the address space this test limits";
#else
  for (rlim_t mib = 0; mib <= 480; mib += 6) {
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) ::_exit(child_makes_accelerator(mib << 20));
    int st = 0;
    pid_t done = 0;
    for (int i = 0; i < 400 && (done = ::waitpid(pid, &st, WNOHANG)) == 0; ++i) ::usleep(25 * 1000);
    if (done == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &st, 0);
      FAIL() << "headroom " << mib << " MiB: the child hung after a thread was refused";
    }
    ASSERT_TRUE(WIFEXITED(st)) << "headroom " << mib << " MiB: the child died of signal "
                               << (WIFSIGNALED(st) ? WTERMSIG(st) : 0)
                               << " (std::terminate from a half-built accelerator?)";
    EXPECT_EQ(WEXITSTATUS(st), 0) << "headroom " << mib
                                  << " MiB: 10 setrlimit, 12-14 message/code, 15 other exception";
  }
#endif
}

}  // namespace
}  // namespace hb
