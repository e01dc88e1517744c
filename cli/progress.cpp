#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>

namespace hb::cli {

ProgressBar::ProgressBar(bool quiet) : enabled_(!quiet && isatty(STDERR_FILENO)) {}

void ProgressBar::update(const run::Progress& p) {
  if (!enabled_ || p.total <= 0) return;
  const double frac = static_cast<double>(p.done) / static_cast<double>(p.total);
  const int width = 24, filled = static_cast<int>(frac * width);
  std::string bar(filled, '#');
  bar += std::string(width - filled, '.');
  char eta[32] = "--";
  if (p.done > 0) {
    const double remaining = p.elapsed_s / frac - p.elapsed_s;
    std::snprintf(eta, sizeof eta, "%.0fs", remaining);
  }
  char line[256];
  std::snprintf(line, sizeof line, "[%s] %lld/%lld  %.0fs elapsed, ETA %s  %s", bar.c_str(),
                static_cast<long long>(p.done), static_cast<long long>(p.total), p.elapsed_s, eta,
                p.label.c_str());
  std::string s(line);
  if (s.size() > 120) s.resize(120);
  std::fprintf(stderr, "\r%s%s", s.c_str(),
               s.size() < last_len_ ? std::string(last_len_ - s.size(), ' ').c_str() : "");
  last_len_ = s.size();
}

void ProgressBar::finish() {
  if (enabled_ && last_len_) std::fprintf(stderr, "\r%s\r", std::string(last_len_, ' ').c_str());
  last_len_ = 0;
}

}  // namespace hb::cli
