#pragma once
// The Linux list format ("0-3,8,10-11") used by sysfs cpulist/nodelist/has_cpu files, and
// by memtier's own output so one notation describes CPUs and nodes everywhere.
#include <string>
#include <string_view>
#include <vector>

namespace hb::memtier {

// Parses "0-3,8" into {0,1,2,3,8} (sorted, unique). Empty/blank text is the empty list.
// Throws hb::Error naming `what` (e.g. the file) when the text is malformed.
std::vector<int> parse_cpulist(std::string_view text, const std::string& what);
std::string format_cpulist(const std::vector<int>& ids);

}  // namespace hb::memtier
