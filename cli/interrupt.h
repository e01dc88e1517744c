#pragma once
// SIGINT/SIGTERM during `hybridbench run`: the first signal only sets a flag (async-signal-safe),
// which the sweep polls between steps (bench::SweepControl::should_stop); the run then writes the
// report of what finished, marked interrupted, and exits 130 / 143. A second signal ends the
// process at once (the journal already holds every finished point): the handler writes one
// fixed line and calls _exit(128 + signal), both async-signal-safe.
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

  bool requested() const;  // a signal arrived
  int signal() const;      // which (0 = none)
  // "SIGINT (Ctrl-C)" / "SIGTERM".
  std::string signal_text() const;
  int exit_code() const { return 128 + signal(); }  // 130 SIGINT, 143 SIGTERM
};

}  // namespace hb::cli
