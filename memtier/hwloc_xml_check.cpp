#include "memtier/hwloc_xml_check.h"

#include <algorithm>
#include <cstdint>

#include "core/error.h"

namespace hb::memtier {

namespace {

// An OS index is a CPU or NUMA node number: what Linux numbers them with fits 31 bits.
bool valid_index(const std::string& v) {
  if (v.empty() || v.size() > 10 || v.find_first_not_of("0123456789") != std::string::npos)
    return false;
  return std::stoll(v) <= INT32_MAX;
}

// hwloc's bitmap text: comma-separated words "0x" + 1..8 hex digits, most significant first
// ("0x00000003", "0xf...f,0x00000001" for an infinite set). 8192 words hold 262144 CPUs.
bool valid_bitmap(const std::string& v) {
  constexpr size_t kMaxWords = 8192;
  size_t words = 0, at = 0;
  while (true) {
    if (v.compare(at, 2, "0x") != 0) return false;
    at += 2;
    const size_t end = std::min(v.find(',', at), v.size());
    if (end == at || end - at > 8) return false;
    if (v.find_first_not_of("0123456789abcdefABCDEF", at) < end) return false;
    if (++words > kMaxWords) return false;
    if (end == v.size()) return true;
    at = end + 1;
  }
}

bool valid_bitmap_or_infinite(const std::string& v) {
  if (v.rfind("0xf...f", 0) == 0)
    return v.size() == 7 || (v[7] == ',' && valid_bitmap(v.substr(8)));
  return valid_bitmap(v);
}

}  // namespace

void check_hwloc_xml_numbers(const std::string& xml_text, const std::string& path,
                             const std::string& fix) {
  struct Attribute {
    const char* name;
    bool (*valid)(const std::string&);
    const char* expected;
  };
  static const Attribute kChecked[] = {
      {" os_index=\"", valid_index, "a CPU or NUMA node number from 0 to 2147483647"},
      {" cpuset=\"", valid_bitmap_or_infinite, "an hwloc bitmap (0x00000003,0x0)"},
      {" complete_cpuset=\"", valid_bitmap_or_infinite, "an hwloc bitmap (0x00000003,0x0)"},
      {" allowed_cpuset=\"", valid_bitmap_or_infinite, "an hwloc bitmap (0x00000003,0x0)"},
      {" nodeset=\"", valid_bitmap_or_infinite, "an hwloc bitmap (0x00000003,0x0)"},
      {" complete_nodeset=\"", valid_bitmap_or_infinite, "an hwloc bitmap (0x00000003,0x0)"},
      {" allowed_nodeset=\"", valid_bitmap_or_infinite, "an hwloc bitmap (0x00000003,0x0)"},
  };
  for (const Attribute& a : kChecked) {
    const std::string name(a.name);
    for (size_t at = xml_text.find(name); at != std::string::npos;
         at = xml_text.find(name, at + 1)) {
      const size_t begin = at + name.size();
      const size_t end = xml_text.find('"', begin);
      const std::string value = xml_text.substr(begin, end == std::string::npos ? 40 : end - begin);
      if (end != std::string::npos && a.valid(value)) continue;
      const size_t line = 1 + std::count(xml_text.begin(), xml_text.begin() + at, '\n');
      const std::string shown = value.size() > 40 ? value.substr(0, 40) + "..." : value;
      throw Error("hwloc topology file " + path + ", line " + std::to_string(line) + ": " +
                      name.substr(1, name.size() - 3) + "=\"" + shown + "\" is not " + a.expected,
                  fix);
    }
  }
}

}  // namespace hb::memtier
