#include "core/parse.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "core/error.h"

namespace hb::parse {

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
// 2^63 as a double: the first value that no longer fits in int64_t (INT64_MAX rounds up to it).
constexpr double kTwoTo63 = 9223372036854775808.0;

std::string_view trim(std::string_view s) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

// "what 'text'" -- every message names the option (or file and key) and quotes the bad value.
std::string quoted(std::string_view what, std::string_view text) {
  std::string m(what);
  m += " '";
  m += text;
  m += "'";
  return m;
}

std::string integer_range_text(int64_t min, int64_t max) {
  if (max == kInt64Max) return ">= " + std::to_string(min);
  return "from " + std::to_string(min) + " to " + std::to_string(max);
}

// " >= 0 and <= 1", or nothing when every finite number is in range.
std::string range_suffix(const RealRange& r) {
  std::string s;
  if (std::isfinite(r.min) || std::isfinite(r.max)) {
    s.push_back(' ');  // not " " + text(): GCC 12 warns falsely (-Wrestrict, bug 105651)
    s += r.text();
  }
  return s;
}

[[noreturn]] void refuse(std::string problem, std::string fix) {
  throw Error(std::move(problem), std::move(fix));
}

void require_text(std::string_view t, std::string_view what, const std::string& fix) {
  if (t.empty()) refuse(quoted(what, t) + " is empty", fix);
}

// Reads a finite double taking the whole of `t`; the caller has the messages.
bool read_finite(std::string_view t, double& v) {
  if (t.empty()) return false;
  const auto [p, ec] =
      std::from_chars(t.data(), t.data() + t.size(), v, std::chars_format::general);
  return ec == std::errc() && p == t.data() + t.size() && std::isfinite(v);
}

// Splits "1.5G" into the number "1.5" and the unit "G": the unit is the trailing letters.
void split_unit(std::string_view t, std::string_view& number, std::string_view& unit) {
  size_t i = t.size();
  while (i > 0 && ((t[i - 1] >= 'a' && t[i - 1] <= 'z') || (t[i - 1] >= 'A' && t[i - 1] <= 'Z')))
    --i;
  number = t.substr(0, i);
  unit = t.substr(i);
}

}  // namespace

bool RealRange::contains(double v) const {
  if (min_open ? !(v > min) : !(v >= min)) return false;
  if (max_open ? !(v < max) : !(v <= max)) return false;
  return true;
}

std::string RealRange::text() const {
  auto num = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  // Built with += : GCC 12 warns falsely (-Wrestrict, bug 105651) on chained operator+.
  std::string s;
  if (std::isfinite(min)) {
    s += min_open ? "> " : ">= ";
    s += num(min);
  }
  if (std::isfinite(max)) {
    if (!s.empty()) s += " and ";
    s += max_open ? "< " : "<= ";
    s += num(max);
  }
  if (s.empty()) s = "any finite number";
  return s;
}

int64_t integer(std::string_view text, std::string_view what, int64_t min, int64_t max) {
  const std::string_view t = trim(text);
  const std::string fix =
      "pass a whole number " + integer_range_text(min, max) + " (no fraction, no unit)";
  require_text(t, what, fix);
  int64_t v = 0;
  const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec == std::errc::result_out_of_range) refuse(quoted(what, t) + " is out of range", fix);
  if (ec != std::errc() || p != t.data() + t.size())
    refuse(quoted(what, t) + " is not a whole number", fix);
  if (v < min || v > max) refuse(quoted(what, t) + " is out of range", fix);
  return v;
}

uint64_t unsigned_integer(std::string_view text, std::string_view what) {
  const std::string_view t = trim(text);
  const std::string fix =
      "pass a whole number from 0 to " + std::to_string(std::numeric_limits<uint64_t>::max());
  require_text(t, what, fix);
  uint64_t v = 0;
  const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec == std::errc::result_out_of_range) refuse(quoted(what, t) + " is out of range", fix);
  if (ec != std::errc() || p != t.data() + t.size())
    refuse(quoted(what, t) + " is not a whole number >= 0", fix);
  return v;
}

double real(std::string_view text, std::string_view what, const RealRange& range) {
  const std::string_view t = trim(text);
  const std::string fix = "pass a finite number" + range_suffix(range);
  require_text(t, what, fix);
  double v = 0;
  if (!read_finite(t, v)) refuse(quoted(what, t) + " is not a finite number", fix);
  if (!range.contains(v)) refuse(quoted(what, t) + " is out of range", fix);
  return v;
}

