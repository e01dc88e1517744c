#include "memtier/json_reader.h"

#include <limits>

#include "core/error.h"

namespace hb::memtier {

void JsonIn::fail(const std::string& what) const {
  throw Error(
      *file_ + ": " + path_ + ": " + what,
      "the file is not a valid hybridbench.platform/1 profile (schema in memtier/README.md); "
      "write a fresh one with `hybridbench probe --out FILE`");
}

JsonIn JsonIn::operator[](const std::string& key) const {
  if (!j_->is_object()) fail("expected an object");
  auto it = j_->find(key);
  if (it == j_->end()) fail("missing field \"" + key + "\"");
  return JsonIn(*it, path_ + "." + key, file_);
}

std::string JsonIn::str() const {
  if (!j_->is_string()) fail("expected a string");
  return j_->get<std::string>();
}

int64_t JsonIn::i64() const {
  if (!j_->is_number_integer()) fail("expected an integer");
  return j_->get<int64_t>();
}

int JsonIn::i32() const {
  const int64_t v = i64();
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    fail("integer out of range");
  return static_cast<int>(v);
}

double JsonIn::num() const {
  if (!j_->is_number()) fail("expected a number");
  return j_->get<double>();
}

bool JsonIn::boolean() const {
  if (!j_->is_boolean()) fail("expected true or false");
  return j_->get<bool>();
}

void JsonIn::each(const std::function<void(const JsonIn&)>& fn) const {
  if (!j_->is_array()) fail("expected an array");
  for (size_t i = 0; i < j_->size(); ++i)
    fn(JsonIn((*j_)[i], path_ + "[" + std::to_string(i) + "]", file_));
}

void JsonIn::each_member(const std::function<void(const std::string&, const JsonIn&)>& fn) const {
  if (!j_->is_object()) fail("expected an object");
  for (auto it = j_->begin(); it != j_->end(); ++it)
    fn(it.key(), JsonIn(it.value(), path_ + "." + it.key(), file_));
}

}  // namespace hb::memtier
