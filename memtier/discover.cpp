#include "memtier/discover.h"

#include <algorithm>
#include <map>

#include "core/error.h"
#include "core/thread_pool.h"
#include "memtier/classify.h"
#include "memtier/cpulist.h"
#include "memtier/emulate.h"
#include "memtier/hwloc_reader.h"
#include "memtier/sysfs.h"

namespace hb::memtier {

namespace {

// A topology from sysfs alone: enough for nodes, CPUs, sizes, distances and tiers.
Topology from_sysfs(const SysfsSnapshot& s) {
  Topology t;
  t.source = TopologySource::sysfs;
  std::vector<int> all_cpus;
  for (const auto& sn : s.nodes) {
    MemoryNode n;
    n.os_index = sn.id;
    n.total_bytes = sn.total_bytes;
    all_cpus.insert(all_cpus.end(), sn.cpus.begin(), sn.cpus.end());
    t.nodes.push_back(std::move(n));
  }
  t.pus = static_cast<int>(all_cpus.size());
  t.notes.push_back("no hwloc input: packages, cores and PCI devices are unknown");
  return t;
}

void merge_nodes(Topology& t, const SysfsSnapshot& s) {
  bool added = false;
  for (const auto& sn : s.nodes) {
    MemoryNode* n = t.node(sn.id);
    if (!n) {
      MemoryNode fresh;
      fresh.os_index = sn.id;
      t.nodes.push_back(std::move(fresh));
      n = &t.nodes.back();
      added = true;
      if (t.source != TopologySource::sysfs)
        t.notes.push_back("node " + std::to_string(sn.id) + " is known to sysfs only");
    }
    n->cpus = sn.cpus;  // sysfs knows which CPUs a node really has; hwloc only localities
    n->has_cpu_source = "sysfs cpulist";
    if (n->locality_cpus.empty()) n->locality_cpus = sn.cpus;
    if (n->total_bytes < 0) n->total_bytes = sn.total_bytes;
    n->free_bytes = sn.available_bytes;
    if (n->perf.empty()) n->perf = sn.perf;
  }
  std::sort(t.nodes.begin(), t.nodes.end(),
            [](auto& a, auto& b) { return a.os_index < b.os_index; });
  for (auto& n : t.nodes)
    for (auto& p : n.perf)
      if (p.initiator_cpus.empty())
        if (const MemoryNode* init = t.node(p.initiator_node))
          p.initiator_cpus = format_cpulist(init->cpus);
  // Distances: keep hwloc's SLIT when it covers every node, else take sysfs's rows.
  const bool hwloc_ok = !t.distances_source.empty() && !added;
  bool sysfs_ok = t.nodes.size() == s.online.size();
  for (const auto& sn : s.nodes) sysfs_ok = sysfs_ok && !sn.distances.empty();
  if (!hwloc_ok && sysfs_ok) {
    for (auto& n : t.nodes) n.distances = s.node(n.os_index)->distances;  // same order: online list
    t.distances_source = "sysfs";
  } else if (!hwloc_ok) {
    for (auto& n : t.nodes) n.distances.clear();
    t.distances_source.clear();
  }
  for (const auto& tier : s.tiers) {
    t.memory_tiers.push_back(tier);
    for (int id : tier.nodes)
      if (MemoryNode* n = t.node(id)) n->memory_tier = tier.id;
  }
}

void merge_devices(Topology& t, const SysfsSnapshot& s) {
  for (const auto& m : s.memdevs) {
    auto it = std::find_if(t.cxl_memdevs.begin(), t.cxl_memdevs.end(),
                           [&](auto& x) { return x.name == m.name; });
    if (it == t.cxl_memdevs.end()) {
      t.cxl_memdevs.push_back(m);
      continue;
    }
    if (it->pci_bus_id.empty()) it->pci_bus_id = m.pci_bus_id;
    it->ram_bytes = std::max(it->ram_bytes, m.ram_bytes);
    it->pmem_bytes = std::max(it->pmem_bytes, m.pmem_bytes);
    it->source = "hwloc+sysfs";
  }
  t.cxl_regions = s.regions;
  for (const auto& d : s.dax) {
    auto it = std::find_if(t.dax_devices.begin(), t.dax_devices.end(),
                           [&](auto& x) { return x.name == d.name; });
    if (it == t.dax_devices.end()) {
      t.dax_devices.push_back(d);
      continue;
    }
    const std::string type = it->dax_type;
    *it = d;
    it->dax_type = type;
  }
  // A DAX device inside a CXL region whose memory was onlined makes its target node CXL.
  const auto& has_memory = s.has_memory;
  for (const auto& d : t.dax_devices) {
    if (d.cxl_region.empty() || d.target_node < 0) continue;
    const bool online = d.mode == DaxMode::system_ram ||
                        (d.mode == DaxMode::unknown &&
                         std::count(has_memory.begin(), has_memory.end(), d.target_node));
    MemoryNode* n = t.node(d.target_node);
    if (!online || !n) continue;
    n->cxl_link = d.cxl_region + " via " + d.name;
    for (auto& r : t.cxl_regions)
      if (r.name == d.cxl_region) r.numa_node = d.target_node;
  }
}

int live_cpu_node(const Topology& t) {
  const std::vector<int> cpus = allowed_cpus();
  for (const auto& n : t.nodes)
    if (std::count(n.cpus.begin(), n.cpus.end(), cpus.front())) return n.os_index;
  return -1;
}

void choose_cpu_node(Topology& t, int requested, bool live) {
  if (requested >= 0) {
    const MemoryNode* n = t.node(requested);
    if (!n || !n->has_cpu())
      throw Error("--cpu-node " + std::to_string(requested) + ": " +
                      (n ? "node has no CPUs" : "no such NUMA node"),
                  "pick one of the nodes with CPUs: " + format_cpulist(t.cpu_nodes()));
    t.cpu_node = requested;
    return;
  }
  t.cpu_node = live ? live_cpu_node(t) : -1;
  if (t.cpu_node < 0 && !t.cpu_nodes().empty()) t.cpu_node = t.cpu_nodes().front();
  if (t.cpu_node < 0)
    t.notes.push_back("no NUMA node with CPUs: local/remote cannot be told apart");
}

}  // namespace

Topology discover(const DiscoverOptions& opts) {
  const bool live = opts.topology_xml.empty() && opts.sysfs_root.empty();
  Topology t;
  std::optional<SysfsSnapshot> sys;
  if (!opts.sysfs_root.empty()) {
    sys = read_sysfs(opts.sysfs_root);
  } else if (live && sysfs_has_numa("/")) {
    sys = read_sysfs("/");
  } else if (live) {
    t.notes.push_back("this kernel exposes no NUMA nodes in sysfs; hwloc alone was used");
  }
  if (!opts.topology_xml.empty() || live) {
    Topology h = read_hwloc(opts.topology_xml);
    h.notes.insert(h.notes.end(), t.notes.begin(), t.notes.end());
    t = std::move(h);
  } else {
    t = from_sysfs(*sys);
  }
  if (sys) {
    merge_nodes(t, *sys);
    merge_devices(t, *sys);
    t.sysfs_root = sys->root;
    for (int id : sys->possible)
      if (!std::count(sys->online.begin(), sys->online.end(), id)) t.offline_nodes.push_back(id);
    t.notes.insert(t.notes.end(), sys->notes.begin(), sys->notes.end());
    if (!opts.topology_xml.empty()) t.source = TopologySource::hwloc_xml_sysfs;
  }
  choose_cpu_node(t, opts.cpu_node, live);
  classify(t);
  if (!opts.emulate_cxl.empty()) apply_cxl_emulation(t, parse_cxl_emulation(opts.emulate_cxl));
  return t;
}

bool is_this_machine(const Topology& topo) { return topo.source == TopologySource::live; }

}  // namespace hb::memtier
