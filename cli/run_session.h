#pragma once
// The single-process `hybridbench run`'s safety net around the sweep: every finished point goes
// to the journal (OUT.partial.jsonl) as it completes; SIGINT/SIGTERM or a failure in a later
// point still writes the report of what finished, marked interrupted; `--resume OUT` continues
// from the journal; and the exit status says what happened (cli/README.md).
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "cli/interrupt.h"
#include "reports/report.h"
#include "bench/journal.h"
#include "bench/runner.h"

namespace hb::cli {

// The options a resumed run must share with the interrupted one: the sweep spec's echo plus the
// execution options it omits (threads, device) and `extra` (mode, platform profiles);
// `command_line` is shown when they differ.
bench::SweepIdentity sweep_identity(const bench::ResolvedSweep& sweep,
                                    const std::map<std::string, std::string>& extra,
                                    const std::string& command_line);

class SweepSession {
 public:
  // Creates the journal for `out` (resume: reads it, checks `identity` against it and appends to
  // it) and installs the signal handlers. No journal when `out` is not a regular file path
  // (`-`, /dev/stdout): --resume is then refused.
  SweepSession(const std::string& out, const bench::SweepIdentity& identity, bool resume);
  // A journal that never got a point (the sweep was refused up front) is removed: it would
  // only block the next run.
  ~SweepSession();

  // For RunEnvironment::control: polls the signal flag, journals each finished unit, hands the
  // runner the units a resumed journal holds.
  std::shared_ptr<const bench::SweepControl> control() const { return control_; }
  // Called from the progress callback: the documented test hook HB_TEST_FAIL_AFTER_POINTS=N
  // throws the error a failed thread creation gives once N points have finished.
  void check_injected_failure(int64_t points_done) const;
  // The signal that asked the run to stop (0: none), for passes in child processes to forward.
  int stop_signal() const { return guard_.signal(); }
  // A pass run in a child process journaled units through the shared journal: the journal then
  // holds points and must outlive an interruption.
  void note_units_journaled_elsewhere(int64_t units) { journaled_units_ += units; }

  // Writes `report` and returns the exit status: complete -> the journal is removed; 0, or 1
  // when a point failed with status error. Interrupted -> the report of what finished with
  // "interrupted": true, the journal kept, 130 / 143 for SIGINT / SIGTERM, the failure's code
  // otherwise. `summary` prints the table (not with --quiet).
  int finish(reports::Report& report, const std::function<void(const reports::Report&)>& summary);

 private:
  std::string out_;
  std::optional<bench::Journal> journal_;
  InterruptGuard guard_;
  std::shared_ptr<bench::SweepControl> control_;
  int64_t resumed_points_ = 0;
  int64_t fail_after_ = 0;  // HB_TEST_FAIL_AFTER_POINTS; 0 = off
  int64_t journaled_units_ = 0;
};

}  // namespace hb::cli
