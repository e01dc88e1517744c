#pragma once
// The Linux list format ("0-3,8,10-11") used by sysfs cpulist/nodelist/has_cpu files, and
// by memtier's own output so one notation describes CPUs and nodes everywhere. hwloc's list
// parser (hwloc_bitmap_list_sscanf) builds the sets, after a strict check of the text (see
// cpulist.cpp for what hwloc alone would accept silently).
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
// numactl's spellings are refused with what to write instead: "+N" (relative to the cpuset),
// "a-b:s" (strides), and "all" / "!LIST", which need the machine's list (parse_machine_list).
std::vector<int> parse_cpulist(std::string_view text, const std::string& what,
                               int max_id = kMaxListId);

// A list the user gives about this machine's CPUs or nodes (`probe --cpu-nodes 0-1`), in
// numactl's syntax: the list format, "all" (every id of `all`) or "!LIST" (every id of `all`
// but those in LIST, as `numactl --cpunodebind=!0`). Refused like parse_cpulist otherwise,
// naming `what` (the option). Ids are not checked against `all` here: the caller says which
// of them the machine lacks.
std::vector<int> parse_machine_list(std::string_view text, const std::string& what,
                                    const std::vector<int>& all, int max_id = kMaxListId);
std::string format_cpulist(const std::vector<int>& ids);

}  // namespace hb::memtier
