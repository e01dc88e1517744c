#pragma once
// Host buffers placed on chosen NUMA nodes (a BufferAllocator, so strategies and the runner
// use them like any other): mbind(2) with bind, interleave or weighted interleave, prefaulted
// by threads running on the target node, and spot-checked with move_pages before they are
// handed out. Asking for a node that does not exist or lacks the free memory is an hb::Error,
// never a silent fallback to another node.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/memory.h"

namespace hb::memtier {

enum class NumaMode { bind, interleave, weighted_interleave };

struct NumaPolicy {
  NumaMode mode = NumaMode::bind;
  std::vector<int> nodes;
  // weighted_interleave: the per-node weights the caller expects (same order as nodes). The
  // kernel's weights are system-wide (/sys/kernel/mm/mempolicy/weighted_interleave, root
  // only), so they are checked, not set; empty = accept whatever the kernel has.
  std::vector<int> weights;
  bool huge_pages = false;  // madvise(MADV_HUGEPAGE) on a 2 MiB-aligned mapping (buffers >= 2 MiB)

  std::string describe() const;  // "bind 0", "interleave 0,1", "weighted-interleave 0:3,1:1"
  static NumaPolicy bind_to(int node) { return {NumaMode::bind, {node}, {}, false}; }
};

class NumaAllocator final : public BufferAllocator {
 public:
  // Throws hb::Error when libnuma is unusable or a node does not exist / has no memory here.
  NumaAllocator(MemoryLocation loc, NumaPolicy policy);
  // Throws hb::Error (naming node, size and fix) when the nodes lack free memory or the
  // kernel refuses the policy; the buffer is zeroed and its pages already placed.
  Buffer allocate(size_t bytes) override;
  MemoryLocation location() const override { return loc_; }
  bool zeroes_memory() const override { return true; }  // prefaulted by zeroing
  const NumaPolicy& policy() const { return policy_; }

 private:
  MemoryLocation loc_;
  NumaPolicy policy_;
};

// Binds to loc.node (the usual case: one tier = one node); huge_pages as in NumaPolicy.
std::shared_ptr<NumaAllocator> node_allocator(MemoryLocation loc, bool huge_pages = false);

// CPUs to run code "on" a node: its own CPUs, or those of the nearest node with CPUs.
std::vector<int> cpus_near_node(int node);

}  // namespace hb::memtier
