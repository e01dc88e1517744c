#include "memtier/settings.h"

#include <cstdlib>

#include "memtier/fs_util.h"

namespace hb::memtier {

namespace {

// "always [madvise] never" -> "madvise"
std::string bracketed(const std::string& text) {
  const size_t a = text.find('['), b = text.find(']');
  if (a == std::string::npos || b == std::string::npos || b < a) return text;
  return text.substr(a + 1, b - a - 1);
}

int read_int(const std::string& path) {
  auto t = read_text(path);
  if (!t || t->empty()) return -1;
  if (*t == "true") return 1;
  if (*t == "false") return 0;
  return std::atoi(t->c_str());
}

std::string tri(int v, const char* yes, const char* no) { return v < 0 ? "unknown" : v ? yes : no; }

}  // namespace

SystemSettings read_system_settings(const std::string& root) {
  SystemSettings s;
  s.known = true;
  s.root = root.empty() ? "/" : root;
  if (auto t = read_text(under_root(s.root, "sys/kernel/mm/transparent_hugepage/enabled")))
    s.thp_enabled = bracketed(*t);
  if (auto t = read_text(under_root(s.root, "sys/kernel/mm/transparent_hugepage/defrag")))
    s.thp_defrag = bracketed(*t);
  s.numa_balancing = read_int(under_root(s.root, "proc/sys/kernel/numa_balancing"));
  s.demotion_enabled = read_int(under_root(s.root, "sys/kernel/mm/numa/demotion_enabled"));
  s.zone_reclaim_mode = read_int(under_root(s.root, "proc/sys/vm/zone_reclaim_mode"));
  const std::string wi = under_root(s.root, "sys/kernel/mm/mempolicy/weighted_interleave");
  s.weighted_interleave = path_exists(wi);
  for (const auto& name : list_dir(wi))
    if (name.rfind("node", 0) == 0)
      s.interleave_weights[std::atoi(name.c_str() + 4)] = read_int(wi + "/" + name);
  return s;
}

std::vector<std::string> SystemSettings::warnings() const {
  std::vector<std::string> w;
  if (numa_balancing > 0)
    w.push_back("numa_balancing=" + std::to_string(numa_balancing) +
                ": the kernel may migrate pages between nodes during a run (placement is "
                "re-checked after it)");
  if (demotion_enabled == 1)
    w.push_back("demotion_enabled=true: memory pressure may demote pages to slower tiers");
  if (thp_enabled == "always")
    w.push_back("THP=always: khugepaged may collapse pages into huge pages during a run");
  if (zone_reclaim_mode > 0)
    w.push_back("zone_reclaim_mode=" + std::to_string(zone_reclaim_mode) +
                ": local reclaim before remote allocation");
  return w;
}

std::string SystemSettings::huge_pages_refused() const {
  if (thp_enabled != "never") return {};
  return "transparent huge pages are 'never' here, so the host KV stays on 4 KiB pages although "
         "--kv-pages thp asks for huge pages\n  fix: echo madvise > "
         "/sys/kernel/mm/transparent_hugepage/enabled (as root), or pass --kv-pages 4k to say so";
}

std::map<std::string, std::string> SystemSettings::as_map() const {
  if (!known) return {{"settings", "unknown (not read from this machine)"}};
  std::map<std::string, std::string> m;
  m["thp"] = thp_enabled.empty() ? "unknown" : thp_enabled;
  m["thp_defrag"] = thp_defrag.empty() ? "unknown" : thp_defrag;
  m["numa_balancing"] = numa_balancing < 0 ? "unknown" : std::to_string(numa_balancing);
  m["demotion"] = tri(demotion_enabled, "true", "false");
  m["zone_reclaim_mode"] = zone_reclaim_mode < 0 ? "unknown" : std::to_string(zone_reclaim_mode);
  std::string weights;
  for (const auto& [node, wt] : interleave_weights) {
    if (!weights.empty()) weights += ',';
    weights += std::to_string(node);
    weights += ':';
    weights += std::to_string(wt);
  }
  m["weighted_interleave"] = weighted_interleave ? (weights.empty() ? "yes" : weights) : "no";
  return m;
}

}  // namespace hb::memtier
