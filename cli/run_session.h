#pragma once
// The single-machine `hybridbench run`'s safety net around the sweep: --out is locked
// (cli/out_lock.h); every finished point goes to the journal (OUT.partial.jsonl) as it completes;
// SIGINT/SIGTERM/SIGHUP or a failure in a later point still writes the report of what finished,
// marked interrupted; the journal is removed only once a complete report is on disk, or when it
// holds no point; `--resume OUT` continues from it; and the exit status says what happened
// (cli/README.md).
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "cli/interrupt.h"
#include "cli/out_lock.h"
#include "core/error.h"
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

// Refuses (exit 2, naming `option`) an `out` whose journal name (the longest made from it) would
// pass its folder's file-name limit; checked before the other output checks, so the fix names
// the length that works for every file a run writes.
void check_journal_name_room(const std::string& option, const std::string& out);

class SweepSession {
 public:
  // Locks `out` and creates its journal (resume: reads it, checks `identity` against it and
  // appends to it), and installs the signal handlers. No lock and no journal when `out` is not a
  // regular file path (`-`, /dev/stdout): --resume is then refused. Refuses (exit 2) an `out`
  // whose journal name would be too long, and one another run holds.
  SweepSession(const std::string& out, const bench::SweepIdentity& identity, bool resume);
  // Removes the journal when it holds no finished point (judged from the file, whichever
  // process journaled): it would only block the next run. Otherwise it stays for --resume.
  ~SweepSession();

  // For RunEnvironment::control: polls the signal flag, journals each finished unit, hands the
  // runner the units a resumed journal holds.
  std::shared_ptr<const bench::SweepControl> control() const { return control_; }
  // Called from the progress callback with the points this process finished. Documented test
  // hooks: HB_TEST_FAIL_AFTER_POINTS=N throws the error a failed thread creation gives, and
  // HB_TEST_CRASH_AFTER_POINTS=N crashes the process (SIGSEGV), once N points have finished.
  void check_injected_failure(int64_t points_done) const;
  // The signal that asked the run to stop (0: none), for passes in child processes to forward.
  int stop_signal() const { return guard_.signal(); }
  // `e`, an error that ends the run without a report (a pass process that died, a report that
  // could not be written), with the way on when the journal holds finished points.
  Error with_resume_hint(const Error& e) const;

  // Writes `report` and returns the exit status: complete -> the journal is removed (before
  // `summary` prints anything); 0, or 1 when a point failed with status error. Interrupted ->
  // the report of what finished with "interrupted": true, the journal kept, 130 / 143 / 129 for
  // SIGINT / SIGTERM / SIGHUP, the failure's code otherwise. `summary` prints the table (not
  // with --quiet).
  int finish(reports::Report& report, const std::function<void(const reports::Report&)>& summary);

 private:
  // "; the N finished points are in JOURNAL: continue ... --resume OUT", or "" when it has none.
  std::string resume_note() const;
  std::string resumed_text() const;

  std::string out_;
  std::optional<OutLock> lock_;
  std::optional<bench::Journal> journal_;
  InterruptGuard guard_;
  std::shared_ptr<bench::SweepControl> control_;
  int64_t resumed_points_ = 0;    // point passes taken from the journal
  int64_t resumed_distinct_ = 0;  // report points they belong to
  int64_t fail_after_ = 0;        // HB_TEST_FAIL_AFTER_POINTS; 0 = off
  int64_t crash_after_ = 0;       // HB_TEST_CRASH_AFTER_POINTS; 0 = off
};

}  // namespace hb::cli
