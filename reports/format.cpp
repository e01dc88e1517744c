#include "reports/format.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace hb::reports {

static std::string printf_string(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// Three significant figures: enough to see a few-percent change, short enough for tables.
static std::string three_sig(double v) {
  const double a = std::fabs(v);
  return printf_string(a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : "%.2f", v);
}

std::string format_duration_ns(double ns) {
  if (!std::isfinite(ns)) return "n/a";
  // Switch unit where three significant figures would round up to 1000 (999.7 us -> 1.00 ms).
  const double a = std::fabs(ns);
  if (a < 999.5) return three_sig(ns) + " ns";
  if (a < 999.5e3) return three_sig(ns / 1e3) + " us";
  if (a < 999.5e6) return three_sig(ns / 1e6) + " ms";
  return three_sig(ns / 1e9) + " s";
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (std::fabs(bytes) >= 1024 && u < 5) bytes /= 1024, ++u;
  return (u == 0 ? printf_string("%.0f", bytes) : three_sig(bytes)) + " " + units[u];
}

std::string format_percent(double fraction, bool sign) {
  if (!std::isfinite(fraction)) return "n/a";
  return printf_string(sign ? "%+.1f%%" : "%.1f%%", fraction * 100);
}

std::string format_ratio(double r) {
  if (!std::isfinite(r)) return "n/a";
  return three_sig(r) + "x";
}

std::string format_sci(double v) {
  if (std::isnan(v)) return "nan";
  if (v == 0) return "0";
  return printf_string("%.1e", v);
}

// The unit follows the magnitude alone, so figures side by side read alike: "14.00M" beside
// "3.20M", never "14337k" (issue 49). Below 1M a multiple of 1024 is exact in k; other counts
// below 1M print in full (1000 is not 1k).
std::string format_tokens(int64_t n) {
  constexpr int64_t kMi = int64_t(1) << 20;
  if (n >= kMi)
    return n % kMi == 0 ? std::to_string(n / kMi) + "M"
                        : format_fixed(static_cast<double>(n) / kMi, 2) + "M";
  if (n >= 1024 && n % 1024 == 0) return std::to_string(n / 1024) + "k";
  return std::to_string(n);
}

std::string format_token_count(double tokens) {
  const auto n = static_cast<int64_t>(tokens);
  if (n >= 1024 && n < (int64_t(1) << 20) && n % 1024 != 0)
    return format_fixed(tokens / 1024, 1) + "k";
  return format_tokens(n);
}

std::string format_fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string format_p_value(double p) {
  if (std::isnan(p)) return "n/a";
  if (p < 1e-6) return "<1e-6";
  if (p < 0.001) return printf_string("%.0e", p);
  return printf_string("%.3f", p);
}

std::string format_shortest(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string format_list(const std::vector<std::string>& items, const char* sep) {
  std::string s;
  for (const auto& item : items) s += (s.empty() ? "" : sep) + item;
  return s;
}

}  // namespace hb::reports
