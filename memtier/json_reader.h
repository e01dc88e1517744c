#pragma once
// Validated reading of a platform profile: each accessor checks presence and type and, when
// either is wrong, throws hb::Error naming the file and the JSON path ("$.probe.pairs[0]...").
// Internal to memtier (profile.cpp); nlohmann types never appear in memtier's public headers.
// (reports/ has the same idea for reports; a shared one would belong in core/ once core takes
// a JSON dependency.)
#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace hb::memtier {

using Json = nlohmann::ordered_json;

class JsonIn {
 public:
  JsonIn(const Json& j, std::string path, const std::string* file)
      : j_(&j), path_(std::move(path)), file_(file) {}

  JsonIn operator[](const std::string& key) const;  // required member
  bool has(const std::string& key) const { return j_->is_object() && j_->contains(key); }
  std::string str() const;
  int64_t i64() const;
  int i32() const;
  double num() const;
  bool boolean() const;
  bool is_null() const { return j_->is_null(); }
  void each(const std::function<void(const JsonIn&)>& fn) const;  // array elements
  void each_member(const std::function<void(const std::string&, const JsonIn&)>& fn) const;
  [[noreturn]] void fail(const std::string& what) const;

 private:
  const Json* j_;
  std::string path_;
  const std::string* file_;
};

}  // namespace hb::memtier
