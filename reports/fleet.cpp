#include "reports/fleet.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/error.h"

namespace hb::reports {

HostRecord host_record(const ReportContext& ctx, int rank, const std::string& binding) {
  HostRecord h;
  h.rank = rank;
  h.host = ctx.host;
  h.os = ctx.os;
  h.cpu_model = ctx.cpu_model;
  h.simd_level = ctx.simd_level;
  h.topology = ctx.topology;
  h.system_settings = ctx.system_settings;
  h.accelerator = ctx.accelerator;
  h.binding = binding;
  return h;
}

Report failed_rank_report(int rank, const std::string& host, const std::string& error) {
  Report r;
  HostRecord h;
  h.rank = rank;
  h.host = host.empty() ? "unknown" : host;
  h.status = HostStatus::error;
  h.error = error;
  r.context.host = h.host;
  r.context.hosts.push_back(std::move(h));
  return r;
}

void assign_host_labels(std::vector<HostRecord>& hosts) {
  std::map<std::string, int> per_host;
  for (const auto& h : hosts) ++per_host[h.host];
  // GPU indices label ranks sharing a host when each drives its own device (a made accelerator
  // that is not emulated); otherwise ranks.
  std::map<std::string, std::set<int>> devices;
  for (const auto& h : hosts)
    if (h.accelerator.kind && !h.accelerator.emulated) devices[h.host].insert(h.accelerator.device);
  for (auto& h : hosts) {
    if (per_host[h.host] == 1)
      h.label = h.host;
    else if (devices[h.host].size() == static_cast<size_t>(per_host[h.host]))
      h.label = h.host + "/gpu" + std::to_string(h.accelerator.device);
    else
      h.label = h.host + "/r" + std::to_string(h.rank);
  }
}

Report merge_fleet(std::vector<Report> ranks, FleetMode mode) {
  if (ranks.empty())
    throw Error("a fleet report needs at least one rank's results", "", kExitFailure);
  for (const auto& r : ranks)
    if (r.context.hosts.size() != 1)
      throw Error("a rank's report must describe exactly one host (it has " +
                      std::to_string(r.context.hosts.size()) + ")",
                  "this is a bug in the fleet code; please report it", kExitFailure);
  std::sort(ranks.begin(), ranks.end(), [](const Report& a, const Report& b) {
    return a.context.hosts[0].rank < b.context.hosts[0].rank;
  });
  // Rank 0 (or the lowest rank that ran) describes the build and the sweep.
  auto base = std::find_if(ranks.begin(), ranks.end(), [](const Report& r) {
    return r.context.hosts[0].status == HostStatus::ok;
  });
  Report out;
  out.context = (base == ranks.end() ? ranks.front() : *base).context;
  out.context.hosts.clear();
  for (const auto& r : ranks) out.context.hosts.push_back(r.context.hosts[0]);
  assign_host_labels(out.context.hosts);

  std::vector<std::string> names;
  for (const auto& h : out.context.hosts)
    if (std::find(names.begin(), names.end(), h.host) == names.end()) names.push_back(h.host);
  out.context.host.clear();
  for (const auto& n : names) out.context.host += (out.context.host.empty() ? "" : ", ") + n;
  out.context.sweep["distribute"] = to_string(mode);
  out.context.sweep["ranks"] = std::to_string(ranks.size());

  std::set<std::string> seen;
  for (size_t i = 0; i < ranks.size(); ++i) {
    HostRecord& h = out.context.hosts[i];
    h.points = static_cast<int64_t>(ranks[i].points.size());
    for (auto& p : ranks[i].points) {
      p.ran_on = {h.rank, h.label};
      if (mode == FleetMode::replicate) p.axes.extra[kHostAxis] = h.label;
      if (!seen.insert(p.axes.key()).second)
        throw Error("ranks reported the same point twice (" + p.axes.key() + ")",
                    "this is a bug in the fleet distribution; please report it", kExitFailure);
      out.points.push_back(std::move(p));
    }
    // Capacity is a property of the rank's hardware: one set per host in replicate mode (as
    // its points), the first rank's alone for points mode (the ranks share one node's sweep).
    if (mode == FleetMode::replicate || out.capacity.empty())
      for (auto& c : ranks[i].capacity) {
        if (mode == FleetMode::replicate) c.platform = h.label;
        out.capacity.push_back(std::move(c));
      }
  }
  std::stable_sort(out.points.begin(), out.points.end(),
                   [](const Point& a, const Point& b) { return axes_less(a.axes, b.axes); });
  out.speedups = compute_speedups(out.points);
  return out;
}

std::vector<std::string> host_axis_labels(const Report& report) {
  // Replicate mode: every host is a column, also one that failed (its cells then say so).
  const auto mode = report.context.sweep.find("distribute");
  // Read through the vocabulary, not compared as text: a renamed mode fails to compile here.
  const bool replicate =
      mode != report.context.sweep.end() && kFleetModes.parse(mode->second) == FleetMode::replicate;
  std::vector<std::string> labels;
  for (const auto& h : report.context.hosts) {
    const bool used = std::any_of(report.points.begin(), report.points.end(), [&](const Point& p) {
      auto it = p.axes.extra.find(kHostAxis);
      return it != p.axes.extra.end() && it->second == h.label;
    });
    if (used || replicate) labels.push_back(h.label);
  }
  return labels;
}

}  // namespace hb::reports
