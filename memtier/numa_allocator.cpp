#include "memtier/numa_allocator.h"

#include <numa.h>
#include <numaif.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

#include "core/error.h"
#include "core/thread_pool.h"
#include "memtier/cpulist.h"
#include "memtier/placement.h"
#include "memtier/settings.h"
#include "memtier/sysfs.h"

#ifndef MPOL_WEIGHTED_INTERLEAVE
#define MPOL_WEIGHTED_INTERLEAVE 6  // Linux >= 6.9; Debian 12's headers predate it
#endif

namespace hb::memtier {

namespace {

constexpr size_t kHugePage = size_t{2} << 20;
const char* kPickNode = "pick a node with memory listed by `hybridbench topo`";

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / double(1 << 30));
  return buf;
}

void require_numa() {
  if (numa_available() < 0)
    throw Error("this kernel offers no NUMA memory policy (numa_available() failed)",
                "run on Linux with NUMA support, or use the plain host allocator", kExitFailure);
}

// The nodes this process may place memory on (libnuma reads them from /proc/self/status).
std::vector<int> allowed_nodes() {
  std::vector<int> ids;
  for (int n = 0; n <= numa_max_node(); ++n)
    if (numa_bitmask_isbitset(numa_all_nodes_ptr, static_cast<unsigned>(n))) ids.push_back(n);
  return ids;
}

void check_node(int node) {
  const std::vector<int> allowed = allowed_nodes();
  if (std::count(allowed.begin(), allowed.end(), node)) {
    if (numa_node_size64(node, nullptr) <= 0)
      throw Error("NUMA node " + std::to_string(node) + " has no memory", kPickNode);
    return;
  }
  // Without /proc libnuma knows no allowed node at all: say what is missing, not that node 0
  // does not exist.
  if (allowed.empty() && ::access("/proc/self/status", R_OK) != 0)
    throw Error(
        "cannot tell which NUMA nodes this process may use: /proc/self/status is not "
        "readable (" +
            std::string(std::strerror(errno)) + "; is /proc mounted?)",
        "mount /proc (e.g. `mount -t proc proc /proc`, or give the container its /proc)",
        kExitFailure);
  throw Error("NUMA node " + std::to_string(node) +
                  " does not exist on this machine or is not allowed to this process; nodes "
                  "this process may use: " +
                  (allowed.empty() ? std::string("none") : format_cpulist(allowed)),
              kPickNode);
}

int64_t available_on(int node) {
  const int64_t a = read_node_available_bytes("/", node);
  if (a >= 0) return a;
  long long free = -1;
  numa_node_size64(node, &free);
  return free;
}

// Bytes each node of the policy receives.
std::vector<double> share_per_node(const NumaPolicy& p, size_t bytes,
                                   const std::map<int, int>& kernel_weights) {
  std::vector<double> share(p.nodes.size(), 0);
  if (p.mode == NumaMode::interleave) {
    for (auto& s : share) s = double(bytes) / double(p.nodes.size());
  } else if (p.mode == NumaMode::weighted_interleave) {
    double total = 0;
    std::vector<double> w;
    for (int n : p.nodes) {
      auto it = kernel_weights.find(n);
      w.push_back(it == kernel_weights.end() || it->second <= 0 ? 1.0 : double(it->second));
      total += w.back();
    }
    for (size_t i = 0; i < w.size(); ++i) share[i] = double(bytes) * w[i] / total;
  }
  return share;  // bind: all zero, checked against the sum instead
}

