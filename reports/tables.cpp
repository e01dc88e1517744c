#include "reports/tables.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <set>

#include "core/error.h"
#include "reports/convergence.h"
#include "reports/point_warnings.h"
#include "reports/fleet.h"
#include "reports/first_screen.h"
#include "reports/format.h"
#include "reports/layer_stack.h"
#include "reports/speedup_range.h"
#include "reports/summary.h"
#include "reports/procurement_markdown.h"
#include "reports/whole_model_table.h"
#include "reports/text_table.h"

namespace hb::reports {

namespace {

// The host axis of a replicate fleet report becomes columns, so it is no part of the setting.
std::string host_of(const PointAxes& a) {
  auto it = a.extra.find(kHostAxis);
  return it == a.extra.end() ? "" : it->second;
}

std::string setting_key(PointAxes a) {
  a.seq_len = 0;
  a.extra.erase(kHostAxis);
  return a.group_key();
}

std::string setting_title(PointAxes a) {
  a.extra.erase(kHostAxis);
  std::string s = a.model + ", batch " + std::to_string(a.batch) + ", kv " + a.kv_dtype +
                  ", workload " + a.workload + ", accelerator " + a.accelerator + ", " +
                  std::to_string(a.decode_steps) + " decode steps, page " +
                  std::to_string(a.page_tokens) + " tokens";
  for (const auto& [k, v] : a.extra) s += ", " + k + " " + v;
  return s;
}

std::string choose_reference(const std::set<std::string>& strategies, const std::string& wanted) {
  if (!wanted.empty()) {
    if (!strategies.count(wanted)) {
      std::string names;
      for (const auto& s : strategies) names += (names.empty() ? "" : ", ") + s;
      throw Error("reference strategy '" + wanted + "' is not in the report",
                  "use one of: " + names);
    }
    return wanted;
  }
  if (strategies.count("full-gpu")) return "full-gpu";
  return strategies.empty() ? "" : *strategies.begin();
}

}  // namespace

const Point* ProcurementTable::at(const std::string& strategy, int64_t seq_len,
                                  const std::string& host) const {
  auto it = cells.find({strategy, seq_len, host});
  return it == cells.end() ? nullptr : it->second;
}

std::optional<std::pair<double, double>> ProcurementTable::ratio(const std::string& a,
                                                                 const std::string& b,
                                                                 int64_t seq_len,
                                                                 const std::string& host) const {
  const Point* p = at(a, seq_len, host);
  if (!p || !p->timed()) return std::nullopt;
  if (a == b) return std::pair(1.0, 0.0);
  if (const Speedup* s = speedup_entry(a, b, seq_len, host))
    return std::pair(s->ratio, s->rel_noise);
  return std::nullopt;
}

int64_t ProcurementTable::pairwise_length(const std::string& host) const {
  for (auto it = seq_lens.rbegin(); it != seq_lens.rend(); ++it) {
    int ran = 0;
    for (const auto& s : strategies)
      if (const Point* p = at(s, *it, host); p && p->timed()) ++ran;
    if (ran >= 2) return *it;
  }
  return -1;
}

namespace {

// The fastest timed headline point of a column that `eligible` admits.
template <typename F>
std::string fastest_of(const ProcurementTable& t, int64_t seq_len, const std::string& host,
                       F&& eligible) {
  std::string best;
  double best_ns = 0;
  for (const auto& s : t.strategies) {
    const Point* p = t.at(s, seq_len, host);
    if (!p || !p->timed() || p->role == StrategyRole::ablation || !eligible(*p)) continue;
    if (best.empty() || p->step.summary.median < best_ns)
      best = s, best_ns = p->step.summary.median;
  }
  return best;
}

}  // namespace

std::string ProcurementTable::fastest(int64_t seq_len, const std::string& host) const {
  return fastest_of(*this, seq_len, host, [](const Point&) { return true; });
}

std::string ProcurementTable::fastest_within_target(int64_t seq_len,
                                                    const std::string& host) const {
  return fastest_of(*this, seq_len, host, [&](const Point& p) { return target.met_by(p); });
}

const Speedup* ProcurementTable::speedup_entry(const std::string& a, const std::string& b,
                                               int64_t seq_len, const std::string& host) const {
  const Point* p = at(a, seq_len, host);
  if (!p || !p->timed()) return nullptr;
  const std::string key = p->axes.group_key();
  for (const auto& s : speedups)
    if (s.group_key == key && s.strategy_a == a && s.strategy_b == b) return &s;
  return nullptr;
}

namespace {

// Whether a point competes for the headline: timed, no ablation, and (within_target) accurate
// enough.
bool contends(const ProcurementTable& t, const Point* p, bool within_target) {
  return p && p->timed() && p->role != StrategyRole::ablation &&
         (!within_target || t.target.met_by(*p));
}

}  // namespace

std::vector<std::string> ProcurementTable::leaders(int64_t seq_len, const std::string& host,
                                                   bool within_target) const {
  const std::string best =
      within_target ? fastest_within_target(seq_len, host) : fastest(seq_len, host);
  if (best.empty()) return {};
  std::vector<std::string> out = {best};
  for (const auto& s : strategies) {
    const Point* p = at(s, seq_len, host);
    if (s == best || !contends(*this, p, within_target)) continue;
    const Speedup* sp = speedup_entry(best, s, seq_len, host);
    if (!sp || !sp->decided(tie_margin)) out.push_back(s);
  }
  return out;
}

std::vector<std::string> ProcurementTable::at_margin(int64_t seq_len, const std::string& host,
                                                     bool within_target) const {
  const std::vector<std::string> lead = leaders(seq_len, host, within_target);
  if (lead.empty() || !(tie_margin > 0)) return {};
  std::vector<std::string> out;
  for (const auto& s : strategies) {
    const Point* p = at(s, seq_len, host);
    if (std::find(lead.begin(), lead.end(), s) != lead.end() || !contends(*this, p, within_target))
      continue;
    const Speedup* sp = speedup_entry(lead[0], s, seq_len, host);
    if (sp && sp->paired() && sp->ci_low <= 1 + tie_margin) out.push_back(s);
  }
  return out;
}

std::string leaders_text(const std::vector<std::string>& leaders,
                         const std::vector<std::string>& at_margin) {
  std::string s = leaders.empty()       ? "none"
                  : leaders.size() == 1 ? leaders[0]
                                        : "tie " + format_list(leaders);
  if (!at_margin.empty()) s += " (" + format_list(at_margin) + " at the margin)";
  return s;
}

namespace {

// The figure the Pareto front trades against time: the target's metric.
double accuracy_figure(const AccuracyTarget& target, const Point& p) {
  return target.metric == AccuracyTarget::Metric::cosine ? p.accuracy.cosine
                                                         : p.accuracy.mass_recall;
}

bool scored(const Point* p) { return p && p->timed() && p->accuracy.steps_scored > 0; }

}  // namespace

bool ProcurementTable::on_pareto_front(const std::string& strategy, int64_t seq_len,
                                       const std::string& host) const {
  const Point* p = at(strategy, seq_len, host);
  if (!scored(p) || !std::isfinite(accuracy_figure(target, *p))) return false;
  const double t = p->step.summary.median, a = accuracy_figure(target, *p);
  for (const auto& s : strategies) {
    const Point* q = at(s, seq_len, host);
    if (s == strategy || !scored(q) || !std::isfinite(accuracy_figure(target, *q))) continue;
    const double qt = q->step.summary.median, qa = accuracy_figure(target, *q);
    if (qt <= t && qa >= a && (qt < t || qa > a)) return false;
  }
  return true;
}

std::vector<std::pair<int64_t, std::string>> ProcurementTable::columns() const {
  std::vector<std::pair<int64_t, std::string>> c;
  for (auto len : seq_lens)
    if (hosts.empty())
      c.emplace_back(len, "");
    else
      for (const auto& h : hosts) c.emplace_back(len, h);
  return c;
}

ProcurementTable ProcurementTable::for_host(const std::string& host) const {
  ProcurementTable t = *this;
  t.hosts.clear();
  t.cells.clear();
  for (const auto& [k, p] : cells)
    if (std::get<2>(k) == host) t.cells[{std::get<0>(k), std::get<1>(k), ""}] = p;
  if (!host.empty()) t.title += ", host " + host;
  return t;
}

StrategyRole ProcurementTable::role_of(const std::string& strategy) const {
  for (const auto& [k, p] : cells)
    if (std::get<0>(k) == strategy) return p->role;
  return StrategyRole::baseline;
}

namespace {

template <typename Keep>
ProcurementTable keeping(const ProcurementTable& t, Keep&& keep) {
  ProcurementTable out = t;
  out.strategies.clear();
  for (const auto& s : t.strategies)
    if (s == t.reference || keep(t.role_of(s))) out.strategies.push_back(s);
  std::erase_if(out.cells, [&](const auto& c) {
    return std::find(out.strategies.begin(), out.strategies.end(), std::get<0>(c.first)) ==
           out.strategies.end();
  });
  return out;
}

}  // namespace

ProcurementTable ProcurementTable::headline_part() const {
  return keeping(*this, [](StrategyRole r) { return r != StrategyRole::ablation; });
}

ProcurementTable ProcurementTable::ablation_part() const {
  return keeping(*this, [](StrategyRole r) {
    return r == StrategyRole::system || r == StrategyRole::ablation;
  });
}

std::vector<ProcurementTable> procurement_tables(const Report& report,
                                                 const TableOptions& options) {
  // Replicate fleet reports: one column group per host, in rank order; hosts a hand-made report
  // names only in its points follow.
  std::vector<std::string> hosts = host_axis_labels(report);
  for (const auto& p : report.points)
    if (const std::string h = host_of(p.axes);
        !h.empty() && std::find(hosts.begin(), hosts.end(), h) == hosts.end())
      hosts.push_back(h);
  std::set<std::string> all_strategies;
  for (const auto& p : report.points) all_strategies.insert(p.axes.strategy);
  const std::string reference = choose_reference(all_strategies, options.reference);
  // A report read from an older writer or built by hand may lack the section; the same helper
  // the runner uses fills it, so tables never compute ratios their own way.
  const std::vector<Speedup> speedups =
      report.speedups.empty() ? compute_speedups(report.points) : report.speedups;

  std::map<std::string, ProcurementTable> by_key;
  for (const auto& p : report.points) {
    auto& t = by_key[setting_key(p.axes)];
    if (t.title.empty()) {
      t.setting_key = setting_key(p.axes);
      t.title = setting_title(p.axes);
      t.reference = reference;
      t.hosts = hosts;
      t.noise_target = noise_target(report.context);
      t.tie_margin = tie_margin(report.context);
      t.target = report_accuracy_target(report);
      if (const ModelUncertainty* u = report.context.uncertainty("itl"))
        t.model_uncertainty = u->rel;
    }
    t.cells[{p.axes.strategy, p.axes.seq_len, host_of(p.axes)}] = &p;
    if (std::find(t.seq_lens.begin(), t.seq_lens.end(), p.axes.seq_len) == t.seq_lens.end())
      t.seq_lens.push_back(p.axes.seq_len);
    if (std::find(t.strategies.begin(), t.strategies.end(), p.axes.strategy) == t.strategies.end())
      t.strategies.push_back(p.axes.strategy);
    const std::string provenance = to_string(p.provenance);
    if (std::find(t.provenances.begin(), t.provenances.end(), provenance) == t.provenances.end())
      t.provenances.push_back(provenance);
  }
  std::vector<ProcurementTable> out;
  for (auto& [key, t] : by_key) {
    std::sort(t.seq_lens.begin(), t.seq_lens.end());
    std::sort(t.strategies.begin(), t.strategies.end());
    std::sort(t.provenances.begin(), t.provenances.end());
    std::set<std::string> groups;
    for (const auto& [k, p] : t.cells) groups.insert(p->axes.group_key());
    for (const auto& s : speedups)
      if (groups.count(s.group_key)) t.speedups.push_back(s);
    out.push_back(std::move(t));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.title < b.title; });
  return out;
}

