#pragma once
// Measured bandwidth and latency of each (CPU node -> memory node) pair of this machine:
//  * streaming read bandwidth with every CPU of the CPU node, using the read kernel the caller
//    hands in (the CLI passes hb::cpu::stream_read, the attention benchmark's yardstick), and
//  * idle latency: one thread chasing pointers through a random cyclic permutation of
//    cache lines in a buffer much larger than the caches.
// Every figure is repeated (median and relative stdev reported) and its buffers' page
// placement is verified. GPU link probes (H2D/D2H per node, HBM copy) belong to the CUDA
// backend and fill ProbeResult::links; memtier leaves it empty.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/copy_link.h"
#include "core/read_kernel.h"
#include "core/stats.h"
#include "memtier/placement.h"
#include "memtier/topology.h"

namespace hb::memtier {

struct ProbeOptions {
  size_t bandwidth_bytes = size_t{256} << 20;
  size_t latency_bytes = size_t{128} << 20;
  int64_t latency_hops = int64_t{1} << 19;  // pointer loads per latency sample
  double seconds_per_figure = 0.5;          // keep sampling until this long (--duration)
  int min_repeats = 5, max_repeats = 200;
  std::vector<int> cpu_nodes, mem_nodes;  // empty = every CPU node / every memory node
  ReadKernel read_kernel;                 // required: the loop behind every bandwidth figure
  static ProbeOptions quick();            // smaller buffers, shorter budget (--quick)
};

struct Figure {
  std::vector<double> samples;
  SampleSummary summary;  // median, rel_stdev() = noise
  static Figure of(std::vector<double> samples);
};

struct PairProbe {
  int cpu_node = -1, mem_node = -1;
  TierKind kind = TierKind::local_dram;  // of mem_node, relative to the topology's cpu_node
  bool emulated = false;
  int threads = 0;          // CPUs of cpu_node used for the bandwidth figure
  std::string read_kernel;  // which loop produced the bandwidth figure
  Figure read_gbps;         // 1e9 bytes/s
  Figure latency_ns;        // per dependent load
  PlacementReport bandwidth_placement, latency_placement;
};

// Link figures from the accelerator side (filled by the CUDA backend, not by memtier).
struct LinkProbe {
  CopyLink link = CopyLink::h2d;
  int host_node = -1, device = -1;
  Figure gbps;
};

struct ProbeResult {
  std::string source = "measured";
  ProbeOptions options;
  std::vector<PairProbe> pairs;
  std::vector<LinkProbe> links;
  double wall_seconds = 0;
  std::string virtual_machine;  // evidence of a hypervisor ("" = none seen): the
                                // figures are then the VM's, not bare hardware's
  const PairProbe* pair(int cpu_node, int mem_node) const;
};

// The memory nodes probe measures when ProbeOptions::mem_nodes is empty: every node with memory
// except GPU memory (what `probe --mem-nodes all` means).
std::vector<int> probe_memory_nodes(const Topology& topo);

// Measures `topo` (which must describe this machine: discover() without files). `progress`
// receives one line per step for the CLI to show; memtier itself prints nothing.
ProbeResult probe(const Topology& topo, const ProbeOptions& opts,
                  const std::function<void(const std::string&)>& progress = {});

}  // namespace hb::memtier
