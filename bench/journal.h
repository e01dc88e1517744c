#pragma once
// The sweep journal: finished points appended to `OUT.partial.jsonl` as they complete, so an
// interrupted `hybridbench run` (Ctrl-C, SIGTERM, a crash, a failure in a later point) keeps
// them, and `run --resume OUT` continues the sweep instead of starting over.
//
// Format (JSON Lines, one object per line, fsynced per line):
//   {"journal": "hybridbench.journal/1", "report_schema": "hybridbench.report/1",
//    "build": "0.1.0 abc123", "command_line": "hybridbench run ...", "options": {"<option>":
//    "<value>"}}
//   {"unit": "<SweepControl unit key>", "of": 2, "point": { ...one report point... }}
//   ...
// The first line is the sweep's identity: a resumed run must have the same options and build.
// A unit (every strategy of one workload group in one pass) counts when all its "of" points
// are there; a last line cut short by a kill is ignored.
#include <map>
#include <string>
#include <vector>

#include "reports/report.h"
#include "bench/run_environment.h"

namespace hb::bench {

// What must be equal for a run to continue another's journal.
struct SweepIdentity {
  std::string build;                           // tool version and git commit
  std::string command_line;                    // shown in the fix when options differ; not compared
  std::map<std::string, std::string> options;  // every option that changes a point's figures
};

// "OUT.partial.jsonl".
std::string journal_path(const std::string& report_path);

// An open journal. Every append is written and fsynced before it returns, so a point that was
// journaled survives any later end of the process.
class Journal {
 public:
  // Starts a new journal with `identity` as its header; refuses (hb::Error, exit 2) when one with
  // finished points (or a damaged one) is already there: it holds an interrupted sweep's
  // points, which a new run must not overwrite. One without a point is replaced. The caller
  // holds the --out lock. A header that cannot be written (disk full) leaves no file.
  static Journal create(const std::string& path, const SweepIdentity& identity);
  // Opens an existing journal to append to (run --resume, after read_journal()).
  static Journal reopen(const std::string& path);
  Journal(Journal&&) noexcept;
  Journal& operator=(Journal&&) = delete;
  ~Journal();

  void append(const FinishedUnit& unit);  // throws hb::Error (exit 1) on I/O failure
  // Deletes the journal (after the complete report is written); the object is then closed.
  // Idempotent.
  void remove();
  const std::string& path() const { return path_; }

 private:
  Journal(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  void write_line(const std::string& line);
  std::string path_;
  int fd_ = -1;
  bool removed_ = false;
};

struct JournalContents {
  SweepIdentity identity;
  std::map<std::string, std::vector<reports::Point>> units;  // complete units only, by key
  int64_t points = 0;                                        // in complete units
};
// Reads and validates a journal; throws hb::Error (exit 2) naming the file and line. A journal
// without a complete first line (its run ended, or the disk filled, before the header was
// written) is refused as no journal: it holds no point.
JournalContents read_journal(const std::string& path);
// The finished points the journal at `path` holds: 0 when it has no complete first line,
// -1 when it cannot be read or is damaged. What decides whether a journal may be removed.
int64_t journal_points(const std::string& path);

// Throws hb::Error (exit 2) naming the first option (or the build) that differs between the
// journal's sweep and this one, with both values and the fix.
void check_same_sweep(const SweepIdentity& journal, const SweepIdentity& now,
                      const std::string& path);

}  // namespace hb::bench
