#include "memtier/host_tiers.h"

#include <algorithm>

#include "memtier/numa_allocator.h"

namespace hb::memtier {

namespace {

int kind_rank(TierKind k) {
  switch (k) {
    case TierKind::local_dram:
      return 0;
    case TierKind::hbm:
      return 1;
    case TierKind::remote_dram:
      return 2;
    case TierKind::cxl:
      return 3;
    case TierKind::far:
      return 4;
    case TierKind::gpu_memory:
      return 5;
  }
  return 6;
}

// Bytes/s from the reference CPU node: measured when probed, else HMAT (MiB/s), else 0.
double read_bandwidth(const Topology& topo, const MemoryNode& n, const ProbeResult* measured) {
  if (measured)
    if (const PairProbe* p = measured->pair(topo.cpu_node, n.os_index);
        p && p->read_gbps.summary.count)
      return p->read_gbps.summary.median * 1e9;
  for (const auto& perf : n.perf)
    if (perf.initiator_node == topo.cpu_node && perf.best_bandwidth() > 0)
      return perf.best_bandwidth() * 1048576.0;
  return 0;
}

struct Entry {
  HostTier tier;
  const MemoryNode* node;
};

}  // namespace

std::vector<HostTier> host_tiers(const Topology& topo, const ProbeResult* measured,
                                 bool with_allocators, bool huge_pages) {
  std::vector<Entry> entries;
  for (const auto& n : topo.nodes) {
    if (n.kind == TierKind::gpu_memory || n.total_bytes == 0) continue;
    HostTier t;
    t.location = n.location();
    t.free_bytes = n.free_bytes;
    t.read_bandwidth_bytes_per_s = read_bandwidth(topo, n, measured);
    if (with_allocators) t.allocator = node_allocator(t.location, huge_pages);
    entries.push_back({std::move(t), &n});
  }
  const bool all_known = std::all_of(entries.begin(), entries.end(), [](const Entry& e) {
    return e.tier.read_bandwidth_bytes_per_s > 0;
  });
  std::stable_sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
    const bool la = a.node->os_index == topo.cpu_node, lb = b.node->os_index == topo.cpu_node;
    if (la != lb) return la;
    if (all_known) return a.tier.read_bandwidth_bytes_per_s > b.tier.read_bandwidth_bytes_per_s;
    if (kind_rank(a.node->kind) != kind_rank(b.node->kind))
      return kind_rank(a.node->kind) < kind_rank(b.node->kind);
    return topo.distance(topo.cpu_node, a.node->os_index) <
           topo.distance(topo.cpu_node, b.node->os_index);
  });
  std::vector<HostTier> out;
  for (auto& e : entries) out.push_back(std::move(e.tier));
  if (topo.simulated_cxl) {
    HostTier t;
    t.location = {MemoryKind::cxl, topo.simulated_cxl->backing_node, true};
    t.read_bandwidth_bytes_per_s = topo.simulated_cxl->bandwidth_gbps * 1e9;
    if (const MemoryNode* b = topo.node(topo.simulated_cxl->backing_node))
      t.free_bytes = b->free_bytes;
    if (with_allocators) t.allocator = node_allocator(t.location, huge_pages);
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<HostTier> discover_host_tiers(const DiscoverOptions& opts) {
  return host_tiers(discover(opts));
}

}  // namespace hb::memtier
