#include "memtier/emulate.h"

#include <sstream>

#include "core/error.h"
#include "core/parse.h"
#include "memtier/cpulist.h"

namespace hb::memtier {

namespace {
const char* kForms =
    "use --emulate-cxl node=N (an existing NUMA node plays CXL) or "
    "--emulate-cxl bandwidth=GBPS,latency=NS (simulated tier on one node)";

// Physical bounds of a memory tier: no memory streams faster than 100 TB/s, and a load slower
// than 1 ms is a page fault, not a tier. Beyond them step times overflow to inf.
constexpr double kMaxBandwidthGbps = 1e5;
constexpr double kMaxLatencyNs = 1e6;

// Strict (core/parse.h): "inf", "nan", "5x" are refused like "-1", with the two forms as the fix.
double positive(const std::string& key, const std::string& value, double max, const char* unit) {
  try {
    return parse::real(value, "--emulate-cxl " + key, {0, max, true, false});
  } catch (const Error&) {
    throw Error("--emulate-cxl " + key + "=" + value + " is not a number in (0, " +
                    parse::exact_text(max) + "] " + unit,
                kForms);
  }
}
}  // namespace

CxlEmulation parse_cxl_emulation(const std::string& spec) {
  CxlEmulation e;
  std::istringstream in(spec);
  bool node = false, bw = false, lat = false;
  for (std::string item; std::getline(in, item, ',');) {
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq),
                      value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (key == "node" && !value.empty() &&
        value.find_first_not_of("0123456789") == std::string::npos) {
      e.node = static_cast<int>(parse::integer(value, "--emulate-cxl node", 0, kMaxListId));
      node = true;
    } else if (key == "bandwidth") {
      e.bandwidth_gbps = positive(key, value, kMaxBandwidthGbps, "GB/s");
      bw = true;
    } else if (key == "latency") {
      e.latency_ns = positive(key, value, kMaxLatencyNs, "ns");
      lat = true;
    } else {
      throw Error("cannot understand --emulate-cxl '" + spec + "' (at '" + item + "')", kForms);
    }
  }
  if (node == (bw || lat) || bw != lat)
    throw Error("cannot understand --emulate-cxl '" + spec + "'", kForms);
  return e;
}

void apply_cxl_emulation(Topology& topo, const CxlEmulation& emu) {
  if (!emu.active()) return;
  if (emu.node < 0) {
    if (topo.cpu_node < 0)
      throw Error("--emulate-cxl needs a CPU node to back the simulated tier, and none was found");
    topo.simulated_cxl = SimulatedTier{emu.bandwidth_gbps, emu.latency_ns, topo.cpu_node};
    topo.notes.push_back(
        "simulated CXL tier: memory on node " + std::to_string(topo.cpu_node) +
        ", declared figures only (a simulation for exercising code paths, not for numbers)");
    return;
  }
  MemoryNode* n = topo.node(emu.node);
  if (!n)
    throw Error("--emulate-cxl node=" + std::to_string(emu.node) +
                    ": this machine has no NUMA node " + std::to_string(emu.node),
                "pick a node listed by `hybridbench topo`, or use bandwidth=GBPS,latency=NS on "
                "single-node machines");
  if (n->total_bytes == 0)
    throw Error("--emulate-cxl node=" + std::to_string(emu.node) + ": node has no memory",
                "pick a node with memory");
  if (emu.node == topo.cpu_node)
    throw Error(
        "--emulate-cxl node=" + std::to_string(emu.node) +
            " is the reference CPU node's own DRAM; emulating CXL there leaves no local tier",
        "pick the remote socket's node, or use bandwidth=GBPS,latency=NS on single-node machines");
  const std::string was(tier_kind_name(n->kind));
  n->kind = TierKind::cxl;
  n->emulated = true;
  n->reasons.insert(n->reasons.begin(), "emulated: " + was +
                                            " node stands in for CXL (--emulate-cxl node=" +
                                            std::to_string(emu.node) + ")");
}

}  // namespace hb::memtier
