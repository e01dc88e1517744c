#include "reports/summary.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>

#include "reports/accuracy_loss.h"
#include "reports/busy_machine.h"
#include "reports/convergence.h"
#include "reports/format.h"

namespace hb::reports {

bool within_noise(double ratio, double rel_noise) {
  return ratio > 0 && std::fabs(std::log(ratio)) <= 2 * rel_noise;
}

bool is_baseline(const ProcurementTable& t, const std::string& strategy) {
  return strategy != t.reference && t.role_of(strategy) == StrategyRole::baseline;
}

namespace {

std::string join_and(const std::vector<std::string>& items) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i)
    s += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return s;
}

std::string column_name(int64_t len, const std::string& host) {
  return format_tokens(len) + (host.empty() ? "" : " @ " + host);
}

// "1.52x ± 3.0% faster than full-gpu<note>", "1.25x ± 3.0% slower than quest<note>", or "as
// fast as quest<note> (1.02x ± 3.0%, within noise)" when the noise cannot separate them
// (Speedup::decided), "(1.03x ± 1.0%, within the 3.0% tie margin)" when it can but not by more
// than the run's --tie-margin (the headline then names a tie too).
std::string versus(const ProcurementTable& t, const Speedup& r, const std::string& other,
                   const std::string& note = "") {
  if (!r.noise_known())
    return "against " + other + note + ": " + format_ratio(r.ratio) +
           " on too few samples to know its noise (no verdict)";
  const std::string noise = ratio_uncertainty(t, r.provenance == Provenance::modeled, r.rel_noise);
  const std::string as_fast = "as fast as " + other + note + " (" + format_ratio(r.ratio) + noise;
  if (!r.decided()) return as_fast + ", within noise)";
  if (!r.decided(t.tie_margin))
    return as_fast + ", within the " + format_percent(t.tie_margin) + " tie margin)";
  if (r.ratio >= 1) return format_ratio(r.ratio) + noise + " faster than " + other + note;
  return format_ratio(1 / r.ratio) + noise + " slower than " + other + note;
}

// What an emulated run's figures can claim. On the cpu accelerator the layer's GEMMs run on the
// same CPU cores as the strategies' CPU side (about 80% of a 4k layer step on the 2-core VM, a
// small share on a GPU), so only attention scope times what the strategies differ in.
std::string emulated_sentence(const Report& r) {
  const std::string lead =
      "All figures are emulated: a stand-in (the CPU playing the GPU, or a "
      "memory tier playing another) ran them, so absolute times are the "
      "stand-in's, not the hardware's.";
  if (!r.context.accelerator.emulated) return lead;
  const auto scope = r.context.sweep.find("scope");
  if (scope == r.context.sweep.end()) return lead;
  if (scope->second == "attention")
    return lead +
           " Steps are timed at attention scope, what the strategies differ in (the "
           "default on an emulated accelerator, whose CPU threads would also run the "
           "layer's GEMMs; --scope layer times the whole layer).";
  return lead +
         " At layer scope the stand-in's CPU threads also ran the layer's GEMMs, most of "
         "each step here and a small part of it on a GPU, so the ratios understate the "
         "strategies' differences (--scope attention times what they differ in).";
}

std::string provenance_sentence(const Report& r) {
  std::set<Provenance> seen;
  for (const auto& p : r.points)
    if (p.timed()) seen.insert(p.provenance);
  if (seen.empty()) return "No point produced a timing, so there is nothing to compare.";
  if (seen.size() > 1) {
    std::vector<std::string> names;
    for (auto p : seen) names.push_back(to_string(p));
    return "The figures mix " + join_and(names) +
           " points; cells marked (e) are emulated, (m) modeled.";
  }
  switch (*seen.begin()) {
    case Provenance::measured:
      return "All figures are measured on this machine's hardware.";
    case Provenance::emulated:
      return emulated_sentence(r);
    case Provenance::modeled:
      return "All figures are modeled from a platform profile (model), not measured: "
             "they are predictions of the named platform.";
  }
  return "";
}

// What one column (length, host) found.
struct Finding {
  int64_t len;
  std::string host, winner;      // winner: "" when none, or when the leaders tie
  std::vector<std::string> tie;  // the leaders the noise cannot separate (two or more)
  std::string body;              // "2.00x ± 3% faster than full-gpu and ...", without the column
  bool same_answer(const Finding& o) const { return winner == o.winner && tie == o.tie; }
};

}  // namespace

