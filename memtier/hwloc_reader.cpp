#include "memtier/hwloc_reader.h"

#include <fcntl.h>
#include <hwloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

#include "core/error.h"
#include "core/input_file.h"
#include "memtier/cpulist.h"
#include "memtier/fs_util.h"
#include "memtier/hwloc_xml_check.h"

namespace hb::memtier {

namespace {

using TopoPtr = std::unique_ptr<hwloc_topology, decltype(&hwloc_topology_destroy)>;

// Values beyond these are not a machine's, they are a broken file or firmware table (an HMAT
// "-1" reads back as 2^64-1): 1 PiB/s, 1 s, and a SLIT entry that does not fit an int.
constexpr hwloc_uint64_t kMaxBandwidthMiBps = hwloc_uint64_t(1) << 30;
constexpr hwloc_uint64_t kMaxLatencyNs = 1000000000;
constexpr hwloc_uint64_t kMaxDistance = INT_MAX;

// What a topology that cannot be trusted is refused as: an XML file the user gave is bad input
// (exit 2, naming it); the live machine's hwloc data is what the firmware says, so callers mark
// the value unknown with a note instead (see `refuse`).
struct Origin {
  std::string xml_path;
  bool from_file() const { return !xml_path.empty(); }
  [[noreturn]] void refuse(const std::string& what) const {
    throw Error("hwloc topology file " + xml_path + ": " + what,
                "fix or re-export the file (`lstopo-no-graphics --of xml FILE.xml` on the machine "
                "it describes)");
  }
};

// hwloc's unsigned os_index as our int: HWLOC_UNKNOWN_INDEX (and anything past INT_MAX) is -1.
int os_index_or_unknown(unsigned idx) {
  return idx > static_cast<unsigned>(INT_MAX) ? -1 : static_cast<int>(idx);
}

std::vector<int> bitmap_ids(hwloc_const_bitmap_t set) {
  std::vector<int> ids;
  if (!set) return ids;
  int i;
  hwloc_bitmap_foreach_begin(i, set) ids.push_back(i);
  hwloc_bitmap_foreach_end();
  return ids;
}

const char* info(hwloc_obj_t obj, const char* name) {
  return hwloc_obj_get_info_by_name(obj, name);
}

std::string bus_id(hwloc_obj_t pci) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain,
                pci->attr->pcidev.bus, pci->attr->pcidev.dev, pci->attr->pcidev.func);
  return buf;
}

int package_of(hwloc_topology_t topo, hwloc_obj_t obj) {
  if (obj->type == HWLOC_OBJ_PACKAGE) return os_index_or_unknown(obj->os_index);
  hwloc_obj_t p = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, obj);
  return p ? os_index_or_unknown(p->os_index) : -1;
}

// Memory that the OS never gives CPUs of its own. hwloc gives every NUMA node the cpuset of
// its locality, so CPU-less nodes cannot be told from the cpuset (topologies/README.md).
bool cpu_less_subtype(const std::string& st) {
  return st == "MCDRAM" || st == "HBM" || st == "NVM" || st == "SPM" || st == "GPUMemory" ||
         st.rfind("CXL", 0) == 0;
}

// The file is read once (bounded, core/input_file.h) and hwloc imports that text: what was
// checked is what hwloc reads, even if the file changes meanwhile.
int set_xml_text(hwloc_topology_t t, const std::string& xml_text) {
  return hwloc_topology_set_xmlbuffer(t, xml_text.c_str(), static_cast<int>(xml_text.size() + 1));
}

