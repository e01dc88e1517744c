#include "reports/json_error_path.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include <nlohmann/json.hpp>

namespace hb::reports {

namespace {

using json = nlohmann::json;

// Keeps the path to the value being read: one frame per open object or array.
class PathTracker : public nlohmann::json_sax<json> {
 public:
  JsonParseFailure failure;

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return open(false); }
  bool start_array(std::size_t) override { return open(true); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    frames_.back().key = k;
    return true;
  }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& ex) override {
    failure.path = path();
    failure.byte = position;
    failure.token = last_token;
    failure.overflow = ex.id == 406;
    return false;
  }

 private:
  struct Frame {
    bool array = false;
    size_t elements = 0;  // arrays: elements started so far
    std::string key;      // objects: the last key read
  };

  bool value() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().elements;
    return true;
  }
  bool open(bool array) {
    value();
    frames_.push_back({array, 0, {}});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return true;
  }
  // An array's innermost frame fails in its next element; an outer one inside its last.
  std::string path() const {
    std::string p = "$";
    for (size_t i = 0; i < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      if (!f.array) {
        if (!f.key.empty()) p += "." + f.key;
        continue;
      }
      const bool innermost = i + 1 == frames_.size();
      const size_t index = innermost ? f.elements : std::max<size_t>(f.elements, 1) - 1;
      p += "[" + std::to_string(index) + "]";
    }
    return p;
  }
  std::vector<Frame> frames_;
};

}  // namespace

JsonParseFailure locate_parse_failure(const std::string& text) {
  PathTracker tracker;
  json::sax_parse(text, &tracker, json::input_format_t::json, /*strict=*/true);
  // The parser's token stops where it gave up ("N" of "NaN") and may hold what came before it:
  // the whole word of the text around that place is clearer.
  JsonParseFailure f = tracker.failure;
  auto in_word = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.';
  };
  size_t start = std::min(f.byte, text.size());
  while (start > 0 && in_word(text[start - 1])) --start;
  std::string word;
  for (size_t i = start; i < text.size() && word.size() < 24 && in_word(text[i]); ++i)
    word += text[i];
  if (!word.empty()) f.token = word;
  return f;
}

bool is_non_finite_token(const std::string& token) {
  std::string t;
  for (const char c : token)
    if (std::isalpha(static_cast<unsigned char>(c)))
      t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return t == "nan" || t == "inf" || t == "infinity";
}

}  // namespace hb::reports
