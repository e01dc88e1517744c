#include "memtier/placement.h"

#include <numaif.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace hb::memtier {

namespace {

// AnonHugePages of the mappings overlapping [lo, hi), from /proc/self/smaps: whether the
// kernel actually gave the huge pages a placement asked for (THP can silently fall back).
int64_t huge_page_bytes(uintptr_t lo, uintptr_t hi) {
  std::ifstream in("/proc/self/smaps");
  if (!in) return -1;
  int64_t total = 0;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    const size_t dash = line.find('-');
    if (dash != std::string::npos && dash < 17 &&
        line.find(' ') > dash) {  // "start-end perms ..." header
      char* e1 = nullptr;
      char* e2 = nullptr;
      const uintptr_t a = std::strtoull(line.c_str(), &e1, 16);
      const uintptr_t b = std::strtoull(line.c_str() + dash + 1, &e2, 16);
      if (e1 == line.c_str() + dash && *e2 == ' ') {
        inside = a < hi && b > lo;
        continue;
      }
    }
    if (inside && line.rfind("AnonHugePages:", 0) == 0) {
      std::istringstream f(line.substr(14));
      int64_t kb = 0;
      f >> kb;
      total += kb * 1024;
    }
  }
  return total;
}

}  // namespace

double PlacementReport::fraction_on(int node) const {
  auto it = pages_per_node.find(node);
  return it == pages_per_node.end() || pages_checked == 0
             ? 0.0
             : static_cast<double>(it->second) / static_cast<double>(pages_checked);
}

std::string PlacementReport::summary() const {
  std::string s;
  char buf[96];
  for (const auto& [node, pages] : pages_per_node) {
    std::snprintf(buf, sizeof buf, "%snode %d: %lld pages (%.1f%%)", s.empty() ? "" : "; ", node,
                  static_cast<long long>(pages), 100.0 * fraction_on(node));
    s += buf;
  }
  auto part = [&](int64_t n, const char* what) {
    if (!n) return;
    if (!s.empty()) s += "; ";
    s += std::to_string(n);
    s += what;
  };
  part(pages_not_present, " pages not present");
  part(pages_failed, " pages unqueryable");
  if (stride > 1) s += " (every " + std::to_string(stride) + "th page checked)";
  if (huge_page_bytes > 0) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "; %.0f%% in huge pages",
                  100.0 * double(huge_page_bytes) /
                      double(std::max<int64_t>(1, pages_total) * int64_t(page_size)));
    s += buf;
  }
  if (!ok) s += " -- NOT where intended";
  return s;
}

PlacementReport verify_placement(const void* p, size_t bytes,
                                 const std::vector<int>& intended_nodes, int64_t max_pages) {
  PlacementReport r;
  r.intended_nodes = intended_nodes;
  r.page_size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (!p || bytes == 0) return r;
  const uintptr_t first = reinterpret_cast<uintptr_t>(p) / r.page_size * r.page_size;
  const uintptr_t end = reinterpret_cast<uintptr_t>(p) + bytes;
  r.pages_total = static_cast<int64_t>((end - first + r.page_size - 1) / r.page_size);
  r.stride =
      std::max<int64_t>(1, (r.pages_total + max_pages - 1) / std::max<int64_t>(1, max_pages));
  constexpr int64_t kBatch = 16384;
  std::vector<void*> pages;
  std::vector<int> status;
  for (int64_t i = 0; i < r.pages_total; i += kBatch * r.stride) {
    pages.clear();
    for (int64_t k = i; k < std::min(r.pages_total, i + kBatch * r.stride); k += r.stride)
      pages.push_back(reinterpret_cast<void*>(first + static_cast<uintptr_t>(k) * r.page_size));
    status.assign(pages.size(), 0);
    // nodes == NULL: query only, nothing moves.
    if (move_pages(0, pages.size(), pages.data(), nullptr, status.data(), 0) != 0)
      throw Error(
          std::string("cannot query page locations (move_pages: ") + std::strerror(errno) + ")",
          "run on a Linux kernel with NUMA support", kExitFailure);
    for (int st : status) {
      if (st >= 0)
        ++r.pages_per_node[st];
      else if (st == -ENOENT)
        ++r.pages_not_present;
      else
        ++r.pages_failed;
    }
    r.pages_checked += static_cast<int64_t>(pages.size());
  }
  r.huge_page_bytes = huge_page_bytes(first, end);
  r.ok = r.pages_not_present == 0 && r.pages_failed == 0;
  for (const auto& [node, n] : r.pages_per_node)  // no intended nodes (unbound): presence only
    if (!intended_nodes.empty() &&
        std::find(intended_nodes.begin(), intended_nodes.end(), node) == intended_nodes.end())
      r.ok = false;
  return r;
}

PlacementReport verify_placement(const MemoryRegion& region, int64_t max_pages) {
  std::vector<int> nodes;
  if (region.intended.node >= 0) nodes.push_back(region.intended.node);
  return verify_placement(region.ptr, region.bytes, nodes, max_pages);
}

}  // namespace hb::memtier
