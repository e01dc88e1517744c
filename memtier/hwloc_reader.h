#pragma once
// What hwloc says about the machine (live, or an exported XML file): packages, cores, NUMA
// nodes with subtypes, sizes and localities, SLIT distances, HMAT memory attributes per
// initiator, GPUs on PCI with their locality, and CXL memory devices / DAX devices among the
// I/O objects. The result is a Topology without classification (classify.h does that).
#include <string>

#include "memtier/topology.h"

namespace hb::memtier {

// xml_path empty = the live machine. Throws hb::Error when the file is missing or hwloc
// cannot load it (corrupt, or a 3.0-format export the installed hwloc 2.x refuses).
Topology read_hwloc(const std::string& xml_path);

}  // namespace hb::memtier