void check_free(const NumaPolicy& p, size_t bytes, const std::map<int, int>& weights,
                const std::string& what) {
  const std::string fix =
      "use a smaller size, free memory on that node, or place on another node (`hybridbench topo`)";
  if (p.mode == NumaMode::bind) {
    int64_t avail = 0;
    for (int n : p.nodes) avail += std::max<int64_t>(0, available_on(n));
    if (double(avail) < double(bytes))
      throw Error("cannot place " + gib(double(bytes)) + " for " + what + " (" + p.describe() +
                      "): only " + gib(double(avail)) + " free on node(s) " +
                      format_cpulist(p.nodes),
                  fix, kExitFailure);
    return;
  }
  const auto share = share_per_node(p, bytes, weights);
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const int64_t avail = available_on(p.nodes[i]);
    if (avail >= 0 && double(avail) < share[i])
      throw Error("cannot place " + gib(share[i]) + " of " + what + " on node " +
                      std::to_string(p.nodes[i]) + " (" + p.describe() + "): only " +
                      gib(double(avail)) + " free there",
                  fix, kExitFailure);
  }
}

// Anonymous mapping, 2 MiB aligned when huge pages are wanted (THP needs aligned ranges).
void* map_region(size_t len, bool huge) {
  const size_t extra = huge ? kHugePage : 0;
  void* raw = mmap(nullptr, len + extra, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  if (!huge) return raw;
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > start) munmap(raw, aligned - start);
  if (const size_t tail = start + len + extra - (aligned + len))
    munmap(reinterpret_cast<void*>(aligned + len), tail);
  madvise(reinterpret_cast<void*>(aligned), len, MADV_HUGEPAGE);
  return reinterpret_cast<void*>(aligned);
}

// Zeroes the range from threads pinned near `node`, so first-touch bookkeeping (and, for
// policies that allow it, the fault's node) is what the placement asked for.
void prefault(void* p, size_t len, const std::vector<int>& cpus) {
  const size_t threads =
      std::clamp<size_t>(len / (size_t{64} << 20), 1, std::min<size_t>(cpus.size(), 8));
  std::vector<std::thread> pool;
  auto zero_share = [=](size_t t) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus) CPU_SET(c, &set);
    sched_setaffinity(0, sizeof set, &set);  // this thread only
    const size_t page = 4096;
    const size_t lo = len / threads * t / page * page;
    const size_t hi = t + 1 == threads ? len : len / threads * (t + 1) / page * page;
    std::memset(static_cast<char*>(p) + lo, 0, hi - lo);
  };
  try {
    for (size_t t = 0; t < threads; ++t)
      pool.push_back(start_thread([=] { zero_share(t); }, "a page-zeroing thread", ""));
  } catch (...) {  // a refused thread (start_thread's hb::Error): never leave one joinable
    for (auto& th : pool) th.join();
    throw;
  }
  for (auto& th : pool) th.join();
}

}  // namespace

std::string NumaPolicy::describe() const {
  std::string s = mode == NumaMode::bind         ? "bind "
                  : mode == NumaMode::interleave ? "interleave "
                                                 : "weighted-interleave ";
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(nodes[i]);
    if (mode == NumaMode::weighted_interleave && i < weights.size()) {
      s += ':';
      s += std::to_string(weights[i]);
    }
  }
  if (huge_pages) s += " +thp";
  return s;
}

std::vector<int> cpus_near_node(int node) {
  const std::vector<int> allowed = allowed_cpus();
  auto cpus_of = [&](int n) {
    std::vector<int> out;
    bitmask* bm = numa_allocate_cpumask();
    if (numa_node_to_cpus(n, bm) == 0)
      for (int c : allowed)
        if (numa_bitmask_isbitset(bm, static_cast<unsigned>(c))) out.push_back(c);
    numa_free_cpumask(bm);
    return out;
  };
  if (auto own = cpus_of(node); !own.empty()) return own;
  std::vector<std::pair<int, int>> by_distance;  // (distance, node)
  for (int n = 0; n <= numa_max_node(); ++n)
    if (n != node) by_distance.emplace_back(numa_distance(node, n), n);
  std::sort(by_distance.begin(), by_distance.end());
  for (const auto& [d, n] : by_distance)
    if (auto c = cpus_of(n); !c.empty()) return c;
  return allowed;
}

