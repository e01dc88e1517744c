#pragma once
// Discovery: hwloc and Linux sysfs combined into one classified Topology.
//   no options                   live hwloc + live /sys (the machine this runs on)
//   topology_xml                 that hwloc XML only (another machine: live sysfs would lie)
//   topology_xml + sysfs_root    both, merged (sysfs decides CPUs, tiers, CXL links)
//   sysfs_root only              that sysfs tree only (no hwloc: packages/PCI unknown)
#include <string>

#include "memtier/topology.h"

namespace hb::memtier {

struct DiscoverOptions {
  std::string topology_xml;  // --topology FILE.xml
  std::string sysfs_root;    // --sysfs-root DIR (a tree holding sys/devices/system/node/...)
  int cpu_node = -1;         // reference CPU node; -1 = the node this process runs on (live)
                             // or the lowest node with CPUs (files)
  std::string emulate_cxl;   // --emulate-cxl spec (memtier/emulate.h); empty none
};

// Throws hb::Error for unreadable inputs, a cpu_node without CPUs, or a bad emulation spec.
Topology discover(const DiscoverOptions& opts = {});

// Whether `topo` describes the machine this process runs on (placement and probes need it).
bool is_this_machine(const Topology& topo);

}  // namespace hb::memtier