namespace {

// What the accelerator's capacity holds, said the same way for the run and for each fleet host:
// the KV budget the oom lines quote plus, in layer scope, the layer's weights.
std::string accelerator_memory_phrase(const AcceleratorInfo& a) {
  return "memory " + format_bytes(static_cast<double>(a.capacity_bytes)) +
         " (the KV budget, plus the layer's weights in layer scope)";
}

}  // namespace

std::vector<std::pair<std::string, std::string>> context_facts(const ReportContext& c) {
  std::vector<std::pair<std::string, std::string>> f;
  f.emplace_back("tool", "hybridbench " + c.tool_version + " (" + c.git_commit + ", " +
                             c.build_type + (c.cuda ? ", CUDA " + c.cuda_version : ", no CUDA") +
                             ")");
  f.emplace_back("date", c.date_utc);
  f.emplace_back("host", c.host + " (" + c.os + ")");
  f.emplace_back("CPU", c.cpu_model + ", SIMD " + c.simd_level);
  const auto& a = c.accelerator;
  f.emplace_back("accelerator", a.kind_name() + ": " + a.name +
                                    (a.emulated ? " (emulated: figures are not GPU figures)" : "") +
                                    ", " + accelerator_memory_phrase(a) +
                                    (a.details.empty() ? "" : ", " + a.details));
  for (const auto& n : c.topology.nodes)
    f.emplace_back("memory node " + std::to_string(n.node),
                   n.kind + (n.emulated ? " (emulated)" : "") + ", " +
                       format_bytes(static_cast<double>(n.size_bytes)) +
                       (n.note.empty() ? "" : " - " + n.note));
  for (const auto& [k, v] : c.topology.facts) f.emplace_back("topology " + k, v);
  for (const auto& [k, v] : c.system_settings) f.emplace_back("setting " + k, v);
  if (!c.command_line.empty()) f.emplace_back("command", c.command_line);
  for (const auto& h : c.hosts) {
    std::string v = h.label + ": ";
    if (h.status != HostStatus::ok) {
      v += "FAILED: " + h.error;
    } else {
      const auto& a = h.accelerator;
      v += h.cpu_model + ", SIMD " + h.simd_level + "; accelerator " + a.kind_name() + " " +
           std::to_string(a.device) + ": " + a.name + ", " + accelerator_memory_phrase(a) + "; " +
           std::to_string(h.topology.nodes.size()) + " NUMA node(s); " + h.binding + "; " +
           std::to_string(h.points) + " point(s)";
    }
    f.emplace_back("rank " + std::to_string(h.rank), v);
  }
  return f;
}

