// Helpers for tests that run code in a child process under a resource limit (the limit must not
// touch the test runner) and for the sanitizer builds where such limits cannot apply.
#pragma once

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <functional>

namespace hb::test {

// AddressSanitizer reserves terabytes of address space for its shadow memory at start-up, so an
// address-space cap (ulimit -v, RLIMIT_AS) kills an instrumented process before main().
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

// How a child ended: `hung` when it outlived the wait and was killed.
struct ChildEnd {
  bool hung = false;
  bool exited = false;
  int exit_code = -1;
  int signal = 0;
};

// Forks, runs `body` in the child and _exits with its value; waits at most `wait_ms`.
inline ChildEnd run_in_child(const std::function<int()>& body, int wait_ms) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return ChildEnd{.hung = false, .exited = false, .exit_code = -1, .signal = 0};
  if (pid == 0) ::_exit(body());
  int st = 0;
  pid_t done = 0;
  for (int waited = 0; waited < wait_ms && (done = ::waitpid(pid, &st, WNOHANG)) == 0; waited += 25)
    ::usleep(25 * 1000);
  ChildEnd end;
  if (done == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &st, 0);
    end.hung = true;
    return end;
  }
  end.exited = WIFEXITED(st);
  end.exit_code = end.exited ? WEXITSTATUS(st) : -1;
  end.signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
  return end;
}

}  // namespace hb::test
