// `hybridbench topo` and `probe` end to end through the built binary (HB_BINARY): JSON of
// every topology file, the sysfs fixture, a profile written and shown again, and errors.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

struct CmdResult {
  int rc = -1;
  std::string out;
};

CmdResult run(const std::string& args) {
  CmdResult r;
  const std::string cmd = std::string(HB_BINARY) + " " + args;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  const int st = pclose(p);
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::string topo_file(const char* name) { return std::string(HB_TOPOLOGY_DIR) + "/" + name; }

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(HB_BINARY)) GTEST_SKIP() << "hybridbench not built: " << HB_BINARY;
  }
};

TEST_F(Cli, TopoJsonOnEveryTopologyFile) {
  struct Want {
    const char* file;
    size_t nodes;
    int pus;
    const char* kind_of_last;
  };
  for (const Want& w : {Want{"24em64t-2n6c2t-pci.xml", 2, 24, "remote-dram"},
                        Want{"64intel64-fakeKNL-SNC4-hybrid.xml", 8, 64, "hbm"},
                        Want{"cxlmem+dax.v2.xml", 1, 4, "local-dram"},
                        Want{"fakeheteromemtiers.hwloc29.xml", 7, 6, "far"}}) {
    const CmdResult r = run("topo --json --topology " + topo_file(w.file));
    ASSERT_EQ(r.rc, 0) << w.file << "\n" << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["schema"], "hybridbench.topology/1");
    EXPECT_EQ(j["source"], "hwloc-xml");
    EXPECT_EQ(j["nodes"].size(), w.nodes) << w.file;
    EXPECT_EQ(j["pus"], w.pus) << w.file;
    EXPECT_EQ(j["nodes"].back()["kind"], w.kind_of_last) << w.file;
    EXPECT_FALSE(j["nodes"].back()["reasons"].empty()) << w.file;
    EXPECT_EQ(j["settings"]["known"], false) << w.file;
  }
  const auto gpus = nlohmann::json::parse(
      run("topo --json --topology " + topo_file("24em64t-2n6c2t-pci.xml")).out)["gpus"];
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(gpus[0]["pci_bus_id"], "0000:06:00.0");
  EXPECT_EQ(gpus[0]["numa_node"], 0);
  EXPECT_EQ(gpus[1]["numa_node"], 1);
}

TEST_F(Cli, TopoTextFromSysfsFixtureAndEmulation) {
  const CmdResult r =
      run("topo --sysfs-root " + std::string(HB_SOURCE_DIR) + "/tests/memtier/fixtures/cxl-region");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("why: CXL: region0 via dax0.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("region region0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("numa_balancing: 2"), std::string::npos) << r.out;
  const CmdResult e =
      run("topo --topology " + topo_file("24em64t-2n6c2t-pci.xml") + " --emulate-cxl node=1");
  EXPECT_NE(e.out.find("cxl (emulated)"), std::string::npos) << e.out;
}

TEST_F(Cli, ClearErrors) {
  CmdResult r = run("topo --topology " + std::string(HB_SOURCE_DIR) +
                    "/tests/memtier/fixtures/README.md 2>&1");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("hybridbench: error: hwloc cannot load"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fix: give an hwloc 2.x XML export"), std::string::npos) << r.out;
  r = run("topo --sysfs-root /nonexistent 2>&1");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("no NUMA information under /nonexistent/sys/devices/system/node"),
            std::string::npos)
      << r.out;
  r = run("probe --quick --mem-nodes 63 2>&1");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.out.find("probe: no NUMA node 63"), std::string::npos) << r.out;
}

// Defect 9: `topo --topology` on a file with an HMAT bandwidth of -1 or a NUMA os_index of
// 4294967295 exits 2 naming the file, the node and the attribute (it showed 2^64-1 MiB/s and
// "node -1").
TEST_F(Cli, TopologyWithImpossibleValuesIsRefused) {
  struct Want {
    const char* file;
    const char* part;
  };
  for (const Want& w :
       {Want{"crafted/hmat-bandwidth-minus1.xml", "memory attribute Bandwidth of NUMA node 0"},
        Want{"crafted/numa-os-index-unknown.xml", "os_index=\"4294967295\" is not"}}) {
    const CmdResult r = run("topo --json --topology " + topo_file(w.file) + " 2>&1");
    EXPECT_EQ(r.rc, 2) << w.file << "\n" << r.out;
    EXPECT_NE(r.out.find("hwloc topology file " + topo_file(w.file)), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(w.part), std::string::npos) << r.out;
  }
}

// --kv-node on a node that cannot hold the KV fails before any workload is generated (the
// tests/vm bad-input guest checks the same on a 128 MiB CXL node and an offline node).
TEST_F(Cli, KvNodeTooSmallIsRefusedUpFront) {
  const CmdResult r =
      run("run --strategy cpu-only --kv-node 0 --model llama-3.1-8b --seq-len 128k --batch 4096 "
          "--out /tmp/hb_never_written.json 2>&1");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("NUMA node 0 (local-dram@0) has"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("too little for the KV cache of the largest point (llama-3.1-8b, 131072 "
                       "tokens, batch 4096"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("fix: pick a node with more free memory"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists("/tmp/hb_never_written.json"));
}

TEST_F(Cli, ProbeWritesAProfileTopoShowsIt) {
  const std::string f =
      (std::filesystem::temp_directory_path() / ("hb_cli_" + std::to_string(getpid()) + ".json"))
          .string();
  const CmdResult p = run("probe --quick --quiet --duration 0.02 --out " + f);
  ASSERT_EQ(p.rc, 0) << p.out;
  EXPECT_NE(p.out.find("GB/s"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("platform profile written to " + f), std::string::npos);
  EXPECT_NE(p.out.find("write GB/s"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("loaded latency"), std::string::npos) << p.out;
  {
    std::ifstream in(f);
    const auto j = nlohmann::json::parse(in);
    const auto& pair = j["probe"]["pairs"][0];
    EXPECT_TRUE(pair.contains("write_bandwidth_gbps")) << pair.dump();
    EXPECT_TRUE(pair.contains("copy_bandwidth_gbps")) << pair.dump();
    const std::string stop = pair["read_bandwidth_gbps"]["stop"];
    EXPECT_TRUE(stop == "settled" || stop == "time-limit" || stop == "max-repeats") << stop;
    // an unsettled figure must say so in the table, whatever this machine's load
    if (stop != "settled")
      EXPECT_NE(p.out.find("read bandwidth did not settle"), std::string::npos) << p.out;
  }
  const CmdResult t = run("topo --platform " + f);
  std::filesystem::remove(f);
  ASSERT_EQ(t.rc, 0) << t.out;
  EXPECT_NE(t.out.find("Topology from profile"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("measured from node"), std::string::npos) << t.out;
}

}  // namespace
