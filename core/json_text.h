#pragma once
// Parsing JSON text that people and tools write: nlohmann keeps the last of two members with the
// same key silently, so a report with "points" twice would drop half its points unseen. Every
// reader of a file a user gives (reports, journals, profiles, configs, trace headers) parses
// through here and refuses such a file as it refuses other malformed JSON.
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace hb {

// Thrown as the library's own parse errors are, so readers report it the same way.
class JsonDuplicateKey : public nlohmann::json::exception {
 public:
  explicit JsonDuplicateKey(const std::string& what) : exception(599, what.c_str()) {}
};

// J::parse(text), refusing any object that names a key twice (the path of keys is named).
template <class J>
J parse_json_text(std::string_view text) {
  std::vector<std::set<std::string>> keys_of_open_objects;
  std::vector<std::string> path;  // the key each open object is under ("" for array elements)
  std::string pending_key;
  const auto check = [&](int, typename J::parse_event_t event, J& parsed) {
    using E = typename J::parse_event_t;
    if (event == E::object_start || event == E::array_start) {
      path.push_back(pending_key);
      pending_key.clear();
      if (event == E::object_start) keys_of_open_objects.emplace_back();
    } else if (event == E::object_end || event == E::array_end) {
      if (event == E::object_end) keys_of_open_objects.pop_back();
      path.pop_back();
    } else if (event == E::key) {
      pending_key = parsed.template get<std::string>();
      if (!keys_of_open_objects.back().insert(pending_key).second) {
        std::string where = "$";
        for (size_t i = 1; i < path.size(); ++i)
          if (!path[i].empty()) where += "." + path[i];
        throw JsonDuplicateKey("duplicate key \"" + pending_key + "\" in the object at " + where +
                               " (one value would be dropped silently)");
      }
    } else if (event == E::value) {
      pending_key.clear();
    }
    return true;
  };
  return J::parse(text.begin(), text.end(), check);
}

}  // namespace hb