std::string best_baseline(const ProcurementTable& t, int64_t len, const std::string& host,
                          const std::string& winner) {
  std::string best;
  double best_ns = 0;
  for (const auto& s : t.strategies) {
    const Point* p = t.at(s, len, host);
    if (s == winner || !is_baseline(t, s) || !p || !p->timed() || !t.target.met_by(*p)) continue;
    if (best.empty() || p->step.summary.median < best_ns)
      best = s, best_ns = p->step.summary.median;
  }
  return best;
}

namespace {

// Whether a baseline other than the reference and `winner` has a point at (len, host).
bool other_baseline_ran(const ProcurementTable& t, int64_t len, const std::string& host,
                        const std::string& winner) {
  for (const auto& s : t.strategies)
    if (s != winner && is_baseline(t, s) && t.at(s, len, host)) return true;
  return false;
}

// The winner against the reference and the best other baseline within target.
std::string winner_body(const ProcurementTable& t, const Finding& f) {
  const bool baseline_won = is_baseline(t, f.winner);
  std::string vs_ref, vs_base;
  bool ref_missing = false;
  if (f.winner == t.reference) {
    vs_ref = t.reference + " is the reference itself";
  } else if (const Point* ref = t.at(t.reference, f.len, f.host); ref && !ref->timed()) {
    vs_ref = t.reference + " is " + to_string(ref->status), ref_missing = true;
  } else if (const Speedup* r = t.speedup_entry(f.winner, t.reference, f.len, f.host)) {
    vs_ref = versus(t, *r, t.reference);
  }
  const std::string base = best_baseline(t, f.len, f.host, f.winner);
  const std::string other = baseline_won ? "other " : "";
  // The reference is a baseline too: once compared with, the rest are the "other" baselines, and
  // where it is the only one there is nothing to add ("3.61x faster than cpu-only and no
  // baseline meets the target" denied the reference it had just been compared with, issue 49).
  const bool ref_compared = !vs_ref.empty() && !ref_missing && f.winner != t.reference;
  if (!base.empty()) {
    if (const Speedup* r = t.speedup_entry(f.winner, base, f.len, f.host))
      vs_base = versus(t, *r, base, ", the best " + other + "baseline within target");
  } else if (!ref_compared || other_baseline_ran(t, f.len, f.host, f.winner)) {
    vs_base = std::string(baseline_won || ref_compared ? "no other " : "no ") +
              "baseline meets the target";
  }
  // A reference that did not run is said first; the comparison is then with the baseline only.
  std::string body = vs_ref.empty() || vs_base.empty()
                         ? vs_ref + vs_base
                         : vs_ref + (ref_missing ? "; " : " and ") + vs_base;
  // Where the system under study stands when it did not win (the question the run asks).
  for (const auto& s : t.strategies)
    if (const Point* p = t.at(s, f.len, f.host);
        p && p->role == StrategyRole::system && s != f.winner && s != base)
      if (const Speedup* r = t.speedup_entry(f.winner, s, f.len, f.host))
        body += "; " + versus(t, *r, s);
  return body;
}

// "; quest trails by 1.05x [1.01x, 1.11x], at the 5.0% tie margin: another run may name it in
// the tie" for each strategy ProcurementTable::at_margin names; "" when none.
std::string at_margin_clauses(const ProcurementTable& t, int64_t len, const std::string& host,
                              const std::string& fastest) {
  std::string out;
  for (const auto& s : t.at_margin(len, host))
    if (const Speedup* r = t.speedup_entry(fastest, s, len, host))
      out += "; " + s + " trails by " + format_ratio(r->ratio) + " [" + format_ratio(r->ci_low) +
             ", " + format_ratio(r->ci_high) + "], at the " + format_percent(t.tie_margin) +
             " tie margin: another run may name it in the tie";
  return out;
}

Finding find(const ProcurementTable& t, int64_t len, const std::string& host) {
  Finding f{len, host, "", {}, ""};
  const std::vector<std::string> leaders = t.leaders(len, host);
  if (leaders.empty()) {
    const std::string fastest = t.fastest(len, host);
    f.body = fastest.empty()
                 ? "no strategy ran"
                 : "the fastest, " + fastest + ", has " + accuracy_cell(t.at(fastest, len, host));
    return f;
  }
  if (leaders.size() > 1) {
    f.tie = leaders;
    std::sort(f.tie.begin(), f.tie.end());
    f.body = "the fastest, " + leaders[0] + ", is within noise" +
             (t.tie_margin > 0 ? " or the " + format_percent(t.tie_margin) + " tie margin" : "") +
             " of each" + at_margin_clauses(t, len, host, leaders[0]);
    return f;
  }
  f.winner = leaders[0];
  f.body = winner_body(t, f) + at_margin_clauses(t, len, host, leaders[0]);
  return f;
}

void table_sentences(const ProcurementTable& t, const std::string& prefix,
                     std::vector<std::string>& out) {
  const std::string target = t.target.describe();
  if (t.strategies.size() == 1) {
    std::vector<std::string> met;
    for (const auto& [len, host] : t.columns())
      if (const Point* p = t.at(t.strategies[0], len, host); p && t.target.met_by(*p))
        met.push_back(column_name(len, host));
    out.push_back(prefix + "Only " + t.strategies[0] +
                  " ran, so there is nothing to compare it with; it meets " + target + " " +
                  (met.empty() ? "at no length" : "at " + join_and(met)) + ".");
    return;
  }
  // Consecutive columns with the same answer share one sentence.
  std::vector<Finding> group;
  auto flush = [&] {
    if (group.empty()) return;
    std::vector<std::string> where, clauses;
    for (const auto& f : group) where.push_back(column_name(f.len, f.host));
    // One column: its findings follow the colon; several: each says which it is.
    for (const auto& f : group)
      clauses.push_back(group.size() == 1 ? f.body
                                          : "at " + column_name(f.len, f.host) + " " + f.body);
    std::string s;
    if (!group[0].tie.empty())
      s = "Tie within noise at " + join_and(where) + " among the strategies within " + target +
          ": " + join_and(group[0].tie) + "; ";
    else if (group[0].winner.empty())
      s = "No strategy meets " + target + " at " + join_and(where) + ": ";
    else
      s = group[0].winner + " is the fastest strategy within " + target + " at " +
          (group.size() == t.columns().size() && group.size() > 1 ? "every length"
                                                                  : join_and(where)) +
          ": ";
    std::string body;  // strategy names keep their case: they are what --strategy takes
    for (const auto& c : clauses) body += (body.empty() ? "" : "; ") + c;
    out.push_back(prefix + s + body + ".");
    group.clear();
  };
  for (const auto& [len, host] : t.columns()) {
    Finding f = find(t, len, host);
    if (!group.empty() && !group.back().same_answer(f)) flush();
    group.push_back(std::move(f));
  }
  flush();
}

// The system against its own ablations, at the longest length it ran: a section of its own, as
// the headline compares the system with the baselines and the reference only.
std::string ablation_sentence(const ProcurementTable& t, const std::string& prefix) {
  std::string system;
  std::vector<std::string> ablations;
  for (const auto& s : t.strategies)
    for (const auto& [len, host] : t.columns())
      if (const Point* p = t.at(s, len, host)) {
        if (p->role == StrategyRole::system) system = s;
        if (p->role == StrategyRole::ablation &&
            std::find(ablations.begin(), ablations.end(), s) == ablations.end())
          ablations.push_back(s);
      }
  if (system.empty() || ablations.empty()) return "";
  const auto columns = t.columns();  // by value: iterate one copy
  for (auto it = columns.rbegin(); it != columns.rend(); ++it) {
    const auto& [len, host] = *it;
    std::vector<std::string> clauses;
    for (const auto& a : ablations)
      if (const Speedup* r = t.speedup_entry(system, a, len, host))
        clauses.push_back(versus(t, *r, a));
    if (clauses.empty()) continue;
    return prefix + "Ablations (not in the headline) at " + column_name(len, host) + ": " + system +
           " is " + join_and(clauses) + ".";
  }
  return "";
}

std::string memory_sentence(const ProcurementTable& t, const std::string& prefix) {
  if (std::string b = kv_boundary_line(t); !b.empty()) return prefix + b;
  std::vector<std::string> oom;
  for (const auto& [len, host] : t.columns())
    if (const Point* p = t.at(t.reference, len, host); p && p->status == PointStatus::oom)
      oom.push_back(column_name(len, host));
  if (oom.empty()) return "";
  return prefix + t.reference + " runs out of accelerator memory (oom) at " + join_and(oom) + ".";
}

// "3 of 30 timed points are too noisy to judge ...", lower case, no full stop (it follows the
// provenance sentence).
std::string noise_clause(const Report& r) {
  const auto target = noise_target(r.context);
  const int min_samples = noise_min_samples(r.context);
  std::vector<std::string> noisy;
  size_t timed = 0, floors = 0;
  double spread_lo = 1e300, spread_hi = 0, known_lo = 1e300, known_hi = 0;
  for (const auto& p : r.points) {
    if (p.timed()) ++timed;
    if (!missed_noise_target(p, target, min_samples)) continue;
    const double noise = robust_rel_noise(p.step.summary);
    if (const auto f = noise_floor(p, target); f && f->at_floor && !noise_unknown(p, min_samples)) {
      ++floors;
      spread_lo = std::min(spread_lo, noise), spread_hi = std::max(spread_hi, noise);
      known_lo = std::min(known_lo, f->median_rel_half_width);
      known_hi = std::max(known_hi, f->median_rel_half_width);
      continue;
    }
    noisy.push_back(p.axes.strategy + " at " + format_tokens(p.axes.seq_len) + " (" +
                    (noise_unknown(p, min_samples) ? "noise " + noise_text(p, min_samples)
                                                   : format_percent(noise)) +
                    ")");
  }
  if (timed == 0) return "";
  const std::string goal =
      target ? "the " + format_percent(*target) + " noise target" : std::string("its noise rule");
  if (noisy.empty() && floors == 0) return "every timed point settled within " + goal;
  std::string clause = std::to_string(noisy.size() + floors) + " of " + std::to_string(timed) +
                       " timed points stopped before " + goal + ": ";
  if (floors > 0)
    clause += std::to_string(floors) + " at this machine's own step-to-step spread (" +
              format_percent(spread_lo) + "-" + format_percent(spread_hi) +
              ", as large in the first half of their rounds as in the second, so more samples "
              "would not lower it; their medians are known to ±" +
              format_percent(known_lo) + "-" + format_percent(known_hi) +
              " and the speedups rest on paired rounds)";
  if (!noisy.empty()) {
    constexpr size_t kListed = 4;
    std::string list;
    for (size_t i = 0; i < std::min(noisy.size(), kListed); ++i) list += (i ? ", " : "") + noisy[i];
    if (noisy.size() > kListed) list += " and " + std::to_string(noisy.size() - kListed) + " more";
    clause += std::string(floors > 0 ? "; " : "") + std::to_string(noisy.size()) +
              " too noisy to judge: " + list;
  }
  return clause + " (each is listed with its fix under the summary)";
}

}  // namespace

