#pragma once
// The Linux list format ("0-3,8,10-11") used by sysfs cpulist/nodelist/has_cpu files, and
// by memtier's own output so one notation describes CPUs and nodes everywhere.
#include <string>
#include <string_view>
#include <vector>

namespace hb::memtier {

// Largest CPU or node number a list may hold. Linux allows at most 8192 CPUs (NR_CPUS) and 1024
// nodes (NODES_SHIFT 10); a bound well above both stops "0-2147483647" from expanding into
// gigabytes before anything can check it against the machine.
inline constexpr int kMaxListId = (1 << 16) - 1;

// Parses "0-3,8" into {0,1,2,3,8} (sorted, unique). Empty/blank text is the empty list.
// Throws hb::Error naming `what` (e.g. the file or option) when the text is malformed or holds
// an id above `max_id`. Memory is bounded by max_id, whatever the text.
std::vector<int> parse_cpulist(std::string_view text, const std::string& what,
                               int max_id = kMaxListId);
std::string format_cpulist(const std::vector<int>& ids);

}  // namespace hb::memtier