NumaAllocator::NumaAllocator(MemoryLocation loc, NumaPolicy policy)
    : loc_(loc), policy_(std::move(policy)) {
  require_numa();
  if (policy_.nodes.empty()) throw Error("a NUMA placement needs at least one node", kPickNode);
  for (int n : policy_.nodes) check_node(n);
  if (policy_.mode == NumaMode::weighted_interleave) {
    const SystemSettings s = read_system_settings("/");
    if (!s.weighted_interleave)
      throw Error("weighted interleave is not offered by this kernel (needs Linux >= 6.9)",
                  "use interleave or bind placement");
    for (size_t i = 0; i < policy_.weights.size() && i < policy_.nodes.size(); ++i) {
      auto it = s.interleave_weights.find(policy_.nodes[i]);
      const int have = it == s.interleave_weights.end() ? -1 : it->second;
      if (have != policy_.weights[i])
        throw Error("weighted interleave wants weight " + std::to_string(policy_.weights[i]) +
                        " on node " + std::to_string(policy_.nodes[i]) + " but the kernel has " +
                        std::to_string(have),
                    "as root: echo " + std::to_string(policy_.weights[i]) +
                        " > /sys/kernel/mm/mempolicy/weighted_interleave/node" +
                        std::to_string(policy_.nodes[i]) +
                        " (weights are system-wide), or drop the explicit weights");
    }
  }
}

Buffer NumaAllocator::allocate(size_t bytes) {
  if (bytes == 0) return Buffer(nullptr, 0, loc_, {});
  const std::string what = loc_.to_string();
  const std::map<int, int> weights = policy_.mode == NumaMode::weighted_interleave
                                         ? read_system_settings("/").interleave_weights
                                         : std::map<int, int>{};
  check_free(policy_, bytes, weights, what);
  // Below one huge page, THP would round the mapping up (a 1 MiB arena slab would take 2 MiB)
  // and save at most a few TLB entries.
  const bool huge = policy_.huge_pages && bytes >= kHugePage;
  const size_t page = huge ? kHugePage : static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t len = (bytes + page - 1) / page * page;
  void* p = map_region(len, huge);
  if (!p)
    throw Error("cannot map " + gib(double(len)) + " for " + what, "use a smaller size",
                kExitFailure);

  bitmask* mask = numa_bitmask_alloc(static_cast<unsigned>(numa_max_possible_node() + 1));
  for (int n : policy_.nodes) numa_bitmask_setbit(mask, static_cast<unsigned>(n));
  const int mode = policy_.mode == NumaMode::bind         ? MPOL_BIND
                   : policy_.mode == NumaMode::interleave ? MPOL_INTERLEAVE
                                                          : MPOL_WEIGHTED_INTERLEAVE;
  const long rc = mbind(p, len, mode, mask->maskp, mask->size + 1, 0);
  const int err = errno;
  numa_bitmask_free(mask);
  if (rc != 0) {
    munmap(p, len);
    throw Error("the kernel refused placement " + policy_.describe() + " for " + what +
                    " (mbind: " + std::strerror(err) + ")",
                "check that the nodes are allowed to this process (cpuset mems) and the kernel "
                "supports the mode",
                kExitFailure);
  }
  prefault(p, len, cpus_near_node(policy_.nodes.front()));
  // A cheap spot check: MPOL_BIND never falls back, but cpusets and migration can surprise.
  const PlacementReport check = verify_placement(p, len, policy_.nodes, 4096);
  if (!check.ok) {
    munmap(p, len);
    throw Error("pages of a " + gib(double(len)) + " buffer for " + what + " (" +
                    policy_.describe() + ") landed elsewhere: " + check.summary(),
                "check cpuset mems, numa_balancing and memory pressure (`hybridbench topo` lists "
                "the settings)",
                kExitFailure);
  }
  return Buffer(p, bytes, loc_, [len](void* q, size_t) { munmap(q, len); });
}

std::shared_ptr<NumaAllocator> node_allocator(MemoryLocation loc, bool huge_pages) {
  NumaPolicy policy = NumaPolicy::bind_to(loc.node);
  policy.huge_pages = huge_pages;
  return std::make_shared<NumaAllocator>(loc, policy);
}

}  // namespace hb::memtier