// hwloc 2.9's XML import dereferences NULL on some malformed files (a PU with a cpuset but no
// complete_cpuset; found by tests/fuzz/fuzz_hwloc_xml, and lstopo crashes on it the same way).
// The import is tried in a child process first, so such a file is an error naming it, never a
// crash of ours. The child only runs hwloc and _exit()s; its stderr goes to /dev/null.
bool hwloc_import_survives(const std::string& xml_text) {
  const pid_t pid = fork();
  if (pid < 0) return true;  // cannot check here; the load below goes ahead
  if (pid == 0) {
    // Die by the signal itself: no crash handler (ASan's, a fuzzer's) reports the child's crash.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, SIG_DFL);
    const int null_fd = open("/dev/null", O_WRONLY);
    if (null_fd >= 0) dup2(null_fd, STDERR_FILENO);
    hwloc_topology_t t = nullptr;
    if (hwloc_topology_init(&t) == 0) {
      hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
      if (set_xml_text(t, xml_text) == 0) hwloc_topology_load(t);
    }
    _exit(0);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return true;
  // Only a clean exit counts: a crash handler (ASan's, libFuzzer's) may turn the signal into
  // a non-zero exit status.
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TopoPtr load(const std::string& xml_path) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) throw Error("hwloc_topology_init failed", {}, kExitFailure);
  TopoPtr topo(raw, &hwloc_topology_destroy);
  // Keep PCI devices, GPUs and CXL/DAX OS devices; hwloc drops I/O objects by default.
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  const std::string fix =
      "give an hwloc 2.x XML export (`lstopo-no-graphics --of xml FILE.xml`); hwloc 3.0 exports "
      "are refused by the installed hwloc " HWLOC_VERSION;
  std::string text;  // hwloc reads the buffer at load time: it lives until then
  if (!xml_path.empty()) {
    text = read_input_file(xml_path, {"hwloc topology file", kMaxTopologyBytes, fix});
    check_hwloc_xml_numbers(text, xml_path, fix);
    if (!hwloc_import_survives(text))
      throw Error("hwloc crashed reading " + xml_path +
                      " (malformed XML; hwloc " HWLOC_VERSION " does not check it)",
                  fix);
    if (set_xml_text(raw, text) != 0)
      throw Error("hwloc cannot load " + xml_path +
                      " (corrupt or unsupported XML): " + std::strerror(errno),
                  fix);
  }
  if (hwloc_topology_load(raw) != 0) {
    if (xml_path.empty())
      throw Error("hwloc cannot discover this machine's topology", {}, kExitFailure);
    throw Error(
        "hwloc cannot load " + xml_path + " (corrupt or unsupported XML): " + std::strerror(errno),
        fix);
  }
  return topo;
}

void read_packages(hwloc_topology_t topo, Topology& t) {
  t.pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  t.cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  for (hwloc_obj_t p = nullptr; (p = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PACKAGE, p));) {
    Package pk;
    pk.os_index = os_index_or_unknown(p->os_index);  // -1 = unknown, as the field says
    pk.cpus = bitmap_ids(p->cpuset);
    pk.cores = hwloc_get_nbobjs_inside_cpuset_by_type(topo, p->cpuset, HWLOC_OBJ_CORE);
    t.packages.push_back(std::move(pk));
  }
}

void read_nodes(hwloc_topology_t topo, Topology& t, std::map<int, hwloc_obj_t>& objs,
                const Origin& origin) {
  for (hwloc_obj_t n = nullptr; (n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n));) {
    MemoryNode m;
    // A node is known by its OS index everywhere (--kv-node, placement, reports): one without a
    // usable index cannot be used at all, and would show as "node -1".
    m.os_index = os_index_or_unknown(n->os_index);
    const std::string logical = "NUMA node L#" + std::to_string(n->logical_index);
    if (m.os_index < 0) {
      const std::string what =
          logical + " has os_index " + std::to_string(n->os_index) +
          (n->os_index == HWLOC_UNKNOWN_INDEX ? " (unknown)" : " (past INT_MAX)");
      if (origin.from_file()) origin.refuse(what);
      throw Error("this machine's hwloc topology: " + what,
                  "report it with `lstopo-no-graphics --of xml`", kExitFailure);
    }
    if (objs.count(m.os_index)) {
      const std::string what = logical + " repeats os_index " + std::to_string(m.os_index);
      if (origin.from_file()) origin.refuse(what);
      throw Error("this machine's hwloc topology: " + what,
                  "report it with `lstopo-no-graphics --of xml`", kExitFailure);
    }
    m.subtype = n->subtype ? n->subtype : "";
    const hwloc_uint64_t mem = n->attr->numanode.local_memory;
    if (mem > static_cast<hwloc_uint64_t>(INT64_MAX)) {
      if (origin.from_file())
        origin.refuse("NUMA node " + std::to_string(m.os_index) + " local_memory " +
                      std::to_string(mem) + " is not a size");
      t.notes.push_back("hwloc size of node " + std::to_string(m.os_index) + " (" +
                        std::to_string(mem) + ") is not plausible; unknown");
    } else {
      m.total_bytes = static_cast<int64_t>(mem);
    }
    m.locality_cpus = bitmap_ids(n->cpuset);
    m.package = package_of(topo, n);
    const bool first = n->parent && n->parent->memory_first_child == n;
    if (cpu_less_subtype(m.subtype)) {
      m.has_cpu_source = "hwloc: subtype " + m.subtype + " has no CPUs of its own";
    } else if (!first) {
      m.has_cpu_source = "hwloc: not the first memory node of its locality";
    } else {
      m.cpus = m.locality_cpus;
      m.has_cpu_source = "hwloc: first memory node of its locality";
    }
    objs[m.os_index] = n;
    t.nodes.push_back(std::move(m));
  }
  std::sort(t.nodes.begin(), t.nodes.end(),
            [](auto& a, auto& b) { return a.os_index < b.os_index; });
}

