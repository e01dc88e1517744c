#pragma once
// Validated reading of a platform profile's JSON (model/platform_model.cpp,
// model/economics_json.cpp): every error names the origin and the JSON path, and unknown keys are
// refused (a typo in a preset must not silently fall back to a default). Internal to model/.
#include <cmath>
#include <functional>
#include <initializer_list>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace hb::model {

using Json = nlohmann::ordered_json;

class ProfileReader {
 public:
  ProfileReader(const Json& j, std::string path, const std::string& origin)
      : j_(&j), path_(std::move(path)), origin_(&origin) {}
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(*origin_ + ": " + path_ + ": " + what, "see the profile schema in model/README.md");
  }
  bool has(const std::string& k) const { return j_->is_object() && j_->contains(k); }
  ProfileReader at(const std::string& k) const {
    if (!j_->is_object()) fail("expected an object");
    if (!j_->contains(k)) fail("missing member \"" + k + "\"");
    return ProfileReader((*j_)[k], path_ + "." + k, *origin_);
  }
  std::string str() const {
    if (!j_->is_string()) fail("expected a string");
    return j_->get<std::string>();
  }
  bool boolean() const {
    if (!j_->is_boolean()) fail("expected true or false");
    return j_->get<bool>();
  }
  double number() const {
    if (!j_->is_number()) fail("expected a number");
    const double v = j_->get<double>();
    if (!std::isfinite(v)) fail("expected a finite number");
    return v;
  }
  ProfileReader index(size_t i) const {
    if (!j_->is_array() || i >= j_->size())
      fail("expected an array with an element " + std::to_string(i));
    return ProfileReader((*j_)[i], path_ + "[" + std::to_string(i) + "]", *origin_);
  }
  void each(const std::function<void(const ProfileReader&)>& fn) const {
    if (!j_->is_array()) fail("expected an array");
    for (size_t i = 0; i < j_->size(); ++i)
      fn(ProfileReader((*j_)[i], path_ + "[" + std::to_string(i) + "]", *origin_));
  }
  void only(std::initializer_list<const char*> keys) const {
    if (!j_->is_object()) fail("expected an object");
    for (auto it = j_->begin(); it != j_->end(); ++it) {
      bool ok = false;
      for (const char* k : keys) ok = ok || it.key() == k;
      if (!ok) {
        std::string list;
        for (const char* k : keys) list += (list.empty() ? "" : ", ") + std::string(k);
        fail("unknown member \"" + it.key() + "\" (known: " + list + ")");
      }
    }
  }
  const std::string& path() const { return path_; }
  const Json& json() const { return *j_; }

 private:
  const Json* j_;
  std::string path_;
  const std::string* origin_;
};

}  // namespace hb::model
