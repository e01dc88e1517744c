#include "model/platform_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_text.h"
#include "core/model_presets.h"
#include "kernels/backend.h"
#include "core/input_file.h"
#include "memtier/profile.h"
#include "model/economics_json.h"
#include "model/profile_reader.h"

namespace hb::model {

// Generated at configure time from profiles/*.json (CMakeLists.txt): (name, text) pairs.
const std::vector<std::pair<std::string, std::string>>& embedded_presets();

namespace {

using Json = nlohmann::ordered_json;
using In = ProfileReader;
constexpr const char* kPlatformSchema = "hybridbench.platform/1";

// A figure: a number, or {"value": N, "source": "...", "estimate": bool}. Records the source
// under `key` (the path below "model").
double figure(const In& j, const std::string& key, std::map<std::string, std::string>& sources) {
  if (j.json().is_object()) {
    j.only({"value", "source", "estimate"});
    const double v = j.at("value").number();
    std::string src = j.has("source") ? j.at("source").str() : "";
    const bool est = j.has("estimate") && j.at("estimate").boolean();
    if (est) src = "[estimate] " + src;
    if (!src.empty()) sources[key] = src;
    return v;
  }
  return j.number();
}

// {"source": "...", "points": [[bytes, gbps], ...]}, bytes ascending, all positive.
BandwidthCurve read_curve(const In& j, const std::string& key,
                          std::map<std::string, std::string>& sources) {
  j.only({"source", "estimate", "points"});
  BandwidthCurve c;
  if (j.has("source"))
    sources[key] = (j.has("estimate") && j.at("estimate").boolean() ? "[estimate] " : "") +
                   j.at("source").str();
  j.at("points").each([&](const In& p) {
    if (!p.json().is_array() || p.json().size() != 2) p.fail("expected [bytes, gbps]");
    const double b = p.index(0).number();
    const double g = p.index(1).number();
    if (!(b > 0 && g > 0)) p.fail("bytes and gbps must be > 0");
    if (!c.points.empty() && b <= c.points.back().first)
      p.fail("points must be ascending by bytes");
    c.points.emplace_back(b, g);
  });
  if (c.points.empty()) j.at("points").fail("a curve needs at least one point");
  return c;
}

template <class T>
void opt_figure(const In& parent, const char* name, const std::string& prefix, T& out,
                std::map<std::string, std::string>& sources) {
  if (!parent.has(name)) return;
  const double v = figure(parent.at(name), prefix + name, sources);
  if constexpr (std::is_integral_v<T>) {
    if (v != std::floor(v)) parent.at(name).fail("expected a whole number");
    // Range first: casting a value T cannot hold (numa_node 1e10) is undefined behaviour.
    if (v < static_cast<double>(std::numeric_limits<T>::min()) ||
        v >= -static_cast<double>(std::numeric_limits<T>::min()))
      parent.at(name).fail("whole number out of range");
    out = static_cast<T>(v);
  } else {
    out = v;
  }
}

void require_members(const In& j, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (!j.has(k)) j.fail(std::string("missing member \"") + k + "\"");
}

void read_accelerator(const In& a, PlatformModel& m, bool complete) {
  a.only({"kind", "name", "numa_node", "threads", "memory_bytes", "memory_usable_share",
          "memory_gbps", "attention_efficiency", "tflops", "launch_us", "sync_us", "select_gelems",
          "gemm_gbps", "prefill_tflops", "memory_curve", "comment"});
  auto& S = m.sources;
  auto& A = m.accelerator;
  if (a.has("kind")) {
    std::string known;
    if (!known_accelerator_kind(a.at("kind").str(), &known))
      a.at("kind").fail("expected one of " + known);
    A.kind = a.at("kind").str();
  }
  if (a.has("name")) A.name = a.at("name").str();
  const std::string p = "accelerator.";
  opt_figure(a, "numa_node", p, A.numa_node, S);
  opt_figure(a, "threads", p, A.threads, S);
  opt_figure(a, "memory_bytes", p, A.memory_bytes, S);
  opt_figure(a, "memory_usable_share", p, A.memory_usable_share, S);
  opt_figure(a, "memory_gbps", p, A.memory_gbps, S);
  opt_figure(a, "attention_efficiency", p, A.attention_efficiency, S);
  opt_figure(a, "tflops", p, A.tflops, S);
  opt_figure(a, "launch_us", p, A.launch_us, S);
  opt_figure(a, "sync_us", p, A.sync_us, S);
  opt_figure(a, "select_gelems", p, A.select_gelems, S);
  opt_figure(a, "gemm_gbps", p, A.gemm_gbps, S);
  opt_figure(a, "prefill_tflops", p, A.prefill_tflops, S);
  if (a.has("memory_curve"))
    A.memory_curve = read_curve(a.at("memory_curve"), p + "memory_curve", S);
  if (complete)
    require_members(a, {"name", "memory_bytes", "memory_gbps", "attention_efficiency", "tflops",
                        "launch_us", "sync_us"});
}

void read_links(const In& ls, PlatformModel& m) {
  m.links.clear();
  size_t i = 0;
  ls.each([&](const In& l) {
    l.only({"host_node", "h2d_gbps", "d2h_gbps", "latency_us", "copy_curve", "comment"});
    require_members(l, {"h2d_gbps", "d2h_gbps", "latency_us"});
    LinkModel L;
    const std::string p = "links[" + std::to_string(i++) + "].";
    opt_figure(l, "host_node", p, L.host_node, m.sources);
    opt_figure(l, "h2d_gbps", p, L.h2d_gbps, m.sources);
    opt_figure(l, "d2h_gbps", p, L.d2h_gbps, m.sources);
    opt_figure(l, "latency_us", p, L.latency_us, m.sources);
    if (l.has("copy_curve"))
      L.copy_curve = read_curve(l.at("copy_curve"), p + "copy_curve", m.sources);
    m.links.push_back(L);
  });
}

void read_cpu(const In& c, PlatformModel& m, bool complete) {
  c.only({"name", "cores", "core_read_gbps", "attention_gflops_per_core", "dispatch_us",
          "select_gelems_per_core", "read_curve", "comment"});
  auto& S = m.sources;
  auto& C = m.cpu;
  if (c.has("name")) C.name = c.at("name").str();
  const std::string p = "cpu.";
  opt_figure(c, "cores", p, C.cores, S);
  opt_figure(c, "core_read_gbps", p, C.core_read_gbps, S);
  opt_figure(c, "attention_gflops_per_core", p, C.attention_gflops_per_core, S);
  opt_figure(c, "dispatch_us", p, C.dispatch_us, S);
  opt_figure(c, "select_gelems_per_core", p, C.select_gelems_per_core, S);
  if (c.has("read_curve")) C.read_curve = read_curve(c.at("read_curve"), p + "read_curve", S);
  if (complete)
    require_members(c, {"cores", "core_read_gbps", "attention_gflops_per_core", "dispatch_us"});
}

void read_tiers(const In& ts, PlatformModel& m) {
  m.tiers.clear();
  size_t i = 0;
  ts.each([&](const In& t) {
    t.only({"kind", "node", "name", "capacity_bytes", "read_gbps", "latency_ns", "emulated",
            "comment"});
    require_members(t, {"kind", "capacity_bytes", "read_gbps", "latency_ns"});
    TierModel T;
    const std::string ks = t.at("kind").str();
    try {
      T.kind = parse_memory_kind(ks);
    } catch (const Error&) {
      t.at("kind").fail("unknown memory kind \"" + ks +
                        "\" (local-dram, remote-dram, cxl, far, hbm)");
    }
    if (T.kind == MemoryKind::accelerator)
      t.at("kind").fail("the accelerator's memory is not a host tier");
    if (t.has("name")) T.name = t.at("name").str();
    if (t.has("emulated")) T.emulated = t.at("emulated").boolean();
    const std::string p = "tiers[" + std::to_string(i++) + "].";
    opt_figure(t, "node", p, T.node, m.sources);
    opt_figure(t, "capacity_bytes", p, T.capacity_bytes, m.sources);
    opt_figure(t, "read_gbps", p, T.read_gbps, m.sources);
    opt_figure(t, "latency_ns", p, T.latency_ns, m.sources);
    m.tiers.push_back(T);
  });
}

void read_node(const In& n, PlatformModel& m) {
  n.only({"gpus", "interconnect", "interconnect_gbps", "interconnect_latency_us", "comment"});
  require_members(n, {"gpus", "interconnect", "interconnect_gbps", "interconnect_latency_us"});
  const std::string p = "node.";
  opt_figure(n, "gpus", p, m.node.gpus, m.sources);
  m.node.interconnect = n.at("interconnect").str();
  opt_figure(n, "interconnect_gbps", p, m.node.interconnect_gbps, m.sources);
  opt_figure(n, "interconnect_latency_us", p, m.node.interconnect_latency_us, m.sources);
}

void read_model_section(const In& j, PlatformModel& m, bool complete) {
  j.only({"name", "description", "accelerator", "links", "cpu", "tiers", "node", "comment"});
  if (j.has("name")) m.name = j.at("name").str();
  if (j.has("description")) m.description = j.at("description").str();
  for (const char* k : {"accelerator", "links", "cpu", "tiers"})
    if (complete && !j.has(k))
      j.fail(std::string("missing member \"") + k + "\" (a preset gives every figure)");
  if (j.has("accelerator")) read_accelerator(j.at("accelerator"), m, complete);
  if (j.has("links")) read_links(j.at("links"), m);
  if (j.has("cpu")) read_cpu(j.at("cpu"), m, complete);
  if (j.has("tiers")) read_tiers(j.at("tiers"), m);
  if (j.has("node")) read_node(j.at("node"), m);
}

}  // namespace

namespace {

// A tier per probed memory node that is not GPU memory; returns the local DRAM's probe.
const memtier::PairProbe* add_probed_tiers(const memtier::PlatformProfile& p,
                                           const std::string& src, PlatformModel& m) {
  const memtier::PairProbe* local = nullptr;
  for (const auto& n : p.topology.nodes) {
    if (n.kind == memtier::TierKind::gpu_memory || n.total_bytes == 0) continue;
    const memtier::PairProbe* pr = p.probe.pair(p.topology.cpu_node, n.os_index);
    if (!pr) continue;
    TierModel t;
    t.kind = memtier::to_memory_kind(n.kind);
    t.node = n.os_index;
    t.name = n.subtype;
    t.capacity_bytes = n.total_bytes;
    t.read_gbps = pr->read_gbps.summary.median;
    t.latency_ns = pr->latency_ns.summary.median;
    t.emulated = n.emulated;
    const std::string key = "tiers[" + std::to_string(m.tiers.size()) + "].";
    m.sources[key + "read_gbps"] = src + " (" + std::to_string(pr->threads) + " threads)";
    m.sources[key + "latency_ns"] = src;
    m.tiers.push_back(t);
    if (t.kind == MemoryKind::local_dram && !local) local = pr;
  }
  return local;
}

// The tier `--emulate-cxl` declared, with its declared figures.
void add_simulated_cxl(const memtier::Topology& topo, PlatformModel& m) {
  if (!topo.simulated_cxl) return;
  TierModel t;
  t.kind = MemoryKind::cxl;
  t.node = topo.simulated_cxl->backing_node;
  t.name = "simulated CXL (declared figures)";
  const memtier::MemoryNode* back = topo.node(t.node);
  t.capacity_bytes = back ? back->total_bytes : 0;
  t.read_gbps = topo.simulated_cxl->bandwidth_gbps;
  t.latency_ns = topo.simulated_cxl->latency_ns;
  t.emulated = true;
  m.sources["tiers[" + std::to_string(m.tiers.size()) + "].read_gbps"] =
      "[estimate] declared by --emulate-cxl";
  m.tiers.push_back(t);
}

// Fastest first, the local DRAM ahead of everything (it is the default host tier).
void sort_tiers(PlatformModel& m) {
  std::stable_sort(m.tiers.begin(), m.tiers.end(), [](const TierModel& a, const TierModel& b) {
    const bool la = a.kind == MemoryKind::local_dram, lb = b.kind == MemoryKind::local_dram;
    if (la != lb) return la;
    return a.read_gbps > b.read_gbps;
  });
}

// The first GPU as the accelerator, and its link from the probe's copies.
void add_accelerator_and_link(const memtier::PlatformProfile& p, const std::string& src,
                              PlatformModel& m) {
  if (!p.topology.gpus.empty()) {
    const auto& g = p.topology.gpus[0];
    m.accelerator.kind = kAcceleratorKinds.name(AcceleratorKind::cuda);
    m.accelerator.name = g.cuda_name.empty() ? g.name : g.cuda_name;
    m.accelerator.numa_node = std::max(0, g.numa_node);
    if (g.memory_bytes > 0) m.accelerator.memory_bytes = g.memory_bytes;
  }
  LinkModel link;
  link.host_node = m.accelerator.numa_node;
  bool any_link = false;
  for (const auto& l : p.probe.links) {
    switch (l.link) {
      case CopyLink::h2d:
        link.h2d_gbps = l.gbps.summary.median, any_link = true;
        break;
      case CopyLink::d2h:
        link.d2h_gbps = l.gbps.summary.median, any_link = true;
        break;
      case CopyLink::hbm_copy:
        m.accelerator.memory_gbps = l.gbps.summary.median;
        m.sources["accelerator.memory_gbps"] = src + " (device copy)";
        break;
    }
  }
  if (any_link) {
    m.links.push_back(link);
    m.sources["links[0].h2d_gbps"] = src;
    m.sources["links[0].d2h_gbps"] = src;
  }
}

}  // namespace

PlatformModel from_platform_profile(const memtier::PlatformProfile& p) {
  PlatformModel m;
  m.origin = "probe of " + p.host;
  const auto& topo = p.topology;
  const std::string src = "measured by hybridbench probe on " + p.host + " at " + p.created_utc;
  m.name = "host-" + p.host;
  m.description = "this machine as `hybridbench probe` measured it";
  m.source = PlatformSource::measured;
  const memtier::PairProbe* local = add_probed_tiers(p, src, m);
  add_simulated_cxl(topo, m);
  sort_tiers(m);
  const auto cpu_nodes = topo.cpu_nodes();
  m.cpu.cores = std::max(1, topo.cores / std::max<int>(1, static_cast<int>(cpu_nodes.size())));
  m.sources["cpu.cores"] = "topology of " + p.host + " (cores of one CPU node)";
  if (local && local->threads > 0) {
    m.cpu.core_read_gbps = local->read_gbps.summary.median / local->threads;
    m.sources["cpu.core_read_gbps"] =
        src + ": local read bandwidth / " + std::to_string(local->threads) + " threads";
  }
  add_accelerator_and_link(p, src, m);
  return m;
}

namespace {

std::string read_text(const std::string& path) {
  std::string presets;
  for (const auto& n : preset_names()) presets += (presets.empty() ? "" : ", ") + n;
  return read_input_file(path, {"platform profile", kMaxProfileBytes,
                                "give a file, preset:NAME or one of the presets: " + presets});
}

Json figure_json(double v, const std::map<std::string, std::string>& S, const std::string& key) {
  auto it = S.find(key);
  if (it == S.end()) return v;
  Json j;
  j["value"] = v;
  const std::string est = "[estimate] ";
  if (it->second.rfind(est, 0) == 0) {
    j["source"] = it->second.substr(est.size());
    j["estimate"] = true;
  } else {
    j["source"] = it->second;
  }
  return j;
}

Json curve_json(const BandwidthCurve& c, const std::map<std::string, std::string>& S,
                const std::string& key) {
  Json j;
  if (auto it = S.find(key); it != S.end()) j["source"] = it->second;
  j["points"] = Json::array();
  for (const auto& [b, g] : c.points) j["points"].push_back({b, g});
  return j;
}

Json section_json(const PlatformModel& m) {
  const auto& S = m.sources;
  Json j;
  j["name"] = m.name;
  j["description"] = m.description;
  const auto& A = m.accelerator;
  Json a;
  a["kind"] = A.kind;
  a["name"] = A.name;
  a["numa_node"] = A.numa_node;
  if (A.threads > 0) a["threads"] = A.threads;
  a["memory_bytes"] =
      figure_json(static_cast<double>(A.memory_bytes), S, "accelerator.memory_bytes");
  a["memory_usable_share"] =
      figure_json(A.memory_usable_share, S, "accelerator.memory_usable_share");
  a["memory_gbps"] = figure_json(A.memory_gbps, S, "accelerator.memory_gbps");
  a["attention_efficiency"] =
      figure_json(A.attention_efficiency, S, "accelerator.attention_efficiency");
  a["tflops"] = figure_json(A.tflops, S, "accelerator.tflops");
  a["launch_us"] = figure_json(A.launch_us, S, "accelerator.launch_us");
  a["sync_us"] = figure_json(A.sync_us, S, "accelerator.sync_us");
  if (A.select_gelems > 0)
    a["select_gelems"] = figure_json(A.select_gelems, S, "accelerator.select_gelems");
  if (A.gemm_gbps > 0) a["gemm_gbps"] = figure_json(A.gemm_gbps, S, "accelerator.gemm_gbps");
  if (A.prefill_tflops > 0)
    a["prefill_tflops"] = figure_json(A.prefill_tflops, S, "accelerator.prefill_tflops");
  if (!A.memory_curve.empty())
    a["memory_curve"] = curve_json(A.memory_curve, S, "accelerator.memory_curve");
  j["accelerator"] = a;
  j["links"] = Json::array();
  for (size_t i = 0; i < m.links.size(); ++i) {
    const auto& L = m.links[i];
    const std::string p = "links[" + std::to_string(i) + "].";
    j["links"].push_back({{"host_node", L.host_node},
                          {"h2d_gbps", figure_json(L.h2d_gbps, S, p + "h2d_gbps")},
                          {"d2h_gbps", figure_json(L.d2h_gbps, S, p + "d2h_gbps")},
                          {"latency_us", figure_json(L.latency_us, S, p + "latency_us")}});
    if (!L.copy_curve.empty())
      j["links"].back()["copy_curve"] = curve_json(L.copy_curve, S, p + "copy_curve");
  }
  const auto& C = m.cpu;
  j["cpu"] = {{"name", C.name},
              {"cores", figure_json(C.cores, S, "cpu.cores")},
              {"core_read_gbps", figure_json(C.core_read_gbps, S, "cpu.core_read_gbps")},
              {"attention_gflops_per_core",
               figure_json(C.attention_gflops_per_core, S, "cpu.attention_gflops_per_core")},
              {"dispatch_us", figure_json(C.dispatch_us, S, "cpu.dispatch_us")}};
  if (C.select_gelems_per_core > 0)
    j["cpu"]["select_gelems_per_core"] =
        figure_json(C.select_gelems_per_core, S, "cpu.select_gelems_per_core");
  if (!C.read_curve.empty()) j["cpu"]["read_curve"] = curve_json(C.read_curve, S, "cpu.read_curve");
  j["tiers"] = Json::array();
  for (size_t i = 0; i < m.tiers.size(); ++i) {
    const auto& T = m.tiers[i];
    const std::string p = "tiers[" + std::to_string(i) + "].";
    j["tiers"].push_back({{"kind", std::string(memory_kind_name(T.kind))},
                          {"node", T.node},
                          {"name", T.name},
                          {"emulated", T.emulated},
                          {"capacity_bytes", figure_json(static_cast<double>(T.capacity_bytes), S,
                                                         p + "capacity_bytes")},
                          {"read_gbps", figure_json(T.read_gbps, S, p + "read_gbps")},
                          {"latency_ns", figure_json(T.latency_ns, S, p + "latency_ns")}});
  }
  if (m.node.gpus > 1)
    j["node"] = {
        {"gpus", figure_json(m.node.gpus, S, "node.gpus")},
        {"interconnect", m.node.interconnect},
        {"interconnect_gbps", figure_json(m.node.interconnect_gbps, S, "node.interconnect_gbps")},
        {"interconnect_latency_us",
         figure_json(m.node.interconnect_latency_us, S, "node.interconnect_latency_us")}};
  return j;
}

}  // namespace

double BandwidthCurve::at(double bytes) const {
  if (points.empty()) return 0;
  if (bytes <= points.front().first) return points.front().second;
  if (bytes >= points.back().first) return points.back().second;
  size_t i = 1;
  while (points[i].first < bytes) ++i;
  const auto& [b0, g0] = points[i - 1];
  const auto& [b1, g1] = points[i];
  const double f = std::log(bytes / b0) / std::log(b1 / b0);
  return 1.0 / ((1 - f) / g0 + f / g1);  // time per byte, linear in log(bytes)
}

const TierModel* PlatformModel::tier(MemoryKind k) const {
  for (const auto& t : tiers)
    if (t.kind == k) return &t;
  return nullptr;
}

const LinkModel& PlatformModel::link() const {
  if (links.empty())
    throw Error("platform '" + name + "' has no host link", "add \"links\" to " + origin);
  for (const auto& l : links)
    if (l.host_node == accelerator.numa_node) return l;
  return links[0];
}

namespace {

// A built-in preset ("preset:NAME") is ours to fix; a file is the user's, even one copied from a
// preset (its "source" still says preset).
std::string validation_fix(PlatformSource source, const std::string& origin) {
  if (source != PlatformSource::preset)
    return "complete its \"model\" member, e.g. `hybridbench validate-model --platform " + origin +
           " --write-model " + origin + "` measures the missing figures";
  if (origin.rfind("preset:", 0) == 0)
    return "a built-in preset is broken: report it (schema: model/README.md)";
  return "correct the values named above in your file " + origin +
         " (schema: model/README.md), or start again from a preset: `--platform preset:NAME`";
}

// The figures' physically plausible ranges. Beyond them a figure is a slip of units or digits
// (launch_us 1e308, memory_gbps 1e-308), and priced steps would overflow: within them a modeled
// step stays below a day of nanoseconds for any traffic a sweep produces.
struct Bound {
  double lo, hi;
  bool lo_open;  // lo itself refused ("> 0")
  const char* unit;
  bool zero_ok = false;  // 0 (unpriced, none) is allowed besides [lo, hi]: 1e-308 is a slip
};
constexpr Bound kBandwidth{0.01, 1e5, false, "GB/s"};      // 10 MB/s to 100 TB/s
constexpr Bound kRate{1e-3, 1e5, false, "G/s", true};      // a scan or GEMM rate, 0 = unpriced
constexpr Bound kLatencyUs{1e-6, 1e5, false, "us", true};  // 1 ps to 0.1 s per launch or copy
constexpr Bound kShare{0.01, 1, false, ""};  // efficiencies and usable shares: >= 1% of the peak
constexpr Bound kBytes{0, 1LL << 60, true, "bytes"};  // up to 1 EiB

// Collects "<what> must be ..." for every figure out of its range.
class RangeCheck {
 public:
  void operator()(double v, const Bound& b, const std::string& what) {
    if (v >= b.lo && v <= b.hi && !(b.lo_open && v == b.lo)) return;
    if (b.zero_ok && v == 0) return;
    bad.push_back(what + " is " + number_text(v) + ": it must be " + (b.zero_ok ? "0 or " : "") +
                  (b.lo_open ? "> " : ">= ") + number_text(b.lo) + " and <= " + number_text(b.hi) +
                  (*b.unit ? std::string(" ") + b.unit : ""));
  }
  std::vector<std::string> bad;

