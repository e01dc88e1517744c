// A thread the system refuses (thread/pid limits, no memory for its stack) becomes an hb::Error
// naming the limit and the option that asked for the threads, and the workers already started
// are joined (before, std::system_error escaped a half-built pool: std::terminate). Issue 14,
// defect 5: `--host-threads 200000` started 32,400 threads and exhausted pid_max.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/thread_pool.h"
#include "tests/child_process.h"

namespace hb {
namespace {

// In a child process (the limit must not touch the test runner): cap the address space just
// above what is mapped now, so thread stacks (8 MiB each) run out after a few threads.
int child_starts_too_many_threads() {
  long pages = 0;
  std::ifstream("/proc/self/statm") >> pages;
  const rlim_t now = static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE));
  const rlimit lim{now + (48u << 20), now + (48u << 20)};
  if (::setrlimit(RLIMIT_AS, &lim) != 0) return 10;
  try {
    ThreadPool pool(256, "--host-threads");
    return 11;  // every thread started: the limit did not bite
  } catch (const Error& e) {
    const std::string p = e.problem(), f = e.fix();
    if (p.find("cannot start thread") == std::string::npos) return 12;
    if (p.find("of 256 for --host-threads") == std::string::npos) return 13;
    if (f.find("lower --host-threads") == std::string::npos) return 14;
    if (e.exit_code() != kExitUsage) return 15;
    return 0;
  } catch (...) {
    return 16;
  }
}

TEST(ThreadPoolLimits, RefusedThreadNamesTheOptionAndJoinsTheRest) {
  if (test::kAddressSanitizer)
    GTEST_SKIP() << "AddressSanitizer reserves the address space this test limits";
  // Bounded wait: the old pool deadlocked here (joinable threads destroyed while unwinding).
  const auto end = test::run_in_child(child_starts_too_many_threads, 30000);
  ASSERT_FALSE(end.hung)
      << "the child hung for 30 s after a thread was refused (a half-built pool never unwound)";
  ASSERT_TRUE(end.exited) << "the child died of signal " << end.signal
                          << " (std::terminate from a half-built pool?)";
  EXPECT_EQ(end.exit_code, 0)
      << "10 setrlimit, 11 no failure, 12-15 message/code, 16 other exception";
}

}  // namespace
}  // namespace hb
