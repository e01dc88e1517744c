#include "memtier/classify.h"

#include <algorithm>
#include <cstdio>

#include "memtier/cpulist.h"

namespace hb::memtier {

namespace {

constexpr double kHbmBandwidthRatio = 1.5;
constexpr double kSlowBandwidthRatio = 0.8;
constexpr double kSlowLatencyRatio = 1.25;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

const AccessPerf* perf_from(const MemoryNode& n, int cpu_node) {
  for (const auto& p : n.perf)
    if (p.initiator_node == cpu_node && cpu_node >= 0) return &p;
  return nullptr;
}

// The node's figure as seen from the reference CPU node, else its best from any initiator
// (fakeheteromemtiers gives HBM figures only for the CPUs of its own group).
double bandwidth_of(const MemoryNode& n, int cpu_node) {
  if (const AccessPerf* p = perf_from(n, cpu_node); p && p->best_bandwidth() > 0)
    return p->best_bandwidth();
  double best = 0;
  for (const auto& p : n.perf) best = std::max(best, p.best_bandwidth());
  return best;
}

double latency_of(const MemoryNode& n, int cpu_node) {
  if (const AccessPerf* p = perf_from(n, cpu_node); p && p->best_latency() > 0)
    return p->best_latency();
  double best = 0;
  for (const auto& p : n.perf)
    if (p.best_latency() > 0 && (best == 0 || p.best_latency() < best)) best = p.best_latency();
  return best;
}

// What "local DRAM" looks like: the reference node as seen from itself, else the best any
// CPU node gets from its own memory.
struct Reference {
  int node = -1;
  double bandwidth = 0, latency = 0;
  int tier = -1, self_distance = -1;
};

Reference reference(const Topology& t) {
  Reference r;
  r.node = t.cpu_node;
  if (const MemoryNode* local = t.node(t.cpu_node)) {
    r.tier = local->memory_tier;
    r.self_distance = t.distance(t.cpu_node, t.cpu_node);
    if (const AccessPerf* p = perf_from(*local, t.cpu_node)) {
      r.bandwidth = p->best_bandwidth();
      r.latency = p->best_latency();
    }
  }
  for (const auto& n : t.nodes) {
    if (!n.has_cpu()) continue;
    if (const AccessPerf* p = perf_from(n, n.os_index)) {
      if (r.bandwidth == 0) r.bandwidth = p->best_bandwidth();
      if (r.latency == 0) r.latency = p->best_latency();
    }
  }
  return r;
}

void classify_node(const Topology& t, const Reference& ref, MemoryNode& n) {
  std::vector<std::string>& why = n.reasons;
  why.clear();
  n.emulated = false;
  const double bw = bandwidth_of(n, ref.node), lat = latency_of(n, ref.node);
  const int dist = t.distance(ref.node, n.os_index);
  const std::string& st = n.subtype;

  if (st == "GPUMemory") {
    n.kind = TierKind::gpu_memory;
    why.push_back("hwloc subtype GPUMemory: a GPU's memory exposed as a NUMA node");
    return;
  }

  // Facts that speak for slower memory; used by the cxl and far rules.
  std::vector<std::string> slow;
  if (st == "NVM" || st == "SPM") slow.push_back("subtype " + st);
  if (n.memory_tier >= 0 && ref.tier >= 0 && n.memory_tier > ref.tier)
    slow.push_back("slower memory tier " + std::to_string(n.memory_tier) + " > " +
                   std::to_string(ref.tier) + " of local DRAM");
  if (dist >= 0 && ref.self_distance >= 0 && dist > ref.self_distance)
    slow.push_back("distance " + std::to_string(dist) + " > " + std::to_string(ref.self_distance) +
                   " from node " + std::to_string(ref.node));
  if (bw > 0 && ref.bandwidth > 0 && bw <= kSlowBandwidthRatio * ref.bandwidth)
    slow.push_back("lower HMAT bandwidth " + num(bw) + " MiB/s vs " + num(ref.bandwidth) +
                   " of local DRAM");
  if (lat > 0 && ref.latency > 0 && lat >= kSlowLatencyRatio * ref.latency)
    slow.push_back("higher HMAT latency " + num(lat) + " ns vs " + num(ref.latency) +
                   " of local DRAM");
  const std::string cpu_less = "CPU-less (" + n.has_cpu_source + ")";

  if (!n.cxl_link.empty() || st.rfind("CXL", 0) == 0) {
    n.kind = TierKind::cxl;
    if (!n.has_cpu()) why.push_back(cpu_less);
    why.push_back(!n.cxl_link.empty() ? "CXL: " + n.cxl_link : "hwloc subtype " + st);
    why.insert(why.end(), slow.begin(), slow.end());
    return;
  }
  const bool fast_hmat = bw > 0 && ref.bandwidth > 0 && bw >= kHbmBandwidthRatio * ref.bandwidth;
  if (st == "HBM" || st == "MCDRAM" || (!n.has_cpu() && fast_hmat)) {
    n.kind = TierKind::hbm;
    if (!n.has_cpu()) why.push_back(cpu_less + ", but fast");
    if (st == "HBM" || st == "MCDRAM") why.push_back("subtype " + st + " (high-bandwidth memory)");
    if (fast_hmat) {
      char ratio[16];
      std::snprintf(ratio, sizeof ratio, "%.1f", bw / ref.bandwidth);
      why.push_back("HMAT bandwidth " + num(bw) + " MiB/s = " + ratio + "x local DRAM's " +
                    num(ref.bandwidth));
    }
    return;
  }
  if (!n.has_cpu()) {
    why.push_back(cpu_less);
    if (!slow.empty()) {
      n.kind = TierKind::far;
      why.insert(why.end(), slow.begin(), slow.end());
    } else {
      n.kind = TierKind::remote_dram;
      why.push_back(
          "no sign of slower memory (same tier, no larger distance or lower HMAT figures): DRAM "
          "without CPUs");
    }
    return;
  }
  if (n.os_index == ref.node) {
    n.kind = TierKind::local_dram;
    why.push_back("has CPUs " + format_cpulist(n.cpus) + "; the reference CPU node");
    return;
  }
  n.kind = TierKind::remote_dram;
  std::string r = "has CPUs " + format_cpulist(n.cpus) + "; another CPU node";
  const MemoryNode* local = t.node(ref.node);
  if (local && local->package >= 0 && n.package >= 0 && local->package != n.package)
    r += " (package " + std::to_string(n.package) + ", reference is in package " +
         std::to_string(local->package) + ")";
  why.push_back(r);
  why.insert(why.end(), slow.begin(), slow.end());
}

}  // namespace

void classify(Topology& topo) {
  const Reference ref = reference(topo);
  for (auto& n : topo.nodes) classify_node(topo, ref, n);
}

}  // namespace hb::memtier
