#pragma once
// The memory topology of one machine as memtier sees it: packages, NUMA memory nodes with
// their classification (and the reasons for it), SLIT distances, HMAT figures, memory tiers,
// GPUs and CXL/DAX devices. Plain data, filled by discover() (memtier/discover.h) from hwloc
// and Linux sysfs, or read back from a platform profile (memtier/profile.h). No I/O here.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/memory.h"
#include "core/vocabulary.h"

namespace hb::memtier {

// memtier's own, finer vocabulary; to_memory_kind() maps it onto core's MemoryKind.
enum class TierKind : uint8_t {
  hbm,          // CPU-visible high-bandwidth memory (MCDRAM, HBM nodes)
  local_dram,   // DRAM of the reference CPU node
  remote_dram,  // DRAM of another CPU node (other socket, other SNC cluster)
  cxl,          // memory behind a CXL region / DAX device
  far,          // CPU-less memory with signs of being slow, origin unknown (NVM, ...)
  gpu_memory,   // a GPU's memory exposed as a NUMA node (coherent HBM, e.g. Grace Hopper)
};
std::string_view tier_kind_name(TierKind k);   // "hbm", "local-dram", ..., "gpu-memory"
TierKind parse_tier_kind(std::string_view s);  // throws hb::Error
// gpu-memory belongs to the accelerator, so it maps to MemoryKind::accelerator.
MemoryKind to_memory_kind(TierKind k);

// One HMAT-style figure: how fast `initiator` reaches the node. 0 = not reported.
struct AccessPerf {
  int initiator_node = -1;     // NUMA node whose CPUs are the initiator; -1 none matches
  std::string initiator_cpus;  // the initiator's CPUs, list format "0-3,8"
  double bandwidth_mibps = 0;  // hwloc "Bandwidth" (or mean of read/write from sysfs)
  double read_bandwidth_mibps = 0;
  double latency_ns = 0;  // hwloc "Latency" (or mean of read/write from sysfs)
  double read_latency_ns = 0;
  std::string source;  // "hwloc-memattr", "sysfs-access0", "sysfs-access1"
  double best_bandwidth() const {
    return read_bandwidth_mibps > 0 ? read_bandwidth_mibps : bandwidth_mibps;
  }
  double best_latency() const { return read_latency_ns > 0 ? read_latency_ns : latency_ns; }
};

struct MemoryNode {
  int os_index = -1;
  std::string subtype;             // hwloc subtype (DRAM, MCDRAM, HBM, NVM, SPM, GPUMemory, ...)
  int64_t total_bytes = -1;        // -1 unknown
  int64_t free_bytes = -1;         // -1 unknown (only known on the live machine or from sysfs)
  std::vector<int> cpus;           // CPUs that belong to this node; empty = CPU-less
  std::vector<int> locality_cpus;  // CPUs close to it (hwloc cpuset: for CPU-less nodes, the
                                   // CPUs of the group/package they are attached to)
  std::string has_cpu_source;      // "sysfs has_cpu" or the hwloc heuristic that decided
  int package = -1;                // package whose locality holds it, -1 unknown / machine-wide
  int memory_tier = -1;            // Linux memory_tierN (lower = faster), -1 unknown
  std::vector<int> distances;      // SLIT row, aligned with Topology::nodes; empty unknown
  std::vector<AccessPerf> perf;    // HMAT figures per initiator
  std::string cxl_link;            // "region0 via dax0.0" when backed by CXL; empty none

  // Classification (memtier/classify.h).
  TierKind kind = TierKind::local_dram;
  bool emulated = false;  // kind stood in for by this node (--emulate-cxl node=N)
  std::vector<std::string> reasons;

