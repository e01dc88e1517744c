#include "memtier/probe.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <thread>

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

// Read, then write and copy when the kernel has them, all on the same buffer (bound to the
// memory node; the copy's destination too). Each figure begins with one untimed pass: it
// faults nothing (the allocator zeroed the pages) but wakes the pool and fills the TLB.
void measure_bandwidth(const Topology& topo, const ProbeOptions& o, ThreadPool& pool, PairProbe& pp,
                       const std::function<void(const std::string&)>& step) {
  Buffer b = probe_buffer(topo, pp.mem_node, o.bandwidth_bytes);
  pp.bandwidth_placement = verify_placement(b.data(), b.size(), {pp.mem_node});
  const ReadKernel& k = o.read_kernel;
  const size_t n = b.size();
  // One untimed pass, then `bytes` moved per timed pass (bytes/ns = GB/s).
  auto figure = [&](size_t bytes, const std::function<void()>& pass) {
    pass();
    return sample_figure(o, [&] {
      const int64_t t0 = now_ns();
      pass();
      return double(bytes) / double(now_ns() - t0);
    });
  };
  volatile uint64_t sink = 0;
  pp.read_kernel = k.name;
  pp.read_gbps = figure(n, [&] { sink = sink ^ k.read(b.data(), n, pool); });
  if (k.write) {
    step("write bandwidth");
    pp.write_gbps = figure(n, [&] { k.write(b.data(), n, pool); });
  }
  if (k.copy) {
    step("copy bandwidth");
    Buffer dst = probe_buffer(topo, pp.mem_node, n);
    // read + written, as STREAM counts a copy
    pp.copy_gbps = figure(2 * n, [&] { k.copy(dst.data(), b.data(), n, pool); });
  }
}

// The read load behind the loaded latency: its own pool on `cpus`, reading `b` over and over
// from a thread of its own until destroyed. Errors (a CPU that cannot be pinned) are rethrown
// by finish().
class BackgroundRead {
 public:
  BackgroundRead(const ReadKernel& k, const Buffer& b, std::vector<int> cpus)
      : thread_([this, &k, &b, cpus] { run(k, b, cpus); }) {
    while (!started_.load()) std::this_thread::yield();  // the load is on before timing starts
  }
  ~BackgroundRead() { stop(); }
  BackgroundRead(const BackgroundRead&) = delete;
  BackgroundRead& operator=(const BackgroundRead&) = delete;

  // Stops the load; returns the GB/s it read since it started.
  double finish() {
    stop();
    if (error_) std::rethrow_exception(error_);
    return double(bytes_.load()) / double(std::max<int64_t>(1, end_ns_ - start_ns_));
  }

 private:
  void run(const ReadKernel& k, const Buffer& b, const std::vector<int>& cpus) {
    try {
      ThreadPool pool(static_cast<int>(cpus.size()));
      pool.pin_to_cpus(cpus);  // this thread is its worker 0
      volatile uint64_t sink = k.read(b.data(), b.size(), pool);
      start_ns_ = now_ns();
      started_ = true;
      while (!stop_.load()) {
        sink = sink ^ k.read(b.data(), b.size(), pool);
        bytes_ += b.size();
      }
      end_ns_ = now_ns();
    } catch (...) {
      error_ = std::current_exception();
      started_ = true;
    }
  }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

  std::atomic<bool> started_{false}, stop_{false};
  std::atomic<uint64_t> bytes_{0};
  int64_t start_ns_ = 0, end_ns_ = 0;
  std::exception_ptr error_;
  std::thread thread_;  // last: it starts in the constructor, after everything above exists
};

