#pragma once
// Strict parsing of the numbers users type: option values, config values, strategy options,
// list items. One place so every front end accepts and refuses the same text. Each function
// takes the whole string (surrounding blanks aside) or throws hb::Error (exit 2) naming `what`
// (the option, or the file and key), the bad text and the fix. Never a silent fallback: no NaN,
// no infinity, no trailing junk ("2x"), no fraction where an integer is meant ("1.9"), no value
// outside its range, no arithmetic overflow. Pure functions: no CLI11, no I/O.
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace hb::parse {

// A closed or half-open interval of real numbers; the text says it as users read it.
struct RealRange {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_open = false;  // true: min itself is outside (e.g. "> 0")
  bool max_open = false;

  static RealRange at_least(double lo) {
    return {lo, std::numeric_limits<double>::infinity(), false, false};
  }
  static RealRange above(double lo) {
    return {lo, std::numeric_limits<double>::infinity(), true, false};
  }
  static RealRange between(double lo, double hi) { return {lo, hi, false, false}; }
  bool contains(double v) const;
  std::string text() const;  // "> 0", ">= 0 and <= 1", "any finite number"
};

// Integer in [min, max]: digits with an optional '-', nothing else ("1.9", "2x", "1e3" refused).
int64_t integer(std::string_view text, std::string_view what, int64_t min, int64_t max);
// Unsigned 64-bit integer (seeds): every value of uint64_t, no sign.
uint64_t unsigned_integer(std::string_view text, std::string_view what);
// Finite real number in `range` ("0.05", "1e-3", "-2"); "nan", "inf", "0x1p3", "5%" refused.
double real(std::string_view text, std::string_view what, const RealRange& range);
// A count with an optional binary suffix k/K (1024) or m/M (1024^2): "4096", "4k", "128K".
// Integer digits only; the product must fit in [min, max].
int64_t count(std::string_view text, std::string_view what, int64_t min, int64_t max);
// Bytes: a positive finite number with an optional binary unit, B, k/K/KiB, m/M/MiB, g/G/GiB,
// t/T/TiB ("512M", "1.5G", "4096"). Without a unit the number must be whole bytes. The result
// is floored to whole bytes and must lie in [min_bytes, max_bytes] ("1e30G" refused: too large).
int64_t bytes(std::string_view text, std::string_view what, int64_t min_bytes,
              int64_t max_bytes = std::numeric_limits<int64_t>::max());
// Seconds: a finite number with an optional unit ms, s, min or h ("30", "500ms", "2min"),
// converted to seconds and checked against `range` (in seconds).
double seconds(std::string_view text, std::string_view what, const RealRange& range);

// Exact text of a double that reads back to the same value ("%.17g").
std::string exact_text(double v);

}  // namespace hb::parse
