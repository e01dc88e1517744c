#pragma once
// Progress on stderr, silent with --quiet. On a terminal: one line with a bar and ETA, redrawn
// in place and cleared at the end. Off a terminal (CI logs, batch jobs): a timestamped line when
// the run starts, whenever points finish, and otherwise at most every kHeartbeatS seconds with
// what it is doing (a unit of long points can run for minutes before its points finish), so a
// long run shows it is alive. The ETA weights points by their cost (context tokens x batch),
// not by their count.
#include <string>

#include "bench/runner.h"

namespace hb::cli {

class ProgressBar {
 public:
  explicit ProgressBar(bool quiet);
  // Clears the line however the run ends (an error, an interrupted sweep): the next message
  // must not be printed over a half-drawn bar.
  ~ProgressBar() { finish(); }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  void update(const bench::Progress& p);
  void finish();  // clears the line; idempotent

 private:
  bool enabled_, terminal_;
  size_t last_len_ = 0;
  int64_t last_done_ = 0;    // off a terminal: points already reported
  double last_line_s_ = -1;  // off a terminal: elapsed_s of the last line (-1: none yet)
};

// "12s" left at the rate so far, weighted by cost; "--" before the first point ends; "0s" once
// all are done, never negative.
std::string eta_text(const bench::Progress& p);

// Off a terminal: seconds between lines while no point finishes.
inline constexpr double kHeartbeatS = 10;

}  // namespace hb::cli
