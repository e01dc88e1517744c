#pragma once
// Where a JSON text stops being JSON, as the JSON path of the value being read there
// ("$.points[3].step.summary.median_ns"), so a reader can name the field of a NaN, a number
// beyond double or a cut-off file instead of a byte offset alone. Internal to reports/.
#include <cstddef>
#include <string>

namespace hb::reports {

struct JsonParseFailure {
  std::string path;       // "$" when the text fails before its first value
  size_t byte = 0;        // where the parser stopped (1-based, as nlohmann counts)
  std::string token;      // the text of the last token read (e.g. "NaN", "1e999")
  bool overflow = false;  // a number beyond double's range
};

// Parses `text` again with a path-tracking SAX handler; call it only for a text that failed to
// parse (the result of a valid text is an empty path).
JsonParseFailure locate_parse_failure(const std::string& text);

// True when `token` is how other tools write a non-finite number (NaN, Infinity, -inf, ...),
// which JSON cannot hold.
bool is_non_finite_token(const std::string& token);

}  // namespace hb::reports