  bool has_cpu() const { return !cpus.empty(); }
  MemoryLocation location() const { return {to_memory_kind(kind), os_index, emulated}; }
};

struct Package {
  int os_index = -1;
  int cores = 0;
  std::vector<int> cpus;
};

// A GPU found as a PCI device (class 0300/0302, NVIDIA). The cuda_* fields are filled by
// attach_cuda_devices() when the binary has CUDA and a device exists; until then they keep
// their defaults and `cuda_index` is -1.
struct GpuDevice {
  std::string pci_bus_id;  // "0000:06:00.0" (lower case, domain included)
  int vendor_id = 0, device_id = 0, pci_class = 0;
  std::string name;              // hwloc's PCI name when known
  int numa_node = -1;            // nearest node with CPUs (host memory local to the GPU)
  std::vector<int> local_nodes;  // every node in the GPU's locality
  int package = -1;
  double pci_link_gbps = 0;  // hwloc's PCI link speed estimate, GB/s; 0 unknown
  int cuda_index = -1;
  std::string cuda_name;
  int sm_count = 0;
  int64_t memory_bytes = 0;
  int pcie_gen = 0, pcie_width = 0;
};

// What the CUDA side knows about a device, matched to a GpuDevice by PCI bus id.
struct CudaDeviceInfo {
  int index = -1;
  std::string name, pci_bus_id;
  int sm_count = 0;
  int64_t memory_bytes = 0;
  int pcie_gen = 0, pcie_width = 0;
};

struct CxlMemdev {
  std::string name;        // "mem0"
  std::string pci_bus_id;  // host PCI function, when known
  int64_t ram_bytes = 0, pmem_bytes = 0;
  std::string source;  // "hwloc", "sysfs", "hwloc+sysfs"
};

struct CxlRegion {
  std::string name;                  // "region0"
  std::string mode;                  // "ram", "pmem", "" unknown
  uint64_t start = 0, size = 0;      // host physical address range
  std::vector<std::string> targets;  // endpoint decoders
  int numa_node = -1;                // node its memory was onlined into, -1 none
};

// How a DAX device's memory is exposed (its sysfs driver): onlined as NUMA memory by kmem, or a
// character device (device_dax). Text only in the topology JSON and `topo`'s listing.
enum class DaxMode { unknown, system_ram, devdax };
inline constexpr Vocabulary<DaxMode, 3> kDaxModes{{"", "system-ram", "devdax"}};

struct DaxDevice {
  std::string name;      // "dax0.0"
  std::string dax_type;  // hwloc DAXType: "SPM", "NVM", ... ("" unknown)
  DaxMode mode = DaxMode::unknown;
  int target_node = -1;
  uint64_t start = 0, size = 0;
  std::string cxl_region;  // CXL region it lies in, empty none
};

struct MemoryTierInfo {
  int id = -1;  // N of memory_tierN
  std::vector<int> nodes;
};

// --emulate-cxl bandwidth=GBps,latency=ns: a declared tier for single-node machines. Its
// memory is physically on `backing_node`; the figures are declarations, not measurements.
struct SimulatedTier {
  double bandwidth_gbps = 0;
  double latency_ns = 0;
  int backing_node = -1;
};

// Where a topology was read from: this machine (hwloc + sysfs), an hwloc XML file, a sysfs tree,
// both, or a platform profile. Only `live` describes the machine the program runs on. Text only
// in the topology JSON, `topo`'s listing and the report's platform facts.
enum class TopologySource { live, hwloc_xml, sysfs, hwloc_xml_sysfs, profile };
inline constexpr Vocabulary<TopologySource, 5> kTopologySources{
    {"live", "hwloc-xml", "sysfs", "hwloc-xml+sysfs", "profile"}};

struct Topology {
  TopologySource source = TopologySource::live;
  std::string hwloc_xml;   // --topology file, empty for live
  std::string sysfs_root;  // root prefix sysfs was read from, empty when not read
  int pus = 0, cores = 0;
  std::vector<Package> packages;
  std::vector<MemoryNode> nodes;      // ascending os_index
  std::string distances_source;       // "hwloc NUMALatency", "sysfs", "" none
  std::vector<std::string> memattrs;  // hwloc memory attributes that had values
  std::vector<MemoryTierInfo> memory_tiers;
  std::vector<GpuDevice> gpus;
  std::vector<CxlMemdev> cxl_memdevs;
  std::vector<CxlRegion> cxl_regions;
  std::vector<DaxDevice> dax_devices;
  std::vector<int> offline_nodes;  // possible but not online (sysfs): e.g. a CXL window whose
                                   // memory is not onlined yet; empty when unknown
  int cpu_node = -1;               // reference CPU node for local/remote (classify.h)
  std::optional<SimulatedTier> simulated_cxl;
  std::vector<std::string> notes;  // what could not be read or decided, and why

  const MemoryNode* node(int os_index) const;
  MemoryNode* node(int os_index);
  int distance(int from, int to) const;  // -1 unknown
  std::vector<int> cpu_nodes() const;    // nodes with CPUs, ascending
};

// Copies CUDA facts onto the GpuDevice with the same PCI bus id; a CUDA device that hwloc did
// not see is appended (numa_node -1) so it is never lost. Hook for the CUDA backend.
void attach_cuda_devices(Topology& topo, const std::vector<CudaDeviceInfo>& cuda);

}  // namespace hb::memtier
