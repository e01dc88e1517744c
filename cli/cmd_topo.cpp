// `hybridbench topo`: discover (or load) the memory topology and show it as a table, or as
// JSON (schema hybridbench.topology/1, memtier/README.md).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/command.h"
#include "cli/numeric_options.h"
#include "cli/output_options.h"
#include "core/error.h"
#include "memtier/cpulist.h"
#include "memtier/discover.h"
#include "memtier/fs_util.h"
#include "memtier/profile.h"
#include "memtier/settings.h"
#include "reports/output_file.h"

namespace hb::cli {

namespace {

using namespace hb::memtier;

struct TopoArgs {
  DiscoverOptions discover;
  std::string platform, json;
  bool quiet = false;
};

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string gib(int64_t bytes) {
  return bytes < 0 ? "?" : fmt("%.2f GiB", double(bytes) / double(1 << 30));
}
std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }
std::string num_or_dash(int v) { return v < 0 ? "-" : std::to_string(v); }

// "22500 MiB/s, 90 ns" as the reference CPU node sees the node (HMAT), "-" when unknown.
std::string hmat_text(const MemoryNode& n, int cpu_node) {
  for (const auto& p : n.perf) {
    if (p.initiator_node != cpu_node) continue;
    std::string s;
    if (p.best_bandwidth() > 0) s += fmt("%.0f MiB/s", p.best_bandwidth());
    if (p.best_latency() > 0) s += (s.empty() ? "" : ", ") + fmt("%.0f ns", p.best_latency());
    return or_dash(s);
  }
  if (!n.perf.empty()) return "(other initiators only)";
  return "-";
}

std::string measured_text(const PlatformProfile* prof, int cpu_node, int node) {
  if (!prof) return "";
  const PairProbe* p = prof->probe.pair(cpu_node, node);
  if (!p) return "not probed";
  return fmt("%.1f GB/s", p->read_gbps.summary.median) +
         fmt(" (±%.1f%%), ", 100 * p->read_gbps.noise()) +
         fmt("%.0f ns", p->latency_ns.summary.median) +
         fmt(" (±%.1f%%)", 100 * p->latency_ns.noise());
}

// Columns as wide as their widest cell; each node's reasons follow its row.
void print_table(std::ostream& o, const std::vector<std::vector<std::string>>& rows,
                 const std::vector<std::vector<std::string>>& notes) {
  std::vector<size_t> w;
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) {
      if (w.size() <= i) w.push_back(0);
      w[i] = std::max(w[i], r[i].size());
    }
  for (size_t k = 0; k < rows.size(); ++k) {
    std::string line;
    for (size_t i = 0; i < rows[k].size(); ++i) {
      std::string c = rows[k][i];
      c.resize(std::max(c.size(), w[i]), ' ');
      line += "  " + c;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    o << line << "\n";
    if (k > 0)
      for (const auto& n : notes[k - 1]) o << "        why: " << n << "\n";
  }
}

void print_nodes(std::ostream& o, const Topology& t, const PlatformProfile* prof) {
  o << "\nNUMA nodes (kinds relative to CPU node " << t.cpu_node << ")\n";
  std::vector<std::vector<std::string>> rows, notes;
  rows.push_back({"node", "kind", "size", "free", "subtype", "tier", "pkg",
                  "HMAT from node " + std::to_string(t.cpu_node), "CPUs"});
  if (prof)
    rows[0].push_back("measured from node " + std::to_string(t.cpu_node) + " (read, latency)");
  for (const auto& n : t.nodes) {
    std::string kind(tier_kind_name(n.kind));
    if (n.emulated) kind += " (emulated)";
    rows.push_back({std::to_string(n.os_index), kind, gib(n.total_bytes), gib(n.free_bytes),
                    or_dash(n.subtype), num_or_dash(n.memory_tier), num_or_dash(n.package),
                    hmat_text(n, t.cpu_node), n.has_cpu() ? format_cpulist(n.cpus) : "none"});
    if (prof) rows.back().push_back(measured_text(prof, t.cpu_node, n.os_index));
    notes.push_back(n.reasons);
  }
  print_table(o, rows, notes);
  if (t.simulated_cxl)
    o << "  sim   cxl (emulated): simulated tier on node " << t.simulated_cxl->backing_node
      << fmt(", declared %.1f GB/s", t.simulated_cxl->bandwidth_gbps)
      << fmt(", %.0f ns", t.simulated_cxl->latency_ns)
      << " -- a simulation for exercising tiered code paths, not a measurement\n";
}

void print_distances(std::ostream& o, const Topology& t) {
  if (t.distances_source.empty()) {
    o << "\nDistances: unknown\n";
    return;
  }
  o << "\nDistances (" << t.distances_source << ")\n      ";
  for (const auto& n : t.nodes) o << fmt("%5.0f", n.os_index);
  o << "\n";
  for (const auto& a : t.nodes) {
    o << fmt("%5.0f ", a.os_index);
    for (int d : a.distances) o << fmt("%5.0f", d);
    o << "\n";
  }
}

void print_devices(std::ostream& o, const Topology& t) {
  o << "\nGPUs";
  if (t.gpus.empty()) o << ": none found on PCI";
  o << "\n";
  for (const auto& g : t.gpus) {
    char id[16];
    std::snprintf(id, sizeof id, "%04x:%04x", g.vendor_id, g.device_id);
    o << "  " << g.pci_bus_id << "  " << id << "  "
      << (g.cuda_name.empty() ? or_dash(g.name) : g.cuda_name) << "  local node "
      << num_or_dash(g.numa_node) << ", package " << num_or_dash(g.package);
    if (g.pci_link_gbps > 0) o << fmt(", PCI link %.1f GB/s", g.pci_link_gbps);
    if (g.cuda_index >= 0)
      o << ", cuda:" << g.cuda_index << ", " << g.sm_count << " SMs, " << gib(g.memory_bytes);
    o << "\n";
  }
  o << "\nCXL / DAX";
  if (t.cxl_memdevs.empty() && t.cxl_regions.empty() && t.dax_devices.empty()) o << ": none";
  o << "\n";
  for (const auto& m : t.cxl_memdevs)
    o << "  memdev " << m.name << "  PCI " << or_dash(m.pci_bus_id) << "  ram " << gib(m.ram_bytes)
      << ", pmem " << gib(m.pmem_bytes) << "  (" << m.source << ")\n";
  for (const auto& r : t.cxl_regions)
    o << "  region " << r.name << "  mode " << or_dash(r.mode) << "  "
      << gib(static_cast<int64_t>(r.size)) << "  -> NUMA node "
      << (r.numa_node >= 0 ? std::to_string(r.numa_node) : "none (not onlined)") << "\n";
  for (const auto& d : t.dax_devices)
    o << "  dax " << d.name << "  type " << or_dash(d.dax_type) << "  mode "
      << or_dash(kDaxModes.name(d.mode)) << "  target node " << num_or_dash(d.target_node)
      << (d.cxl_region.empty() ? "" : "  in CXL " + d.cxl_region) << "\n";
  bool cxl_node = false;
  for (const auto& n : t.nodes) cxl_node = cxl_node || (n.kind == TierKind::cxl && !n.emulated);
  if (!t.cxl_memdevs.empty() && !cxl_node)
    o << "  CXL memory devices are present but none is onlined as a NUMA node\n";
}

void print_settings(std::ostream& o, const Topology& t, const SystemSettings& s) {
  if (!t.memory_tiers.empty()) {
    o << "\nMemory tiers (lower = faster):";
    for (const auto& m : t.memory_tiers)
      o << "  memory_tier" << m.id << ": " << or_dash(format_cpulist(m.nodes));
    o << "\n";
  }
  o << "\nSettings";
  if (!s.known) {
    o << ": not read (the topology came from a file describing another machine)\n";
  } else {
    o << "\n";
    for (const auto& [k, v] : s.as_map()) o << "  " << k << ": " << v << "\n";
    for (const auto& w : s.warnings()) o << "  warning: " << w << "\n";
  }
  if (!t.notes.empty()) {
    o << "\nNotes\n";
    for (const auto& n : t.notes) o << "  " << n << "\n";
  }
}

void print_text(std::ostream& o, const Topology& t, const SystemSettings& s,
                const PlatformProfile* prof) {
  o << "Topology from " << kTopologySources.name(t.source);
  if (!t.hwloc_xml.empty()) o << " (" << t.hwloc_xml << ")";
  if (!t.sysfs_root.empty()) o << " (sysfs root " << t.sysfs_root << ")";
  o << "\n";
  o << "  " << t.packages.size() << " package(s), " << t.cores << " cores, " << t.pus << " PUs, "
    << t.nodes.size() << " NUMA node(s); reference CPU node " << t.cpu_node
    << " (where host threads run)\n";
  if (!t.memattrs.empty()) {
    o << "  hwloc memory attributes:";
    for (const auto& m : t.memattrs) o << " " << m;
    o << "\n";
  }
  print_nodes(o, t, prof);
  print_distances(o, t);
  print_devices(o, t);
  print_settings(o, t, s);
}

// Every file topo reads, so --json can never overwrite one: the profile, the hwloc export and
// the folders of a --sysfs-root tree it reads below (sys/ and proc/, not the whole root, which
// may be "/").
std::vector<std::string> topo_inputs(const TopoArgs& a) {
  std::vector<std::string> inputs = {a.platform, a.discover.topology_xml};
  if (!a.discover.sysfs_root.empty()) {
    inputs.push_back(under_root(a.discover.sysfs_root, "sys"));
    inputs.push_back(under_root(a.discover.sysfs_root, "proc"));
  }
  return inputs;
}

}  // namespace

