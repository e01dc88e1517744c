#include "cli/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

namespace hb::cli {

namespace {

// Lock-free, so reading and writing them from a signal handler is safe.
std::atomic<int> g_signal{0};
std::atomic<bool> g_second_exits{true};
static_assert(std::atomic<int>::is_always_lock_free);
static_assert(std::atomic<bool>::is_always_lock_free);
// The second signal's message, built before any handler is installed (the handler only reads it).
char g_message[512];
size_t g_message_len = 0;
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kIgnoredSignals[] = {SIGPIPE};
struct sigaction g_old_stop[std::size(kStopSignals)], g_old_ignored[std::size(kIgnoredSignals)];

extern "C" void on_signal(int sig) {
  int expected = 0;
  if (g_signal.compare_exchange_strong(expected, sig) || !g_second_exits.load())
    return;  // first (or a pass process's repeat): the sweep stops at the next step
  // Second: the finished points are in the journal; end now.
  (void)!::write(STDERR_FILENO, g_message, g_message_len);
  ::_exit(128 + sig);
}

}  // namespace

InterruptGuard::InterruptGuard(const std::string& journal) {
  // On a terminal the progress bar (cli/progress.*, at most 120 columns) is blanked first.
  const std::string clear = ::isatty(STDERR_FILENO) ? "\r" + std::string(120, ' ') + "\r" : "";
  const std::string m = clear + "hybridbench: second interrupt: exiting now" +
                        (journal.empty() ? std::string() : "; finished points are in " + journal) +
                        "\n";
  g_message_len = std::min(m.size(), sizeof g_message);
  std::memcpy(g_message, m.data(), g_message_len);
  g_signal.store(0);
  g_second_exits.store(true);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // other code's blocking calls carry on; the flag is polled
  for (size_t i = 0; i < std::size(kStopSignals); ++i)
    sigaction(kStopSignals[i], &sa, &g_old_stop[i]);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  for (size_t i = 0; i < std::size(kIgnoredSignals); ++i)
    sigaction(kIgnoredSignals[i], &ignore, &g_old_ignored[i]);
  // For the rest of the process: the error message after a write the limit refused goes to
  // stderr, which may be a file under the same limit.
  sigaction(SIGXFSZ, &ignore, nullptr);
}

InterruptGuard::~InterruptGuard() {
  for (size_t i = 0; i < std::size(kStopSignals); ++i)
    sigaction(kStopSignals[i], &g_old_stop[i], nullptr);
  for (size_t i = 0; i < std::size(kIgnoredSignals); ++i)
    sigaction(kIgnoredSignals[i], &g_old_ignored[i], nullptr);
}

void InterruptGuard::repeated_signals_only_stop() { g_second_exits.store(false); }

bool InterruptGuard::requested() const { return g_signal.load() != 0; }
int InterruptGuard::signal() const { return g_signal.load(); }

std::string InterruptGuard::signal_text() const {
  switch (signal()) {
    case SIGINT:
      return "SIGINT (Ctrl-C)";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP (terminal closed)";
    case 0:
      return "no signal";
    default:
      return "signal " + std::to_string(signal());
  }
}

}  // namespace hb::cli
