#pragma once
// Where the pages of a buffer actually are, asked of the kernel with move_pages(2) in query
// mode (nodes = NULL). The observed per-node page counts go into every report, so a figure
// labelled "cxl" can be checked to have been served by the CXL node.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/memory.h"
#include "core/strategy.h"

namespace hb::memtier {

struct PlacementReport {
  std::vector<int> intended_nodes;  // nodes the pages should be on
  size_t page_size = 0;
  int64_t pages_total = 0;    // pages the range spans
  int64_t pages_checked = 0;  // pages queried: all, or every `stride`-th
  int64_t stride = 1;
  std::map<int, int64_t> pages_per_node;  // node -> checked pages found there
  int64_t pages_not_present = 0;          // never touched or swapped out (-ENOENT)
  int64_t pages_failed = 0;               // other move_pages errors
  int64_t huge_page_bytes = -1;  // bytes backed by transparent huge pages (smaps), -1 unknown
  bool ok = false;               // every checked page present and on an intended node

  double fraction_on(int node) const;
  // "node 0: 65536 pages (100.0%)" lines joined by "; ", with what is wrong when !ok.
  std::string summary() const;
};

// Queries up to `max_pages` pages spread evenly over [p, p+bytes). Throws hb::Error when the
// kernel refuses the query (no NUMA support).
PlacementReport verify_placement(const void* p, size_t bytes,
                                 const std::vector<int>& intended_nodes,
                                 int64_t max_pages = int64_t{1} << 20);
// A strategy's region, intended on region.intended.node.
PlacementReport verify_placement(const MemoryRegion& region, int64_t max_pages = int64_t{1} << 20);

}  // namespace hb::memtier