std::string status_cell(const Point& p) {
  return to_string(p.status) + (p.reason.empty() ? "" : ": " + p.reason);
}

std::string ratio_uncertainty(const ProcurementTable& t, bool modeled, double noise) {
  if (modeled && t.model_uncertainty)
    return " ± " + format_percent(std::sqrt(2.0) * *t.model_uncertainty) + " (model)";
  return " ± " + format_percent(noise);
}

std::string time_cell(const Point* p, std::optional<double> noise_target,
                      std::optional<double> model_uncertainty) {
  if (!p) return "-";
  if (!p->timed()) return to_string(p->status);
  // A modeled time has no noise; its uncertainty is the model's against published measurements.
  if (p->provenance == Provenance::modeled && model_uncertainty)
    return format_duration_ns(p->step.summary.median) + " ± " + format_percent(*model_uncertainty) +
           " (model)";
  return format_duration_ns(p->step.summary.median) + " ± " + noise_text(*p) +
         (missed_noise_target(*p, noise_target) ? kUnconvergedMark : "");
}

std::string attended_cell(const std::optional<AttendedTokens>& a) {
  if (!a) return "-";
  const std::string mean = std::to_string(std::llround(a->mean));
  return a->min == a->max
             ? mean
             : mean + " (" + std::to_string(a->min) + "-" + std::to_string(a->max) + ")";
}

