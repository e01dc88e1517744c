#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>

namespace hb::cli {

ProgressBar::ProgressBar(bool quiet) : enabled_(!quiet), terminal_(isatty(STDERR_FILENO) != 0) {}

// Seconds left, from the share of the sweep's cost done so far ("--" before any point ends). The
// shares are sums of doubles, so the last point can leave done a hair above total: never below
// 0 ("ETA -0s"), and 0 once every point is done.
std::string eta_text(const bench::Progress& p) {
  const double frac = p.total_cost > 0 ? p.done_cost / p.total_cost
                                       : static_cast<double>(p.done) / static_cast<double>(p.total);
  if (p.done <= 0 || frac <= 0) return "--";
  const double left = p.done >= p.total || frac >= 1 ? 0 : p.elapsed_s / frac - p.elapsed_s;
  char eta[32];
  std::snprintf(eta, sizeof eta, "%.0fs", left > 0 ? left : 0.0);
  return eta;
}

void ProgressBar::update(const bench::Progress& p) {
  if (!enabled_ || p.total <= 0) return;
  const std::string eta = eta_text(p);
  if (!terminal_) {
    const bool heartbeat = last_line_s_ < 0 || p.elapsed_s - last_line_s_ >= kHeartbeatS;
    if (p.done <= last_done_ && !heartbeat) return;
    last_done_ = p.done;
    last_line_s_ = p.elapsed_s;
    char stamp[16] = "";
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    if (gmtime_r(&now, &tm)) std::strftime(stamp, sizeof stamp, "%H:%M:%SZ", &tm);
    std::fprintf(stderr, "hybridbench: %s %lld/%lld points, %.0fs elapsed, ETA %s  %s\n", stamp,
                 static_cast<long long>(p.done), static_cast<long long>(p.total), p.elapsed_s,
                 eta.c_str(), p.label.c_str());
    return;
  }
  const double frac = static_cast<double>(p.done) / static_cast<double>(p.total);
  const int width = 24, filled = static_cast<int>(frac * width);
  std::string bar(filled, '#');
  bar += std::string(width - filled, '.');
  char line[256];
  std::snprintf(line, sizeof line, "[%s] %lld/%lld  %.0fs elapsed, ETA %s  %s", bar.c_str(),
                static_cast<long long>(p.done), static_cast<long long>(p.total), p.elapsed_s,
                eta.c_str(), p.label.c_str());
  std::string s(line);
  if (s.size() > 120) s.resize(120);
  std::fprintf(stderr, "\r%s%s", s.c_str(),
               s.size() < last_len_ ? std::string(last_len_ - s.size(), ' ').c_str() : "");
  last_len_ = s.size();
}

void ProgressBar::finish() {
  if (enabled_ && terminal_ && last_len_)
    std::fprintf(stderr, "\r%s\r", std::string(last_len_, ' ').c_str());
  last_len_ = 0;
}

}  // namespace hb::cli
