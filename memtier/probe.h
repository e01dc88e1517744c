#pragma once
// Measured bandwidth and latency of each (CPU node -> memory node) pair of this machine:
//  * streaming read bandwidth with every CPU of the CPU node, using the read kernel the caller
//    hands in (the CLI passes hb::cpu::stream_read, the attention benchmark's yardstick), and
//    write and copy bandwidth with its companions when it has them,
//  * idle latency: one thread chasing pointers through a random cyclic permutation of
//    cache lines in a buffer much larger than the caches, and
//  * loaded latency: the same chase while the node's other CPUs stream-read the same memory
//    node (what a latency-bound access sees when bandwidth is in use; CXL's is what placement
//    decisions turn on). Absent when the CPU node has a single usable CPU.
// Every figure is repeated until its last window of samples has settled (see ProbeOptions),
// its median and noise are reported, and its buffers' page placement is verified. GPU link probes
// (H2D/D2H per node, HBM copy) belong to the CUDA backend and fill ProbeResult::links; memtier
// leaves it empty.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/copy_link.h"
#include "core/vocabulary.h"
#include "core/read_kernel.h"
#include "core/stats.h"
#include "memtier/placement.h"
#include "memtier/topology.h"

namespace hb::memtier {

struct ProbeOptions {
  size_t bandwidth_bytes = size_t{256} << 20;
  size_t latency_bytes = size_t{128} << 20;
  int64_t latency_hops = int64_t{1} << 19;  // pointer loads per latency sample
  double seconds_per_figure = 0.5;          // the window a figure is judged on (--duration)
  // A figure is published once its last window has settled: the medians of the window's two
  // halves differ by at most drift_tolerance and its noise (IQR / 1.349 median) is at most
  // max_noise. On a shared machine a burst of load makes the first window low and noisy; the
  // probe then keeps sampling, up to settle_windows windows in all, rather than publish it. A
  // figure that never settles is published from its last window with its stop reason, and the
  // CLI says so.
  double drift_tolerance = 0.05, max_noise = 0.10, settle_windows = 4;
  int min_repeats = 5, max_repeats = 2000;
  bool loaded_latency = true;             // measure latency under the other CPUs' read load
  std::vector<int> cpu_nodes, mem_nodes;  // empty = every CPU node / every memory node
  ReadKernel read_kernel;                 // required: the loop behind every bandwidth figure
  static ProbeOptions quick();            // smaller buffers, shorter budget (--quick)
};

// Why sampling of a figure stopped. `unchecked`: made by Figure::of (tests, and profiles
// written before the probe judged windows).
enum class FigureStop { unchecked, settled, time_limit, max_repeats };
inline constexpr Vocabulary<FigureStop, 4> kFigureStops{
    {"unchecked", "settled", "time-limit", "max-repeats"}};

struct Figure {
  std::vector<double> samples;  // the published window, in the order taken
  SampleSummary summary;        // median; noise() is the figure's stated noise
  FigureStop stop = FigureStop::unchecked;
  double drift = 0;       // |median of 2nd half - median of 1st half| / median (drift_of)
  int64_t discarded = 0;  // samples taken before the published window, while it had not settled
  double noise() const { return robust_rel_noise(summary); }
  bool settled() const { return stop == FigureStop::unchecked || stop == FigureStop::settled; }
  bool empty() const { return samples.empty(); }
  static Figure of(std::vector<double> samples);
};

// The drift statistic of samples in the order taken (0 for fewer than 4).
double drift_of(const std::vector<double>& samples);

// Samples `measure` until its trailing window of o.seconds_per_figure has settled or the limits
// of `o` are reached (ProbeOptions); the figure is that window. Exposed for tests.
Figure sample_figure(const ProbeOptions& o, const std::function<double()>& measure);

struct PairProbe {
  int cpu_node = -1, mem_node = -1;
  TierKind kind = TierKind::local_dram;  // of mem_node, relative to the topology's cpu_node
  bool emulated = false;
  int threads = 0;           // CPUs of cpu_node used for the bandwidth figures
  std::string read_kernel;   // which loops produced the bandwidth figures
  Figure read_gbps;          // 1e9 bytes/s
  Figure write_gbps;         // non-temporal stores; empty when the kernel has no write
  Figure copy_gbps;          // bytes read + bytes written per second (STREAM's count); may be empty
  Figure latency_ns;         // per dependent load, idle machine
  Figure loaded_latency_ns;  // the same chase while load_threads CPUs stream-read; may be empty
  int load_threads = 0;      // CPUs reading during loaded_latency_ns
  double load_gbps = 0;      // what they read meanwhile (1e9 bytes/s over the whole figure)
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