std::string accuracy_cell(const Point* p) {
  if (!p) return "-";
  if (p->status != PointStatus::ok) return to_string(p->status);
  const Accuracy& a = p->accuracy;
  if (a.steps_scored == 0) return "not scored";
  char cosine[32];
  std::snprintf(cosine, sizeof cosine, "%.4f", a.cosine);
  std::string s = "recall " + format_percent(a.mass_recall) + ", cosine " + cosine;
  if (a.has_needle()) s += ", needle " + format_percent(a.needle_success_rate);
  if (p->attended_tokens) s += ", attended " + attended_cell(p->attended_tokens);
  return s;
}

namespace {

// "(e)" / "(m)" after a cell when a table mixes provenances; a table with one label says it in
// its heading instead.
std::string provenance_mark(const ProcurementTable& t, const Point* p) {
  if (!p || t.provenances.size() <= 1) return "";
  switch (p->provenance) {
    case Provenance::measured:
      return "";
    case Provenance::emulated:
      return " (e)";
    case Provenance::modeled:
      return " (m)";
  }
  return "";
}

using CellFn = std::function<std::string(const std::string&, int64_t, const std::string&)>;

std::string column_title(int64_t len, const std::string& host) {
  return format_tokens(len) + (host.empty() ? "" : " @ " + host);
}

TextTable grid(const ProcurementTable& t, const CellFn& cell) {
  TextTable g;
  g.add_column("strategy");
  const auto cols = t.columns();
  for (const auto& [len, host] : cols)
    g.add_column(column_title(len, host), TextTable::Align::right);
  for (const auto& s : t.strategies) {
    std::vector<std::string> row = {s};
    for (const auto& [len, host] : cols) row.push_back(cell(s, len, host));
    g.add_row(std::move(row));
  }
  return g;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string csv_number(double v) {
  if (!std::isfinite(v)) return "";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// The whole-model columns, last (readers that count from the front keep working); blank
// figures are empty cells with their reason in the next column.
void append_whole_model_fields(std::vector<std::string>& f, const std::optional<WholeModel>& w) {
  if (!w) {
    f.insert(f.end(), 10, "");
    return;
  }
  const auto opt = [](const std::optional<double>& v) { return v ? csv_number(*v) : ""; };
  f.insert(f.end(), {std::to_string(w->layers), csv_number(w->outside_layers_ns),
                     to_string(w->outside_layers_provenance), csv_number(w->itl_ns),
                     csv_number(w->tokens_per_s), csv_number(w->tokens_per_s_per_user),
                     opt(w->cost_per_mtok_usd), w->cost_blank_reason, opt(w->tokens_per_s_per_w),
                     w->power_blank_reason});
}

}  // namespace

std::string provenance_heading(const ProcurementTable& t) {
  if (t.provenances.size() == 1) return t.provenances[0];
  std::string s;
  for (const auto& p : t.provenances) s += (s.empty() ? "" : ", ") + p;
  return "mixed: " + s + "; (e) emulated, (m) modeled";
}

TextTable time_grid(const ProcurementTable& t) {
  TextTable g = grid(t, [&](const std::string& s, int64_t len, const std::string& host) {
    const Point* p = t.at(s, len, host);
    return time_cell(p, t.noise_target, t.model_uncertainty) + provenance_mark(t, p);
  });
  // A column whose fastest the noise cannot separate from others names the tie, as the summary
  // does, instead of crowning whichever median came out lowest.
  auto leaders_cell = [&](int64_t len, const std::string& host, bool within_target) {
    const std::vector<std::string> l = t.leaders(len, host, within_target);
    if (l.empty()) return std::string(within_target ? "none" : "-");
    return leaders_text(l, t.at_margin(len, host, within_target));
  };
  std::vector<std::string> fastest = {"fastest"};
  for (const auto& [len, host] : t.columns()) fastest.push_back(leaders_cell(len, host, false));
  g.add_row(std::move(fastest));
  std::vector<std::string> within = {"fastest within " + t.target.describe()};
  for (const auto& [len, host] : t.columns()) within.push_back(leaders_cell(len, host, true));
  g.add_row(std::move(within));
  std::vector<std::string> fit = {"KV on accelerator"};
  bool any = false;
  for (const auto& [len, host] : t.columns()) {
    const auto f = kv_fit(t, len, host);
    any = any || f.has_value();
    fit.push_back(kv_fit_cell(f));
  }
  if (any) g.add_row(std::move(fit));
  return g;
}

std::optional<double> kv_fit(const ProcurementTable& t, int64_t seq_len, const std::string& host) {
  for (const auto& s : t.strategies)
    if (const Point* p = t.at(s, seq_len, host); p && p->kv_fit_fraction) return p->kv_fit_fraction;
  return std::nullopt;
}

std::string kv_fit_cell(std::optional<double> fraction) {
  if (!fraction) return "-";
  if (*fraction >= 1) return "all";
  return format_percent(*fraction);
}

std::string kv_boundary_line(const ProcurementTable& t) {
  std::vector<std::pair<int64_t, double>> known;
  for (const auto& [len, host] : t.columns())
    if (const auto f = kv_fit(t, len, host))
      if (known.empty() || known.back().first != len) known.emplace_back(len, *f);
  if (known.empty()) return "";
  const auto first_short =
      std::find_if(known.begin(), known.end(), [](const auto& k) { return k.second < 1; });
  if (first_short == known.end())
    return "The KV cache fits the accelerator's KV budget at every length.";
  std::string rest;
  for (auto it = first_short + 1; it != known.end(); ++it)
    rest += ", " + kv_fit_cell(it->second) + " at " + format_tokens(it->first);
  const std::string share =
      " (" + kv_fit_cell(first_short->second) + " of it fits there" + rest + ")";
  if (first_short == known.begin())
    return "The KV cache outgrows the accelerator's KV budget at every length, from " +
           format_tokens(first_short->first) + share + ".";
  return "The KV cache stops fitting the accelerator's KV budget at " +
         format_tokens(first_short->first) + share + ".";
}

TextTable speedup_grid(const ProcurementTable& t) {
  return grid(t, [&](const std::string& s, int64_t len, const std::string& host) -> std::string {
    const Point* p = t.at(s, len, host);
    const Point* r = t.at(t.reference, len, host);
    if (auto sp = t.speedup(s, len, host))
      return format_ratio(sp->first) +
             ratio_uncertainty(t,
                               p && r && p->provenance == Provenance::modeled &&
                                   r->provenance == Provenance::modeled,
                               sp->second) +
             provenance_mark(t, p);
    if (p && !p->timed()) return to_string(p->status);
    return r && !r->timed() ? "n/a (" + t.reference + " " + to_string(r->status) + ")" : "-";
  });
}

TextTable accuracy_grid(const ProcurementTable& t) {
  return grid(t, [&](const std::string& s, int64_t len, const std::string& host) {
    const Point* p = t.at(s, len, host);
    return accuracy_cell(p) + provenance_mark(t, p) +
           (t.on_pareto_front(s, len, host) ? kParetoMark : "");
  });
}

std::string modeled_platforms(const ProcurementTable& t) {
  std::set<std::string> names;
  for (const auto& [k, p] : t.cells)
    if (p->modeled.present()) names.insert(p->modeled.platform);
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

TextTable modeled_grid(const ProcurementTable& t) {
  return grid(t, [&](const std::string& s, int64_t len, const std::string& host) -> std::string {
    const Point* p = t.at(s, len, host);
    if (!p) return "-";
    if (!p->timed()) return to_string(p->status);
    if (!p->modeled.present()) return "not modeled";
    return format_duration_ns(p->step.summary.median) + " | " +
           format_duration_ns(p->modeled.step.summary.median) + " (" +
           format_percent(p->modeled.error_vs_measured, true) + ")";
  });
}

std::optional<TextTable> ran_on_grid(const ProcurementTable& t) {
  std::set<int> ranks;
  for (const auto& [k, p] : t.cells)
    if (p->ran_on.known()) ranks.insert(p->ran_on.rank);
  if (ranks.size() < 2 || !t.hosts.empty()) return std::nullopt;  // replicate: the columns say it
  return grid(t, [&](const std::string& s, int64_t len, const std::string& host) -> std::string {
    const Point* p = t.at(s, len, host);
    return p && p->ran_on.known() ? "r" + std::to_string(p->ran_on.rank) + " " + p->ran_on.host
                                  : "-";
  });
}

TextTable pairwise_grid(const ProcurementTable& t, int64_t seq_len) {
  TextTable g;
  g.add_column("a \\ b");
  for (const auto& b : t.strategies) g.add_column(b, TextTable::Align::right);
  for (const auto& a : t.strategies) {
    std::vector<std::string> row = {a};
    for (const auto& b : t.strategies) {
      const auto r = t.ratio(a, b, seq_len);
      const Point* pa = t.at(a, seq_len);
      row.push_back(r ? format_ratio(r->first) : pa && !pa->timed() ? to_string(pa->status) : "-");
    }
    g.add_row(std::move(row));
  }
  return g;
}

std::vector<std::string> not_run_lines(const ProcurementTable& t) {
  std::vector<std::string> lines;
  for (const auto& s : t.strategies)
    for (const auto& [len, host] : t.columns())
      if (const Point* p = t.at(s, len, host); p && p->status != PointStatus::ok)
        lines.push_back(s + " at " + column_title(len, host) + ": " + status_cell(*p));
  return lines;
}

namespace {

// Everything after the first screen: the summary, the run's context, a section per table, the
// layer stack and the procurement view.
std::string markdown_sections(const Report& report, const TableOptions& options) {
  // The answer first (issue 19), the context collapsed below it: GitHub and most viewers render
  // <details>; a plain reader still sees the text.
  std::string md = "## Summary\n\n";
  for (const auto& s : summary_sentences(report, options)) md += "- " + s + "\n";
  md +=
      "\n<details><summary>Run context (tool, host, accelerator, settings, command) and how to "
      "read the figures</summary>\n\n";
  for (const auto& [k, v] : context_facts(report.context)) md += "- **" + k + "**: " + v + "\n";
  md +=
      "\nStep time is one decode step of one layer for the whole batch (scope layer: the whole "
      "decoder layer, QKV, attention, O and FFN; scope attention: attention alone; the time each "
      "sequence "
      "waits per generated token, per layer), median ± noise (IQR / 1.349 median, robust to a few "
      "preempted steps) over the timed steps. Figures are "
      "*measured* (this run, this hardware), *emulated* (a stand-in played a tier or the GPU) or "
      "*modeled*.\n\n</details>\n";
  if (const std::string u = unconverged_sentence(report); !u.empty()) md += "\n" + u + "\n";
  if (const std::string w = point_warnings_sentence(report); !w.empty()) md += "\n" + w + "\n";
  // Over several settings: the system's speedup range per baseline (issue 46, the paper's).
  if (const std::string r = speedup_range_markdown(report); !r.empty()) md += "\n" + r;
  for (const auto& t : procurement_tables(report, options)) {
    md += "\n## " + t.title + "\n\nFigures: " + provenance_heading(t) +
          ".\n\n### Step time (median ± noise)\n\n";
    md += time_grid(t).markdown();
    if (const std::string b = kv_boundary_line(t); !b.empty()) md += "\n" + b + "\n";
    if (const WholeModelSection w = whole_model_section(t); !w.empty()) {
      md += "\n### " + w.heading + "\n\n" + w.table.markdown();
      if (!w.reasons.empty()) md += "\n";
      for (const auto& r : w.reasons) md += "- " + r + "\n";
    }
    md += "\n### Speedup vs " + t.reference + " (" + t.reference +
          " time / strategy time; > 1 is faster)\n\n";
    md += speedup_grid(t).markdown();
    // Pairwise ratios compare strategies on one machine: one matrix per host of a fleet.
    for (const auto& host : t.hosts.empty() ? std::vector<std::string>{""} : t.hosts) {
      const ProcurementTable one = t.for_host(host);
      if (const int64_t len = one.pairwise_length(); len > 0)
        md += "\n### Pairwise at " + format_tokens(len) + (host.empty() ? "" : " on " + host) +
              " (time of b / time of a; > 1: a is faster)\n\n" + pairwise_grid(one, len).markdown();
    }
    const std::string metric =
        t.target.metric == AccuracyTarget::Metric::cosine ? "cosine" : "mass recall";
    md +=
        "\n### Accuracy vs the fp64 reference\n\nAttention-mass recall, output cosine "
        "similarity and, where planted, needle retrieval (rel_l2 is in the JSON and CSV only; "
        "reports/README.md says why)." +
        std::string(kParetoMark) + " marks the step time vs " + metric +
        " Pareto front of each column (no other point is both at least as fast and at least "
        "as accurate).\n\n";
    md += accuracy_grid(t).markdown();
    if (const std::string m = modeled_platforms(t); !m.empty())
      md += "\n### Measured | modeled on " + m + " (error of the modeled median)\n\n" +
            modeled_grid(t).markdown();
    if (auto where = ran_on_grid(t))
      md += "\n### Where each point ran (rank, host)\n\n" + where->markdown();
    const auto not_run = not_run_lines(t);
    if (!not_run.empty()) {
      md += "\nPoints that did not run:\n\n";
      for (const auto& l : not_run) md += "- " + l + "\n";
    }
  }
  // run --layers N: one table over every setting (reports/layer_stack.h).
  if (const TextTable s = layer_stack_table(report); s.rows() > 0)
    md += "\n## Whole model: measured layer stack vs layers x one layer\n\n" +
          layer_stack_sentence(report) + "\n\n" + s.markdown();
  // Several platforms (profiles or hosts): the buyer's view, ranked.
  if (report_platforms(report).size() > 1) {
    const ProcurementOptions po{options.itl_slo_ns};
    md += "\n" + procurement_markdown(procurement_settings({&report}, po), po);
  }
  if (const std::string a = assumptions_markdown(report.context, true); !a.empty()) md += "\n" + a;
  return md;
}

}  // namespace

std::string markdown_report(const Report& report, const TableOptions& options) {
  std::string md = "# hybridbench report\n\n";
  const FirstScreen first = first_screen(report, options);
  // One platform: the summary below is the answer (issue 19), as it always was.
  if (!first.headline) return md + markdown_sections(report, options);
  // Several: the answer in three lines and its chart (issue 49), then the top of the
  // procurement view; --full adds every section.
  for (const auto& l : first.answer) md += "- " + l + "\n";
  md += "\n" + tokens_bars_markdown(*first.headline);
  if (options.full) return md + "\n" + markdown_sections(report, options);
  const ProcurementOptions po{options.itl_slo_ns, kTopPlatformsPerStrategy};
  md += "\n" + procurement_markdown(procurement_settings({&report}, po), po);
  if (const std::string a = assumptions_markdown(report.context, false); !a.empty()) md += "\n" + a;
  return md +
         "\nThe rest (run context, each platform's step times, speedups and accuracy, every "
         "platform ranked, what was not ranked and why): `hybridbench report FILE --full`.\n";
}

std::string csv_report(const Report& report, const TableOptions& options) {
  const auto tables = procurement_tables(report, options);
  std::string csv =
      "model,family,seq_len,batch,strategy,kv_dtype,workload,accelerator,decode_steps,page_tokens,"
      "extra,status,reason,"
      "provenance,kv_fit_fraction,samples,step_median_ns,step_p10_ns,step_p90_ns,step_rel_stdev,"
      "step_robust_rel_"
      "noise,layer_tokens_per_s,reference,"
      "speedup_vs_reference,speedup_rel_noise,rel_l2,cosine,max_abs_err,mass_recall,needle_success_"
      "rate,attended_tokens_mean,attended_tokens_min,attended_tokens_max,"
      "h2d_bytes_per_step,d2h_bytes_per_step,modeled_platform,modeled_median_ns,model_error,ran_on_"
      "rank,ran_on_host,accuracy_target,within_accuracy_target,pareto_front,"
      "whole_model_layers,outside_layers_ns,outside_layers_provenance,itl_ns,tokens_per_s,"
      "tokens_per_s_per_user,cost_per_mtok_usd,cost_blank_reason,tokens_per_s_per_w,"
      "power_blank_reason\n";
  for (const auto& t : tables)
    for (const auto& [len, host] : t.columns())
      for (const auto& s : t.strategies) {
        const Point* p = t.at(s, len, host);
        if (!p) continue;
        const auto& x = p->axes;
        const auto& sum = p->step.summary;
        std::string extra;
        for (const auto& [k, v] : x.extra) extra += (extra.empty() ? "" : ";") + k + "=" + v;
        const auto sp = t.speedup(s, len, host);
        const bool scored = p->status == PointStatus::ok && p->accuracy.steps_scored > 0;
        const Accuracy& a = p->accuracy;
        // The last three: the run's --accuracy-target and the verdicts the markdown marks
        // ("fastest within", the Pareto ◆), so a spreadsheet filters on them.
        std::vector<std::string> f = {
            x.model,
            x.family,
            std::to_string(x.seq_len),
            std::to_string(x.batch),
            x.strategy,
            x.kv_dtype,
            x.workload,
            x.accelerator,
            std::to_string(x.decode_steps),
            std::to_string(x.page_tokens),
            extra,
            to_string(p->status),
            p->reason,
            to_string(p->provenance),
            p->kv_fit_fraction ? csv_number(*p->kv_fit_fraction) : "",
            std::to_string(sum.count),
            p->timed() ? csv_number(sum.median) : "",
            p->timed() ? csv_number(sum.p10) : "",
            p->timed() ? csv_number(sum.p90) : "",
            p->timed() ? csv_number(sum.rel_stdev()) : "",
            p->timed() ? csv_number(robust_rel_noise(sum)) : "",
            p->timed() && sum.median > 0 ? csv_number(x.batch * 1e9 / sum.median) : "",
            t.reference,
            sp ? csv_number(sp->first) : "",
            sp ? csv_number(sp->second) : "",
            scored ? csv_number(a.rel_l2) : "",
            scored ? csv_number(a.cosine) : "",
            scored ? csv_number(a.max_abs_err) : "",
            scored ? csv_number(a.mass_recall) : "",
            scored && a.has_needle() ? csv_number(a.needle_success_rate) : "",
            p->attended_tokens ? csv_number(p->attended_tokens->mean) : "",
            p->attended_tokens ? std::to_string(p->attended_tokens->min) : "",
            p->attended_tokens ? std::to_string(p->attended_tokens->max) : "",
            p->timed() ? std::to_string(p->traffic_per_step.h2d_bytes) : "",
            p->timed() ? std::to_string(p->traffic_per_step.d2h_bytes) : "",
            p->modeled.platform,
            p->modeled.present() ? csv_number(p->modeled.step.summary.median) : "",
            p->modeled.present() ? csv_number(p->modeled.error_vs_measured) : "",
            p->ran_on.known() ? std::to_string(p->ran_on.rank) : "",
            p->ran_on.host,
            t.target.text(),
            scored ? (t.target.met_by(*p) ? "true" : "false") : "",
            t.on_pareto_front(s, len, host) ? "true" : "false"};
        append_whole_model_fields(f, p->whole_model);
        for (size_t i = 0; i < f.size(); ++i) csv += (i ? "," : "") + csv_field(f[i]);
        csv += "\n";
      }
  return csv;
}

}  // namespace hb::reports
