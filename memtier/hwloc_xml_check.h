#pragma once
// The numbers of an hwloc XML file that hwloc itself reads without checking: os_index="-1" or a
// 20-digit index wraps to "unknown" or to another node's number, and a cpuset of 100k hex digits
// or "0xZZ" parses to a set hwloc invents. Checked before hwloc sees the text.
#include <string>

namespace hb::memtier {

// Throws hb::Error (exit 2) naming the attribute, its line and its value, with `fix`.
void check_hwloc_xml_numbers(const std::string& xml_text, const std::string& path,
                             const std::string& fix);

}  // namespace hb::memtier
