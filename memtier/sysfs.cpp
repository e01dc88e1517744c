#include "memtier/sysfs.h"

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <sstream>

#include "core/error.h"
#include "memtier/cpulist.h"
#include "memtier/fs_util.h"

namespace hb::memtier {

namespace {

const char* kNodeDir = "sys/devices/system/node";
const char* kFixHint =
    "point --sysfs-root at a copy of a machine's /sys tree (it must contain "
    "sys/devices/system/node/online and nodeN/cpulist; see tests/memtier/fixtures)";

std::string required_text(const std::string& path) {
  auto t = read_text(path);
  if (!t) throw Error("sysfs file " + path + " is missing or unreadable", kFixHint);
  return *t;
}

std::vector<int> read_list(const std::string& path) {
  return parse_cpulist(required_text(path), path);
}

// Ids of entries named <prefix><digits>, e.g. node3 or memory_tier4.
std::vector<int> numbered_entries(const std::string& dir, const std::string& prefix) {
  std::vector<int> ids;
  for (const auto& name : list_dir(dir)) {
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    // At most 9 digits: an id past int (a crafted tree) is not an entry, never an exception.
    if (digits.size() <= 9 && std::all_of(digits.begin(), digits.end(), ::isdigit))
      ids.push_back(std::stoi(digits));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

void read_meminfo(const std::string& path, SysfsNode& n) {
  auto text = read_text(path);
  if (!text) return;
  // Lines look like "Node 0 MemTotal:        4413376 kB".
  std::istringstream in(*text);
  std::string line;
  int64_t file_pages = -1, shmem = 0;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string word, id, key;
    int64_t kb = -1;
    ls >> word >> id >> key >> kb;
    // Negative, beyond 1 EiB or not a number: the node's size would be invented, so MemTotal
    // refuses the tree; other figures are only hints and are dropped.
    const bool readable = !ls.fail() && kb >= 0 && kb <= (int64_t(1) << 50);
    if (key == "MemTotal:" && !readable)
      throw Error(path + ": \"" + line + "\" is not a size in kB from 0 to 2^50", kFixHint);
    if (!readable) continue;
    if (key == "MemTotal:")
      n.total_bytes = kb * 1024;
    else if (key == "MemFree:")
      n.free_bytes = kb * 1024;
    else if (key == "FilePages:")
      file_pages = kb * 1024;
    else if (key == "Shmem:")
      shmem = kb * 1024;
  }
  if (n.free_bytes >= 0)
    n.available_bytes = n.free_bytes + std::max<int64_t>(0, file_pages - shmem);
}

// HMAT figures beyond these are a broken table, not a machine: 1 PiB/s, 1 s.
constexpr uint64_t kMaxBandwidthMiBps = uint64_t(1) << 30;
constexpr uint64_t kMaxLatencyNs = 1000000000;

std::vector<AccessPerf> read_access_class(const std::string& node_dir, int access,
                                          std::vector<std::string>& notes) {
  const std::string dir = node_dir + "/access" + std::to_string(access) + "/initiators";
  if (!path_exists(dir)) return {};
  // 0 = not reported. A value that is not a plain number ("-1", garbage) or is past the limit
  // is unknown, with a note, never wrapped into 2^64-1 MiB/s.
  auto num = [&](const char* f) -> double {
    const std::string path = dir + "/" + f;
    auto t = read_text(path);
    if (!t) return 0.0;
    auto v = parse_u64(*t);
    const uint64_t max =
        std::string(f).find("latency") != std::string::npos ? kMaxLatencyNs : kMaxBandwidthMiBps;
    if (!v || *v > max) {
      notes.push_back(path + " reads '" + *t + "': not plausible; unknown");
      return 0.0;
    }
    return static_cast<double>(*v);
  };
  AccessPerf base;
  base.read_bandwidth_mibps = num("read_bandwidth");
  base.read_latency_ns = num("read_latency");
  const double wb = num("write_bandwidth"), wl = num("write_latency");
  base.bandwidth_mibps = wb > 0 && base.read_bandwidth_mibps > 0
                             ? (wb + base.read_bandwidth_mibps) / 2
                             : base.read_bandwidth_mibps;
  base.latency_ns =
      wl > 0 && base.read_latency_ns > 0 ? (wl + base.read_latency_ns) / 2 : base.read_latency_ns;
  base.source = "sysfs-access" + std::to_string(access);
  std::vector<AccessPerf> out;
  for (int init : numbered_entries(dir, "node")) {
    AccessPerf p = base;
    p.initiator_node = init;
    out.push_back(p);
  }
  return out;
}

void read_nodes(SysfsSnapshot& s) {
  const std::string base = under_root(s.root, kNodeDir);
  s.online = read_list(base + "/online");
  // Linux always has node 0 or another online: an empty list is a broken tree, not a machine
  // without memory, and would leave no reference CPU node.
  if (s.online.empty())
    throw Error("sysfs file " + base + "/online lists no online NUMA node (it is empty)",
                std::string("a machine has at least one node online (e.g. \"0\"); ") + kFixHint);
  auto optional_list = [&](const char* f, std::vector<int>& out) {
    const std::string p = base + "/" + f;
    if (auto t = read_text(p))
      out = parse_cpulist(*t, p);
    else
      s.notes.push_back(std::string("sysfs ") + f + " absent; derived from the per-node files");
    return path_exists(p);
  };
  optional_list("possible", s.possible);
  const bool have_has_cpu = optional_list("has_cpu", s.has_cpu);
  const bool have_has_memory = optional_list("has_memory", s.has_memory);
  for (int id : s.online) {
    const std::string dir = base + "/node" + std::to_string(id);
    if (!path_exists(dir))
      throw Error(
          "sysfs lists node " + std::to_string(id) + " as online but " + dir + " does not exist",
          kFixHint);
    SysfsNode n;
    n.id = id;
    n.cpus = read_list(dir + "/cpulist");
    read_meminfo(dir + "/meminfo", n);
    if (auto d = read_text(dir + "/distance")) {
      std::istringstream in(*d);
      for (int v; in >> v;) n.distances.push_back(v);
      // SLIT entries are 0..255; anything else (or a word that stopped the reading) is garbage.
      const bool sane = in.eof() && std::all_of(n.distances.begin(), n.distances.end(),
                                                [](int v) { return v >= 0 && v <= 255; });
      if (!sane)
        throw Error(dir + "/distance \"" + d->substr(0, 80) +
                        "\" is not a list of SLIT distances (whole numbers 0-255)",
                    kFixHint);
      if (n.distances.size() != s.online.size()) {
        s.notes.push_back(dir + "/distance has " + std::to_string(n.distances.size()) +
                          " entries for " + std::to_string(s.online.size()) +
                          " online nodes; ignored");
        n.distances.clear();
      }
    } else {
      s.notes.push_back(dir + "/distance absent");
    }
    n.perf =
        read_access_class(dir, 1, s.notes);  // CPU initiators: what the benchmark's threads see
    if (n.perf.empty()) n.perf = read_access_class(dir, 0, s.notes);
    if (!have_has_cpu && !n.cpus.empty()) s.has_cpu.push_back(id);
    if (!have_has_memory && n.total_bytes > 0) s.has_memory.push_back(id);
    s.nodes.push_back(std::move(n));
  }
}

void read_tiers(SysfsSnapshot& s) {
  const std::string base = under_root(s.root, "sys/devices/virtual/memory_tiering");
  s.tiers_present = path_exists(base);
  if (!s.tiers_present) {
    s.notes.push_back("no memory_tiering in sysfs (kernel < 6.1 or not exposed)");
    return;
  }
  for (int id : numbered_entries(base, "memory_tier")) {
    const std::string p = base + "/memory_tier" + std::to_string(id) + "/nodelist";
    MemoryTierInfo t;
    t.id = id;
    if (auto text = read_text(p)) t.nodes = parse_cpulist(*text, p);
    s.tiers.push_back(std::move(t));
  }
}

// PCI function "0000:0d:00.0" that a device's resolved sysfs path hangs under, if any.
std::string pci_parent(const std::string& resolved) {
  static const std::regex pci(R"(^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$)");
  std::string best;
  std::istringstream in(resolved);
  for (std::string part; std::getline(in, part, '/');)
    if (std::regex_match(part, pci)) best = part;
  return best;
}

uint64_t hex_or_zero(const std::string& path) {
  auto t = read_text(path);
  auto v = t ? parse_u64(*t) : std::nullopt;
  return v ? *v : 0;
}

void read_cxl(SysfsSnapshot& s) {
  const std::string base = under_root(s.root, "sys/bus/cxl/devices");
  s.cxl_bus_present = path_exists(base);
  if (!s.cxl_bus_present) return;
  for (int id : numbered_entries(base, "mem")) {
    const std::string dir = base + "/mem" + std::to_string(id);
    CxlMemdev m;
    m.name = "mem" + std::to_string(id);
    m.ram_bytes = static_cast<int64_t>(hex_or_zero(dir + "/ram/size"));
    m.pmem_bytes = static_cast<int64_t>(hex_or_zero(dir + "/pmem/size"));
    m.pci_bus_id = pci_parent(resolved_path(dir));
    m.source = "sysfs";
    s.memdevs.push_back(std::move(m));
  }
  for (int id : numbered_entries(base, "region")) {
    const std::string dir = base + "/region" + std::to_string(id);
    CxlRegion r;
    r.name = "region" + std::to_string(id);
    r.mode = read_text(dir + "/mode").value_or("");
    // Linux < 6.3 has no region `mode` file (seen in the tests/vm guest, kernel 6.1): the child
    // device tells instead, pmem_regionN (to the nvdimm bus) or dax_regionN (ram).
    for (const auto& child : r.mode.empty() ? list_dir(dir) : std::vector<std::string>{}) {
      if (child.rfind("pmem_region", 0) == 0) r.mode = "pmem";
      if (child.rfind("dax_region", 0) == 0) r.mode = "ram";
    }
    r.start = hex_or_zero(dir + "/resource");
    r.size = hex_or_zero(dir + "/size");
    for (int t : numbered_entries(dir, "target"))
      r.targets.push_back(read_text(dir + "/target" + std::to_string(t)).value_or(""));
    s.regions.push_back(std::move(r));
  }
}

// The CXL region a DAX device's memory belongs to: by physical address range first (works
// for ram and pmem regions alike), else by the device's place in the sysfs hierarchy.
std::string cxl_region_of(const SysfsSnapshot& s, const DaxDevice& d, const std::string& resolved) {
  for (const auto& r : s.regions)
    if (d.size > 0 && r.size > 0 && d.start >= r.start && d.size <= r.size &&
        d.start - r.start <= r.size - d.size)
      return r.name;  // written without start + size, which a crafted tree could wrap
  static const std::regex region(R"(/decoder\d+\.\d+/(region\d+)/)");
  std::smatch m;
  if (std::regex_search(resolved, m, region)) return m[1];
  return {};
}

void read_dax(SysfsSnapshot& s) {
  const std::string base = under_root(s.root, "sys/bus/dax/devices");
  s.dax_bus_present = path_exists(under_root(s.root, "sys/bus/dax"));
  for (const auto& name : list_dir(base)) {
    if (name.rfind("dax", 0) != 0) continue;
    const std::string dir = base + "/" + name;
    DaxDevice d;
    d.name = name;
    if (auto t = read_text(dir + "/target_node")) {
      // "-1" is the kernel's "none"; anything else that is not a node id stays unknown (-1).
      const auto v = parse_u64(*t);
      d.target_node = v && *v <= 1u << 20 ? static_cast<int>(*v) : -1;
    }
    d.start = hex_or_zero(dir + "/resource");
    d.size = hex_or_zero(dir + "/size");
    const std::string drv = link_target(dir + "/driver");
    const std::string driver = drv.substr(drv.find_last_of('/') + 1);
    d.mode = driver == "kmem"         ? DaxMode::system_ram
             : driver == "device_dax" ? DaxMode::devdax
                                      : DaxMode::unknown;
    d.cxl_region = cxl_region_of(s, d, resolved_path(dir));
    s.dax.push_back(std::move(d));
  }
  // A region whose DAX device was onlined as system RAM has become that NUMA node.
  for (auto& r : s.regions)
    for (const auto& d : s.dax)
      if (d.cxl_region == r.name && d.mode == DaxMode::system_ram) r.numa_node = d.target_node;
}

}  // namespace

const SysfsNode* SysfsSnapshot::node(int id) const {
  for (const auto& n : nodes)
    if (n.id == id) return &n;
  return nullptr;
}

int64_t read_node_available_bytes(const std::string& root, int node) {
  SysfsNode n;
  read_meminfo(under_root(root, kNodeDir) + "/node" + std::to_string(node) + "/meminfo", n);
  return n.available_bytes;
}

bool sysfs_has_numa(const std::string& root) {
  return path_exists(under_root(root, kNodeDir) + "/online");
}

SysfsSnapshot read_sysfs(const std::string& root) {
  SysfsSnapshot s;
  s.root = root.empty() ? "/" : root;
  if (!path_exists(under_root(s.root, kNodeDir)))
    throw Error("no NUMA information under " + under_root(s.root, kNodeDir), kFixHint);
  read_nodes(s);
  read_tiers(s);
  read_cxl(s);
  read_dax(s);
  return s;
}

}  // namespace hb::memtier
