#include "reports/json_checked.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "core/error.h"
#include "reports/report.h"

namespace hb::reports {

static const char* type_name(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      return "null";
    case nlohmann::ordered_json::value_t::object:
      return "an object";
    case nlohmann::ordered_json::value_t::array:
      return "an array";
    case nlohmann::ordered_json::value_t::string:
      return "a string";
    case nlohmann::ordered_json::value_t::boolean:
      return "a boolean";
    case nlohmann::ordered_json::value_t::number_integer:
    case nlohmann::ordered_json::value_t::number_unsigned:
      return "an integer";
    case nlohmann::ordered_json::value_t::number_float:
      return "a number";
    default:
      return "an unsupported value";
  }
}

void JsonReader::fail(const std::string& what) const {
  throw Error(
      source_ + ": " + path_ + ": " + what,
      "the file is not a valid " + schema_string() +
          " report (see reports/README.md for the schema); regenerate it with `hybridbench run`, "
          "or correct the field at " +
          path_);
}

std::string JsonReader::name(const std::string& key, const std::string& meaning) const {
  const JsonReader m = member(key);
  std::string v = m.as_string();
  if (v.empty()) m.fail("empty string: expected " + meaning);
  return v;
}

void JsonReader::expect(bool ok, const char* wanted) const {
  if (!ok) fail(std::string("expected ") + wanted + ", found " + type_name(*j_));
}

JsonReader JsonReader::member(const std::string& key) const {
  expect(j_->is_object(), "an object");
  auto it = j_->find(key);
  if (it == j_->end()) fail("missing field \"" + key + "\"");
  return JsonReader(*it, path_ + "." + key, source_);
}

std::string JsonReader::as_string() const {
  expect(j_->is_string(), "a string");
  return j_->get<std::string>();
}

int64_t JsonReader::as_int() const {
  // Integers written as 3.0 by other tools are accepted; 3.5 is not an integer.
  // Only a value inside int64_t's range may be cast (casting 1e300 is undefined behaviour).
  if (j_->is_number_float()) {
    const double d = j_->get<double>();
    if (d >= -0x1p63 && d < 0x1p63 && d == std::trunc(d)) return static_cast<int64_t>(d);
  }
  expect(j_->is_number_integer(), "an integer");
  return j_->get<int64_t>();
}

int JsonReader::i32(const std::string& key) const {
  auto m = member(key);
  const int64_t v = m.as_int();
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    m.fail("integer out of range");
  return static_cast<int>(v);
}

double JsonReader::as_number() const {
  expect(j_->is_number(), "a number");
  return j_->get<double>();
}

double JsonReader::as_number_or_nan() const {
  if (j_->is_null()) return std::numeric_limits<double>::quiet_NaN();
  return as_number();
}

namespace {

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

double JsonReader::number_in(double lo, double hi, const std::string& meaning) const {
  const double v = as_number();
  if (!(v >= lo && v <= hi))
    fail(number_text(v) + " is outside [" + number_text(lo) + ", " + number_text(hi) +
         "]: " + meaning);
  return v;
}

double JsonReader::number_or_nan_in(double lo, double hi, const std::string& meaning) const {
  if (j_->is_null()) return std::numeric_limits<double>::quiet_NaN();
  return number_in(lo, hi, meaning);
}

int64_t JsonReader::int_in(int64_t lo, int64_t hi, const std::string& meaning) const {
  const int64_t v = as_int();
  if (v < lo || v > hi)
    fail(std::to_string(v) + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) +
         "]: " + meaning);
  return v;
}

bool JsonReader::as_bool() const {
  expect(j_->is_boolean(), "a boolean");
  return j_->get<bool>();
}

void JsonReader::each_element(const std::function<void(const JsonReader&)>& fn) const {
  expect(j_->is_array(), "an array");
  for (size_t i = 0; i < j_->size(); ++i)
    fn(JsonReader((*j_)[i], path_ + "[" + std::to_string(i) + "]", source_));
}

void JsonReader::each_member(
    const std::function<void(const std::string&, const JsonReader&)>& fn) const {
  expect(j_->is_object(), "an object");
  for (auto it = j_->begin(); it != j_->end(); ++it)
    fn(it.key(), JsonReader(it.value(), path_ + "." + it.key(), source_));
}

}  // namespace hb::reports
