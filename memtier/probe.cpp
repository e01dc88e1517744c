#include "memtier/probe.h"

#include <sched.h>

#include <algorithm>

#include "core/error.h"
#include "core/thread_pool.h"
#include "core/timer.h"
#include "memtier/cpulist.h"
#include "memtier/discover.h"
#include "memtier/numa_allocator.h"
#include "memtier/pointer_chase.h"
#include "memtier/virtualization.h"

namespace hb::memtier {

namespace {

// Pinning the pool pins the calling thread too (it is worker 0); give its mask back after.
class ScopedAffinity {
 public:
  ScopedAffinity() { sched_getaffinity(0, sizeof saved_, &saved_); }
  ~ScopedAffinity() { sched_setaffinity(0, sizeof saved_, &saved_); }
  ScopedAffinity(const ScopedAffinity&) = delete;
  ScopedAffinity& operator=(const ScopedAffinity&) = delete;

 private:
  cpu_set_t saved_;
};

template <class F>
std::vector<double> repeat(const ProbeOptions& o, F&& measure) {
  std::vector<double> s;
  const int64_t start = now_ns();
  while (static_cast<int>(s.size()) < o.max_repeats &&
         (static_cast<int>(s.size()) < o.min_repeats ||
          double(now_ns() - start) < o.seconds_per_figure * 1e9))
    s.push_back(measure());
  return s;
}

// Buffers for probes use transparent huge pages where the kernel allows (THP "madvise" or
// "always"), so the latency figure is the memory's and not mostly page-table walks.
Buffer probe_buffer(const Topology& topo, int mem_node, size_t bytes) {
  const MemoryNode* n = topo.node(mem_node);
  NumaAllocator a(n->location(), NumaPolicy{NumaMode::bind, {mem_node}, {}, true});
  return a.allocate(bytes);
}

std::vector<int> usable_cpus(const MemoryNode& n) {
  const std::vector<int> allowed = allowed_cpus();
  std::vector<int> out;
  for (int c : n.cpus)
    if (std::count(allowed.begin(), allowed.end(), c)) out.push_back(c);
  return out;
}

void measure_bandwidth(const Topology& topo, const ProbeOptions& o, ThreadPool& pool,
                       PairProbe& pp) {
  Buffer b = probe_buffer(topo, pp.mem_node, o.bandwidth_bytes);
  pp.bandwidth_placement = verify_placement(b.data(), b.size(), {pp.mem_node});
  const ReadKernel& k = o.read_kernel;
  volatile uint64_t sink = k.read(b.data(), b.size(), pool);  // warm-up: TLB, pool wake-up
  pp.read_kernel = k.name;
  pp.read_gbps = Figure::of(repeat(o, [&] {
    const int64_t t0 = now_ns();
    sink = sink ^ k.read(b.data(), b.size(), pool);
    return double(b.size()) / double(now_ns() - t0);  // bytes/ns = GB/s
  }));
}

void measure_latency(const Topology& topo, const ProbeOptions& o, PairProbe& pp) {
  Buffer b = probe_buffer(topo, pp.mem_node, o.latency_bytes);
  build_chase_cycle(b.data(), b.size(), 0x6d656d74696572ull + static_cast<uint64_t>(pp.mem_node));
  pp.latency_placement = verify_placement(b.data(), b.size(), {pp.mem_node});
  chase_ns_per_hop(b.data(), o.latency_hops / 4);  // warm-up
  pp.latency_ns = Figure::of(repeat(o, [&] { return chase_ns_per_hop(b.data(), o.latency_hops); }));
}

}  // namespace

ProbeOptions ProbeOptions::quick() {
  ProbeOptions o;
  o.bandwidth_bytes = size_t{64} << 20;
  o.latency_bytes = size_t{64} << 20;
  o.latency_hops = int64_t{1} << 18;
  o.seconds_per_figure = 0.1;
  return o;
}

Figure Figure::of(std::vector<double> samples) {
  Figure f;
  f.summary = summarize(samples);
  f.samples = std::move(samples);
  return f;
}

const PairProbe* ProbeResult::pair(int cpu_node, int mem_node) const {
  for (const auto& p : pairs)
    if (p.cpu_node == cpu_node && p.mem_node == mem_node) return &p;
  return nullptr;
}

std::vector<int> probe_memory_nodes(const Topology& topo) {
  std::vector<int> nodes;
  for (const auto& n : topo.nodes)
    if (n.total_bytes != 0 && n.kind != TierKind::gpu_memory) nodes.push_back(n.os_index);
  return nodes;
}

ProbeResult probe(const Topology& topo, const ProbeOptions& opts,
                  const std::function<void(const std::string&)>& progress) {
  if (!is_this_machine(topo))
    throw Error("probe measures the machine it runs on, but this topology came from " +
                    std::string(kTopologySources.name(topo.source)),
                "run `hybridbench probe` without --topology / --sysfs-root");
  if (!opts.read_kernel.read || !opts.read_kernel.name)
    throw Error("probe was given no read kernel to measure bandwidth with",
                "set ProbeOptions::read_kernel (the CLI passes the CPU engine's stream_read)");
  const int64_t start = now_ns();
  ProbeResult r;
  r.options = opts;
  std::vector<int> cpu_nodes = opts.cpu_nodes.empty() ? topo.cpu_nodes() : opts.cpu_nodes;
  std::vector<int> mem_nodes = opts.mem_nodes.empty() ? probe_memory_nodes(topo) : opts.mem_nodes;
  for (int m : mem_nodes)
    if (!topo.node(m))
      throw Error("probe: no NUMA node " + std::to_string(m),
                  "pick memory nodes listed by `hybridbench topo`");

  for (int c : cpu_nodes) {
    const MemoryNode* cn = topo.node(c);
    const std::vector<int> cpus = cn ? usable_cpus(*cn) : std::vector<int>{};
    if (cpus.empty())
      throw Error("probe: node " + std::to_string(c) + " has no CPUs this process may run on",
                  "pick CPU nodes from `hybridbench topo` (nodes with CPUs: " +
                      format_cpulist(topo.cpu_nodes()) + ")");
    ScopedAffinity keep;
    ThreadPool pool(static_cast<int>(cpus.size()));
    pool.pin_to_cpus(cpus);
    for (int m : mem_nodes) {
      PairProbe pp;
      pp.cpu_node = c;
      pp.mem_node = m;
      pp.kind = topo.node(m)->kind;
      pp.emulated = topo.node(m)->emulated;
      pp.threads = static_cast<int>(cpus.size());
      const std::string pair =
          "cpu node " + std::to_string(c) + " -> memory node " + std::to_string(m);
      if (progress)
        progress(pair + ": read bandwidth with " + std::to_string(cpus.size()) + " threads");
      measure_bandwidth(topo, opts, pool, pp);
      if (progress) progress(pair + ": pointer-chase latency");
      measure_latency(topo, opts, pp);  // on the calling thread, pinned to cpus[0]
      r.pairs.push_back(std::move(pp));
    }
  }
  r.wall_seconds = double(now_ns() - start) / 1e9;
  r.virtual_machine = detect_virtual_machine();
  return r;
}

}  // namespace hb::memtier
