// Golden facts of the four hwloc XML topologies in tests/memtier/fixtures/topologies (their README
// lists them), plus the classification each should get.
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "core/error.h"
#include "memtier/discover.h"

namespace hb::memtier {
namespace {

std::string xml(const char* name) { return std::string(HB_TOPOLOGY_DIR) + "/" + name; }

Topology load(const char* name) {
  DiscoverOptions o;
  o.topology_xml = xml(name);
  return discover(o);
}

std::vector<std::string> subtypes(const Topology& t) {
  std::vector<std::string> s;
  for (const auto& n : t.nodes) s.push_back(n.subtype);
  return s;
}

TierKind kind(const Topology& t, int node) { return t.node(node)->kind; }

TEST(TopologyXml, TwoSocketWithGpus) {
  const Topology t = load("24em64t-2n6c2t-pci.xml");
  EXPECT_EQ(t.packages.size(), 2u);
  EXPECT_EQ(t.pus, 24);
  EXPECT_EQ(t.cores, 12);
  ASSERT_EQ(t.nodes.size(), 2u);
  EXPECT_EQ(t.distances_source, "hwloc NUMALatency");
  EXPECT_EQ(t.distance(0, 1), 20);
  EXPECT_EQ(t.distance(1, 1), 10);
  EXPECT_TRUE(t.memattrs.empty() ||
              std::count(t.memattrs.begin(), t.memattrs.end(), "Bandwidth") == 0);
  EXPECT_EQ(t.cpu_node, 0);
  EXPECT_EQ(kind(t, 0), TierKind::local_dram);
  EXPECT_EQ(kind(t, 1), TierKind::remote_dram);
  // Three NVIDIA Teslas; the ATI VGA chip of the BMC is not a GPU.
  ASSERT_EQ(t.gpus.size(), 3u);
  for (const auto& g : t.gpus) {
    EXPECT_EQ(g.vendor_id, 0x10de);
    const int want = g.pci_bus_id == "0000:06:00.0" ? 0 : 1;
    EXPECT_EQ(g.numa_node, want) << g.pci_bus_id;
    EXPECT_EQ(g.package, want) << g.pci_bus_id;
  }
  EXPECT_TRUE(std::any_of(t.gpus.begin(), t.gpus.end(),
                          [](auto& g) { return g.pci_bus_id == "0000:11:00.0"; }));
  EXPECT_TRUE(std::any_of(t.gpus.begin(), t.gpus.end(),
                          [](auto& g) { return g.pci_bus_id == "0000:14:00.0"; }));
}

TEST(TopologyXml, KnlMcdramIsHbm) {
  const Topology t = load("64intel64-fakeKNL-SNC4-hybrid.xml");
  EXPECT_EQ(t.packages.size(), 1u);
  EXPECT_EQ(t.pus, 64);
  ASSERT_EQ(t.nodes.size(), 8u);
  EXPECT_EQ(std::count(t.memattrs.begin(), t.memattrs.end(), "Bandwidth"), 1);
  // Logical order DRAM, MCDRAM per cluster; by OS index DRAM are 0-3 and MCDRAM 4-7.
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(t.node(i)->subtype, "DRAM");
    EXPECT_TRUE(t.node(i)->has_cpu());
    EXPECT_EQ(t.node(i + 4)->subtype, "MCDRAM");
    EXPECT_FALSE(t.node(i + 4)->has_cpu()) << "MCDRAM is CPU-less";
    EXPECT_EQ(kind(t, i + 4), TierKind::hbm) << "CPU-less is not slow";
    EXPECT_EQ(t.node(i + 4)->total_bytes, 2147483648);
  }
  EXPECT_EQ(kind(t, 0), TierKind::local_dram);
  EXPECT_EQ(kind(t, 1), TierKind::remote_dram);
  const auto& r = t.node(7)->reasons;
  EXPECT_TRUE(std::any_of(r.begin(), r.end(),
                          [](auto& s) { return s.find("subtype MCDRAM") != std::string::npos; }));
  EXPECT_TRUE(
      std::any_of(r.begin(), r.end(), [](auto& s) { return s.find("4.0x") != std::string::npos; }));
  // Per-initiator bandwidth: MCDRAM of cluster 0 as seen by cluster 0's CPUs (node 0).
  ASSERT_FALSE(t.node(7)->perf.empty());
  EXPECT_EQ(t.node(7)->perf[0].initiator_node, 0);
  EXPECT_EQ(t.node(7)->perf[0].bandwidth_mibps, 90000);
}

TEST(TopologyXml, HeteroMemTiersNvmIsFar) {
  const Topology t = load("fakeheteromemtiers.hwloc29.xml");
  EXPECT_EQ(t.packages.size(), 1u);
  EXPECT_EQ(t.pus, 6);
  ASSERT_EQ(t.nodes.size(), 7u);
  EXPECT_EQ(std::count(t.memattrs.begin(), t.memattrs.end(), "Bandwidth"), 1);
  // By OS index: 0 DRAM, 1 DRAM, 2 HBM, 4 HBM, 6 NVM, 8 NVM, 9 NVM.
  EXPECT_EQ(subtypes(t),
            (std::vector<std::string>{"DRAM", "DRAM", "HBM", "HBM", "NVM", "NVM", "NVM"}));
  EXPECT_EQ(kind(t, 0), TierKind::local_dram);
  EXPECT_EQ(kind(t, 1), TierKind::remote_dram);
  EXPECT_EQ(kind(t, 2), TierKind::hbm);
  EXPECT_EQ(kind(t, 4), TierKind::hbm);
  for (int n : {6, 8, 9}) EXPECT_EQ(kind(t, n), TierKind::far) << n;
  const auto& r = t.node(8)->reasons;
  EXPECT_TRUE(std::any_of(r.begin(), r.end(), [](auto& s) {
    return s.find("lower HMAT bandwidth 100") != std::string::npos;
  }));
}

TEST(TopologyXml, CxlDevicesButNoCxlNode) {
  const Topology t = load("cxlmem+dax.v2.xml");
  EXPECT_EQ(t.packages.size(), 1u);
  EXPECT_EQ(t.pus, 4);
  ASSERT_EQ(t.nodes.size(), 1u);
  EXPECT_EQ(kind(t, 0), TierKind::local_dram);
  ASSERT_EQ(t.cxl_memdevs.size(), 4u);
  EXPECT_EQ(t.cxl_memdevs[0].name, "mem0");
  EXPECT_EQ(t.cxl_memdevs[0].pmem_bytes, 256ll << 20);
  EXPECT_EQ(t.cxl_memdevs[1].ram_bytes, 256ll << 20);
  EXPECT_FALSE(t.cxl_memdevs[0].pci_bus_id.empty());
  ASSERT_EQ(t.dax_devices.size(), 1u);
  EXPECT_EQ(t.dax_devices[0].name, "dax0.0");
  EXPECT_EQ(t.dax_devices[0].dax_type, "SPM");
  for (const auto& n : t.nodes) EXPECT_NE(n.kind, TierKind::cxl);
}

// Defect 9: values no machine has, from files derived from fakeheteromemtiers (crafted/, see
// the topologies README). They used to read as 2^64-1 MiB/s and as "node -1"; a file is refused,
// naming the file, the node and the attribute.
std::string refusal_of(const std::string& file) {
  try {
    DiscoverOptions o;
    o.topology_xml = file;
    discover(o);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage) << e.what();
    return e.what();
  }
  return "(accepted)";
}

TEST(TopologyXml, HmatBandwidthMinusOneIsRefused) {
  const std::string f = xml("crafted/hmat-bandwidth-minus1.xml");
  const std::string msg = refusal_of(f);
  EXPECT_NE(msg.find("hwloc topology file " + f), std::string::npos) << msg;
  EXPECT_NE(
      msg.find("memory attribute Bandwidth of NUMA node 0 from CPUs 0-1 is 18446744073709551615"),
      std::string::npos)
      << msg;
}

TEST(TopologyXml, UnknownNumaOsIndexIsRefused) {
  const std::string f = xml("crafted/numa-os-index-unknown.xml");
  const std::string msg = refusal_of(f);
  EXPECT_NE(msg.find("hwloc topology file " + f), std::string::npos) << msg;
  EXPECT_NE(msg.find("os_index=\"4294967295\" is not a CPU or NUMA node number"), std::string::npos)
      << msg;
}

}  // namespace
}  // namespace hb::memtier
