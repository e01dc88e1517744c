#pragma once
// Kernel settings that can move or reshape pages behind the benchmark's back, recorded with
// every topology, profile and report: THP mode, automatic NUMA balancing, demotion to slower
// tiers, zone reclaim, and the weighted-interleave weights.
#include <map>
#include <string>
#include <vector>

namespace hb::memtier {

struct SystemSettings {
  bool known = false;          // false when no sysfs was read (a topology file alone)
  std::string root;            // root prefix the files were read under
  std::string thp_enabled;     // "always" | "madvise" | "never"; "" unknown
  std::string thp_defrag;      // selected value of transparent_hugepage/defrag
  int numa_balancing = -1;     // 0 off, 1 NUMA balancing, 2 memory tiering, 3 both; -1 unknown
  int demotion_enabled = -1;   // 1 reclaim demotes to slower tiers, 0 not, -1 unknown
  int zone_reclaim_mode = -1;  // -1 unknown
  bool weighted_interleave = false;  // the kernel offers MPOL_WEIGHTED_INTERLEAVE (Linux >= 6.9)
  std::map<int, int> interleave_weights;  // node -> weight, when offered

  // One line per setting that can move pages during a run (empty when none can).
  std::vector<std::string> warnings() const;
  // Why huge pages asked for (`run --kv-pages thp`) will not be granted, with the fix; empty
  // when THP is "madvise" or "always", or unknown.
  std::string huge_pages_refused() const;
  // Flat "key" -> "value" view (thp, thp_defrag, numa_balancing, demotion, ...) for reports.
  std::map<std::string, std::string> as_map() const;
};

// Missing files leave the field unknown; reading settings never fails.
SystemSettings read_system_settings(const std::string& root = "/");

}  // namespace hb::memtier
