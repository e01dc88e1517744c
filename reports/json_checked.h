#pragma once
// Validated reading of a parsed JSON document: each accessor checks presence and type and, when
// either is wrong, throws hb::Error naming the file, the JSON path ("$.points[3].step.samples_ns")
// and the fix. Internal to reports/ (the only place that sees nlohmann types).
#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace hb::reports {

class JsonReader {
 public:
  JsonReader(const nlohmann::ordered_json& j, std::string path, std::string source)
      : j_(&j), path_(std::move(path)), source_(std::move(source)) {}

  const nlohmann::ordered_json& json() const { return *j_; }
  const std::string& path() const { return path_; }

  // Member `key` of this object; fails when this is not an object or the key is absent.
  JsonReader member(const std::string& key) const;
  bool has(const std::string& key) const { return j_->is_object() && j_->contains(key); }

  // Type-checked values of this node.
  std::string as_string() const;
  int64_t as_int() const;
  double as_number() const;         // integer or floating point
  double as_number_or_nan() const;  // also accepts null (how non-finite values are written)
  bool as_bool() const;
  // Range-checked values: outside [lo, hi] fails with the value, the range and `meaning` (why
  // the range: "a share of the attention mass"). The _or_nan form also accepts null (NaN).
  double number_in(double lo, double hi, const std::string& meaning) const;
  double number_or_nan_in(double lo, double hi, const std::string& meaning) const;
  int64_t int_in(int64_t lo, int64_t hi, const std::string& meaning) const;

  // Shorthands for a member's value.
  std::string str(const std::string& key) const { return member(key).as_string(); }
  // A name that labels rows and groups (a strategy, a model): "" fails with `meaning`.
  std::string name(const std::string& key, const std::string& meaning) const;
  int64_t i64(const std::string& key) const { return member(key).as_int(); }
  int i32(const std::string& key) const;
  double num(const std::string& key) const { return member(key).as_number(); }
  bool boolean(const std::string& key) const { return member(key).as_bool(); }
  double num_in(const std::string& key, double lo, double hi, const std::string& meaning) const {
    return member(key).number_in(lo, hi, meaning);
  }
  int64_t i64_in(const std::string& key, int64_t lo, int64_t hi, const std::string& meaning) const {
    return member(key).int_in(lo, hi, meaning);
  }

  // Visits an array's elements or an object's members (fails on other types).
  void each_element(const std::function<void(const JsonReader&)>& fn) const;
  void each_member(const std::function<void(const std::string&, const JsonReader&)>& fn) const;

  [[noreturn]] void fail(const std::string& what) const;

 private:
  void expect(bool ok, const char* wanted) const;
  const nlohmann::ordered_json* j_;
  std::string path_, source_;
};

}  // namespace hb::reports
