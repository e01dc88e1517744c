#include "memtier/cpulist.h"

#include <cctype>
#include <charconv>

#include "core/error.h"

namespace hb::memtier {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Built with += because GCC 12 warns falsely (-Wrestrict, bug 105651) on chained operator+.
std::string bad_list(std::string_view problem, std::string_view whole, const std::string& what) {
  std::string m(problem);
  m += " '";
  m += whole;
  m += "' in ";
  m += what;
  return m;
}

int parse_id(std::string_view s, std::string_view whole, const std::string& what, int max_id) {
  s = trim(s);
  int v = -1;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || (ec != std::errc() && ec != std::errc::result_out_of_range) ||
      p != s.data() + s.size() || v < 0)
    throw Error(bad_list("cannot parse list", whole, what),
                "expected the Linux list format, e.g. 0-3,8");
  if (ec == std::errc::result_out_of_range || v > max_id) {
    std::string problem = "id ";
    problem += s;
    problem += " is larger than ";
    problem += std::to_string(max_id);
    problem += " in list";
    throw Error(bad_list(problem, whole, what),
                "list CPUs or nodes this machine has (see `hybridbench topo`), e.g. 0-3,8");
  }
  return v;
}

}  // namespace

std::vector<int> parse_cpulist(std::string_view text, const std::string& what, int max_id) {
  // One flag per possible id: repeated or overlapping ranges cost nothing extra.
  std::vector<bool> seen;
  const std::string_view whole = trim(text);
  std::string_view rest = whole;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    const size_t dash = item.find('-');
    const int lo = parse_id(item.substr(0, dash), whole, what, max_id);
    const int hi =
        dash == std::string_view::npos ? lo : parse_id(item.substr(dash + 1), whole, what, max_id);
    if (hi < lo)
      throw Error(bad_list("descending range in list", whole, what),
                  "write ranges low-high, e.g. 0-3");
    if (seen.size() <= static_cast<size_t>(hi)) seen.resize(static_cast<size_t>(hi) + 1);
    for (int i = lo; i <= hi; ++i) seen[static_cast<size_t>(i)] = true;
  }
  std::vector<int> out;
  for (size_t i = 0; i < seen.size(); ++i)
    if (seen[i]) out.push_back(static_cast<int>(i));
  return out;
}

std::string format_cpulist(const std::vector<int>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!s.empty()) s += ",";
    s += std::to_string(ids[i]);
    if (j > i) {
      s += '-';
      s += std::to_string(ids[j]);
    }
    i = j + 1;
  }
  return s;
}

}  // namespace hb::memtier
