#include "memtier/cpulist.h"

#include <hwloc.h>

#include <cctype>
#include <charconv>
#include <memory>

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

constexpr const char* kFormatFix = "expected the Linux list format, e.g. 0-3,8";

using Bitmap = std::unique_ptr<hwloc_bitmap_s, decltype(&hwloc_bitmap_free)>;
Bitmap new_bitmap() { return Bitmap(hwloc_bitmap_alloc(), &hwloc_bitmap_free); }

// numactl spellings this parser does not take, each with what to write instead.
void refuse_numactl_forms(std::string_view whole, const std::string& what, bool all_allowed) {
  if (whole.find('+') != std::string_view::npos)
    throw Error(
        bad_list("relative list (numactl's +N, relative to the current cpuset)", whole, what),
        "list absolute numbers as `hybridbench topo` shows them, e.g. 0-3,8");
  if (whole.find(':') != std::string_view::npos)
    throw Error(bad_list("strided range in list", whole, what),
                "list the ids, e.g. 0,2,4,6 for every second of 0-7");
  if (!all_allowed && (whole == "all" || whole.find('!') != std::string_view::npos))
    throw Error(
        bad_list("numactl's 'all' and '!' need the machine's list, not available for", whole, what),
        kFormatFix);
}

int parse_id(std::string_view s, std::string_view whole, const std::string& what, int max_id) {
  s = trim(s);
  int v = -1;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || (ec != std::errc() && ec != std::errc::result_out_of_range) ||
      p != s.data() + s.size() || v < 0)
    throw Error(bad_list("cannot parse list", whole, what), kFormatFix);
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

// hwloc's list parser (hwloc_bitmap_list_sscanf) builds the set, but it accepts more than the
// Linux list format and drops meaning silently: "0x3" reads as 3, "08" as nothing, "3-1" and
// "0-7:2" lose ids, "5-" is an infinite set, and a huge id allocates a bitmap up to it. So the
// text is checked first, item by item: decimal ids, ascending ranges, ids <= max_id (before
// anything is expanded); hwloc then reads the same text with the blanks removed.
Bitmap parse_list_bitmap(std::string_view whole, const std::string& what, int max_id) {
  std::string plain;
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
    if (!plain.empty()) plain += ',';
    plain += std::to_string(lo);
    if (hi > lo) plain += '-' + std::to_string(hi);
  }
  Bitmap set = new_bitmap();
  if (!set) throw Error("out of memory parsing list in " + what, "free some memory", kExitFailure);
  if (hwloc_bitmap_list_sscanf(set.get(), plain.c_str()) != 0)
    throw Error(bad_list("cannot parse list", whole, what), kFormatFix);
  return set;
}

Bitmap bitmap_of(const std::vector<int>& ids) {
  Bitmap set = new_bitmap();
  for (int id : ids)
    if (id >= 0) hwloc_bitmap_set(set.get(), static_cast<unsigned>(id));
  return set;
}

std::vector<int> ids_of(hwloc_const_bitmap_t set) {
  std::vector<int> out;
  for (int i = hwloc_bitmap_first(set); i != -1; i = hwloc_bitmap_next(set, i)) out.push_back(i);
  return out;
}

}  // namespace

std::vector<int> parse_cpulist(std::string_view text, const std::string& what, int max_id) {
  const std::string_view whole = trim(text);
  refuse_numactl_forms(whole, what, false);
  return ids_of(parse_list_bitmap(whole, what, max_id).get());
}

std::vector<int> parse_machine_list(std::string_view text, const std::string& what,
                                    const std::vector<int>& all, int max_id) {
  const std::string_view whole = trim(text);
  refuse_numactl_forms(whole, what, true);
  if (whole == "all") return ids_of(bitmap_of(all).get());
  if (!whole.empty() && whole.front() == '!') {
    const std::string_view list = trim(whole.substr(1));
    if (list.empty() || list.find('!') != std::string_view::npos || list == "all")
      throw Error(bad_list("cannot parse list", whole, what),
                  "write one '!' before a list, e.g. !0 or !2-3");
    Bitmap rest = bitmap_of(all);
    hwloc_bitmap_andnot(rest.get(), rest.get(), parse_list_bitmap(list, what, max_id).get());
    // Empty would read as "not given" (the default: all of them), the opposite of what was asked.
    if (hwloc_bitmap_iszero(rest.get()))
      throw Error(bad_list("nothing is left by list", whole, what) + " (this machine has " +
                      format_cpulist(all) + ")",
                  "list what to use, e.g. " + format_cpulist(all));
    return ids_of(rest.get());
  }
  if (whole.find('!') != std::string_view::npos || whole.find("all") != std::string_view::npos)
    throw Error(bad_list("cannot parse list", whole, what),
                "'all' and '!' stand alone or before a list, e.g. all, !0, 0-3,8");
  return ids_of(parse_list_bitmap(whole, what, max_id).get());
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
