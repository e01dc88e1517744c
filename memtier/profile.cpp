#include "memtier/profile.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>

#include "core/build_info.h"
#include "core/error.h"
#include "core/json_text.h"
#include "memtier/cpulist.h"
#include "core/input_file.h"
#include "memtier/json_reader.h"

namespace hb::memtier {

namespace {

constexpr const char* kTopologySchema = "hybridbench.topology/1";
constexpr const char* kPlatformSchema = "hybridbench.platform/1";

// ---- writing ----------------------------------------------------------------------------

Json perf_json(const AccessPerf& p) {
  return {{"initiator_node", p.initiator_node},
          {"initiator_cpus", p.initiator_cpus},
          {"bandwidth_mibps", p.bandwidth_mibps},
          {"read_bandwidth_mibps", p.read_bandwidth_mibps},
          {"latency_ns", p.latency_ns},
          {"read_latency_ns", p.read_latency_ns},
          {"source", p.source}};
}

Json node_json(const MemoryNode& n) {
  Json perf = Json::array();
  for (const auto& p : n.perf) perf.push_back(perf_json(p));
  return {{"os_index", n.os_index},
          {"kind", tier_kind_name(n.kind)},
          {"memory_kind", memory_kind_name(to_memory_kind(n.kind))},
          {"emulated", n.emulated},
          {"reasons", n.reasons},
          {"subtype", n.subtype},
          {"total_bytes", n.total_bytes},
          {"free_bytes", n.free_bytes},
          {"cpus", format_cpulist(n.cpus)},
          {"locality_cpus", format_cpulist(n.locality_cpus)},
          {"has_cpu_source", n.has_cpu_source},
          {"package", n.package},
          {"memory_tier", n.memory_tier},
          {"distances", n.distances},
          {"cxl_link", n.cxl_link},
          {"perf", perf}};
}

Json gpu_json(const GpuDevice& g) {
  return {{"pci_bus_id", g.pci_bus_id},
          {"vendor_id", g.vendor_id},
          {"device_id", g.device_id},
          {"pci_class", g.pci_class},
          {"name", g.name},
          {"numa_node", g.numa_node},
          {"local_nodes", format_cpulist(g.local_nodes)},
          {"package", g.package},
          {"pci_link_gbps", g.pci_link_gbps},
          {"cuda_index", g.cuda_index},
          {"cuda_name", g.cuda_name},
          {"sm_count", g.sm_count},
          {"memory_bytes", g.memory_bytes},
          {"pcie_gen", g.pcie_gen},
          {"pcie_width", g.pcie_width}};
}

Json settings_json(const SystemSettings& s) {
  Json weights = Json::object();
  for (const auto& [n, w] : s.interleave_weights) weights[std::to_string(n)] = w;
  return {{"known", s.known},
          {"root", s.root},
          {"thp_enabled", s.thp_enabled},
          {"thp_defrag", s.thp_defrag},
          {"numa_balancing", s.numa_balancing},
          {"demotion_enabled", s.demotion_enabled},
          {"zone_reclaim_mode", s.zone_reclaim_mode},
          {"weighted_interleave", s.weighted_interleave},
          {"interleave_weights", weights},
          {"warnings", s.warnings()}};
}

Json topology_object(const Topology& t, const SystemSettings& settings) {
  Json j;
  j["schema"] = kTopologySchema;
  j["source"] = kTopologySources.name(t.source);
  j["hwloc_xml"] = t.hwloc_xml;
  j["sysfs_root"] = t.sysfs_root;
  j["cpu_node"] = t.cpu_node;
  j["pus"] = t.pus;
  j["cores"] = t.cores;
  j["packages"] = Json::array();
  for (const auto& p : t.packages)
    j["packages"].push_back(
        {{"os_index", p.os_index}, {"cores", p.cores}, {"cpus", format_cpulist(p.cpus)}});
  j["nodes"] = Json::array();
  for (const auto& n : t.nodes) j["nodes"].push_back(node_json(n));
  j["distances_source"] = t.distances_source;
  j["memattrs"] = t.memattrs;
  j["memory_tiers"] = Json::array();
  for (const auto& m : t.memory_tiers)
    j["memory_tiers"].push_back({{"id", m.id}, {"nodes", format_cpulist(m.nodes)}});
  j["gpus"] = Json::array();
  for (const auto& g : t.gpus) j["gpus"].push_back(gpu_json(g));
  j["cxl_memdevs"] = Json::array();
  for (const auto& m : t.cxl_memdevs)
    j["cxl_memdevs"].push_back({{"name", m.name},
                                {"pci_bus_id", m.pci_bus_id},
                                {"ram_bytes", m.ram_bytes},
                                {"pmem_bytes", m.pmem_bytes},
                                {"source", m.source}});
  j["cxl_regions"] = Json::array();
  for (const auto& r : t.cxl_regions)
    j["cxl_regions"].push_back({{"name", r.name},
                                {"mode", r.mode},
                                {"start", r.start},
                                {"size", r.size},
                                {"targets", r.targets},
                                {"numa_node", r.numa_node}});
  j["dax_devices"] = Json::array();
  for (const auto& d : t.dax_devices)
    j["dax_devices"].push_back({{"name", d.name},
                                {"dax_type", d.dax_type},
                                {"mode", kDaxModes.name(d.mode)},
                                {"target_node", d.target_node},
                                {"start", d.start},
                                {"size", d.size},
                                {"cxl_region", d.cxl_region}});
  if (t.simulated_cxl)
    j["simulated_cxl"] = {{"bandwidth_gbps", t.simulated_cxl->bandwidth_gbps},
                          {"latency_ns", t.simulated_cxl->latency_ns},
                          {"backing_node", t.simulated_cxl->backing_node},
                          {"emulated", true}};
  else
    j["simulated_cxl"] = nullptr;
  j["notes"] = t.notes;
  j["settings"] = settings_json(settings);
  return j;
}

Json figure_json(const Figure& f) {
  const auto& s = f.summary;
  // noise, drift, stop and discarded: how the probe settled.
  return {{"median", s.median},
          {"rel_stdev", s.rel_stdev()},
          {"noise", f.noise()},
          {"mean", s.mean},
          {"min", s.min},
          {"max", s.max},
          {"count", s.count},
          {"drift", f.drift},
          {"stop", kFigureStops.name(f.stop)},
          {"discarded", f.discarded},
          {"samples", f.samples}};
}

Json placement_json(const PlacementReport& p) {
  Json per = Json::object();
  for (const auto& [n, c] : p.pages_per_node) per[std::to_string(n)] = c;
  return {{"intended_nodes", format_cpulist(p.intended_nodes)},
          {"ok", p.ok},
          {"page_size", p.page_size},
          {"pages_total", p.pages_total},
          {"pages_checked", p.pages_checked},
          {"pages_per_node", per},
          {"pages_not_present", p.pages_not_present},
          {"pages_failed", p.pages_failed},
          {"huge_page_bytes", p.huge_page_bytes}};
}

Json pair_json(const PairProbe& p) {
  Json j = {{"cpu_node", p.cpu_node},
            {"mem_node", p.mem_node},
            {"kind", tier_kind_name(p.kind)},
            {"emulated", p.emulated},
            {"threads", p.threads},
            {"read_kernel", p.read_kernel},
            {"read_bandwidth_gbps", figure_json(p.read_gbps)},
            {"latency_ns", figure_json(p.latency_ns)},
            {"placement",
             {{"bandwidth", placement_json(p.bandwidth_placement)},
              {"latency", placement_json(p.latency_placement)}}}};
  // Figures a probe may not have (no write/copy kernel; one CPU, so no load) are left out.
  if (!p.write_gbps.empty()) j["write_bandwidth_gbps"] = figure_json(p.write_gbps);
  if (!p.copy_gbps.empty()) j["copy_bandwidth_gbps"] = figure_json(p.copy_gbps);
  if (!p.loaded_latency_ns.empty()) {
    j["loaded_latency_ns"] = figure_json(p.loaded_latency_ns);
    j["loaded_latency_load"] = {{"threads", p.load_threads}, {"read_gbps", p.load_gbps}};
  }
  return j;
}

Json probe_json(const ProbeResult& r) {
  const auto& o = r.options;
  Json j;
  j["source"] = r.source;
  j["wall_seconds"] = r.wall_seconds;
  j["virtual_machine"] = r.virtual_machine;
  j["options"] = {
      {"bandwidth_bytes", o.bandwidth_bytes}, {"latency_bytes", o.latency_bytes},
      {"latency_hops", o.latency_hops},       {"seconds_per_figure", o.seconds_per_figure},
      {"min_repeats", o.min_repeats},         {"max_repeats", o.max_repeats},
      {"drift_tolerance", o.drift_tolerance}, {"max_noise", o.max_noise},
      {"settle_windows", o.settle_windows},   {"loaded_latency", o.loaded_latency}};
  j["pairs"] = Json::array();
  for (const auto& p : r.pairs) j["pairs"].push_back(pair_json(p));
  j["links"] = Json::array();
  for (const auto& l : r.links)
    j["links"].push_back({{"name", kCopyLinks.name(l.link)},
                          {"host_node", l.host_node},
                          {"device", l.device},
                          {"gbps", figure_json(l.gbps)}});
  return j;
}

// Derived per-node summary for readers of the file; recomputed, never read back.
Json tiers_json(const PlatformProfile& p) {
  Json tiers = Json::array();
  const Topology& t = p.topology;
  for (const auto& n : t.nodes) {
    const PairProbe* m = p.probe.pair(t.cpu_node, n.os_index);
    tiers.push_back({{"location", n.location().to_string()},
                     {"kind", tier_kind_name(n.kind)},
                     {"node", n.os_index},
                     {"emulated", n.emulated},
                     {"capacity_bytes", n.total_bytes},
                     {"free_bytes", n.free_bytes},
                     {"read_bandwidth_gbps", m ? m->read_gbps.summary.median : 0.0},
                     {"latency_ns", m ? m->latency_ns.summary.median : 0.0},
                     {"source", m ? (n.emulated ? "emulated" : "measured") : "unknown"}});
  }
  if (t.simulated_cxl)
    tiers.push_back(
        {{"location",
          MemoryLocation{MemoryKind::cxl, t.simulated_cxl->backing_node, true}.to_string()},
         {"kind", "cxl"},
         {"node", t.simulated_cxl->backing_node},
         {"emulated", true},
         {"read_bandwidth_gbps", t.simulated_cxl->bandwidth_gbps},
         {"latency_ns", t.simulated_cxl->latency_ns},
         {"source", "emulated"}});
  return tiers;
}

// ---- reading ----------------------------------------------------------------------------

std::vector<int> list_of(const JsonIn& j) {
  const std::string s = j.str();
  try {
    return parse_cpulist(s, "a list field");
  } catch (const Error&) {
    j.fail("expected a list like \"0-3,8\", found \"" + s + "\"");
  }
}

std::vector<std::string> strings_of(const JsonIn& j) {
  std::vector<std::string> out;
  j.each([&](const JsonIn& e) { out.push_back(e.str()); });
  return out;
}

TierKind kind_of(const JsonIn& j) {
  const std::string s = j.str();
  try {
    return parse_tier_kind(s);
  } catch (const Error&) {
    j.fail("unknown tier kind \"" + s + "\"");
  }
}

MemoryNode read_node(const JsonIn& j) {
  MemoryNode n;
  n.os_index = j["os_index"].i32();
  n.kind = kind_of(j["kind"]);
  n.emulated = j["emulated"].boolean();
  n.reasons = strings_of(j["reasons"]);
  n.subtype = j["subtype"].str();
  n.total_bytes = j["total_bytes"].i64();
  n.free_bytes = j["free_bytes"].i64();
  n.cpus = list_of(j["cpus"]);
  n.locality_cpus = list_of(j["locality_cpus"]);
  n.has_cpu_source = j["has_cpu_source"].str();
  n.package = j["package"].i32();
  n.memory_tier = j["memory_tier"].i32();
  j["distances"].each([&](const JsonIn& d) { n.distances.push_back(d.i32()); });
  n.cxl_link = j["cxl_link"].str();
  j["perf"].each([&](const JsonIn& p) {
    AccessPerf a;
    a.initiator_node = p["initiator_node"].i32();
    a.initiator_cpus = p["initiator_cpus"].str();
    a.bandwidth_mibps = p["bandwidth_mibps"].num();
    a.read_bandwidth_mibps = p["read_bandwidth_mibps"].num();
    a.latency_ns = p["latency_ns"].num();
    a.read_latency_ns = p["read_latency_ns"].num();
    a.source = p["source"].str();
    n.perf.push_back(a);
  });
  return n;
}

SystemSettings read_settings(const JsonIn& j) {
  SystemSettings s;
  s.known = j["known"].boolean();
  s.root = j["root"].str();
  s.thp_enabled = j["thp_enabled"].str();
  s.thp_defrag = j["thp_defrag"].str();
  s.numa_balancing = j["numa_balancing"].i32();
  s.demotion_enabled = j["demotion_enabled"].i32();
  s.zone_reclaim_mode = j["zone_reclaim_mode"].i32();
  s.weighted_interleave = j["weighted_interleave"].boolean();
  j["interleave_weights"].each_member([&](const std::string& node, const JsonIn& w) {
    try {
      s.interleave_weights[std::stoi(node)] = w.i32();
    } catch (const std::logic_error&) {
      w.fail("keys of interleave_weights are node numbers");
    }
  });
  return s;
}

Topology read_topology(const JsonIn& j, SystemSettings& settings) {
  if (j["schema"].str() != kTopologySchema)
    j["schema"].fail(std::string("expected \"") + kTopologySchema + "\"");
  Topology t;
  t.hwloc_xml = j["hwloc_xml"].str();
  t.sysfs_root = j["sysfs_root"].str();
  t.cpu_node = j["cpu_node"].i32();
  t.pus = j["pus"].i32();
  t.cores = j["cores"].i32();
  j["packages"].each([&](const JsonIn& p) {
    t.packages.push_back({p["os_index"].i32(), p["cores"].i32(), list_of(p["cpus"])});
  });
  j["nodes"].each([&](const JsonIn& n) { t.nodes.push_back(read_node(n)); });
  for (size_t i = 0; i < t.nodes.size(); ++i)
    if (!t.nodes[i].distances.empty() && t.nodes[i].distances.size() != t.nodes.size())
      j["nodes"].fail("node " + std::to_string(t.nodes[i].os_index) + " has " +
                      std::to_string(t.nodes[i].distances.size()) + " distances for " +
                      std::to_string(t.nodes.size()) + " nodes");
  if (t.cpu_node >= 0 && !t.node(t.cpu_node))
    j["cpu_node"].fail("names a node the topology does not list");
  t.distances_source = j["distances_source"].str();
  t.memattrs = strings_of(j["memattrs"]);
  j["memory_tiers"].each([&](const JsonIn& m) {
    t.memory_tiers.push_back({m["id"].i32(), list_of(m["nodes"])});
  });
  j["gpus"].each([&](const JsonIn& g) {
    GpuDevice d;
    d.pci_bus_id = g["pci_bus_id"].str();
    d.vendor_id = g["vendor_id"].i32();
    d.device_id = g["device_id"].i32();
    d.pci_class = g["pci_class"].i32();
    d.name = g["name"].str();
    d.numa_node = g["numa_node"].i32();
    d.local_nodes = list_of(g["local_nodes"]);
    d.package = g["package"].i32();
    d.pci_link_gbps = g["pci_link_gbps"].num();
    d.cuda_index = g["cuda_index"].i32();
    d.cuda_name = g["cuda_name"].str();
    d.sm_count = g["sm_count"].i32();
    d.memory_bytes = g["memory_bytes"].i64();
    d.pcie_gen = g["pcie_gen"].i32();
    d.pcie_width = g["pcie_width"].i32();
    t.gpus.push_back(d);
  });
  j["cxl_memdevs"].each([&](const JsonIn& m) {
    t.cxl_memdevs.push_back({m["name"].str(), m["pci_bus_id"].str(), m["ram_bytes"].i64(),
                             m["pmem_bytes"].i64(), m["source"].str()});
  });
  j["cxl_regions"].each([&](const JsonIn& r) {
    t.cxl_regions.push_back(
        {r["name"].str(), r["mode"].str(), static_cast<uint64_t>(r["start"].i64()),
         static_cast<uint64_t>(r["size"].i64()), strings_of(r["targets"]), r["numa_node"].i32()});
  });
  j["dax_devices"].each([&](const JsonIn& d) {
    const std::optional<DaxMode> mode = kDaxModes.parse(d["mode"].str());
    if (!mode) d["mode"].fail("expected one of \"" + kDaxModes.list() + "\" (empty = unknown)");
    t.dax_devices.push_back({d["name"].str(), d["dax_type"].str(), *mode, d["target_node"].i32(),
                             static_cast<uint64_t>(d["start"].i64()),
                             static_cast<uint64_t>(d["size"].i64()), d["cxl_region"].str()});
  });
  if (!j["simulated_cxl"].is_null()) {
    const JsonIn s = j["simulated_cxl"];
    t.simulated_cxl =
        SimulatedTier{s["bandwidth_gbps"].num(), s["latency_ns"].num(), s["backing_node"].i32()};
  }
  t.notes = strings_of(j["notes"]);
  settings = read_settings(j["settings"]);
  return t;
}

Figure read_figure(const JsonIn& j) {
  std::vector<double> samples;
  j["samples"].each([&](const JsonIn& s) { samples.push_back(s.num()); });
  if (samples.empty()) j["samples"].fail("a measured figure needs at least one sample");
  for (double v : samples)
    if (!(v > 0)) j["samples"].fail("samples must be positive");
  Figure f = Figure::of(std::move(samples));  // summary recomputed: the samples are the truth
  if (j.has("stop")) {  // absent before the probe judged its windows: unchecked
    const std::optional<FigureStop> stop = kFigureStops.parse(j["stop"].str());
    if (!stop) j["stop"].fail("expected one of " + kFigureStops.list());
    f.stop = *stop;
  }
  if (j.has("discarded")) {
    f.discarded = j["discarded"].i64();
    if (f.discarded < 0) j["discarded"].fail("must be >= 0");
  }
  return f;
}

PlacementReport read_placement(const JsonIn& j) {
  PlacementReport p;
  p.intended_nodes = list_of(j["intended_nodes"]);
  p.ok = j["ok"].boolean();
  p.page_size = static_cast<size_t>(j["page_size"].i64());
  p.pages_total = j["pages_total"].i64();
  p.pages_checked = j["pages_checked"].i64();
  p.pages_not_present = j["pages_not_present"].i64();
  p.pages_failed = j["pages_failed"].i64();
  p.huge_page_bytes = j["huge_page_bytes"].i64();
  j["pages_per_node"].each_member([&](const std::string& node, const JsonIn& pages) {
    try {
      p.pages_per_node[std::stoi(node)] = pages.i64();
    } catch (const std::logic_error&) {
      pages.fail("keys of pages_per_node are node numbers");
    }
  });
  return p;
}

ProbeResult read_probe(const JsonIn& j, const Topology& t) {
  ProbeResult r;
  r.source = j["source"].str();
  if (r.source != "measured") j["source"].fail("expected \"measured\"");
  r.wall_seconds = j["wall_seconds"].num();
  if (j.has("virtual_machine"))
    r.virtual_machine = j["virtual_machine"].str();  // absent in older profiles
  const JsonIn o = j["options"];
  r.options.bandwidth_bytes = static_cast<size_t>(o["bandwidth_bytes"].i64());
  r.options.latency_bytes = static_cast<size_t>(o["latency_bytes"].i64());
  r.options.latency_hops = o["latency_hops"].i64();
  r.options.seconds_per_figure = o["seconds_per_figure"].num();
  r.options.min_repeats = o["min_repeats"].i32();
  r.options.max_repeats = o["max_repeats"].i32();
  // Settling options and loaded latency are newer than the schema: optional.
  if (o.has("drift_tolerance")) r.options.drift_tolerance = o["drift_tolerance"].num();
  if (o.has("max_noise")) r.options.max_noise = o["max_noise"].num();
  if (o.has("settle_windows")) r.options.settle_windows = o["settle_windows"].num();
  if (o.has("loaded_latency")) r.options.loaded_latency = o["loaded_latency"].boolean();
  j["pairs"].each([&](const JsonIn& p) {
    PairProbe pp;
    pp.cpu_node = p["cpu_node"].i32();
    pp.mem_node = p["mem_node"].i32();
    if (!t.node(pp.cpu_node) || !t.node(pp.mem_node))
      p.fail("names a node the topology does not list");
    pp.kind = kind_of(p["kind"]);
    pp.emulated = p["emulated"].boolean();
    pp.threads = p["threads"].i32();
    pp.read_kernel = p["read_kernel"].str();
    pp.read_gbps = read_figure(p["read_bandwidth_gbps"]);
    pp.latency_ns = read_figure(p["latency_ns"]);
    if (p.has("write_bandwidth_gbps")) pp.write_gbps = read_figure(p["write_bandwidth_gbps"]);
    if (p.has("copy_bandwidth_gbps")) pp.copy_gbps = read_figure(p["copy_bandwidth_gbps"]);
    if (p.has("loaded_latency_ns")) {
      pp.loaded_latency_ns = read_figure(p["loaded_latency_ns"]);
      const JsonIn load = p["loaded_latency_load"];
      pp.load_threads = load["threads"].i32();
      pp.load_gbps = load["read_gbps"].num();
    }
    pp.bandwidth_placement = read_placement(p["placement"]["bandwidth"]);
    pp.latency_placement = read_placement(p["placement"]["latency"]);
    r.pairs.push_back(std::move(pp));
  });
  j["links"].each([&](const JsonIn& l) {
    const std::optional<CopyLink> link = kCopyLinks.parse(l["name"].str());
    if (!link) l["name"].fail("expected one of " + kCopyLinks.list());
    r.links.push_back({*link, l["host_node"].i32(), l["device"].i32(), read_figure(l["gbps"])});
  });
  return r;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

PlatformProfile make_platform_profile(Topology topo, SystemSettings settings, ProbeResult probe) {
  PlatformProfile p;
  p.created_utc = utc_now();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  p.host = host;
  p.tool_version = build_info().version + " (" + build_info().git_commit + ")";
  p.topology = std::move(topo);
  p.settings = std::move(settings);
  p.probe = std::move(probe);
  return p;
}

// Text from outside (hwloc XML, sysfs, a profile) may hold bytes that are not UTF-8: every JSON
// writer here replaces them (U+FFFD) rather than throwing while the result is written.
std::string topology_json(const Topology& topo, const SystemSettings& settings) {
  return topology_object(topo, settings)
             .dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

std::string platform_profile_json(const PlatformProfile& p) {
  Json j;
  j["schema"] = kPlatformSchema;
  j["source"] = p.source;
  j["created_utc"] = p.created_utc;
  j["host"] = p.host;
  j["tool_version"] = p.tool_version;
  j["topology"] = topology_object(p.topology, p.settings);
  j["probe"] = probe_json(p.probe);
  j["tiers"] = tiers_json(p);
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

PlatformProfile parse_platform_profile(const std::string& text, const std::string& file) {
  Json doc;
  try {
    doc = parse_json_text<Json>(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(file + ": not JSON (" + e.what() + ")",
                "give a profile written by `hybridbench probe --out FILE`");
  }
  const JsonIn j(doc, "$", &file);
  if (j["schema"].str() != kPlatformSchema)
    j["schema"].fail("expected \"" + std::string(kPlatformSchema) + "\", found \"" +
                     j["schema"].str() + "\"");
  PlatformProfile p;
  p.source = j["source"].str();
  if (p.source != "measured") j["source"].fail("expected \"measured\"");
  p.created_utc = j["created_utc"].str();
  p.host = j["host"].str();
  p.tool_version = j["tool_version"].str();
  p.topology = read_topology(j["topology"], p.settings);
  p.probe = read_probe(j["probe"], p.topology);
  p.topology.source = TopologySource::profile;
  p.topology.notes.push_back("loaded from platform profile " + file + " (measured on " + p.host +
                             " at " + p.created_utc + ")");
  return p;
}

PlatformProfile load_platform_profile(const std::string& path) {
  const std::string text =
      read_input_file(path, {"platform profile", kMaxProfileBytes,
                             "write one with `hybridbench probe --out " + path + "`"});
  return parse_platform_profile(text, path);
}

}  // namespace hb::memtier
