#include "memtier/topology.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"

namespace hb::memtier {

namespace {
constexpr TierKind kAllKinds[] = {TierKind::hbm, TierKind::local_dram, TierKind::remote_dram,
                                  TierKind::cxl, TierKind::far,        TierKind::gpu_memory};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
}  // namespace

std::string_view tier_kind_name(TierKind k) {
  switch (k) {
    case TierKind::hbm:
      return "hbm";
    case TierKind::local_dram:
      return "local-dram";
    case TierKind::remote_dram:
      return "remote-dram";
    case TierKind::cxl:
      return "cxl";
    case TierKind::far:
      return "far";
    case TierKind::gpu_memory:
      return "gpu-memory";
  }
  return "?";
}

TierKind parse_tier_kind(std::string_view s) {
  for (TierKind k : kAllKinds)
    if (s == tier_kind_name(k)) return k;
  throw Error("unknown tier kind '" + std::string(s) + "'",
              "use one of: hbm, local-dram, remote-dram, cxl, far, gpu-memory");
}

MemoryKind to_memory_kind(TierKind k) {
  switch (k) {
    case TierKind::hbm:
      return MemoryKind::hbm;
    case TierKind::local_dram:
      return MemoryKind::local_dram;
    case TierKind::remote_dram:
      return MemoryKind::remote_dram;
    case TierKind::cxl:
      return MemoryKind::cxl;
    case TierKind::far:
      return MemoryKind::far;
    case TierKind::gpu_memory:
      return MemoryKind::accelerator;
  }
  return MemoryKind::far;
}

const MemoryNode* Topology::node(int os_index) const {
  for (const auto& n : nodes)
    if (n.os_index == os_index) return &n;
  return nullptr;
}

MemoryNode* Topology::node(int os_index) {
  return const_cast<MemoryNode*>(static_cast<const Topology*>(this)->node(os_index));
}

int Topology::distance(int from, int to) const {
  const MemoryNode* a = node(from);
  if (!a || a->distances.size() != nodes.size()) return -1;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].os_index == to) return a->distances[i];
  return -1;
}

std::vector<int> Topology::cpu_nodes() const {
  std::vector<int> out;
  for (const auto& n : nodes)
    if (n.has_cpu()) out.push_back(n.os_index);
  return out;
}

void attach_cuda_devices(Topology& topo, const std::vector<CudaDeviceInfo>& cuda) {
  for (const auto& c : cuda) {
    const std::string bus = lower(c.pci_bus_id);
    auto it = std::find_if(topo.gpus.begin(), topo.gpus.end(), [&](const GpuDevice& g) {
      // CUDA may print the domain with 8 hex digits ("00000000:06:00.0"); compare the tail.
      return !bus.empty() &&
             (g.pci_bus_id == bus || (bus.size() > g.pci_bus_id.size() &&
                                      bus.ends_with(g.pci_bus_id.substr(g.pci_bus_id.find(':')))));
    });
    if (it == topo.gpus.end()) {
      GpuDevice g;
      g.pci_bus_id = bus;
      topo.gpus.push_back(g);
      topo.notes.push_back(
          "CUDA device " + std::to_string(c.index) + " (" + bus +
          ") has no matching PCI device in the topology; its NUMA node is unknown");
      it = topo.gpus.end() - 1;
    }
    it->cuda_index = c.index;
    it->cuda_name = c.name;
    it->sm_count = c.sm_count;
    it->memory_bytes = c.memory_bytes;
    it->pcie_gen = c.pcie_gen;
    it->pcie_width = c.pcie_width;
  }
}

}  // namespace hb::memtier
