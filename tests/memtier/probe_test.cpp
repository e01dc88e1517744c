// A miniature probe of this machine: every figure present, with samples and noise, and the
// probe buffers verified on the node they were meant for.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/thread_pool.h"
#include "core/timer.h"
#include "kernels/cpu/stream_read.h"
#include "memtier/discover.h"
#include "memtier/pointer_chase.h"
#include "memtier/probe.h"

namespace hb::memtier {
namespace {

TEST(PointerChase, SingleCycleThroughEveryLine) {
  std::vector<char> buf(64 * 1000);
  build_chase_cycle(buf.data(), buf.size(), 7);
  const void* p = buf.data();
  std::vector<bool> seen(1000, false);
  for (int i = 0; i < 1000; ++i) {
    const size_t line = (static_cast<const char*>(p) - buf.data()) / 64;
    EXPECT_FALSE(seen[line]) << "cycle shorter than the buffer at hop " << i;
    seen[line] = true;
    p = *static_cast<const void* const*>(p);
  }
  EXPECT_EQ(p, buf.data());
  EXPECT_GT(chase_ns_per_hop(buf.data(), 4096), 0.0);
}

TEST(Probe, TinyProbeOfThisMachine) {
  const Topology t = discover();
  ProbeOptions o;
  o.bandwidth_bytes = size_t{16} << 20;
  o.latency_bytes = size_t{16} << 20;
  o.latency_hops = 1 << 15;
  o.seconds_per_figure = 0.02;
  o.min_repeats = 3;
  o.cpu_nodes = {t.cpu_node};
  o.mem_nodes = {t.cpu_node};
  o.read_kernel = cpu::stream_read_kernel();
  std::vector<std::string> lines;
  const ProbeResult r = probe(t, o, [&](const std::string& s) { lines.push_back(s); });
  ASSERT_EQ(r.pairs.size(), 1u);
  const PairProbe& p = r.pairs[0];
  EXPECT_EQ(r.source, "measured");
  EXPECT_EQ(p.read_kernel, "hb::cpu::stream_read");
  EXPECT_GE(p.read_gbps.summary.count, 3);
  EXPECT_GT(p.read_gbps.summary.median, 0.1);
  EXPECT_GE(p.read_gbps.summary.rel_stdev(), 0.0);
  EXPECT_NE(p.read_gbps.stop, FigureStop::unchecked);  // the probe judged its window
  EXPECT_GT(p.write_gbps.summary.median, 0.1);         // stream_read_kernel() has write + copy
  EXPECT_GT(p.copy_gbps.summary.median, 0.1);
  EXPECT_GT(p.latency_ns.summary.median, 0.5);
  size_t usable = 0;  // the node's CPUs this process may use: the loaded latency needs two
  for (int c : allowed_cpus())
    usable += std::count(t.node(t.cpu_node)->cpus.begin(), t.node(t.cpu_node)->cpus.end(), c);
  if (usable >= 2) {
    EXPECT_GT(p.loaded_latency_ns.summary.median, 0.5);
    EXPECT_GE(p.load_threads, 1);
    EXPECT_GT(p.load_gbps, 0.0);
  }
  EXPECT_TRUE(p.bandwidth_placement.ok) << p.bandwidth_placement.summary();
  EXPECT_EQ(p.bandwidth_placement.pages_per_node.count(t.cpu_node), 1u);
  EXPECT_TRUE(p.latency_placement.ok) << p.latency_placement.summary();
  // read, write, copy, idle latency (+ loaded latency with a second CPU)
  EXPECT_EQ(lines.size(), p.loaded_latency_ns.empty() ? 4u : 5u);
  EXPECT_EQ(r.pair(t.cpu_node, t.cpu_node), &r.pairs[0]);
}

// The probe measures with the kernel it is handed (memtier knows no SIMD engine): a counting
// kernel sees every byte of every repeat, and its name is what the figure records.
std::atomic<uint64_t> counted_bytes{0};
uint64_t counting_read(const void*, size_t bytes, ThreadPool&) {
  counted_bytes += bytes;
  return bytes;
}

TEST(Probe, MeasuresWithTheReadKernelItIsGiven) {
  const Topology t = discover();
  ProbeOptions o = ProbeOptions::quick();
  o.bandwidth_bytes = size_t{4} << 20;
  o.latency_bytes = size_t{4} << 20;
  o.latency_hops = 1 << 12;
  o.seconds_per_figure = 0.01;
  o.min_repeats = 3;
  o.cpu_nodes = o.mem_nodes = {t.cpu_node};
  o.loaded_latency = false;  // its load would count bytes too
  o.read_kernel = {"test::counting_read", &counting_read};
  counted_bytes = 0;
  const ProbeResult r = probe(t, o);
  ASSERT_EQ(r.pairs.size(), 1u);
  const PairProbe& p = r.pairs[0];
  EXPECT_EQ(p.read_kernel, "test::counting_read");
  // warm-up + one read per sample, published or discarded while the window settled
  EXPECT_EQ(counted_bytes.load(),
            o.bandwidth_bytes *
                static_cast<uint64_t>(p.read_gbps.summary.count + p.read_gbps.discarded + 1));
  // A kernel without write and copy companions gives no such figures (and no error).
  EXPECT_TRUE(p.write_gbps.empty());
  EXPECT_TRUE(p.copy_gbps.empty());
}

// ---- settling: the windowing rule on scripted samples, no timing involved -------------------
// A window of ~0 s is the last min_repeats samples; settle_windows so large that only
// max_repeats can stop an unsettled figure, so each test is exact.
ProbeOptions scripted(int min_repeats, int max_repeats) {
  ProbeOptions o;
  o.seconds_per_figure = 1e-9;
  o.settle_windows = 1e12;
  o.min_repeats = min_repeats;
  o.max_repeats = max_repeats;
  return o;
}

Figure run_script(const ProbeOptions& o, std::function<double(int)> sample, int* taken) {
  *taken = 0;
  return sample_figure(o, [&] { return sample((*taken)++); });
}

TEST(ProbeSettling, SteadySamplesSettleAtOnce) {
  int n = 0;
  const Figure f = run_script(
      scripted(8, 100), [](int i) { return 50 + (i % 2); }, &n);
  EXPECT_EQ(n, 8);
  EXPECT_EQ(f.stop, FigureStop::settled);
  EXPECT_TRUE(f.settled());
  EXPECT_EQ(f.discarded, 0);
  EXPECT_EQ(f.summary.count, 8);
  EXPECT_NEAR(f.summary.median, 50.5, 1e-12);
}

// The shared-machine case: during a burst of load the samples are low and noisy (issue 18 saw
// 2.8x low at +-23-27%); the probe keeps sampling and publishes the settled window after it,
// not the burst. The first window to settle holds one sample of the burst: a lone outlier is
// inside the robust noise, and the median is 60.
TEST(ProbeSettling, ABurstOfLoadIsSampledPastNotPublished) {
  int n = 0;
  const Figure f = run_script(
      scripted(8, 100), [](int i) { return i < 20 ? (i % 2 ? 15.0 : 30.0) : 60.0; }, &n);
  EXPECT_EQ(f.stop, FigureStop::settled);
  EXPECT_EQ(n, 27);
  EXPECT_EQ(f.discarded, 19);
  EXPECT_EQ(f.summary.count, 8);
  EXPECT_DOUBLE_EQ(f.summary.median, 60.0);
}

// Samples that keep drifting (2% per sample, compounding: the halves of any 8 differ by ~8%)
// never settle: the figure is published at the limit, marked so.
TEST(ProbeSettling, ADriftThatNeverEndsIsReportedNotHidden) {
  int n = 0;
  const Figure f = run_script(
      scripted(8, 60), [](int i) { return 100.0 * std::pow(1.02, i); }, &n);
  EXPECT_EQ(n, 60);
  EXPECT_EQ(f.stop, FigureStop::max_repeats);
  EXPECT_FALSE(f.settled());
  EXPECT_GT(f.drift, 0.05);
  EXPECT_EQ(f.discarded, 52);
}

// Noise alone (no drift) also keeps a figure from settling: +-50% alternating samples.
TEST(ProbeSettling, NoiseAboveTheLimitIsNotSettled) {
  int n = 0;
  const Figure f = run_script(
      scripted(8, 40), [](int i) { return i % 2 ? 30.0 : 10.0; }, &n);
  EXPECT_EQ(f.stop, FigureStop::max_repeats);
  EXPECT_GT(f.noise(), 0.10);
  EXPECT_LE(f.drift, 0.05);
}

// The wall-clock limit: samples that never settle stop after settle_windows windows.
TEST(ProbeSettling, TimeLimitStopsAnUnsettledFigure) {
  ProbeOptions o;
  o.seconds_per_figure = 0.005;
  o.settle_windows = 2;
  o.min_repeats = 4;
  o.max_repeats = 1 << 30;
  int n = 0;
  const int64_t t0 = now_ns();
  const Figure f = run_script(
      o,
      [](int i) {
        const int64_t until = now_ns() + 100'000;  // 0.1 ms per sample, like a small read
        while (now_ns() < until) {
        }
        return i % 2 ? 30.0 : 10.0;
      },
      &n);
  EXPECT_EQ(f.stop, FigureStop::time_limit);
  EXPECT_GE(double(now_ns() - t0), 0.01e9);
  EXPECT_GT(f.discarded, 0);
}

TEST(ProbeSettling, DriftIsTheGapBetweenTheHalvesMedians) {
  EXPECT_DOUBLE_EQ(drift_of({}), 0.0);
  EXPECT_DOUBLE_EQ(drift_of({1, 2, 3}), 0.0);  // too few to split
  EXPECT_DOUBLE_EQ(drift_of({10, 10, 10, 10}), 0.0);
  // halves {10, 10} and {12, 12}, median 11
  EXPECT_DOUBLE_EQ(drift_of({10, 10, 12, 12}), 2.0 / 11.0);
  // odd count: the middle sample belongs to neither half
  EXPECT_DOUBLE_EQ(drift_of({10, 10, 99, 12, 12}), 2.0 / 12.0);
}

TEST(Probe, RefusesToRunWithoutAReadKernel) {
  ProbeOptions o = ProbeOptions::quick();
  try {
    probe(discover(), o);
    FAIL() << "probe ran without a read kernel";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no read kernel"), std::string::npos) << e.what();
  }
}

TEST(Probe, RefusesAnotherMachinesTopology) {
  DiscoverOptions o;
  o.topology_xml = std::string(HB_TOPOLOGY_DIR) + "/24em64t-2n6c2t-pci.xml";
  try {
    probe(discover(o), ProbeOptions::quick());
    FAIL() << "probe accepted an XML topology";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("probe measures the machine it runs on"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace hb::memtier
