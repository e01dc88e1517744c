#pragma once
// CXL emulation for machines without CXL memory. Whatever it produces is labelled emulated
// everywhere (MemoryNode::emulated, MemoryLocation::emulated, JSON "emulated": true).
//   node=N                       an existing NUMA node (usually the remote socket) plays the
//                                CXL tier, as much of the CXL literature does;
//   bandwidth=GBps,latency=ns    a simulated tier for single-node machines: its memory is the
//                                reference node's DRAM and the figures are declarations, for
//                                exercising tiered code paths, never for performance numbers.
#include <string>

#include "memtier/topology.h"

namespace hb::memtier {

struct CxlEmulation {
  int node = -1;              // node=N form
  double bandwidth_gbps = 0;  // simulated form
  double latency_ns = 0;
  bool active() const { return node >= 0 || bandwidth_gbps > 0; }
};

// Throws hb::Error on anything but the two documented forms.
CxlEmulation parse_cxl_emulation(const std::string& spec);
// Re-labels the node (after classify()) or adds Topology::simulated_cxl. Throws hb::Error when
// the node does not exist, has no memory, or is the reference CPU node's own DRAM.
void apply_cxl_emulation(Topology& topo, const CxlEmulation& emu);

}  // namespace hb::memtier
