#include "reports/procurement_view.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "reports/fleet.h"
#include "reports/format.h"
#include "reports/procurement_scaling.h"

namespace hb::reports {

namespace {

std::string extra(const Point& p, const std::string& key) {
  const auto it = p.axes.extra.find(key);
  return it == p.axes.extra.end() ? "" : it->second;
}

// A point's platform: its profile (model mode), its fleet host, or the host its report ran on.
std::string platform_of(const Point& p, const Report& r) {
  if (std::string m = extra(p, "platform"); !m.empty()) return m;
  if (std::string h = extra(p, kHostAxis); !h.empty()) return h;
  return r.context.host;
}

// What a setting's points share (the platform and strategy vary within it).
using SettingKey = std::tuple<std::string, std::string, int, int64_t, std::string, std::string>;
SettingKey setting_key(const Point& p) {
  return {p.axes.model,   p.axes.kv_dtype,       p.axes.batch,
          p.axes.seq_len, extra(p, "kv_budget"), p.axes.workload};
}

// The report's capacity row of a kind for this point's (platform, strategy, ...); its platform
// "" is the report's own machine.
const CapacityRow* capacity_of(const Report& r, const Point& p, const std::string& platform,
                               CapacityKind kind) {
  for (const auto& c : r.capacity) {
    const std::string where = c.platform.empty() ? r.context.host : c.platform;
    if (c.kind != kind || where != platform || c.model != p.axes.model ||
        c.kv_dtype != p.axes.kv_dtype || c.strategy != p.axes.strategy ||
        c.kv_budget != extra(p, "kv_budget"))
      continue;
    if (kind == CapacityKind::max_context ? c.batch == p.axes.batch : c.seq_len == p.axes.seq_len)
      return &c;
  }
  return nullptr;
}

std::string accuracy_text(const Point& p, const AccuracyTarget& t) {
  if (p.status != PointStatus::ok) return to_string(p.status);
  if (p.accuracy.steps_scored <= 0) return "not scored";
  const bool cosine = t.metric == AccuracyTarget::Metric::cosine;
  return std::string(cosine ? "cosine " : "recall ") +
         format_fixed(cosine ? p.accuracy.cosine : p.accuracy.mass_recall, 3);
}

// Whether the point may be ranked, and why not: it ran with whole-model figures, meets the
// target, and its memory holds its context at its batch (when the report says).
void judge(ProcurementEntry& e, const Point& p, const AccuracyTarget& t, const CapacityRow* fit) {
  Candidate& c = e.candidate;
  e.fits = !fit || (!fit->none && (fit->unbounded || fit->seq_len >= p.axes.seq_len + 1));
  c.eligible = false;
  // Memory first: a point its platform cannot hold is out whatever its run said.
  if (!e.fits) {
    c.why_not = "does not fit its memory at batch " + std::to_string(p.axes.batch) + " (" +
                (fit->none ? "nothing fits" : "longest " + format_tokens(fit->seq_len)) + "; " +
                fit->limit + ")";
  } else if (!p.timed()) {
    c.why_not = to_string(p.status) + (p.reason.empty() ? "" : ": " + p.reason);
  } else if (!p.whole_model) {
    c.why_not = "no whole-model figures (a trace, or attention scope)";
  } else if (!e.meets_target) {
    c.why_not = "misses " + t.describe() + " (" + e.accuracy + ")";
  } else {
    c.eligible = true;
  }
}

ProcurementEntry make_entry(const Point& p, const Report& r, const std::string& platform,
                            const std::vector<const Point*>& siblings,
                            const ProcurementOptions& o) {
  const AccuracyTarget t = report_accuracy_target(r);
  ProcurementEntry e;
  e.candidate.platform = platform;
  e.candidate.strategy = p.axes.strategy;
  e.candidate.provenance = p.provenance;
  e.accuracy = accuracy_text(p, t);
  e.meets_target = t.met_by(p);
  judge(e, p, t, capacity_of(r, p, platform, CapacityKind::max_context));
  if (p.timed() && p.whole_model) whole_model_figures(p, e.candidate);
  context_figures(p, siblings, capacity_of(r, p, platform, CapacityKind::max_context), e);
  batch_figures(p, siblings, capacity_of(r, p, platform, CapacityKind::max_batch), o, e);
  return e;
}

std::string setting_title(const Point& p) {
  std::string t = p.axes.model + ", " + p.axes.kv_dtype + ", " + format_tokens(p.axes.seq_len) +
                  " tokens, batch " + std::to_string(p.axes.batch);
  if (std::string b = extra(p, "kv_budget"); !b.empty()) t += ", KV budget " + b;
  return t + ", workload " + p.axes.workload;
}

}  // namespace

std::vector<Candidate> ProcurementSetting::candidates() const {
  std::vector<Candidate> out;
  for (const auto& e : entries) out.push_back(e.candidate);
  return out;
}

std::vector<std::string> report_platforms(const Report& report) {
  std::set<std::string> s;
  for (const auto& p : report.points) s.insert(platform_of(p, report));
  return {s.begin(), s.end()};
}

std::vector<ProcurementSetting> procurement_settings(const std::vector<const Report*>& reports,
                                                     const ProcurementOptions& options) {
  // Every point of a (report, platform, strategy, model, dtype, budget): what the scaling in
  // context and batch reads from.
  std::map<std::tuple<const Report*, std::string, std::string>, std::vector<const Point*>> family;
  for (const Report* r : reports)
    for (const auto& p : r->points) family[{r, platform_of(p, *r), p.axes.strategy}].push_back(&p);
  std::map<SettingKey, ProcurementSetting> settings;
  for (const auto& [key, points] : family) {
    const auto& [r, platform, strategy] = key;
    for (const Point* p : points) {
      if (p->role == StrategyRole::ablation) continue;
      ProcurementSetting& s = settings[setting_key(*p)];
      if (s.title.empty()) {
        s.title = setting_title(*p);
        s.model = p->axes.model, s.kv_dtype = p->axes.kv_dtype,
        s.kv_budget = extra(*p, "kv_budget");
        s.seq_len = p->axes.seq_len, s.batch = p->axes.batch;
        s.target = report_accuracy_target(*r).describe();
      }
      if (s.model_uncertainty.empty()) s.model_uncertainty = r->context.model_uncertainty;
      s.entries.push_back(make_entry(*p, *r, platform, points, options));
      if (std::find(s.platforms.begin(), s.platforms.end(), platform) == s.platforms.end())
        s.platforms.push_back(platform);
      const std::string prov = to_string(p->provenance);
      if (std::find(s.provenances.begin(), s.provenances.end(), prov) == s.provenances.end())
        s.provenances.push_back(prov);
    }
  }
  std::vector<ProcurementSetting> out;
  for (auto& [k, s] : settings) {
    std::sort(s.platforms.begin(), s.platforms.end());
    std::stable_sort(s.entries.begin(), s.entries.end(), [](const auto& a, const auto& b) {
      return std::tie(a.candidate.strategy, a.candidate.platform) <
             std::tie(b.candidate.strategy, b.candidate.platform);
    });
    std::sort(s.provenances.begin(), s.provenances.end());
    out.push_back(std::move(s));
  }
  // Reading order: model, dtype, budget, batch, then context.
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.model, a.kv_dtype, a.kv_budget, a.batch, a.seq_len) <
           std::tie(b.model, b.kv_dtype, b.kv_budget, b.batch, b.seq_len);
  });
  return out;
}

}  // namespace hb::reports