std::string kv_budget_sentence(const Report& r) {
  const std::string prefix = "accelerator_kv_budget_bytes.";
  std::vector<std::string> parts;
  for (const auto& [k, v] : r.context.sweep) {
    if (k.rfind(prefix, 0) != 0) continue;
    char* end = nullptr;
    const double bytes = std::strtod(v.c_str(), &end);
    std::string rule = end ? std::string(end) : "";
    if (rule.size() >= 3 && rule[0] == ' ' && rule[1] == '(')
      rule = rule.substr(2, rule.size() - 3);
    parts.push_back(format_bytes(bytes) + " of KV per layer for " + k.substr(prefix.size()) +
                    (rule.empty() ? "" : " (" + rule + ")"));
  }
  if (parts.empty()) {
    auto it = r.context.sweep.find("accelerator_capacity_bytes");
    if (it == r.context.sweep.end() || std::strtod(it->second.c_str(), nullptr) <= 0) return "";
    return "KV budget: " + format_bytes(std::strtod(it->second.c_str(), nullptr)) +
           " of accelerator memory per layer, as --accelerator-memory set it.";
  }
  const bool emulated = r.context.accelerator.emulated;
  return "KV budget: " + join_and(parts) +
         (emulated ? ", so the sweep crosses the point where the KV stops fitting" : "") +
         "; --accelerator-memory sets it. Every strategy gets the same budget.";
}

