#pragma once
// `hybridbench compare --ab OLD_BIN NEW_BIN -- run ARGS...`: the same sweep run by two builds,
// interleaved on one machine, so both see the same machine at the same time (Chromium's
// pinpoint runs its A/B the same way). Each pass is one `run` of one binary in a fresh process,
// with --repetitions 1 unless ARGS say otherwise; the passes go in counterbalanced pairs
// (A B, B A, A B, ...), so a machine that drifts steadily during the job weighs on both sides
// alike. Each binary's passes are pooled into one report as `run` pools its own passes
// (bench::pool_pass_report), so compare sees the between-pass spread of each side.
//
// The folder keeps every pass's report and log (old-1.json, old-1.log, new-1.json, ...) and the
// two pooled reports (old.json, new.json) compare judged, for inspection or a second compare with
// other thresholds. A pass runs in its own process group, so a Ctrl-C reaches it once, forwarded
// by this process: it writes its interrupted report and the A/B stops with 128 + the signal,
// keeping the finished passes; a second signal ends at once, and the running pass dies with its
// parent (PR_SET_PDEATHSIG).
#include <string>
#include <utility>
#include <vector>

#include "reports/report.h"

namespace hb::cli {

struct AbSpec {
  std::string old_bin, new_bin;       // paths to the two hybridbench executables (may be equal)
  std::vector<std::string> run_args;  // "run" and its options, without --out
  int passes = 6;                     // passes per binary (cli/AB.md: why 6)
  std::string dir;                    // where the passes' reports go; empty: a new timestamped one
  bool quiet = false;                 // no progress lines on stderr
};

struct AbResult {
  std::string dir, old_path, new_path;  // the folder and the two pooled reports in it
  reports::Report old_report, new_report;
  // Each pair of passes run next to each other (OLD pass k, NEW pass k): what the verdict is
  // judged on (reports/compare_pairs.h).
  std::vector<std::pair<reports::Report, reports::Report>> pairs;
};

// Checks everything it can before any pass runs (hb::Error, exit 2: a binary that is missing or
// not executable, run arguments that do not start with `run` or name an output, a folder that
// holds files), then runs the passes and pools them. A pass that fails without a usable report
// throws its exit status (2 stays 2: the sweep's arguments; others 1) with its log's last lines;
// a stop signal throws 128 + the signal.
AbResult run_ab(const AbSpec& spec);

}  // namespace hb::cli
