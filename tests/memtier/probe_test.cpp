// A miniature probe of this machine: every figure present, with samples and noise, and the
// probe buffers verified on the node they were meant for.
#include <atomic>
#include <string>

#include <gtest/gtest.h>

#include "core/error.h"
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
  EXPECT_GT(p.latency_ns.summary.median, 0.5);
  EXPECT_TRUE(p.bandwidth_placement.ok) << p.bandwidth_placement.summary();
  EXPECT_EQ(p.bandwidth_placement.pages_per_node.count(t.cpu_node), 1u);
  EXPECT_TRUE(p.latency_placement.ok) << p.latency_placement.summary();
  EXPECT_EQ(lines.size(), 2u);
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
  o.read_kernel = {"test::counting_read", &counting_read};
  counted_bytes = 0;
  const ProbeResult r = probe(t, o);
  ASSERT_EQ(r.pairs.size(), 1u);
  EXPECT_EQ(r.pairs[0].read_kernel, "test::counting_read");
  // warm-up + one read per sample
  EXPECT_EQ(counted_bytes.load(),
            o.bandwidth_bytes * static_cast<uint64_t>(r.pairs[0].read_gbps.summary.count + 1));
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
