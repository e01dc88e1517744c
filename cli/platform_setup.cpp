#include "cli/platform_setup.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "bench/kv_budget.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/model_presets.h"
#include "core/thread_pool.h"
#include "kernels/backend.h"
#include "memtier/cpulist.h"
#include "memtier/discover.h"
#include "memtier/host_tiers.h"
#include "memtier/placement.h"
#include "memtier/settings.h"

namespace hb::cli {

namespace {

int64_t mem_available_bytes() {
  std::ifstream f("/proc/meminfo");
  std::string key, unit;
  int64_t kb = 0;
  while (f >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

reports::TopologySummary summarize_topology(const memtier::Topology& topo) {
  reports::TopologySummary s;
  s.facts["source"] = memtier::kTopologySources.name(topo.source);
  s.facts["packages"] = std::to_string(topo.packages.size());
  s.facts["cores"] = std::to_string(topo.cores);
  s.facts["pus"] = std::to_string(topo.pus);
  s.facts["numa_nodes"] = std::to_string(topo.nodes.size());
  s.facts["cpu_node"] = std::to_string(topo.cpu_node);
  s.facts["gpus"] = std::to_string(topo.gpus.size());
  if (topo.simulated_cxl)
    s.facts["simulated_cxl"] = "bandwidth " + std::to_string(topo.simulated_cxl->bandwidth_gbps) +
                               " GB/s, latency " + std::to_string(topo.simulated_cxl->latency_ns) +
                               " ns (declared, not measured)";
  for (const auto& n : topo.nodes) {
    std::string why;
    for (const auto& r : n.reasons) why += (why.empty() ? "" : "; ") + r;
    s.nodes.push_back(
        {n.os_index, std::string(memtier::tier_kind_name(n.kind)), n.total_bytes, n.emulated, why});
  }
  return s;
}

std::string mib(int64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// --kv-node names the node that holds offloaded KV. When it cannot hold the largest point's
// whole KV cache (what cpu-only and offload put there), refuse before any workload is built:
// otherwise the sweep spends minutes generating KV only to report those points as oom.
void check_kv_node_fits(const bench::SweepSpec& spec, const HostTier& tier,
                        const std::vector<HostTier>& all) {
  if (tier.free_bytes < 0) return;  // unknown free memory: the allocator's own check decides
  const auto [need, what] = bench::largest_point_kv(spec);
  if (need <= tier.free_bytes) return;
  std::string others;
  for (const auto& t : all)
    if (t.location.node != tier.location.node && t.free_bytes >= 0)
      others +=
          (others.empty() ? "" : ", ") + t.location.to_string() + " " + mib(t.free_bytes) + " free";
  throw Error("NUMA node " + std::to_string(tier.location.node) + " (" + tier.location.to_string() +
                  ") has " + mib(tier.free_bytes) +
                  " free, too little for the KV cache of the largest point (" + what + ": " +
                  mib(need) + " per layer, all of it on this node for cpu-only and offload)",
              "pick a node with more free memory" +
                  (others.empty() ? std::string() : " (" + others + ")") +
                  ", or lower --seq-len / --batch (see `hybridbench topo`)");
}

}  // namespace

std::string command_line_text() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  for (auto& c : all)
    if (c == '\0') c = ' ';
  while (!all.empty() && all.back() == ' ') all.pop_back();
  return all;
}

PlatformSetup setup_platform(const bench::SweepSpec& spec) {
  PlatformSetup p;
  p.command_line = command_line_text();
  memtier::DiscoverOptions opts;
  opts.emulate_cxl = spec.emulate_cxl;
  const memtier::Topology topo = memtier::discover(opts);
  p.env.host_tiers = memtier::host_tiers(topo, nullptr, true, spec.kv_pages == bench::KvPages::thp);
  p.env.cpu_node = topo.cpu_node;
  if (!spec.kv_nodes.empty()) {
    // One node here: a fleet rank's own (cli/fleet_run.cpp), or the run's (check_fleet_arguments).
    const int node = spec.kv_nodes.front();
    auto it = std::find_if(p.env.host_tiers.begin(), p.env.host_tiers.end(),
                           [&](const HostTier& t) { return t.location.node == node; });
    if (it == p.env.host_tiers.end()) {
      std::string nodes;
      for (const auto& t : p.env.host_tiers)
        nodes += (nodes.empty() ? "" : ", ") + std::to_string(t.location.node);
      if (std::count(topo.offline_nodes.begin(), topo.offline_nodes.end(), node))
        throw Error("NUMA node " + std::to_string(node) +
                        " is offline: the kernel knows it as possible, but none of "
                        "its memory is online (a CXL or DAX device not yet onlined as system RAM?)",
                    "online its memory first (e.g. `daxctl reconfigure-device -m system-ram "
                    "daxX.Y`), or pick one "
                    "of the nodes with memory: " +
                        nodes + " (see `hybridbench topo`)");
      throw Error(
          "NUMA node " + std::to_string(node) + " does not exist or has no memory on this machine",
          "pick one of the nodes with memory: " + nodes + " (see `hybridbench topo`)");
    }
    check_kv_node_fits(spec, *it, p.env.host_tiers);
    std::rotate(p.env.host_tiers.begin(), it,
                it + 1);  // the chosen node becomes the default host tier
  }
  p.env.observe_pages = [](const void* ptr, size_t bytes) {
    const memtier::PlacementReport r = memtier::verify_placement(ptr, bytes, {}, 4096);
    return bench::RunEnvironment::ObservedPages{r.pages_per_node, r.huge_page_bytes};
  };
  // Workloads live in ordinary memory beside the caches; leave a quarter of it for the rest.
  p.env.host_memory_budget_bytes = mem_available_bytes() / 4 * 3;
  p.topology = summarize_topology(topo);
  p.settings = memtier::read_system_settings().as_map();
  return p;
}

std::string place_rank(bench::SweepSpec& spec, int local_rank, int local_size, bool device_given) {
  const memtier::Topology topo = memtier::discover({});
  // The device path only where this binary can drive the backend asked for (auto: the first
  // usable one); a backend without devices of its own (the cpu accelerator) has no nodes. The
  // devices' nodes come in the backend's device order (what --device counts), not PCI bus order.
  const Backend& b = backend(spec.accelerator.kind);
  const std::vector<int> gpu_nodes = b.usable(0, nullptr) ? b.numa_nodes() : std::vector<int>{};
  int node = -1;
  std::string why;
  if (!gpu_nodes.empty()) {
    if (!device_given) spec.accelerator.device = local_rank % static_cast<int>(gpu_nodes.size());
    const int d = spec.accelerator.device;
    if (d < 0 || d >= static_cast<int>(gpu_nodes.size()))
      return "not bound (no GPU " + std::to_string(d) + ")";
    node = gpu_nodes[static_cast<size_t>(d)];
    why = "local to GPU " + std::to_string(d) +
          (local_size > static_cast<int>(gpu_nodes.size())
               ? "; more ranks than GPUs on this host share them"
               : "");
    if (node < 0) return "not bound (GPU " + std::to_string(d) + "'s NUMA node is unknown)";
  } else {
    const std::vector<int> nodes = topo.cpu_nodes();
    if (nodes.empty()) return "not bound (no NUMA node with CPUs found)";
    node = nodes[static_cast<size_t>(local_rank) % nodes.size()];
    why = nodes.size() == 1 ? "the only node with CPUs"
                            : "node-local rank " + std::to_string(local_rank) + " over " +
                                  std::to_string(nodes.size()) + " nodes with CPUs";
  }
  const memtier::MemoryNode* n = topo.node(node);
  if (!n || n->cpus.empty())
    return "not bound (NUMA node " + std::to_string(node) + " has no CPUs)";
  const std::vector<int> now = allowed_cpus();
  const bool inside = std::all_of(now.begin(), now.end(), [&](int c) {
    return std::find(n->cpus.begin(), n->cpus.end(), c) != n->cpus.end();
  });
  if (inside)
    return "CPUs " + memtier::format_cpulist(now) + " (NUMA node " + std::to_string(node) + ", " +
           why + ")";
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : n->cpus) CPU_SET(c, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    return "not bound (the CPUs of NUMA node " + std::to_string(node) +
           " are not allowed here; kept CPUs " + memtier::format_cpulist(now) + ")";
  return "CPUs " + memtier::format_cpulist(n->cpus) + " (NUMA node " + std::to_string(node) + ", " +
         why + ")";
}

void fill_context(reports::ReportContext& ctx, const PlatformSetup& platform) {
  reports::fill_host_context(ctx);
  ctx.topology = platform.topology;
  ctx.system_settings = platform.settings;
}

}  // namespace hb::cli
