#pragma once
// Decides each memory node's TierKind relative to the reference CPU node (Topology::cpu_node,
// where the benchmark's host threads run) and records why, in words a reader can check
// against `hybridbench topo`. The rules, in order (memtier/README.md "Classification"):
//   1. subtype GPUMemory                                   -> gpu-memory
//   2. tied to a CXL region/DAX device, or subtype CXL-*   -> cxl
//   3. subtype HBM/MCDRAM, or CPU-less with HMAT bandwidth >= 1.5x local DRAM -> hbm
//   4. CPU-less with any sign of slowness (subtype NVM/SPM, slower memory tier, larger
//      distance, HMAT bandwidth <= 0.8x or latency >= 1.25x local DRAM) -> far
//   5. the reference CPU node itself                       -> local-dram
//   6. anything else (other CPU nodes, CPU-less nodes that look like DRAM) -> remote-dram
// CPU-less alone never means slow: MCDRAM/HBM nodes are CPU-less and fast (rule 3 first).
#include "memtier/topology.h"

namespace hb::memtier {

void classify(Topology& topo);

}  // namespace hb::memtier
