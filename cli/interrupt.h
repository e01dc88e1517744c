#pragma once
// SIGINT/SIGTERM/SIGHUP during `hybridbench run`: the first signal only sets a flag
// (async-signal-safe), which the sweep polls between steps (bench::SweepControl::should_stop);
// the run then writes the report of what finished, marked interrupted, and exits 130 / 143 /
// 129. A second signal ends the process at once (the journal already holds every finished
// point): the handler writes one fixed line and calls _exit(128 + signal), both
// async-signal-safe. SIGPIPE (while the guard lives) and SIGXFSZ (from then on) are ignored: a
// closed pipe or a file-size limit then fails the write (EPIPE, EFBIG), which the run handles,
// instead of killing it between a temporary file and its rename, or amid the journal's header.
#include <string>

namespace hb::cli {

class InterruptGuard {
 public:
  // Installs the handlers; `journal` is named in the second signal's message. Restores the
  // previous handlers on destruction. One guard at a time.
  explicit InterruptGuard(const std::string& journal);
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  // In a --repetitions pass process (cli/pass_processes.h): every further signal only keeps the
  // flag set. A Ctrl-C reaches the pass twice, from the terminal (the whole process group) and
  // forwarded by the parent, and is still one stop; exiting at once is the parent's call (its
  // death kills the pass).
  static void repeated_signals_only_stop();

  bool requested() const;  // a signal arrived
  int signal() const;      // which (0 = none)
  // "SIGINT (Ctrl-C)" / "SIGTERM" / "SIGHUP (terminal closed)".
  std::string signal_text() const;
  int exit_code() const { return 128 + signal(); }  // 130 SIGINT, 143 SIGTERM, 129 SIGHUP
};

}  // namespace hb::cli