std::vector<std::string> summary_sentences(const Report& report, const TableOptions& options) {
  const auto tables = procurement_tables(report, options);
  if (tables.empty()) return {"The report has no points."};
  // What the figures are and how settled they are open the summary together, so a run with
  // three lengths that each have their own winner still says it in five sentences.
  std::string first = provenance_sentence(report);
  if (std::string n = noise_clause(report); !n.empty() && !first.empty())
    first.back() = ';', first += " " + n + ".";
  std::vector<std::string> out = {first};
  if (std::string busy = busy_machine_warning(report); !busy.empty()) {
    busy[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(busy[0])));
    out.push_back(busy + ".");
  }
  for (const auto& t : tables) {
    const std::string prefix = tables.size() > 1 ? "In " + t.title + ": " : "";
    table_sentences(t, prefix, out);
    if (std::string m = memory_sentence(t, prefix); !m.empty()) out.push_back(std::move(m));
    if (std::string b = kv_budget_sentence(report); !b.empty() && &t == &tables.front())
      out.push_back(std::move(b));
    if (std::string a = ablation_sentence(t, prefix); !a.empty()) out.push_back(std::move(a));
  }
  if (std::string lost = accuracy_loss_sentence(report); !lost.empty())
    out.push_back(std::move(lost));
  return out;
}

}  // namespace hb::reports
