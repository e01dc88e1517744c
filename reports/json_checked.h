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

  // Shorthands for a member's value.
  std::string str(const std::string& key) const { return member(key).as_string(); }
  int64_t i64(const std::string& key) const { return member(key).as_int(); }
  int i32(const std::string& key) const;
  double num(const std::string& key) const { return member(key).as_number(); }
  bool boolean(const std::string& key) const { return member(key).as_bool(); }

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
