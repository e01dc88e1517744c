#pragma once
// The runner's view of host memory: one HostTier (core/strategy.h) per NUMA node with memory,
// local DRAM of the reference CPU node first, then the others fastest first, each with a NUMA
// allocator bound to its node. GPU-memory nodes belong to the accelerator and are left out.
#include <vector>

#include "core/strategy.h"
#include "memtier/discover.h"
#include "memtier/probe.h"
#include "memtier/topology.h"

namespace hb::memtier {

// Order after local DRAM: by read bandwidth from the reference CPU node when every tier has
// one (probe figures, else HMAT), otherwise by kind (hbm, remote-dram, cxl, far) then SLIT
// distance. The simulated CXL tier (--emulate-cxl bandwidth=,latency=) comes last, with its
// declared bandwidth and an allocator on its backing node. `with_allocators` = false gives
// tiers without allocators (a profile of another machine, for modelling). `huge_pages`: the
// allocators ask for transparent huge pages (`run --kv-pages thp`): KV pages are 4 KiB blocks
// scattered over the arena, and on base pages each one costs a TLB miss.
std::vector<HostTier> host_tiers(const Topology& topo, const ProbeResult* measured = nullptr,
                                 bool with_allocators = true, bool huge_pages = false);

// discover(opts) then host_tiers(): what `hybridbench run` needs on this machine.
std::vector<HostTier> discover_host_tiers(const DiscoverOptions& opts = {});

}  // namespace hb::memtier
