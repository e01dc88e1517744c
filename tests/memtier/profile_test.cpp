// Platform profiles: written, read back equal, and refused with the JSON path when broken.
// Also the errors for broken hwloc inputs.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/stats.h"
#include "memtier/discover.h"
#include "memtier/profile.h"

namespace hb::memtier {
namespace {

namespace fs = std::filesystem;

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

fs::path temp(const std::string& name) {
  return fs::temp_directory_path() / ("hb_memtier_" + std::to_string(::getpid()) + "_" + name);
}

// A profile of a file topology with a synthetic measurement: fast, and covers every field.
PlatformProfile sample_profile() {
  DiscoverOptions o;
  o.topology_xml = std::string(HB_TOPOLOGY_DIR) + "/fakeheteromemtiers.hwloc29.xml";
  o.emulate_cxl = "node=1";
  Topology t = discover(o);
  ProbeResult r;
  PairProbe p;
  p.cpu_node = 0;
  p.mem_node = 1;
  p.kind = TierKind::cxl;
  p.emulated = true;
  p.threads = 2;
  p.read_kernel = "hb::cpu::stream_read";
  p.read_gbps = Figure::of({10.0, 11.0, 12.0});
  p.latency_ns = Figure::of({100.0, 110.0, 90.0});
  p.bandwidth_placement.intended_nodes = {1};
  p.bandwidth_placement.pages_per_node = {{1, 42}};
  p.bandwidth_placement.ok = true;
  r.pairs.push_back(p);
  r.wall_seconds = 1.5;
  r.virtual_machine = "cpuinfo flag 'hypervisor'; DMI QEMU Standard PC (Q35 + ICH9, 2009)";
  return make_platform_profile(std::move(t), read_system_settings("/"), std::move(r));
}

TEST(Profile, RoundTrip) {
  const PlatformProfile a = sample_profile();
  const fs::path f = temp("profile.json");
  std::ofstream(f) << platform_profile_json(a);  // files are written by reports/output_file (cli)
  const PlatformProfile b = load_platform_profile(f.string());
  fs::remove(f);
  EXPECT_EQ(b.source, "measured");
  EXPECT_EQ(b.host, a.host);
  EXPECT_EQ(b.topology.source, TopologySource::profile);
  ASSERT_EQ(b.topology.nodes.size(), a.topology.nodes.size());
  for (size_t i = 0; i < a.topology.nodes.size(); ++i) {
    EXPECT_EQ(b.topology.nodes[i].kind, a.topology.nodes[i].kind);
    EXPECT_EQ(b.topology.nodes[i].reasons, a.topology.nodes[i].reasons);
    EXPECT_EQ(b.topology.nodes[i].distances, a.topology.nodes[i].distances);
    EXPECT_EQ(b.topology.nodes[i].perf.size(), a.topology.nodes[i].perf.size());
    EXPECT_EQ(b.topology.nodes[i].cpus, a.topology.nodes[i].cpus);
  }
  EXPECT_TRUE(b.topology.node(1)->emulated);
  EXPECT_EQ(b.settings.thp_enabled, a.settings.thp_enabled);
  EXPECT_EQ(b.settings.interleave_weights, a.settings.interleave_weights);
  ASSERT_EQ(b.probe.pairs.size(), 1u);
  EXPECT_DOUBLE_EQ(b.probe.pairs[0].read_gbps.summary.median, 11.0);
  EXPECT_EQ(b.probe.pairs[0].bandwidth_placement.pages_per_node.at(1), 42);
  EXPECT_TRUE(b.probe.pairs[0].emulated);
  EXPECT_EQ(b.probe.virtual_machine, a.probe.virtual_machine);  // the VM label survives the file
  // The topology JSON is the profile's "topology" section.
  const auto doc = nlohmann::json::parse(platform_profile_json(a));
  EXPECT_EQ(doc["topology"], nlohmann::json::parse(topology_json(a.topology, a.settings)));
  EXPECT_EQ(doc["tiers"][1]["source"], "emulated");
}

TEST(Profile, BrokenFilesNameThePath) {
  const std::string good = platform_profile_json(sample_profile());
  auto with = [&](auto edit) {
    auto j = nlohmann::ordered_json::parse(good);
    edit(j);
    return error_of([&] { parse_platform_profile(j.dump(), "p.json"); });
  };
  EXPECT_NE(error_of([] { parse_platform_profile("{ nope", "p.json"); }).find("p.json: not JSON"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_platform_profile("[1e999]", "p.json"); }).find("p.json: not JSON"),
            std::string::npos);  // out_of_range, not parse_error
  EXPECT_NE(with([](auto& j) {
              j["schema"] = "hybridbench.report/1";
            }).find("p.json: $.schema: expected \"hybridbench.platform/1\""),
            std::string::npos);
  EXPECT_NE(with([](auto& j) {
              j["topology"]["nodes"][2].erase("kind");
            }).find("$.topology.nodes[2]: missing field \"kind\""),
            std::string::npos);
  EXPECT_NE(with([](auto& j) {
              j["topology"]["nodes"][0]["kind"] = "ssd";
            }).find("unknown tier kind \"ssd\""),
            std::string::npos);
  EXPECT_NE(with([](auto& j) {
              j["probe"]["pairs"][0]["read_bandwidth_gbps"]["samples"] = nlohmann::json::array();
            })
                .find("$.probe.pairs[0].read_bandwidth_gbps.samples: a measured figure needs at "
                      "least one sample"),
            std::string::npos);
  EXPECT_NE(with([](auto& j) {
              j["probe"]["pairs"][0]["mem_node"] = 77;
            }).find("names a node the topology does not list"),
            std::string::npos);
  EXPECT_NE(
      with([](auto& j) { j["topology"]["nodes"][0]["cpus"] = "0-"; }).find("expected a list like"),
      std::string::npos);
  const std::string msg = error_of([] { load_platform_profile("/nonexistent/platform.json"); });
  EXPECT_NE(msg.find("cannot read platform profile /nonexistent/platform.json"), std::string::npos);
  EXPECT_NE(msg.find("fix: write one with `hybridbench probe --out"), std::string::npos);
}

// The figures added with the probe's settling (write, copy, loaded latency; stop, discarded)
// survive the file, and a figure that never settled stays marked.
TEST(Profile, NewFiguresRoundTrip) {
  PlatformProfile a = sample_profile();
  PairProbe& p = a.probe.pairs[0];
  p.read_gbps.stop = FigureStop::time_limit;
  p.read_gbps.discarded = 17;
  p.write_gbps = Figure::of({5.0, 6.0, 7.0});
  p.write_gbps.stop = FigureStop::settled;
  p.copy_gbps = Figure::of({8.0, 9.0});
  p.loaded_latency_ns = Figure::of({300.0, 320.0, 310.0});
  p.load_threads = 1;
  p.load_gbps = 21.5;
  const PlatformProfile b = parse_platform_profile(platform_profile_json(a), "p.json");
  const PairProbe& q = b.probe.pairs[0];
  EXPECT_EQ(q.read_gbps.stop, FigureStop::time_limit);
  EXPECT_FALSE(q.read_gbps.settled());
  EXPECT_EQ(q.read_gbps.discarded, 17);
  EXPECT_EQ(q.write_gbps.stop, FigureStop::settled);
  EXPECT_DOUBLE_EQ(q.write_gbps.summary.median, 6.0);
  EXPECT_DOUBLE_EQ(q.copy_gbps.summary.median, 8.5);
  EXPECT_DOUBLE_EQ(q.loaded_latency_ns.summary.median, 310.0);
  EXPECT_EQ(q.load_threads, 1);
  EXPECT_DOUBLE_EQ(q.load_gbps, 21.5);
  const auto doc = nlohmann::json::parse(platform_profile_json(a));
  EXPECT_EQ(doc["probe"]["pairs"][0]["read_bandwidth_gbps"]["stop"], "time-limit");
  EXPECT_NEAR(doc["probe"]["pairs"][0]["read_bandwidth_gbps"]["noise"].get<double>(),
              robust_rel_noise(summarize(std::vector<double>{10, 11, 12})), 1e-12);
  // Figures a probe did not take are absent, not zero.
  PlatformProfile c = sample_profile();
  const auto plain = nlohmann::json::parse(platform_profile_json(c));
  EXPECT_FALSE(plain["probe"]["pairs"][0].contains("write_bandwidth_gbps"));
  EXPECT_FALSE(plain["probe"]["pairs"][0].contains("loaded_latency_ns"));
  EXPECT_NE(error_of([&] {
              auto j = doc;
              j["probe"]["pairs"][0]["copy_bandwidth_gbps"]["stop"] = "bored";
              parse_platform_profile(j.dump(), "p.json");
            })
                .find("$.probe.pairs[0].copy_bandwidth_gbps.stop: expected one of unchecked, "
                      "settled, time-limit, max-repeats"),
            std::string::npos);
}

// A profile written before those fields existed still loads: no write/copy/loaded figures,
// every figure "unchecked" (which reads as settled: nothing said otherwise).
TEST(Profile, OlderProfilesStillLoad) {
  const PlatformProfile p = load_platform_profile(
      std::string(HB_SOURCE_DIR) + "/tests/memtier/fixtures/profiles/before-settling.json");
  ASSERT_EQ(p.probe.pairs.size(), 1u);
  const PairProbe& q = p.probe.pairs[0];
  EXPECT_NEAR(q.read_gbps.summary.median, 8.678, 1e-3);
  EXPECT_EQ(q.read_gbps.stop, FigureStop::unchecked);
  EXPECT_TRUE(q.read_gbps.settled());
  EXPECT_EQ(q.read_gbps.discarded, 0);
  EXPECT_TRUE(q.write_gbps.empty());
  EXPECT_TRUE(q.copy_gbps.empty());
  EXPECT_TRUE(q.loaded_latency_ns.empty());
  EXPECT_EQ(p.probe.options.drift_tolerance, ProbeOptions{}.drift_tolerance);
}

TEST(HwlocErrors, CorruptAndMissingXml) {
  const fs::path f = temp("corrupt.xml");
  std::ofstream(f)
      << "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n  <object type=\"Machine\"";
  DiscoverOptions o;
  o.topology_xml = f.string();
  std::string msg = error_of([&] { discover(o); });
  fs::remove(f);
  EXPECT_NE(msg.find("hwloc cannot load " + f.string() + " (corrupt or unsupported XML)"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("fix: give an hwloc 2.x XML export"), std::string::npos) << msg;
  o.topology_xml = "/nonexistent/topo.xml";
  msg = error_of([&] { discover(o); });
  EXPECT_NE(msg.find("cannot read hwloc topology file /nonexistent/topo.xml"), std::string::npos)
      << msg;
}

}  // namespace
}  // namespace hb::memtier
