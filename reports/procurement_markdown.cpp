#include "reports/procurement_markdown.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "reports/format.h"
#include "reports/text_table.h"

namespace hb::reports {

namespace {

using M = ProcurementMetric;
constexpr M kMetrics[] = {M::tokens_per_s, M::itl, M::cost, M::tokens_per_w, M::max_context};

// How each metric's line starts and its value's unit, in ProcurementMetric's order.
struct MetricText {
  const char* headline;
  const char* unit;
};
constexpr MetricText kMetricTexts[kProcurementMetricCount] = {
    {"Most tokens/s", " tokens/s"},
    {"Lowest ITL", ""},
    {"Lowest $/Mtok", "/Mtok"},
    {"Most tokens/s per W", " tokens/s/W"},
    {"Longest context", " tokens"}};
std::string headline(M m) { return kMetricTexts[static_cast<size_t>(m)].headline; }
std::string unit(M m) { return kMetricTexts[static_cast<size_t>(m)].unit; }

std::string who(const Candidate& c) { return c.platform + " with " + c.strategy; }

// " ± 5.1% (model)" after a modeled figure: the uncertainty of its kind (tokens/s, and $/Mtok and
// tokens/s per W, which scale with it; ITL), else the ITL's; "" for a measured figure or a
// capacity (memory arithmetic, no timing).
std::string model_pm(const ProcurementSetting& s, M m, const Candidate& c) {
  if (c.provenance != Provenance::modeled || m == M::max_context) return "";
  const ModelUncertainty* itl = nullptr;
  const ModelUncertainty* tps = nullptr;
  for (const auto& u : s.model_uncertainty) {
    if (u.figure == "itl") itl = &u;
    if (u.figure == "tokens_per_s") tps = &u;
  }
  const ModelUncertainty* u = m != M::itl && tps ? tps : itl;
  return u ? " ± " + format_percent(u->rel) + " (model)" : "";
}

// "1.21x ahead of gh200 with hybridgen (258 tokens/s; 95% CI 1.10-1.32x over 8 rounds)".
std::string lead_text(const Ranking& r, M m) {
  if (!r.runner_up) return "";
  const Candidate& other = *r.runner_up;
  std::string spread;
  if (r.lead && r.lead->ci)
    spread = "; " + format_percent(r.lead->ci->coverage) + " CI " + format_ratio(r.lead->ci->low) +
             "-" + format_ratio(r.lead->ci->high) + " over " + std::to_string(r.lead->ci->pairs) +
             " rounds";
  else if (r.lead && r.lead->rel_noise > 0)
    spread = "; ± " + format_percent(r.lead->rel_noise);
  const std::string ratio = r.lead ? format_ratio(r.lead->ratio) : "?";
  return ", " + ratio + " ahead of " + who(other) + " (" + figure_text(m, other.figure(m)) +
         unit(m) + spread + ")";
}

}  // namespace

std::string figure_text(M m, const Figure& f) {
  if (!f.value) return "-";
  return (f.at_least ? "≥ " : "") + metric_text(m, *f.value);
}

std::vector<std::string> best_lines(const ProcurementSetting& s) {
  const std::vector<Candidate> cs = s.candidates();
  std::vector<std::string> out;
  for (M m : kMetrics) {
    const Ranking r = rank_on(cs, m);
    std::string line = headline(m) + ": ";
    if (r.leaders.empty()) {
      line += "blank: " + r.blank_reason;
    } else if (r.leaders.size() > 1) {
      std::string names;
      for (size_t i = 0; i < r.leaders.size(); ++i)
        names += (i == 0                      ? ""
                  : i + 1 == r.leaders.size() ? " and "
                                              : ", ") +
                 who(*r.leaders[i]) + " (" + figure_text(m, r.leaders[i]->figure(m)) + ")";
      line += "tie within noise between " + names;
      if (r.runner_up) line += "; the next platform is " + who(*r.runner_up);
    } else {
      const Candidate& w = *r.leaders[0];
      line += who(w) + ", " + figure_text(m, w.figure(m)) + unit(m) + model_pm(s, m, w) +
              lead_text(r, m);
      if (!r.runner_up) line += " (the only platform with an eligible figure here)";
    }
    out.push_back(line + ".");
  }
  return out;
}

namespace {

// Strategies by their best tokens/s on any platform, those with none last, by name.
std::vector<std::string> strategy_order(const ProcurementSetting& s) {
  std::map<std::string, double> best;
  for (const auto& e : s.entries) {
    const auto& v = e.candidate.figure(M::tokens_per_s).value;
    double& b = best[e.candidate.strategy];
    if (e.candidate.eligible && v) b = std::max(b, *v);
  }
  std::vector<std::string> order;
  for (const auto& [name, v] : best) order.push_back(name);
  std::stable_sort(order.begin(), order.end(),
                   [&](const auto& a, const auto& b) { return best[a] > best[b]; });
  return order;
}

const ProcurementEntry* entry_of(const ProcurementSetting& s, const Candidate* c) {
  for (const auto& e : s.entries)
    if (e.candidate.platform == c->platform && e.candidate.strategy == c->strategy) return &e;
  return nullptr;
}

}  // namespace

TextTable procurement_table(const ProcurementSetting& s, const ProcurementOptions& o) {
  using A = TextTable::Align;
  TextTable t;
  t.add_column("strategy");
  t.add_column("#", A::right);
  t.add_column("platform");
  for (M m : kMetrics) t.add_column(kProcurementMetrics.name(m), A::right);
  t.add_column("context bound by");
  t.add_column("at max context");
  t.add_column(o.itl_slo_ns ? "max batch, ITL <= " + format_duration_ns(*o.itl_slo_ns)
                            : "max batch (memory)",
               A::right);
  if (o.itl_slo_ns) t.add_column("at max batch");
  t.add_column("accuracy");
  const std::vector<Candidate> cs = s.candidates();
  for (const auto& strategy : strategy_order(s)) {
    int rank = 0;
    for (const Candidate* c : platforms_ranked(cs, strategy, M::tokens_per_s)) {
      if (o.top_per_strategy > 0 && rank >= o.top_per_strategy) break;
      const ProcurementEntry* e = entry_of(s, c);
      std::vector<std::string> row = {rank == 0 ? strategy : "", std::to_string(++rank),
                                      c->platform};
      for (M m : kMetrics) row.push_back(figure_text(m, c->figure(m)));
      const Figure& batch = e->slo_batch;
      row.insert(
          row.end(),
          {e->max_context_bound, e->at_max_context,
           batch.value ? (batch.at_least ? "≥ " : "") + format_fixed(*batch.value, 0) : "-"});
      if (o.itl_slo_ns) row.push_back(e->at_slo_batch);
      row.push_back(e->accuracy);
      t.add_row(std::move(row));
    }
  }
  return t;
}

// A line per platform when every one of its strategies failed for the same reason, else a line
// per candidate.
std::vector<std::string> not_ranked_lines(const ProcurementSetting& s) {
  std::map<std::string, std::vector<const Candidate*>> by_platform;
  for (const auto& e : s.entries)
    if (!e.candidate.eligible) by_platform[e.candidate.platform].push_back(&e.candidate);
  std::vector<std::string> out;
  for (const auto& [platform, cs] : by_platform) {
    size_t on_platform = 0;
    for (const auto& e : s.entries) on_platform += e.candidate.platform == platform;
    // Named, not captured: clang 14 (the sanitizer build) cannot capture a structured binding.
    const std::string& first_why = cs[0]->why_not;
    const bool same = std::all_of(cs.begin(), cs.end(),
                                  [&](const Candidate* c) { return c->why_not == first_why; });
    if (same && cs.size() == on_platform && cs.size() > 1) {
      out.push_back(platform + ", every strategy: " + cs[0]->why_not);
      continue;
    }
    for (const Candidate* c : cs) out.push_back(who(*c) + ": " + c->why_not);
  }
  return out;
}

std::vector<std::string> blank_lines(const ProcurementSetting& s) {
  std::map<std::string, std::vector<std::string>> where;  // "metric: reason" -> platforms
  for (const auto& e : s.entries) {
    if (!e.candidate.eligible) continue;
    for (M m : kMetrics)
      if (const Figure& f = e.candidate.figure(m); !f.value) {
        auto& list = where[std::string(kProcurementMetrics.name(m)) + " blank: " + f.blank_reason];
        if (std::find(list.begin(), list.end(), e.candidate.platform) == list.end())
          list.push_back(e.candidate.platform);
      }
  }
  std::vector<std::string> out;
  for (const auto& [reason, platforms] : where) {
    std::string p;
    for (const auto& x : platforms) p += (p.empty() ? "" : ", ") + x;
    out.push_back(reason + " (" + p + ")");
  }
  return out;
}

namespace {

// What a table of the top rows leaves out, counted: "\n12 more ranked rows, 40 candidates not
// ranked, 2 blank columns: `report --full` lists them.\n"; "" when nothing.
std::string left_out_line(const ProcurementSetting& s, const ProcurementOptions& o, size_t shown) {
  ProcurementOptions all = o;
  all.top_per_strategy = 0;
  const size_t ranked = procurement_table(s, all).rows();
  const size_t not_ranked = not_ranked_lines(s).size(), blanks = blank_lines(s).size();
  std::vector<std::string> parts;
  if (ranked > shown) parts.push_back(std::to_string(ranked - shown) + " more ranked row(s)");
  if (not_ranked > 0) parts.push_back(std::to_string(not_ranked) + " not ranked (line(s))");
  if (blanks > 0) parts.push_back(std::to_string(blanks) + " blank column reason(s)");
  if (parts.empty()) return "";
  std::string line = "\nTop " + std::to_string(o.top_per_strategy) + " platforms per strategy; ";
  for (size_t i = 0; i < parts.size(); ++i) line += (i ? ", " : "") + parts[i];
  return line + ": `report --full` lists them.\n";
}

}  // namespace

std::string procurement_markdown(const std::vector<ProcurementSetting>& settings,
                                 const ProcurementOptions& options) {
  std::string md =
      "## Procurement: platforms ranked per strategy\n\n"
      "Whole-model decode: ITL = layers x the layer step + the work outside the layers, tokens/s "
      "= batch / ITL, $/Mtok and tokens/s per W from each platform's economics (one "
      "accelerator's share of its node), the longest context and the largest batch from each "
      "strategy's own plan on the platform's memory (max context at this batch; what binds it). "
      "Ranked: strategies that ran, meet the accuracy target and fit the memory; the ablations "
      "of the system under study are left out. A lead within noise is named a tie.\n";
  if (settings.empty()) return md + "\nNo point to rank.\n";
  for (const auto& s : settings) {
    md += "\n### " + s.title + "\n\nFigures: ";
    for (size_t i = 0; i < s.provenances.size(); ++i) md += (i ? ", " : "") + s.provenances[i];
    md += "; target " + s.target + ".";
    for (const auto& u : s.model_uncertainty)
      md += " Modeled " + std::string(u.figure == "itl" ? "ITL" : "tokens/s") + " ± " +
            format_percent(u.rel) + " (" + u.source + ").";
    md += "\n\n";
    for (const auto& l : best_lines(s)) md += "- " + l + "\n";
    const TextTable t = procurement_table(s, options);
    if (t.rows() > 0) md += "\n" + t.markdown();
    if (options.top_per_strategy > 0) {
      md += left_out_line(s, options, t.rows());
      continue;
    }
    if (const auto nr = not_ranked_lines(s); !nr.empty()) {
      md += "\nNot ranked:\n\n";
      for (const auto& l : nr) md += "- " + l + "\n";
    }
    if (const auto bl = blank_lines(s); !bl.empty()) {
      md += "\nBlank columns:\n\n";
      for (const auto& l : bl) md += "- " + l + "\n";
    }
  }
  return md;
}

}  // namespace hb::reports
