// The runner's tier list (order, kinds, emulation labels) and real allocation through it.
#include <string>

#include <gtest/gtest.h>

#include "core/error.h"
#include "memtier/emulate.h"
#include "memtier/host_tiers.h"
#include "memtier/numa_allocator.h"
#include "memtier/placement.h"
#include "memtier/settings.h"

namespace hb::memtier {
namespace {

std::string xml(const char* name) { return std::string(HB_TOPOLOGY_DIR) + "/" + name; }

std::vector<std::string> names(const std::vector<HostTier>& tiers) {
  std::vector<std::string> s;
  for (const auto& t : tiers) s.push_back(t.location.to_string());
  return s;
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(HostTiers, KnlLocalDramFirstThenHbm) {
  DiscoverOptions o;
  o.topology_xml = xml("64intel64-fakeKNL-SNC4-hybrid.xml");
  const auto tiers = host_tiers(discover(o), nullptr, false);
  EXPECT_EQ(names(tiers),
            (std::vector<std::string>{"local-dram@0", "hbm@4", "hbm@5", "hbm@6", "hbm@7",
                                      "remote-dram@1", "remote-dram@2", "remote-dram@3"}));
  EXPECT_EQ(tiers[0].read_bandwidth_bytes_per_s, 22500 * 1048576.0);
  EXPECT_EQ(tiers[0].allocator, nullptr);
}

TEST(HostTiers, EmulatedCxlNodeOnTwoSockets) {
  DiscoverOptions o;
  o.topology_xml = xml("24em64t-2n6c2t-pci.xml");
  o.emulate_cxl = "node=1";
  const Topology t = discover(o);
  EXPECT_EQ(t.node(1)->kind, TierKind::cxl);
  EXPECT_TRUE(t.node(1)->emulated);
  EXPECT_NE(t.node(1)->reasons[0].find("emulated: remote-dram node stands in for CXL"),
            std::string::npos);
  Platform p;
  p.host_tiers = host_tiers(t, nullptr, false);
  ASSERT_NE(p.tier_of_kind(MemoryKind::cxl), nullptr);
  EXPECT_EQ(p.tier_of_kind(MemoryKind::cxl)->location.to_string(), "cxl@1(emulated)");
}

TEST(HostTiers, EmulationErrors) {
  DiscoverOptions o;
  o.topology_xml = xml("24em64t-2n6c2t-pci.xml");
  o.emulate_cxl = "node=0";
  EXPECT_NE(error_of([&] { discover(o); }).find("is the reference CPU node's own DRAM"),
            std::string::npos);
  o.emulate_cxl = "node=9";
  EXPECT_NE(error_of([&] { discover(o); }).find("this machine has no NUMA node 9"),
            std::string::npos);
  EXPECT_NE(
      error_of([] { parse_cxl_emulation("bandwidth=10"); }).find("cannot understand --emulate-cxl"),
      std::string::npos);
  EXPECT_NE(error_of([] {
              parse_cxl_emulation("bandwidth=-1,latency=5");
            }).find("is not a number in (0, "),
            std::string::npos);
  // Once accepted: an infinite bandwidth, a NaN latency, a node number past int
  // (std::out_of_range).
  for (const char* bad :
       {"bandwidth=inf,latency=5", "bandwidth=10,latency=nan", "bandwidth=10x,latency=5"})
    EXPECT_NE(error_of([&] { parse_cxl_emulation(bad); }).find("is not a number in (0, "),
              std::string::npos)
        << bad;
  EXPECT_NE(error_of([] { parse_cxl_emulation("node=99999999999"); }).find("--emulate-cxl node"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_cxl_emulation("speed=3"); }).find("at 'speed=3'"),
            std::string::npos);
}

TEST(HostTiers, CpuNodeChoice) {
  DiscoverOptions o;
  o.topology_xml = xml("24em64t-2n6c2t-pci.xml");
  o.cpu_node = 1;
  const Topology t = discover(o);
  EXPECT_EQ(t.node(1)->kind, TierKind::local_dram);
  EXPECT_EQ(t.node(0)->kind, TierKind::remote_dram);
  o.topology_xml = xml("64intel64-fakeKNL-SNC4-hybrid.xml");
  o.cpu_node = 5;
  EXPECT_NE(error_of([&] { discover(o); }).find("--cpu-node 5: node has no CPUs"),
            std::string::npos);
}

TEST(HostTiers, ThisMachineWithSimulatedCxl) {
  DiscoverOptions o;
  o.emulate_cxl = "bandwidth=12.5,latency=350";
  const auto tiers = discover_host_tiers(o);
  ASSERT_GE(tiers.size(), 2u);
  EXPECT_EQ(tiers.front().location.kind, MemoryKind::local_dram);
  const HostTier& sim = tiers.back();
  EXPECT_EQ(sim.location.kind, MemoryKind::cxl);
  EXPECT_TRUE(sim.location.emulated);
  EXPECT_EQ(sim.read_bandwidth_bytes_per_s, 12.5e9);
  ASSERT_NE(sim.allocator, nullptr);
  Buffer b = sim.allocator->allocate(1 << 20);
  EXPECT_EQ(b.location().to_string(),
            "cxl@" + std::to_string(tiers.front().location.node) + "(emulated)");
}

// `run --kv-pages thp|4k`: the tiers' allocators ask for huge pages or not, and with the kernel's
// THP in "madvise" mode that decides what the KV gets (in "always" it gets them either way).
TEST(HostTiers, KvPagesChooseHugePagesOnThisMachine) {
  const std::string thp = read_system_settings("/").thp_enabled;
  if (thp != "madvise" && thp != "always")
    GTEST_SKIP() << "transparent huge pages are '" << thp << "' here: nothing to choose";
  constexpr size_t kBytes = size_t{8} << 20;
  const Topology topo = discover();
  for (const bool huge : {true, false}) {
    const auto tiers = host_tiers(topo, nullptr, true, huge);
    ASSERT_FALSE(tiers.empty());
    const auto* numa = dynamic_cast<const NumaAllocator*>(tiers.front().allocator.get());
    ASSERT_NE(numa, nullptr);
    EXPECT_EQ(numa->policy().huge_pages, huge);
    Buffer b = tiers.front().allocator->allocate(kBytes);
    const PlacementReport r = verify_placement(b.data(), b.size(), {tiers.front().location.node});
    EXPECT_TRUE(r.ok) << r.summary();
    if (huge) {  // compaction may miss a page or two, not all four
      EXPECT_GT(r.huge_page_bytes, 0) << "asked for THP (" << thp << ") and got none";
    } else if (thp == "madvise") {
      EXPECT_EQ(r.huge_page_bytes, 0) << "base pages asked for, huge pages given";
    }
  }
}

}  // namespace
}  // namespace hb::memtier