// Idle latency on the calling thread (pinned to cpus[0]), then loaded latency: the same chase
// while cpus[1..] stream-read a bandwidth-sized buffer of the same memory node.
void measure_latency(const Topology& topo, const ProbeOptions& o, const std::vector<int>& cpus,
                     PairProbe& pp, const std::function<void(const std::string&)>& step) {
  Buffer b = probe_buffer(topo, pp.mem_node, o.latency_bytes);
  build_chase_cycle(b.data(), b.size(), 0x6d656d74696572ull + static_cast<uint64_t>(pp.mem_node));
  pp.latency_placement = verify_placement(b.data(), b.size(), {pp.mem_node});
  chase_ns_per_hop(b.data(), o.latency_hops / 4);  // warm-up
  pp.latency_ns = sample_figure(o, [&] { return chase_ns_per_hop(b.data(), o.latency_hops); });
  if (!o.loaded_latency || cpus.size() < 2) return;
  step("loaded latency (" + std::to_string(cpus.size() - 1) + " CPUs reading)");
  Buffer load = probe_buffer(topo, pp.mem_node, o.bandwidth_bytes);
  BackgroundRead reader(o.read_kernel, load, std::vector<int>(cpus.begin() + 1, cpus.end()));
  pp.loaded_latency_ns =
      sample_figure(o, [&] { return chase_ns_per_hop(b.data(), o.latency_hops); });
  pp.load_gbps = reader.finish();
  pp.load_threads = static_cast<int>(cpus.size()) - 1;
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
  f.drift = drift_of(samples);
  f.samples = std::move(samples);
  return f;
}

double drift_of(const std::vector<double>& samples) {
  if (samples.size() < 4) return 0;
  const auto half = static_cast<std::ptrdiff_t>(samples.size() / 2);
  const std::vector<double> a(samples.begin(), samples.begin() + half),
      b(samples.end() - half, samples.end());
  const double m = quantile(samples, 0.5);
  return m > 0 ? std::abs(quantile(b, 0.5) - quantile(a, 0.5)) / m : 0;
}

Figure sample_figure(const ProbeOptions& o, const std::function<double()>& measure) {
  const int64_t start = now_ns();
  const double window_ns = o.seconds_per_figure * 1e9;
  const double limit_ns = window_ns * std::max(1.0, o.settle_windows);
  const size_t min_n = static_cast<size_t>(std::max(1, o.min_repeats));
  std::vector<double> s;
  std::vector<int64_t> done;  // when each sample ended
  size_t first = 0;           // the trailing window is s[first, end)
  for (;;) {
    s.push_back(measure());
    const int64_t t = now_ns();
    done.push_back(t);
    // Slide: drop the oldest sample while the rest still spans a window and has min_n.
    while (s.size() - first > min_n && double(t - done[first]) >= window_ns) ++first;
    const bool full = s.size() - first >= min_n && double(t - start) >= window_ns;
    if (!full && static_cast<int>(s.size()) < o.max_repeats) continue;
    Figure f = Figure::of({s.begin() + static_cast<std::ptrdiff_t>(first), s.end()});
    f.discarded = static_cast<int64_t>(first);
    if (full && f.drift <= o.drift_tolerance && f.noise() <= o.max_noise)
      f.stop = FigureStop::settled;
    else if (double(t - start) >= limit_ns)
      f.stop = FigureStop::time_limit;
    else if (static_cast<int>(s.size()) >= o.max_repeats)
      f.stop = FigureStop::max_repeats;
    else
      continue;
    return f;
  }
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
      auto step = [&](const std::string& what) {
        if (progress) progress(pair + ": " + what);
      };
      step("read bandwidth with " + std::to_string(cpus.size()) + " threads");
      measure_bandwidth(topo, opts, pool, pp, step);
      step("pointer-chase latency");
      measure_latency(topo, opts, cpus, pp, step);  // on the calling thread, pinned to cpus[0]
      r.pairs.push_back(std::move(pp));
    }
  }
  r.wall_seconds = double(now_ns() - start) / 1e9;
  r.virtual_machine = detect_virtual_machine();
  return r;
}

}  // namespace hb::memtier
