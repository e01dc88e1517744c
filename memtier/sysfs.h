#pragma once
// What Linux sysfs says about memory, read under a root prefix (the live "/" or a fixture
// tree): which nodes have CPUs and memory, SLIT distances, per-node sizes, HMAT access
// classes, memory tiers, and the CXL and DAX buses. This is the half of discovery hwloc 2.9
// cannot do: it is how a CPU-less node is tied to a CXL region.
#include <cstdint>
#include <string>
#include <vector>

#include "memtier/topology.h"

namespace hb::memtier {

struct SysfsNode {
  int id = -1;
  std::vector<int> cpus;         // nodeN/cpulist
  int64_t total_bytes = -1;      // nodeN/meminfo MemTotal
  int64_t free_bytes = -1;       // MemFree
  int64_t available_bytes = -1;  // MemFree + FilePages - Shmem: what binding can get back
  std::vector<int> distances;    // nodeN/distance, aligned with SysfsSnapshot::online
  std::vector<AccessPerf> perf;  // nodeN/access1 (CPU initiators), else access0
};

struct SysfsSnapshot {
  std::string root;
  std::vector<int> online, possible, has_cpu, has_memory;
  std::vector<SysfsNode> nodes;  // one per online node, ascending id
  bool tiers_present = false;
  std::vector<MemoryTierInfo> tiers;  // ascending id
  bool cxl_bus_present = false;
  std::vector<CxlMemdev> memdevs;
  std::vector<CxlRegion> regions;
  bool dax_bus_present = false;
  std::vector<DaxDevice> dax;      // cxl_region filled when the device lies in a CXL region
  std::vector<std::string> notes;  // optional files that were absent

  const SysfsNode* node(int id) const;
};

// Throws hb::Error naming the file when a required file (node/online, nodeN/cpulist) is
// missing or malformed; optional parts (tiers, HMAT, CXL, DAX, meminfo) become notes.
SysfsSnapshot read_sysfs(const std::string& root);

// MemFree + FilePages - Shmem of one node (what a bind there can get); -1 when unreadable.
int64_t read_node_available_bytes(const std::string& root, int node);

// Whether `root` has NUMA information at all (kernels built without NUMA have none).
bool sysfs_has_numa(const std::string& root);

}  // namespace hb::memtier