int64_t count(std::string_view text, std::string_view what, int64_t min, int64_t max) {
  const std::string_view t = trim(text);
  const std::string fix = "pass a whole number " + integer_range_text(min, max) +
                          ", optionally with k (x1024) or m (x1048576), e.g. 4096 or 4k";
  require_text(t, what, fix);
  std::string_view number, unit;
  split_unit(t, number, unit);
  if (number.empty()) refuse(quoted(what, t) + " is not a whole number", fix);
  int64_t mult = 1;
  if (unit == "k" || unit == "K")
    mult = int64_t{1} << 10;
  else if (unit == "m" || unit == "M")
    mult = int64_t{1} << 20;
  else if (!unit.empty())
    refuse(quoted(what, t) + " has an unknown suffix '" + std::string(unit) + "'", fix);
  int64_t v = 0;
  const auto [p, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
  if (ec == std::errc::result_out_of_range) refuse(quoted(what, t) + " is out of range", fix);
  if (number.empty() || ec != std::errc() || p != number.data() + number.size())
    refuse(quoted(what, t) + " is not a whole number", fix);
  // Checked before multiplying: v * mult must neither overflow nor leave [min, max].
  if (v > 0 && v > max / mult) refuse(quoted(what, t) + " is out of range", fix);
  if (v < 0 && v < std::numeric_limits<int64_t>::min() / mult)
    refuse(quoted(what, t) + " is out of range", fix);
  const int64_t r = v * mult;
  if (r < min || r > max) refuse(quoted(what, t) + " is out of range", fix);
  return r;
}

int64_t bytes(std::string_view text, std::string_view what, int64_t min_bytes, int64_t max_bytes) {
  const std::string_view t = trim(text);
  std::string fix = "pass a size of at least " + std::to_string(min_bytes) + " bytes";
  if (max_bytes != kInt64Max) fix += " and at most " + std::to_string(max_bytes) + " bytes";
  fix += ", a positive number with a unit B, K, M, G or T (binary: 1K = 1024), e.g. 512M or 2G";
  require_text(t, what, fix);
  std::string_view number, unit;
  split_unit(t, number, unit);
  if (number.empty()) refuse(quoted(what, t) + " is not a size", fix);  // "nan", "inf", "G"
  double mult = 0;
  if (unit.empty() || unit == "B")
    mult = 1;
  else if (unit == "k" || unit == "K" || unit == "KiB")
    mult = 0x1p10;
  else if (unit == "m" || unit == "M" || unit == "MiB")
    mult = 0x1p20;
  else if (unit == "g" || unit == "G" || unit == "GiB")
    mult = 0x1p30;
  else if (unit == "t" || unit == "T" || unit == "TiB")
    mult = 0x1p40;
  else
    refuse(quoted(what, t) + " has an unknown unit '" + std::string(unit) + "'", fix);
  int64_t b = 0;
  double v = 0;
  if (mult == 1) {
    // Plain bytes are read as an integer, exact up to INT64_MAX (a double would round it).
    const auto [p, ec] = std::from_chars(number.data(), number.data() + number.size(), b);
    if (ec == std::errc::result_out_of_range) refuse(quoted(what, t) + " is too large", fix);
    if (ec != std::errc() || p != number.data() + number.size())
      refuse(quoted(what, t) +
                 (read_finite(number, v) ? " is not a whole number of bytes" : " is not a size"),
             fix);
  } else {
    if (!read_finite(number, v)) refuse(quoted(what, t) + " is not a size", fix);
    if (!(v > 0)) refuse(quoted(what, t) + " is not a positive size", fix);
    const double d =
        std::floor(v * mult);  // exact for every value that fits: mult is a power of two
    if (!(d < kTwoTo63)) refuse(quoted(what, t) + " is too large", fix);
    b = static_cast<int64_t>(d);
  }
  if (b <= 0) refuse(quoted(what, t) + " is not a positive size", fix);
  if (b > max_bytes) refuse(quoted(what, t) + " is too large", fix);
  if (b < min_bytes) refuse(quoted(what, t) + " is too small", fix);
  return b;
}

double seconds(std::string_view text, std::string_view what, const RealRange& range) {
  const std::string_view t = trim(text);
  const std::string fix =
      "pass a duration" + range_suffix(range) +
      " seconds, a number with an optional unit ms, s, min or h, e.g. 30 or 500ms";
  require_text(t, what, fix);
  std::string_view number, unit;
  split_unit(t, number, unit);
  if (number.empty())
    refuse(quoted(what, t) + " is not a finite number of seconds", fix);  // "nan", "inf"
  double mult = 0;
  if (unit.empty() || unit == "s")
    mult = 1;
  else if (unit == "ms")
    mult = 1e-3;
  else if (unit == "min")
    mult = 60;
  else if (unit == "h")
    mult = 3600;
  else
    refuse(quoted(what, t) + " has an unknown unit '" + std::string(unit) + "'", fix);
  double v = 0;
  if (!read_finite(number, v)) refuse(quoted(what, t) + " is not a finite number of seconds", fix);
  const double s = v * mult;
  if (!std::isfinite(s) || !range.contains(s)) refuse(quoted(what, t) + " is out of range", fix);
  return s;
}

std::string exact_text(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace hb::parse
