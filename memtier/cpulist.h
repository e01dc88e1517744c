#pragma once
// The Linux list format ("0-3,8,10-11") used by sysfs cpulist/nodelist/has_cpu files, and
// by memtier's own output so one notation describes CPUs and nodes everywhere.
#include <string>
#include <string_view>
#include <vector>

namespace hb::memtier {

// Largest id a list may name: above any Linux CPU (NR_CPUS <= 8192) or node number
// (MAX_NUMNODES <= 1024), so a typo like 0-2147483647 is refused before it expands.
inline constexpr int kMaxListId = 65535;

// Parses "0-3,8" into {0,1,2,3,8} (sorted, unique). Empty/blank text is the empty list.
// Throws hb::Error naming `what` (e.g. the file) when the text is malformed or names an id
// above kMaxListId.
std::vector<int> parse_cpulist(std::string_view text, const std::string& what);
std::string format_cpulist(const std::vector<int>& ids);

}  // namespace hb::memtier
