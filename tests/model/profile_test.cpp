// Platform profiles: the shipped presets load, validate and cite a source for every figure;
// broken files fail with the file and the JSON path; a measured (probe) profile keeps loading
// in memtier after the model adds its "model" member.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "core/error.h"
#include "memtier/profile.h"
#include "model/platform_model.h"

namespace hb::model {
namespace {

std::string error_of(const std::string& text, const std::string& origin = "bad.json") {
  try {
    parse_platform_model(text, origin);
  } catch (const Error& e) {
    return e.problem();
  }
  return "";
}

// A small valid preset; tests break one thing at a time.
std::string preset_doc(const std::string& accel_extra = "", const std::string& tier_extra = "",
                       const std::string& schema = "hybridbench.platform/1") {
  return R"({"schema": ")" + schema + R"(", "source": "preset", "model": {
    "name": "toy", "description": "a toy",
    "accelerator": {"kind": "cuda", "name": "G", "memory_bytes": 1e9, "memory_gbps": 100,
                    "attention_efficiency": 0.5, "tflops": 1, "launch_us": 5, "sync_us": 10)" +
         accel_extra + R"(},
    "links": [{"host_node": 0, "h2d_gbps": 10, "d2h_gbps": 10, "latency_us": 2}],
    "cpu": {"name": "C", "cores": 4, "core_read_gbps": 5, "attention_gflops_per_core": 10, "dispatch_us": 1},
    "tiers": [{"kind": "local-dram", "node": 0, "capacity_bytes": 1e10, "read_gbps": 20, "latency_ns": 100)" +
         tier_extra + R"(}]}})";
}

TEST(Profiles, EveryPresetLoadsAndCitesEveryFigure) {
  const auto names = preset_names();
  ASSERT_GE(names.size(), 4u);
  for (const char* want :
       {"a100-40gb-pcie4-spr", "h100-pcie5-cxl", "h200-pcie5-emr", "gh200-c2c", "b200-pcie5-emr",
        "mi300x-pcie5-spr", "h100-pcie5-cxl0", "h100-pcie5-cxl1"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  for (const auto& n : names) {
    SCOPED_TRACE(n);
    const PlatformModel m = load_platform_model("preset:" + n);
    EXPECT_EQ(m.name, n);  // the file name is the profile's name
    EXPECT_EQ(m.source, PlatformSource::preset);
    EXPECT_FALSE(m.accelerator.emulated()) << m.accelerator.kind;  // cuda, or rocm (MI300X)
    for (const char* key :
         {"accelerator.memory_bytes", "accelerator.memory_gbps", "accelerator.attention_efficiency",
          "accelerator.tflops", "accelerator.launch_us", "accelerator.sync_us",
          "accelerator.memory_usable_share", "links[0].h2d_gbps", "links[0].d2h_gbps",
          "links[0].latency_us", "cpu.cores", "cpu.core_read_gbps", "cpu.attention_gflops_per_core",
          "cpu.dispatch_us", "tiers[0].capacity_bytes", "tiers[0].read_gbps",
          "tiers[0].latency_ns"}) {
      ASSERT_TRUE(m.sources.count(key)) << key << " has no source";
      EXPECT_GT(m.sources.at(key).size(), 10u) << key;
    }
    EXPECT_EQ(m.tiers[0].kind, MemoryKind::local_dram);
  }
  // The CXL preset has a CXL tier; GH200's link is far faster than PCIe.
  EXPECT_NE(load_platform_model("h100-pcie5-cxl").tier(MemoryKind::cxl), nullptr);
  EXPECT_GT(load_platform_model("preset:gh200-c2c").link().h2d_gbps,
            4 * load_platform_model("preset:h200-pcie5-emr").link().h2d_gbps);
  // "presets" expands to all of them.
  EXPECT_EQ(load_platform_models({"presets"}).size(), names.size());
}

TEST(Profiles, ValueWithSourceOrPlainNumber) {
  const PlatformModel m = parse_platform_model(
      preset_doc(
          R"(, "memory_usable_share": {"value": 0.8, "source": "my guess", "estimate": true})"),
      "toy.json");
  EXPECT_DOUBLE_EQ(m.accelerator.memory_usable_share, 0.8);
  EXPECT_EQ(m.sources.at("accelerator.memory_usable_share"), "[estimate] my guess");
  EXPECT_DOUBLE_EQ(m.accelerator.memory_gbps, 100);
  EXPECT_EQ(m.origin, "toy.json");
}

TEST(Profiles, BrokenFilesSayWhereAndWhat) {
  EXPECT_NE(error_of("{not json").find("bad.json: not JSON"), std::string::npos);
  EXPECT_NE(error_of("[1e999]").find("bad.json: not JSON"), std::string::npos);
  EXPECT_NE(error_of(preset_doc("", "", "hybridbench.platform/9")).find("$.schema"),
            std::string::npos);
  // A typo is refused, not silently defaulted.
  const std::string typo = error_of(preset_doc(R"(, "sync_usec": 3)"));
  EXPECT_NE(typo.find("$.model.accelerator"), std::string::npos) << typo;
  EXPECT_NE(typo.find("unknown member \"sync_usec\""), std::string::npos) << typo;
  // Wrong type, with the path.
  const std::string type = error_of(preset_doc("", R"(, "emulated": "no")"));
  EXPECT_NE(type.find("$.model.tiers[0].emulated"), std::string::npos) << type;
  // Unknown tier kind.
  std::string doc = preset_doc();
  doc.replace(doc.find("local-dram"), 10, "dram");
  EXPECT_NE(error_of(doc).find("unknown memory kind \"dram\""), std::string::npos);
  // Unknown accelerator kind (the enum's text is read here only).
  doc = preset_doc();
  doc.replace(doc.find("\"kind\": \"cuda\""), 14, "\"kind\": \"tpu\"");
  const std::string kind = error_of(doc);
  EXPECT_NE(kind.find("$.model.accelerator.kind"), std::string::npos) << kind;
  EXPECT_NE(kind.find("expected one of cuda, cpu, rocm"), std::string::npos) << kind;
  // Out of range: validate() lists every problem.
  doc = preset_doc();
  doc.replace(doc.find("\"attention_efficiency\": 0.5"), 27, "\"attention_efficiency\": 1.5");
  doc.replace(doc.find("\"read_gbps\": 20"), 15, "\"read_gbps\": -1");
  const std::string range = error_of(doc);
  EXPECT_NE(range.find("accelerator.attention_efficiency is 1.5: it must be >= 0.01 and <= 1"),
            std::string::npos)
      << range;
  EXPECT_NE(range.find("tiers[].read_gbps is -1: it must be >= 0.01 and <= 100000 GB/s"),
            std::string::npos)
      << range;
  // A preset must give every figure.
  doc = preset_doc();
  doc.replace(doc.find("\"tflops\": 1, "), 13, "");
  EXPECT_NE(error_of(doc).find("missing member \"tflops\""), std::string::npos);
  // The accelerator's memory is not a host tier; a tier may appear once.
  doc = preset_doc();
  doc.replace(doc.find("local-dram"), 10, "accelerator");
  EXPECT_NE(error_of(doc).find("not a host tier"), std::string::npos);
  EXPECT_NE(error_of(R"({"schema": "hybridbench.platform/1", "source": "guess", "model": {}})")
                .find("$.source"),
            std::string::npos);
  // A curve must ascend by bytes.
  const std::string curve = error_of(preset_doc("", "").replace(
      preset_doc().find("\"dispatch_us\": 1"), 16,
      R"("dispatch_us": 1, "read_curve": {"points": [[2e6, 5], [1e6, 9]]})"));
  EXPECT_NE(curve.find("$.model.cpu.read_curve.points[1]: points must be ascending"),
            std::string::npos)
      << curve;
  EXPECT_THROW(load_platform_model("/nonexistent/profile.json"), Error);
  EXPECT_THROW(load_platform_model("preset:no-such-preset"), Error);
  EXPECT_THROW(load_platform_models({"preset:gh200-c2c", "preset:gh200-c2c"}),
               Error);  // same name twice
}

// A profile as `hybridbench probe --out` writes it, for one node.
memtier::PlatformProfile measured_profile() {
  memtier::Topology t;
  t.source = memtier::TopologySource::live;
  t.cpu_node = 0;
  t.pus = t.cores = 8;
  t.packages.push_back({0, 8, {0, 1, 2, 3, 4, 5, 6, 7}});
  memtier::MemoryNode n;
  n.os_index = 0;
  n.total_bytes = int64_t{16} << 30;
  n.cpus = {0, 1, 2, 3, 4, 5, 6, 7};
  n.kind = memtier::TierKind::local_dram;
  t.nodes.push_back(n);
  memtier::ProbeResult r;
  memtier::PairProbe p;
  p.cpu_node = p.mem_node = 0;
  p.threads = 8;
  p.read_kernel = "test";
  p.read_gbps = memtier::Figure::of({40, 40, 40});
  p.latency_ns = memtier::Figure::of({90, 90, 90});
  r.pairs.push_back(p);
  return memtier::make_platform_profile(t, {}, r);
}

TEST(Profiles, MeasuredProfileGetsAModelMemberAndStaysMemtierReadable) {
  const std::string probe_doc = memtier::platform_profile_json(measured_profile());
  // Derived from the probe: the tier and the per-core bandwidth; the rest is missing.
  PlatformModel m = parse_platform_model(probe_doc, "me.json", false);
  ASSERT_EQ(m.tiers.size(), 1u);
  EXPECT_DOUBLE_EQ(m.tiers[0].read_gbps, 40);
  EXPECT_DOUBLE_EQ(m.tiers[0].latency_ns, 90);
  EXPECT_DOUBLE_EQ(m.cpu.core_read_gbps, 5);  // 40 GB/s over 8 threads
  EXPECT_EQ(m.cpu.cores, 8);
  EXPECT_EQ(m.source, PlatformSource::measured);
  try {
    parse_platform_model(probe_doc, "me.json");
    FAIL() << "an uncalibrated probe profile is incomplete";
  } catch (const Error& e) {
    EXPECT_NE(e.problem().find("cpu.attention_gflops_per_core"), std::string::npos) << e.problem();
    EXPECT_NE(e.fix().find("validate-model"), std::string::npos);
  }
  // Complete it the way validate-model --write-model does, and read it back.
  m.accelerator = {
      {}, "cpu-accelerator", 0, 1, int64_t{1} << 30, 1.0, 5, 1.0, 0.01, 2, 20, 0, {}, {}, 0};
  m.accelerator.kind = "cpu";
  m.links = {{0, 4, 4, 2, {}}};
  m.cpu.attention_gflops_per_core = 7;
  m.sources["cpu.attention_gflops_per_core"] = "calibrated in a test";
  m.cpu.read_curve.points = {{1e6, 20}, {1e8, 5}};
  m.sources["cpu.read_curve"] = "a test curve";
  const std::string full = with_model_section(probe_doc, m, "me.json");
  const PlatformModel back = parse_platform_model(full, "me.json");
  EXPECT_EQ(back.source, PlatformSource::calibrated);
  EXPECT_DOUBLE_EQ(back.cpu.attention_gflops_per_core, 7);
  EXPECT_EQ(back.sources.at("cpu.attention_gflops_per_core"), "calibrated in a test");
  EXPECT_EQ(back.accelerator.kind, "cpu");
  EXPECT_EQ(back.cpu.read_curve.points, m.cpu.read_curve.points);
  EXPECT_EQ(back.sources.at("cpu.read_curve"), "a test curve");
  EXPECT_TRUE(back.links[0].copy_curve.empty());
  EXPECT_DOUBLE_EQ(back.tiers[0].read_gbps, 40);
  // Compatibility: memtier's own reader ignores the "model" member.
  EXPECT_NO_THROW(memtier::parse_platform_profile(full, "me.json"));
}

// Every field from_platform_profile derives, on a probe of two CPU nodes, a CXL node, GPU memory,
// a node without memory, a simulated CXL tier, a GPU and its links.
memtier::PlatformProfile rich_profile() {
  memtier::Topology t;
  t.cpu_node = 0;
  t.pus = t.cores = 16;
  auto node = [&](int os, memtier::TierKind kind, int64_t bytes, bool cpus) {
    memtier::MemoryNode n;
    n.os_index = os;
    n.kind = kind;
    n.total_bytes = bytes;
    n.subtype = "sub" + std::to_string(os);
    if (cpus) n.cpus = {os * 8};
    t.nodes.push_back(n);
  };
  node(0, memtier::TierKind::local_dram, int64_t{16} << 30, true);
  node(1, memtier::TierKind::remote_dram, int64_t{32} << 30, true);
  node(2, memtier::TierKind::cxl, int64_t{64} << 30, false);
  node(3, memtier::TierKind::gpu_memory, int64_t{80} << 30, false);  // the accelerator's
  node(4, memtier::TierKind::far, 0, false);                         // no memory: skipped
  node(5, memtier::TierKind::far, int64_t{8} << 30, false);          // not probed: skipped
  t.nodes[2].emulated = true;
  t.simulated_cxl = memtier::SimulatedTier{12.5, 400, 1};
  memtier::GpuDevice g;
  g.name = "hwloc name";
  g.cuda_name = "NVIDIA H100";
  g.numa_node = 1;
  g.memory_bytes = int64_t{80} << 30;
  t.gpus.push_back(g);
  memtier::ProbeResult r;
  auto pair = [&](int mem, double gbps, double ns, int threads) {
    memtier::PairProbe p;
    p.cpu_node = 0;
    p.mem_node = mem;
    p.threads = threads;
    p.read_gbps = memtier::Figure::of({gbps, gbps, gbps});
    p.latency_ns = memtier::Figure::of({ns, ns, ns});
    r.pairs.push_back(p);
  };
  pair(0, 60, 90, 12);
  pair(1, 30, 140, 12);
  pair(2, 45, 250, 4);  // faster than the remote DRAM: sorted ahead of it
  pair(3, 500, 300, 4);
  auto link = [&](CopyLink l, double gbps) {
    memtier::LinkProbe p;
    p.link = l;
    p.gbps = memtier::Figure::of({gbps, gbps, gbps});
    r.links.push_back(p);
  };
  link(CopyLink::h2d, 25);
  link(CopyLink::d2h, 24);
  link(CopyLink::hbm_copy, 2000);
  memtier::PlatformProfile p;
  p.host = "box";
  p.created_utc = "2026-01-02T03:04:05Z";
  p.topology = t;
  p.probe = r;
  return p;
}

TEST(Profiles, ProbeProfileBecomesAModelFieldByField) {
  const PlatformModel m = from_platform_profile(rich_profile());
  const std::string src = "measured by hybridbench probe on box at 2026-01-02T03:04:05Z";
  EXPECT_EQ(m.origin, "probe of box");
  EXPECT_EQ(m.name, "host-box");
  EXPECT_EQ(m.description, "this machine as `hybridbench probe` measured it");
  EXPECT_EQ(m.source, PlatformSource::measured);
  // Local DRAM first, then fastest first; GPU memory, empty and unprobed nodes are no tiers.
  ASSERT_EQ(m.tiers.size(), 4u);
  const MemoryKind kinds[] = {MemoryKind::local_dram, MemoryKind::cxl, MemoryKind::remote_dram,
                              MemoryKind::cxl};
  const int nodes[] = {0, 2, 1, 1};
  const double gbps[] = {60, 45, 30, 12.5}, ns[] = {90, 250, 140, 400};
  for (size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(m.tiers[i].kind, kinds[i]);
    EXPECT_EQ(m.tiers[i].node, nodes[i]);
    EXPECT_DOUBLE_EQ(m.tiers[i].read_gbps, gbps[i]);
    EXPECT_DOUBLE_EQ(m.tiers[i].latency_ns, ns[i]);
  }
  EXPECT_EQ(m.tiers[0].name, "sub0");
  EXPECT_EQ(m.tiers[0].capacity_bytes, int64_t{16} << 30);
  EXPECT_FALSE(m.tiers[0].emulated);
  EXPECT_TRUE(m.tiers[1].emulated);
  EXPECT_EQ(m.tiers[3].name, "simulated CXL (declared figures)");
  EXPECT_EQ(m.tiers[3].capacity_bytes, int64_t{32} << 30);  // the backing node's
  EXPECT_TRUE(m.tiers[3].emulated);
  EXPECT_EQ(m.cpu.cores, 8);                  // 16 cores over two CPU nodes
  EXPECT_DOUBLE_EQ(m.cpu.core_read_gbps, 5);  // 60 GB/s over 12 threads
  EXPECT_EQ(m.accelerator.kind, "cuda");
  EXPECT_EQ(m.accelerator.name, "NVIDIA H100");
  EXPECT_EQ(m.accelerator.numa_node, 1);
  EXPECT_EQ(m.accelerator.memory_bytes, int64_t{80} << 30);
  EXPECT_DOUBLE_EQ(m.accelerator.memory_gbps, 2000);
  ASSERT_EQ(m.links.size(), 1u);
  EXPECT_EQ(m.links[0].host_node, 1);
  EXPECT_DOUBLE_EQ(m.links[0].h2d_gbps, 25);
  EXPECT_DOUBLE_EQ(m.links[0].d2h_gbps, 24);
  // Sources are keyed by the order tiers were found in (before sorting).
  const std::map<std::string, std::string> want = {
      {"tiers[0].read_gbps", src + " (12 threads)"},
      {"tiers[0].latency_ns", src},
      {"tiers[1].read_gbps", src + " (12 threads)"},
      {"tiers[1].latency_ns", src},
      {"tiers[2].read_gbps", src + " (4 threads)"},
      {"tiers[2].latency_ns", src},
      {"tiers[3].read_gbps", "[estimate] declared by --emulate-cxl"},
      {"cpu.cores", "topology of box (cores of one CPU node)"},
      {"cpu.core_read_gbps", src + ": local read bandwidth / 12 threads"},
      {"accelerator.memory_gbps", src + " (device copy)"},
      {"links[0].h2d_gbps", src},
      {"links[0].d2h_gbps", src}};
  EXPECT_EQ(m.sources, want);
  // Without a GPU or links: no accelerator figures and no link.
  memtier::PlatformProfile bare = rich_profile();
  bare.topology.gpus.clear();
  bare.probe.links.clear();
  const PlatformModel b = from_platform_profile(bare);
  EXPECT_TRUE(b.links.empty());
  EXPECT_EQ(b.accelerator.name, PlatformModel{}.accelerator.name);
  EXPECT_EQ(b.sources.count("accelerator.memory_gbps"), 0u);
}

TEST(Profiles, PerLayerKvBudgetSubtractsTheWeights) {
  const PlatformModel a100 = load_platform_model("preset:a100-40gb-pcie4-spr");
  // llama-3.1-8b: 32 layers; per layer 4096 x 128 x (2x32 + 2x8) attention + 3 x 4096 x 14336 MLP
  // parameters = 218,103,808, at 2 bytes: 13,958,643,712 bytes of weights in all.
  // (40 GiB x 0.9 - 13,958,643,712) / 32 = 771,751,936 bytes.
  EXPECT_EQ(kv_budget_per_layer(a100, "llama-3.1-8b"), 771751936);
  // A model whose weights do not fit leaves the floor (1 MiB): everything on the GPU is oom.
  // qwen2.5-32b has about 62.4 GB of weights: too much for 40 GB, fine on 141 GB.
  EXPECT_EQ(kv_budget_per_layer(a100, "qwen2.5-32b"), int64_t{1} << 20);
  const PlatformModel h200 = load_platform_model("preset:h200-pcie5-emr");
  EXPECT_GT(kv_budget_per_layer(h200, "qwen2.5-32b"), int64_t{512} << 20);
  EXPECT_EQ(kv_budget_per_layer(h200, "llama-3.1-70b"), int64_t{1} << 20);  // ~137 GB of weights
}

}  // namespace
}  // namespace hb::model