void read_distances(hwloc_topology_t topo, Topology& t, const Origin& origin) {
  unsigned nr = 1;
  hwloc_distances_s* d = nullptr;
  if (hwloc_distances_get_by_name(topo, "NUMALatency", &nr, &d, 0) != 0 || nr == 0 || !d) {
    nr = 1;
    if (hwloc_distances_get_by_type(topo, HWLOC_OBJ_NUMANODE, &nr, &d, 0, 0) != 0 || nr == 0 || !d)
      return;
  }
  const char* name = hwloc_distances_get_name(topo, d);
  std::map<int, unsigned> index;  // os_index -> row in d
  for (unsigned i = 0; i < d->nbobjs; ++i) index[os_index_or_unknown(d->objs[i]->os_index)] = i;
  bool complete = true;
  for (const auto& n : t.nodes) complete = complete && index.count(n.os_index);
  std::string implausible;  // the first entry no SLIT could hold (a "-1" reads back as 2^64-1)
  for (unsigned i = 0; i < d->nbobjs * d->nbobjs && implausible.empty(); ++i)
    if (d->values[i] > kMaxDistance)
      implausible = std::string("distance matrix ") + (name ? name : "") + " entry from node " +
                    std::to_string(d->objs[i / d->nbobjs]->os_index) + " to node " +
                    std::to_string(d->objs[i % d->nbobjs]->os_index) + " is " +
                    std::to_string(d->values[i]);
  if (!implausible.empty()) {
    hwloc_distances_release(topo, d);
    if (origin.from_file()) origin.refuse(implausible);
    t.notes.push_back("hwloc " + implausible + ": not plausible; matrix ignored");
    return;
  }
  if (complete) {
    for (auto& a : t.nodes) {
      a.distances.clear();
      for (const auto& b : t.nodes)
        a.distances.push_back(
            static_cast<int>(d->values[index[a.os_index] * d->nbobjs + index[b.os_index]]));
    }
    t.distances_source = std::string("hwloc ") + (name ? name : "distances");
  } else {
    t.notes.push_back("hwloc distance matrix does not cover every NUMA node; ignored");
  }
  hwloc_distances_release(topo, d);
}

// The node whose own CPUs are inside the initiator's cpuset: the initiator's local DRAM.
int initiator_node(const Topology& t, const std::vector<int>& cpus) {
  for (const auto& n : t.nodes) {
    if (!n.has_cpu()) continue;
    if (std::includes(cpus.begin(), cpus.end(), n.cpus.begin(), n.cpus.end())) return n.os_index;
  }
  return -1;
}

void read_memattrs(hwloc_topology_t topo, Topology& t, const std::map<int, hwloc_obj_t>& objs,
                   const Origin& origin) {
  struct Attr {
    const char* name;
    hwloc_memattr_id_t id;
    double AccessPerf::*field;
    hwloc_uint64_t max;
  };
  const Attr attrs[] = {
      {"Bandwidth", HWLOC_MEMATTR_ID_BANDWIDTH, &AccessPerf::bandwidth_mibps, kMaxBandwidthMiBps},
      {"ReadBandwidth", HWLOC_MEMATTR_ID_READ_BANDWIDTH, &AccessPerf::read_bandwidth_mibps,
       kMaxBandwidthMiBps},
      {"WriteBandwidth", HWLOC_MEMATTR_ID_WRITE_BANDWIDTH, nullptr, kMaxBandwidthMiBps},
      {"Latency", HWLOC_MEMATTR_ID_LATENCY, &AccessPerf::latency_ns, kMaxLatencyNs},
      {"ReadLatency", HWLOC_MEMATTR_ID_READ_LATENCY, &AccessPerf::read_latency_ns, kMaxLatencyNs},
      {"WriteLatency", HWLOC_MEMATTR_ID_WRITE_LATENCY, nullptr, kMaxLatencyNs},
  };
  for (const Attr& a : attrs) {
    bool any = false;
    for (auto& node : t.nodes) {
      std::vector<hwloc_location> inits(64);
      std::vector<hwloc_uint64_t> vals(64);
      unsigned nr = 64;
      if (hwloc_memattr_get_initiators(topo, a.id, objs.at(node.os_index), 0, &nr, inits.data(),
                                       vals.data()) != 0)
        continue;
      for (unsigned i = 0; i < std::min(nr, 64u); ++i) {
        const hwloc_const_bitmap_t set = inits[i].type == HWLOC_LOCATION_TYPE_CPUSET
                                             ? inits[i].location.cpuset
                                             : inits[i].location.object->cpuset;
        const std::vector<int> cpus = bitmap_ids(set);
        const std::string key = format_cpulist(cpus);
        // 0 is "not reported" in AccessPerf; past the limit is garbage (HMAT -1 = 2^64-1 MiB/s).
        if (vals[i] == 0) continue;
        if (vals[i] > a.max) {
          const std::string what =
              "memory attribute " + std::string(a.name) + " of NUMA node " +
              std::to_string(node.os_index) + " from CPUs " + key + " is " +
              std::to_string(vals[i]) +
              (a.max == kMaxLatencyNs ? " ns (more than 1 s)" : " MiB/s (more than 1 PiB/s)");
          if (origin.from_file()) origin.refuse(what);
          t.notes.push_back("hwloc " + what + ": not plausible; unknown");
          continue;
        }
        any = true;
        if (!a.field) continue;
        auto it = std::find_if(node.perf.begin(), node.perf.end(),
                               [&](const AccessPerf& p) { return p.initiator_cpus == key; });
        if (it == node.perf.end()) {
          AccessPerf p;
          p.initiator_cpus = key;
          p.initiator_node = initiator_node(t, cpus);
          p.source = "hwloc-memattr";
          node.perf.push_back(p);
          it = node.perf.end() - 1;
        }
        (*it).*(a.field) = static_cast<double>(vals[i]);
      }
    }
    if (any) t.memattrs.push_back(a.name);
  }
}