CommandFn add_topo_command(CLI::App& app) {
  auto args = std::make_shared<TopoArgs>();
  CLI::App* sub = app.add_subcommand(
      "topo", "Discover this node's memory topology and classify each memory node into a tier");
  sub->add_option("--topology", args->discover.topology_xml,
                  "Read an hwloc XML export instead of this machine (e.g. "
                  "tests/memtier/fixtures/topologies/*.xml)")
      ->check(CLI::ExistingFile);
  sub->add_option("--sysfs-root", args->discover.sysfs_root,
                  "Read Linux sysfs under this root prefix (a copy of /sys for another machine)");
  add_integer_option(*sub, "--cpu-node", args->discover.cpu_node,
                     "Reference CPU node for local/remote (default: where this process runs)", -1,
                     kMaxNodeId);
  sub->add_option(
      "--emulate-cxl", args->discover.emulate_cxl,
      "node=N: NUMA node N plays the CXL tier; bandwidth=GBPS,latency=NS: simulated tier "
      "(always labelled emulated)");
  sub->add_option("--platform", args->platform,
                  "Show a platform profile written by `probe --out` instead")
      ->excludes("--topology")
      ->excludes("--sysfs-root")
      ->excludes("--cpu-node")
      ->excludes("--emulate-cxl");
  add_json_option(*sub, args->json,
                  "the topology (schema hybridbench.topology/1, memtier/README.md)");
  sub->add_flag("-q,--quiet", args->quiet, "With --json -: no table on stderr");
  return [args] {
    reports::check_output_path("--json", args->json, topo_inputs(*args));
    Topology topo;
    SystemSettings settings;
    std::optional<PlatformProfile> prof;
    if (!args->platform.empty()) {
      prof = load_platform_profile(args->platform);
      topo = prof->topology;
      settings = prof->settings;
    } else {
      topo = discover(args->discover);
      // Settings belong to the machine sysfs describes; an XML alone describes no settings.
      if (!topo.sysfs_root.empty()) settings = read_system_settings(topo.sysfs_root);
    }
    if (!args->json.empty()) reports::write_output(args->json, topology_json(topo, settings));
    // JSON on stdout: the table moves to stderr, like every subcommand's human text.
    const bool json_on_stdout = reports::is_stdout_path(args->json);
    if (!(json_on_stdout && args->quiet))
      print_text(json_on_stdout ? std::cerr : std::cout, topo, settings, prof ? &*prof : nullptr);
    return kExitOk;
  };
}

}  // namespace hb::cli