 private:
  static std::string number_text(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
  }
};

void check_accelerator(const AcceleratorModel& A, const std::vector<LinkModel>& links,
                       RangeCheck& in) {
  in(static_cast<double>(A.memory_bytes), kBytes, "accelerator.memory_bytes");
  in(A.memory_usable_share, kShare, "accelerator.memory_usable_share");
  in(A.memory_gbps, kBandwidth, "accelerator.memory_gbps");
  in(A.attention_efficiency, kShare, "accelerator.attention_efficiency");
  in(A.tflops, {1e-3, 1e5, false, "TFLOP/s"}, "accelerator.tflops");
  in(A.launch_us, kLatencyUs, "accelerator.launch_us");
  in(A.sync_us, kLatencyUs, "accelerator.sync_us");
  in(A.select_gelems, kRate, "accelerator.select_gelems");
  in(A.gemm_gbps, {0.01, 1e5, false, "GB/s (0 = priced as memory traffic)", true},
     "accelerator.gemm_gbps");
  in(A.prefill_tflops, {1e-3, 1e5, false, "TFLOP/s (0 = unknown)", true},
     "accelerator.prefill_tflops");
  for (const auto& [bytes, gbps] : A.memory_curve.points)
    in(gbps, kBandwidth, "accelerator.memory_curve gbps");
  if (links.empty()) {
    in.bad.push_back("links is empty (one host link per NUMA node the accelerator is attached to)");
    return;
  }
  // The accelerator's link is the one of its node: a node no link serves is a typo, never
  // silently the first link.
  std::string served;
  bool found = false;
  for (const auto& l : links) {
    served += (served.empty() ? "" : ", ") + std::to_string(l.host_node);
    found = found || l.host_node == A.numa_node;
  }
  if (!found)
    in.bad.push_back("accelerator.numa_node " + std::to_string(A.numa_node) +
                     " has no link: links[].host_node serves node(s) " + served +
                     "; give one of those, or a link for node " + std::to_string(A.numa_node));
}

void check_links_cpu(const std::vector<LinkModel>& links, const CpuModel& cpu, RangeCheck& in) {
  for (const auto& l : links) {
    in(l.h2d_gbps, kBandwidth, "links[].h2d_gbps");
    in(l.d2h_gbps, kBandwidth, "links[].d2h_gbps");
    in(l.latency_us, kLatencyUs, "links[].latency_us");
    for (const auto& [bytes, gbps] : l.copy_curve.points)
      in(gbps, kBandwidth, "links[].copy_curve gbps");
  }
  in(cpu.cores, {1, 1e5, false, "cores"}, "cpu.cores");
  in(cpu.core_read_gbps, kBandwidth, "cpu.core_read_gbps");
  in(cpu.attention_gflops_per_core, {1e-3, 1e5, false, "GFLOP/s"}, "cpu.attention_gflops_per_core");
  in(cpu.dispatch_us, kLatencyUs, "cpu.dispatch_us");
  in(cpu.select_gelems_per_core, kRate, "cpu.select_gelems_per_core");
  for (const auto& [bytes, gbps] : cpu.read_curve.points)
    in(gbps, kBandwidth, "cpu.read_curve gbps");
}

void check_tiers(const std::vector<TierModel>& tiers, RangeCheck& in) {
  if (tiers.empty()) in.bad.push_back("tiers is empty (at least the local DRAM)");
  std::set<std::pair<int, int>> seen;
  for (const auto& t : tiers) {
    in(static_cast<double>(t.capacity_bytes), kBytes, "tiers[].capacity_bytes");
    in(t.read_gbps, kBandwidth, "tiers[].read_gbps");
    in(t.latency_ns, {1e-3, 1e8, false, "ns", true}, "tiers[].latency_ns");
    if (!seen.insert({static_cast<int>(t.kind), t.node}).second)
      in.bad.push_back("tier " + MemoryLocation{t.kind, t.node, t.emulated}.to_string() +
                       " is listed twice");
  }
}

}  // namespace

void PlatformModel::validate() const {
  RangeCheck in;
  if (name.empty()) in.bad.push_back("name is empty");
  check_accelerator(accelerator, links, in);
  check_links_cpu(links, cpu, in);
  check_tiers(tiers, in);
  in(node.gpus, {1, 1024, false, "GPUs"}, "node.gpus");
  if (node.gpus > 1) {
    in(node.interconnect_gbps, kBandwidth, "node.interconnect_gbps");
    in(node.interconnect_latency_us, kLatencyUs, "node.interconnect_latency_us");
  }
  if (in.bad.empty()) return;
  std::string all;
  for (const auto& b : in.bad) all += "\n    " + b;
  throw Error(
      "platform profile '" + name + "' (" + origin + ") is incomplete or out of range:" + all,
      validation_fix(source, origin));
}

PlatformModel parse_platform_model(const std::string& text, const std::string& origin,
                                   bool require_complete) {
  Json doc;
  try {
    doc = parse_json_text<Json>(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(origin + ": not JSON (" + e.what() + ")",
                "see the profile schema in model/README.md");
  }
  const In j(doc, "$", origin);
  const std::string schema = j.at("schema").str();
  if (schema != kPlatformSchema)
    j.at("schema").fail("expected \"" + std::string(kPlatformSchema) + "\", found \"" + schema +
                        "\"");
  const std::optional<PlatformSource> source = kPlatformSources.parse(j.at("source").str());
  PlatformModel m;
  m.origin = origin;
  if (source == PlatformSource::measured) {
    // memtier validates its own part (topology, probe); its reader ignores "model".
    m = from_platform_profile(memtier::parse_platform_profile(text, origin));
    m.origin = origin;
    if (j.has("model")) {
      read_model_section(j.at("model"), m, false);
      m.source = PlatformSource::calibrated;
    }
  } else if (source == PlatformSource::preset) {
    j.only({"schema", "source", "comment", "model", "economics"});
    m.source = PlatformSource::preset;
    read_model_section(j.at("model"), m, true);
    if (m.name.empty()) j.at("model").fail("missing member \"name\"");
  } else {
    j.at("source").fail(
        "expected \"measured\" (written by `hybridbench probe --out`) or \"preset\"");
  }
  // A probe's profile or a preset alike (memtier's reader ignores the member).
  if (j.has("economics")) m.economics = read_economics(j.at("economics"));
  if (require_complete) m.validate();
  return m;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> n;
  for (const auto& [name, text] : embedded_presets()) n.push_back(name);
  return n;
}

std::string preset_text(const std::string& name) {
  for (const auto& [n, text] : embedded_presets())
    if (n == name) return text;
  std::string list;
  for (const auto& n : preset_names()) list += (list.empty() ? "" : ", ") + n;
  throw Error("no platform preset named '" + name + "'",
              "use one of: " + list + " (or a profile file)");
}

PlatformModel load_platform_model(const std::string& spec) {
  if (spec.rfind("preset:", 0) == 0) return parse_platform_model(preset_text(spec.substr(7)), spec);
  const auto names = preset_names();
  // A preset's bare name is the preset unless a file of that name is here (existence only: opening
  // a FIFO of that name would block).
  std::error_code ec;
  if (std::find(names.begin(), names.end(), spec) != names.end() &&
      !std::filesystem::exists(std::filesystem::symlink_status(spec, ec)))
    return parse_platform_model(preset_text(spec), "preset:" + spec);
  return parse_platform_model(read_text(spec), spec);
}

std::vector<PlatformModel> load_platform_models(const std::vector<std::string>& specs) {
  std::vector<PlatformModel> out;
  for (const auto& s : specs) {
    if (s == "presets") {
      for (const auto& n : preset_names())
        out.push_back(parse_platform_model(preset_text(n), "preset:" + n));
    } else {
      out.push_back(load_platform_model(s));
    }
  }
  std::set<std::string> names;
  for (const auto& m : out)
    if (!names.insert(m.name).second)
      throw Error("two platform profiles are both named '" + m.name + "'",
                  "give each profile its own \"name\" in its \"model\" member");
  if (out.empty())
    throw Error("no platform profile given", "pass --platform FILE, preset:NAME or presets");
  return out;
}

std::string model_section_json(const PlatformModel& m) {
  return section_json(m).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string with_model_section(const std::string& text, const PlatformModel& m,
                               const std::string& origin) {
  Json doc;
  try {
    doc = parse_json_text<Json>(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(origin + ": not JSON (" + e.what() + ")",
                "write it with `hybridbench probe --out FILE`");
  }
  doc["model"] = section_json(m);
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

int64_t kv_budget_per_layer(const PlatformModel& m, const std::string& model_preset) {
  return kv_budget_per_layer(m, find_model_preset(model_preset));
}

int64_t kv_budget_per_layer(const PlatformModel& m, const ModelPreset& p) {
  const double weights = static_cast<double>(model_weight_bytes(p));
  const double usable =
      static_cast<double>(m.accelerator.memory_bytes) * m.accelerator.memory_usable_share;
  const double per_layer = (usable - weights) / std::max(1, p.layers);
  return std::max<int64_t>(int64_t{1} << 20, static_cast<int64_t>(per_layer));
}

bool known_accelerator_kind(const std::string& kind, std::string* known) {
  bool found = false;
  std::string names;
  auto consider = [&](const std::string& name) {
    found = found || name == kind;
    names += (names.empty() ? "" : ", ") + name;
  };
  for (const Backend& b : backends()) consider(b.name());
  for (const char* name : kModeledOnlyAccelerators) consider(name);
  if (known) *known = names;
  return found;
}

bool AcceleratorModel::emulated() const {
  for (const Backend& b : backends())
    if (kind == b.name()) return b.emulated;
  return false;  // a modeled-only device: real hardware, priced by the roofline
}

}  // namespace hb::model
