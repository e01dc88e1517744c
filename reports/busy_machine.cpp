#include "reports/busy_machine.h"

#include <cstdlib>

namespace hb::reports {

namespace {

// The fact as a number, or -1 when it is absent or not one.
double fact(const ReportContext& c, const std::string& key) {
  auto it = c.system_settings.find(key);
  if (it == c.system_settings.end()) return -1;
  char* end = nullptr;
  const double v = std::strtod(it->second.c_str(), &end);
  return end && *end == '\0' && !it->second.empty() ? v : -1;
}

}  // namespace

std::string busy_machine_warning(const ReportContext& c) {
  const double load = fact(c, "load.avg_1min_start");
  const double others_start = fact(c, "load.runnable_others_start");
  const double others_end = fact(c, "load.runnable_others_end");
  const double steal = fact(c, "load.steal_percent");
  std::string why;
  auto add = [&](const std::string& s) { why += (why.empty() ? "" : ", ") + s; };
  char buf[96];
  if (load >= 1) {
    std::snprintf(buf, sizeof buf, "load average %.2f before the run started", load);
    add(buf);
  }
  if (others_start >= 1 && others_end >= 1) {
    std::snprintf(buf, sizeof buf, "%.0f and %.0f other runnable processes at its start and end",
                  others_start, others_end);
    add(buf);
  }
  if (steal >= 5) {
    std::snprintf(buf, sizeof buf, "%.1f%% of the CPU time stolen by the hypervisor", steal);
    add(buf);
  }
  if (why.empty()) return "";
  return "the machine was busy during the run (" + why +
         "): the strategies were paired round by round, so their ratios hold, but absolute "
         "times and noise carry the load; re-run on a quiet machine for absolute figures";
}

std::string busy_machine_warning(const Report& r) {
  bool timed_here = false, modeled = false;
  for (const auto& p : r.points) {
    if (!p.timed()) continue;
    (p.provenance == Provenance::modeled ? modeled : timed_here) = true;
  }
  if (!timed_here) return "";
  std::string w = busy_machine_warning(r.context);
  if (!w.empty() && modeled) w += " (the modeled points are priced from their profile, unaffected)";
  return w;
}

}  // namespace hb::reports