// A size info attribute in KiB as bytes; absent or not a plausible size (a sign, garbage, more
// than 2^52 KiB) is 0, with a note for the latter.
int64_t kib_info(hwloc_obj_t o, const char* attr, const std::string& name, Topology& t) {
  const char* v = info(o, attr);
  if (!v) return 0;
  const auto kib = parse_u64(v);
  if (kib && *kib <= (uint64_t(1) << 52)) return static_cast<int64_t>(*kib * 1024);
  t.notes.push_back("hwloc " + std::string(attr) + " of " + name + " is '" + v +
                    "': not a size in KiB; unknown");
  return 0;
}

void read_io(hwloc_topology_t topo, Topology& t) {
  for (hwloc_obj_t p = nullptr; (p = hwloc_get_next_pcidev(topo, p));) {
    const auto& a = p->attr->pcidev;
    const bool display = a.class_id == 0x0300 || a.class_id == 0x0302;
    if (!display || a.vendor_id != 0x10de) continue;  // NVIDIA GPUs only (not BMC VGA chips)
    GpuDevice g;
    g.pci_bus_id = bus_id(p);
    g.vendor_id = a.vendor_id;
    g.device_id = a.device_id;
    g.pci_class = a.class_id;
    const char* vendor = info(p, "PCIVendor");
    const char* device = info(p, "PCIDevice");
    g.name =
        std::string(vendor ? vendor : "") + (vendor && device ? " " : "") + (device ? device : "");
    g.pci_link_gbps = std::isfinite(a.linkspeed) && a.linkspeed > 0 && a.linkspeed < 1e6
                          ? a.linkspeed
                          : 0;  // 0 unknown
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, p);
    g.local_nodes = bitmap_ids(anc->nodeset);
    for (int n : g.local_nodes)
      if (const MemoryNode* m = t.node(n); m && m->has_cpu()) {
        g.numa_node = n;
        break;
      }
    g.package = package_of(topo, anc);
    t.gpus.push_back(std::move(g));
  }
  for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_osdev(topo, o));) {
    const std::string name = o->name ? o->name : "";
    if (o->subtype && std::strcmp(o->subtype, "CXLMem") == 0) {
      CxlMemdev m;
      m.name = name;
      m.ram_bytes = kib_info(o, "CXLRAMSize", name, t);
      m.pmem_bytes = kib_info(o, "CXLPMEMSize", name, t);
      if (o->parent && o->parent->type == HWLOC_OBJ_PCI_DEVICE) m.pci_bus_id = bus_id(o->parent);
      m.source = "hwloc";
      t.cxl_memdevs.push_back(std::move(m));
    } else if (const char* dt = info(o, "DAXType")) {
      DaxDevice d;
      d.name = name;
      d.dax_type = dt;
      t.dax_devices.push_back(std::move(d));
    }
  }
  std::sort(t.gpus.begin(), t.gpus.end(),
            [](auto& a, auto& b) { return a.pci_bus_id < b.pci_bus_id; });
  auto by_name = [](auto& a, auto& b) { return a.name < b.name; };
  std::sort(t.cxl_memdevs.begin(), t.cxl_memdevs.end(), by_name);
  std::sort(t.dax_devices.begin(), t.dax_devices.end(), by_name);
}

}  // namespace

Topology read_hwloc(const std::string& xml_path) {
  TopoPtr topo = load(xml_path);
  Topology t;
  t.source = xml_path.empty() ? TopologySource::live : TopologySource::hwloc_xml;
  t.hwloc_xml = xml_path;
  std::map<int, hwloc_obj_t> objs;
  const Origin origin{xml_path};
  read_packages(topo.get(), t);
  read_nodes(topo.get(), t, objs, origin);
  read_distances(topo.get(), t, origin);
  read_memattrs(topo.get(), t, objs, origin);
  read_io(topo.get(), t);
  return t;
}

}  // namespace hb::memtier
