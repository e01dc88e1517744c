// The sysfs reader and the hwloc+sysfs merge on small fixture trees (tests/memtier/fixtures,
// described in its README): CPU-less nodes, memory tiers, HMAT, a CXL region with its DAX
// device, and the errors for incomplete trees.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "core/error.h"
#include "memtier/cpulist.h"
#include "memtier/discover.h"
#include "memtier/settings.h"
#include "memtier/sysfs.h"

namespace hb::memtier {
namespace {

namespace fs = std::filesystem;

std::string fixture(const char* name) {
  return std::string(HB_SOURCE_DIR) + "/tests/memtier/fixtures/" + name;
}

bool has_reason(const MemoryNode& n, const std::string& part) {
  return std::any_of(n.reasons.begin(), n.reasons.end(),
                     [&](auto& r) { return r.find(part) != std::string::npos; });
}

// A writable copy of a fixture, removed at the end of the test.
struct TempTree {
  fs::path dir;
  explicit TempTree(const char* name) {
    dir = fs::temp_directory_path() / ("hb_memtier_" + std::to_string(::getpid()) + "_" + name);
    fs::remove_all(dir);
    fs::copy(fixture(name), dir, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }
  ~TempTree() { fs::remove_all(dir); }
  std::string root() const { return dir.string(); }
};

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Cpulist, ParsesAndFormats) {
  EXPECT_EQ(parse_cpulist("0-3,8,10-11\n", "x"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_TRUE(parse_cpulist("", "x").empty());
  EXPECT_EQ(format_cpulist({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_NE(error_of([] { parse_cpulist("0-x", "FILE"); }).find("cannot parse list '0-x' in FILE"),
            std::string::npos);
}

TEST(Sysfs, CxlRegionFixture) {
  const SysfsSnapshot s = read_sysfs(fixture("cxl-region"));
  EXPECT_EQ(s.online, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(s.has_cpu, (std::vector<int>{0}));
  ASSERT_EQ(s.nodes.size(), 3u);
  EXPECT_EQ(s.nodes[0].cpus, (std::vector<int>{0, 1}));
  EXPECT_TRUE(s.nodes[1].cpus.empty());
  EXPECT_EQ(s.nodes[1].total_bytes, 918068ll * 1024);
  EXPECT_EQ(s.nodes[2].distances, (std::vector<int>{20, 20, 10}));
  ASSERT_EQ(s.nodes[1].perf.size(), 1u);
  EXPECT_EQ(s.nodes[1].perf[0].source, "sysfs-access1");
  EXPECT_EQ(s.nodes[1].perf[0].initiator_node, 0);
  EXPECT_EQ(s.nodes[1].perf[0].read_bandwidth_mibps, 5120);
  EXPECT_EQ(s.nodes[1].perf[0].read_latency_ns, 30);
  ASSERT_EQ(s.tiers.size(), 2u);
  EXPECT_EQ(s.tiers[1].id, 22);
  EXPECT_EQ(s.tiers[1].nodes, (std::vector<int>{2}));
  ASSERT_EQ(s.memdevs.size(), 1u);
  EXPECT_EQ(s.memdevs[0].pci_bus_id, "0000:0d:00.0");
  EXPECT_EQ(s.memdevs[0].pmem_bytes, 256ll << 20);
  ASSERT_EQ(s.regions.size(), 1u);
  EXPECT_EQ(s.regions[0].start, 0x390000000ull);
  EXPECT_EQ(s.regions[0].targets, (std::vector<std::string>{"decoder2.0"}));
  EXPECT_EQ(s.regions[0].mode, "pmem");  // 6.1 has no mode file: told by the pmem_region0 child
  ASSERT_EQ(s.dax.size(), 1u);
  EXPECT_EQ(s.dax[0].mode, DaxMode::system_ram);
  EXPECT_EQ(s.dax[0].target_node, 2);
  EXPECT_EQ(s.dax[0].cxl_region, "region0");
  EXPECT_EQ(s.regions[0].numa_node, 2);
}

TEST(Sysfs, CxlRegionClassification) {
  DiscoverOptions o;
  o.sysfs_root = fixture("cxl-region");
  const Topology t = discover(o);
  EXPECT_EQ(t.source, TopologySource::sysfs);
  EXPECT_EQ(t.cpu_node, 0);
  EXPECT_EQ(t.distances_source, "sysfs");
  EXPECT_EQ(t.node(0)->kind, TierKind::local_dram);
  // Node 1: CPU-less, farther, half the HMAT bandwidth, same tier -> far.
  EXPECT_EQ(t.node(1)->kind, TierKind::far);
  EXPECT_TRUE(has_reason(*t.node(1), "CPU-less"));
  EXPECT_TRUE(has_reason(*t.node(1), "lower HMAT bandwidth 5120"));
  EXPECT_TRUE(has_reason(*t.node(1), "distance 20 > 10"));
  // Node 2: onlined from CXL region0 through dax0.0.
  EXPECT_EQ(t.node(2)->kind, TierKind::cxl);
  EXPECT_EQ(t.node(2)->cxl_link, "region0 via dax0.0");
  EXPECT_TRUE(has_reason(*t.node(2), "CXL: region0 via dax0.0"));
  EXPECT_TRUE(has_reason(*t.node(2), "slower memory tier 22 > 4"));
  EXPECT_FALSE(t.node(2)->emulated);
}

TEST(Sysfs, HmatTierFixture) {
  DiscoverOptions o;
  o.sysfs_root = fixture("hmat-tier");
  const Topology t = discover(o);
  EXPECT_EQ(t.node(1)->memory_tier, 27);
  EXPECT_EQ(t.node(1)->kind, TierKind::far);
  EXPECT_TRUE(has_reason(*t.node(1), "slower memory tier 27 > 4"));
  EXPECT_TRUE(t.cxl_regions.empty());
}

TEST(Sysfs, CpuLessIsNotSlow) {
  DiscoverOptions o;
  o.sysfs_root = fixture("cpuless-mixed");
  const Topology t = discover(o);
  EXPECT_EQ(t.node(1)->kind, TierKind::hbm);
  EXPECT_TRUE(has_reason(*t.node(1), "4.0x local DRAM"));
  EXPECT_EQ(t.node(2)->kind, TierKind::remote_dram);
  EXPECT_TRUE(has_reason(*t.node(2), "DRAM without CPUs"));
  // FilePages - Shmem (16 MiB) count as reclaimable.
  EXPECT_EQ(t.node(0)->free_bytes, (4194304ll + 16384) * 1024);
}

TEST(Sysfs, MergesWithHwlocXml) {
  // The KNL XML with a sysfs tree of a different shape: sysfs decides CPUs, hwloc subtypes.
  DiscoverOptions o;
  o.topology_xml = std::string(HB_TOPOLOGY_DIR) + "/cxlmem+dax.v2.xml";
  o.sysfs_root = fixture("cxl-region");
  const Topology t = discover(o);
  EXPECT_EQ(t.source, TopologySource::hwloc_xml_sysfs);
  ASSERT_EQ(t.nodes.size(), 3u);
  EXPECT_EQ(t.node(2)->kind, TierKind::cxl);
  // mem0 is known to both; hwloc has four memdevs.
  ASSERT_EQ(t.cxl_memdevs.size(), 4u);
  EXPECT_EQ(t.cxl_memdevs[0].source, "hwloc+sysfs");
  auto dax = std::find_if(t.dax_devices.begin(), t.dax_devices.end(),
                          [](auto& d) { return d.name == "dax0.0"; });
  ASSERT_NE(dax, t.dax_devices.end());
  EXPECT_EQ(dax->dax_type, "SPM");
  EXPECT_EQ(dax->target_node, 2);
}

TEST(Sysfs, Settings) {
  const SystemSettings s = read_system_settings(fixture("cxl-region"));
  EXPECT_EQ(s.thp_enabled, "madvise");
  EXPECT_EQ(s.thp_defrag, "madvise");
  EXPECT_EQ(s.numa_balancing, 2);
  EXPECT_EQ(s.demotion_enabled, 1);
  EXPECT_EQ(s.zone_reclaim_mode, -1);
  EXPECT_EQ(s.warnings().size(), 2u);
  EXPECT_EQ(s.as_map().at("demotion"), "true");
  const SystemSettings none = read_system_settings(fixture("cpuless-mixed"));
  EXPECT_EQ(none.thp_enabled, "");
  EXPECT_EQ(none.as_map().at("numa_balancing"), "unknown");
  // `run --kv-pages thp` warns only where the kernel grants no huge pages.
  EXPECT_EQ(s.huge_pages_refused(), "");
  EXPECT_EQ(none.huge_pages_refused(), "");  // unknown: nothing to say
  SystemSettings never = s;
  never.thp_enabled = "never";
  EXPECT_NE(never.huge_pages_refused().find("stays on 4 KiB pages"), std::string::npos);
  EXPECT_NE(never.huge_pages_refused().find("--kv-pages 4k"), std::string::npos);
}

TEST(SysfsErrors, MissingNodeDirectory) {
  const std::string msg = error_of([] { read_sysfs("/nonexistent/hb-root"); });
  EXPECT_NE(msg.find("no NUMA information under /nonexistent/hb-root/sys/devices/system/node"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("fix: point --sysfs-root"), std::string::npos) << msg;
}

TEST(SysfsErrors, MissingCpulist) {
  TempTree tree("cxl-region");
  fs::remove(tree.dir / "sys/devices/system/node/node1/cpulist");
  const std::string msg = error_of([&] { read_sysfs(tree.root()); });
  EXPECT_NE(
      msg.find("sysfs file " + tree.root() + "/sys/devices/system/node/node1/cpulist is missing"),
      std::string::npos)
      << msg;
}

TEST(SysfsErrors, MissingOnlineAndNodeDir) {
  TempTree tree("hmat-tier");
  fs::remove_all(tree.dir / "sys/devices/system/node/node1");
  std::string msg = error_of([&] { read_sysfs(tree.root()); });
  EXPECT_NE(msg.find("lists node 1 as online but"), std::string::npos) << msg;
  fs::remove(tree.dir / "sys/devices/system/node/online");
  msg = error_of([&] { read_sysfs(tree.root()); });
  EXPECT_NE(msg.find("node/online is missing"), std::string::npos) << msg;
}

TEST(SysfsErrors, MalformedList) {
  TempTree tree("hmat-tier");
  std::ofstream(tree.dir / "sys/devices/system/node/has_cpu") << "0-zz\n";
  const std::string msg = error_of([&] { read_sysfs(tree.root()); });
  EXPECT_NE(msg.find("cannot parse list '0-zz'"), std::string::npos) << msg;
}

// A huge range used to expand before anything looked at it: "0-2147483647" took 8.4 GB and the
// process was killed. Ids are bounded (kMaxListId) and memory by that bound, whatever the text.
TEST(Cpulist, HugeIdsAreRefusedBeforeExpanding) {
  for (const char* bad :
       {"0-2147483647", "0-65536", "65536", "99999999999", "0-99999999999", "2147483648"}) {
    const std::string msg = error_of([&] { parse_cpulist(bad, "--cpu-nodes"); });
    EXPECT_NE(msg.find("in --cpu-nodes"), std::string::npos) << bad << ": " << msg;
    EXPECT_NE(msg.find(bad), std::string::npos) << bad << ": " << msg;
  }
  EXPECT_EQ(parse_cpulist("0-65535", "x").size(), 65536u);
  EXPECT_EQ(parse_cpulist("0-7", "x", 7).size(), 8u);
  EXPECT_NE(error_of([] { parse_cpulist("8", "x", 7); }).find("larger than 7"), std::string::npos);
  // Repeated and overlapping ranges are merged, not multiplied.
  std::string repeated;
  for (int i = 0; i < 2000; ++i) repeated += "0-65535,";
  EXPECT_EQ(parse_cpulist(repeated, "x").size(), 65536u);
  EXPECT_EQ(parse_cpulist("8,0-3,2-5,8", "x"), (std::vector<int>{0, 1, 2, 3, 4, 5, 8}));
  for (const char* bad : {"-1", "1--2", "3-1", "0,,1", "1-", "x"})
    EXPECT_NE(error_of([&] { parse_cpulist(bad, "x"); }), "(no error)") << bad;
}

TEST(SysfsErrors, HugeCpulistIsRefused) {
  TempTree tree("cxl-region");
  std::ofstream(tree.dir / "sys/devices/system/node/node0/cpulist") << "0-2147483647\n";
  const std::string msg = error_of([&] { read_sysfs(tree.root()); });
  EXPECT_NE(msg.find("node0/cpulist"), std::string::npos) << msg;
  EXPECT_NE(msg.find("larger than"), std::string::npos) << msg;
}

TEST(SysfsErrors, OptionalPartsBecomeNotes) {
  TempTree tree("hmat-tier");
  fs::remove_all(tree.dir / "sys/devices/virtual");
  fs::remove(tree.dir / "sys/devices/system/node/node0/distance");
  const SysfsSnapshot s = read_sysfs(tree.root());
  EXPECT_FALSE(s.tiers_present);
  EXPECT_TRUE(std::any_of(s.notes.begin(), s.notes.end(),
                          [](auto& n) { return n.find("memory_tiering") != std::string::npos; }));
  EXPECT_TRUE(s.nodes[0].distances.empty());
}

// Defect 9: HMAT figures that are not plain numbers or past any machine ("-1" used to wrap to
// 2^64-1 MiB/s) become unknown, with a note.
TEST(SysfsErrors, ImplausibleValuesAreUnknownNotWrapped) {
  TempTree tree("cxl-region");
  const fs::path init = tree.dir / "sys/devices/system/node/node1/access1/initiators";
  std::ofstream(init / "read_bandwidth") << "-1\n";
  std::ofstream(init / "read_latency") << "18446744073709551615\n";
  const SysfsSnapshot s = read_sysfs(tree.root());
  const SysfsNode* n = s.node(1);
  ASSERT_TRUE(n && !n->perf.empty());
  for (const auto& p : n->perf) {
    EXPECT_EQ(p.read_bandwidth_mibps, 0) << p.initiator_node;
    EXPECT_EQ(p.read_latency_ns, 0) << p.initiator_node;
    EXPECT_LE(p.bandwidth_mibps, 1e9);
    EXPECT_LE(p.latency_ns, 1e9);
  }
  auto noted = [&](const std::string& part) {
    return std::any_of(s.notes.begin(), s.notes.end(),
                       [&](auto& x) { return x.find(part) != std::string::npos; });
  };
  EXPECT_TRUE(noted("read_bandwidth reads '-1': not plausible; unknown"));
  EXPECT_TRUE(noted("read_latency reads '18446744073709551615'"));
}

// A SLIT row with an impossible entry, or a node size that is not a size, would place memory by
// invented figures: the tree is refused, naming the file and the value.
TEST(SysfsErrors, ImpossibleDistancesAndSizesAreRefused) {
  const std::string node0 = "sys/devices/system/node/node0/";
  for (const auto& [file, text, named] :
       {std::tuple{"distance", "10 -1 20\n", "node0/distance \"10 -1 20"},
        std::tuple{"distance", "10 abc\n", "not a list of SLIT distances"},
        std::tuple{"meminfo", "Node 0 MemTotal: -5 kB\n", "MemTotal: -5 kB"},
        std::tuple{"meminfo", "Node 0 MemTotal: 99999999999999999999999 kB\n", "not a size"}}) {
    TempTree tree("cxl-region");
    std::ofstream(tree.dir / node0 / file) << text;
    try {
      read_sysfs(tree.root());
      ADD_FAILURE() << file << " '" << text << "' was accepted";
    } catch (const Error& e) {
      EXPECT_NE(e.problem().find(named), std::string::npos) << e.problem();
      EXPECT_EQ(e.exit_code(), kExitUsage);
    }
  }
}

}  // namespace
}  // namespace hb::memtier
