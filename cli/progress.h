#pragma once
// A one-line progress bar with ETA on stderr, redrawn in place; silent when stderr is not a
// terminal (CI logs) or with --quiet.
#include <string>

#include "reports/run/runner.h"

namespace hb::cli {

class ProgressBar {
 public:
  explicit ProgressBar(bool quiet);
  // Clears the line however the run ends (an error, an interrupted sweep): the next message
  // must not be printed over a half-drawn bar.
  ~ProgressBar() { finish(); }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  void update(const run::Progress& p);
  void finish();  // clears the line; idempotent

 private:
  bool enabled_;
  size_t last_len_ = 0;
};

}  // namespace hb::cli
