#include "reports/compare_render.h"

#include <cmath>
#include <initializer_list>
#include <optional>

#include <nlohmann/json.hpp>

#include "reports/format.h"
#include "reports/labels.h"
#include "reports/text_table.h"

namespace hb::reports {

namespace {

std::string median_cell(std::optional<PointStatus> status, const SampleSummary& s) {
  if (!status) return "-";
  if (*status != PointStatus::ok || s.count == 0) return to_string(*status);
  return format_duration_ns(s.median);
}

std::vector<std::string> reasons(const PointComparison& p, const CompareOptions& o) {
  std::vector<std::string> r;
  if (p.slowdown_regression) r.push_back("slower than --threshold " + format_percent(o.threshold));
  if (p.verdict == Verdict::failed) r.push_back("no longer runs");
  for (const auto& a : p.accuracy_regressions) r.push_back("accuracy: " + a);
  for (const auto& b : p.behaviour_changes) r.push_back("behaviour changed: " + b);
  return r;
}

bool scored(const Accuracy& a) { return a.steps_scored > 0; }

// The summary line's verdict counts, in a fixed order.
std::string counts_text(const CompareResult& r) {
  std::string out;
  for (auto v : kAllVerdicts)
    if (int n = r.count(v)) out += " " + std::to_string(n) + " " + verdict_name(v);
  return out;
}

// "7 of 21 timed points not judged: 5 NOISY, 2 INCONCLUSIVE", or "" when all were judged: a CI
// log must show how much of "no regression" rests on points nobody could judge.
std::string unjudged_text(const CompareResult& r) {
  const int n = r.unjudged();
  if (n == 0) return "";
  std::string kinds;
  for (auto v : {Verdict::noisy, Verdict::inconclusive})
    if (const int k = r.count(v))
      kinds += (kinds.empty() ? "" : ", ") + std::to_string(k) + " " + verdict_name(v);
  return std::to_string(n) + " of " + std::to_string(r.timed_pairs()) +
         " timed points not judged: " + kinds;
}

// " (7 of 21 ...)" or "".
std::string unjudged_aside(const CompareResult& r) {
  const std::string u = unjudged_text(r);
  return u.empty() ? "" : " (" + u + ")";
}

// The verdict rules as this comparison applied them, with how many points each basis judged, so
// the markdown footer states what its table shows.
std::string verdict_rules_text(const CompareResult& r) {
  const CompareOptions& o = r.options;
  int rounds = 0, one_round = 0, against_group = 0, against_control = 0;
  for (const auto& p : r.points)
    if (is_timed(p.verdict)) {
      ++(p.single_pass ? one_round : rounds);
      against_group += p.against_group;
      against_control += p.against_control;
    }
  return "SAME when |delta| < min effect " + format_percent(o.min_effect) +
         ", whatever the noise; otherwise a Mann-Whitney U test (alpha " +
         format_fixed(o.alpha, 3) + ") on the round medians where both sides have >= 2 rounds (" +
         std::to_string(rounds) + " point(s)), else on the medians of " +
         std::to_string(kRoundBlocks) + " blocks of consecutive steps a side (" +
         std::to_string(one_round) + " point(s) with one round). With rounds, a group of >= " +
         std::to_string(kMinGroupForShift) + " strategies that moved as a whole by less than " +
         format_percent(o.group_drift) +
         " (machine drift) has each point judged against that move (" +
         std::to_string(against_group) +
         " point(s)); with the machine control in their rounds on both sides, a point's round "
         "medians over the control's are tested instead (" +
         std::to_string(against_control) +
         " point(s)), so a machine that moved as a whole fails nothing. Not significant: NOISY. "
         "Significant with rounds: FASTER / SLOWER. "
         "Significant with one round: NOISY when noisier than " +
         format_percent(o.max_noise) + " and not beyond 3x the noise, INCONCLUSIVE within the " +
         format_percent(o.drift_allowance) +
         " drift allowance, else FASTER / SLOWER. A slowdown beyond " +
         format_percent(o.threshold) + " fails";
}

// A table with these columns; a header ending in '>' is right-aligned (the '>' dropped).
TextTable table_of(std::initializer_list<std::string> headers) {
  TextTable t;
  for (const auto& h : headers)
    if (!h.empty() && h.back() == '>')
      t.add_column(h.substr(0, h.size() - 1), TextTable::Align::right);
    else
      t.add_column(h);
  return t;
}

const char* outcome_name(CompareResult::Outcome o) {
  switch (o) {
    case CompareResult::Outcome::regression:
      return "regression";
    case CompareResult::Outcome::unjudged:
      return "unjudged";
    case CompareResult::Outcome::ok:
      break;
  }
  return "ok";
}

std::vector<PointAxes> all_axes(const CompareResult& r) {
  std::vector<PointAxes> v;
  for (const auto& p : r.points) v.push_back(p.axes);
  return v;
}

// Whether the runs give the same answer, one line each (none when nothing is in both).
std::vector<std::string> agreement_lines(const CompareResult& r) {
  std::vector<std::string> lines;
  const std::string headline = headline_agreement_text(r.agreement);
  if (!headline.empty())
    lines.push_back("headline (fastest within " + r.target.describe() + "): " + headline);
  const std::string speedups = speedup_agreement_text(r.agreement.speedups);
  if (!speedups.empty()) lines.push_back("speedups: " + speedups);
  return lines;
}

nlohmann::ordered_json agreement_json(const RunAgreement& a) {
  using json = nlohmann::ordered_json;
  json columns = json::array();
  for (const auto& c : a.headline)
    columns.push_back({{"setting", c.setting},
                       {"seq_len", c.seq_len},
                       {"host", c.host},
                       {"old", c.old_leaders},
                       {"new", c.new_leaders},
                       {"old_at_margin", c.old_at_margin},
                       {"new_at_margin", c.new_at_margin},
                       {"same", c.same()},
                       {"same_but_margin", c.same_but_margin()}});
  const SpeedupAgreement& s = a.speedups;
  return {{"headline", columns},
          {"headline_changes", a.headline_changes()},
          {"margin_moves", a.margin_moves()},
          {"speedups",
           {{"pairs", s.pairs},
            {"inside_both", s.inside_both},
            {"consistent", s.consistent},
            {"opposite", s.opposite},
            {"opposite_pairs", s.opposite_names}}}};
}

}  // namespace

std::string compare_table_text(const CompareResult& r) {
  const AxesLabeler labels(all_axes(r));
  TextTable t = table_of(
      {"verdict", "point", "old median>", "new median>", "change>", "± noise>", "p>", "notes"});
  for (const auto& p : r.points) {
    const bool timed = is_timed(p.verdict);
    std::vector<std::string> notes = reasons(p, r.options);
    notes.insert(notes.end(), p.notes.begin(), p.notes.end());
    t.add_row({std::string(verdict_name(p.verdict)) + (p.regression() ? " !" : ""),
               labels.label(p.axes), median_cell(p.old_status, p.old_step),
               median_cell(p.new_status, p.new_step), timed ? format_percent(p.change, true) : "",
               timed ? format_percent(p.change_rel_noise) : "",
               timed ? format_p_value(p.p_value) : "", format_list(notes, "; ")});
  }
  std::string out;
  const std::string constants = labels.constants();
  if (!constants.empty()) out += "points: " + constants + "\n\n";
  out += t.plain();
  for (const auto& w : r.warnings) out += "warning: " + w + "\n";
  out += "\n" + std::to_string(r.points.size()) + " points:" + counts_text(r);
  out += " (U test alpha " + format_fixed(r.options.alpha, 3) + ", min effect " +
         format_percent(r.options.min_effect) + ", threshold " +
         format_percent(r.options.threshold) + ")\n";
  for (const auto& line : agreement_lines(r)) out += line + "\n";
  return out + compare_verdict_line(r) + "\n";
}

std::string compare_verdict_line(const CompareResult& r) {
  switch (r.outcome()) {
    case CompareResult::Outcome::regression:
      return "REGRESSION: " + std::to_string(r.regressions) + " point(s) marked '!'" +
             unjudged_aside(r);
    case CompareResult::Outcome::unjudged:
      return "UNJUDGED: " + unjudged_text(r) + " (--fail-unjudged)";
    case CompareResult::Outcome::ok:
      break;
  }
  return "OK: no regression" + unjudged_aside(r);
}

std::string accuracy_delta_text(const PointComparison& p) {
  const Accuracy &a = p.old_accuracy, &b = p.new_accuracy;
  if (!scored(a) || !scored(b)) {
    if (scored(a)) return "not scored in new";
    if (scored(b)) return "not scored in base";
    return "";
  }
  std::vector<std::string> parts;
  if (std::isfinite(a.mass_recall) || std::isfinite(b.mass_recall))
    parts.push_back("recall " + format_percent(a.mass_recall) + " -> " +
                    format_percent(b.mass_recall) + " (" +
                    format_fixed(100 * (b.mass_recall - a.mass_recall), 1) + " pt)");
  if (std::isfinite(a.cosine) || std::isfinite(b.cosine))
    parts.push_back("cosine " + format_fixed(a.cosine, 4) + " -> " + format_fixed(b.cosine, 4));
  if (a.has_needle() && b.has_needle())
    parts.push_back("needle " + format_percent(a.needle_success_rate) + " -> " +
                    format_percent(b.needle_success_rate));
  return format_list(parts, ", ");
}

std::string compare_markdown_text(const CompareResult& r) {
  const AxesLabeler labels(all_axes(r));
  std::string md = "### hybridbench compare: ";
  switch (r.outcome()) {
    case CompareResult::Outcome::regression:
      md += "REGRESSION in " + std::to_string(r.regressions) + " point(s)" + unjudged_aside(r);
      break;
    case CompareResult::Outcome::unjudged:
      md += "UNJUDGED: " + unjudged_text(r);
      break;
    case CompareResult::Outcome::ok:
      md += "no regression" + unjudged_aside(r);
  }
  md += "\n\n";
  const std::string constants = labels.constants();
  if (!constants.empty()) md += "Points: " + constants + ".\n\n";
  TextTable t =
      table_of({"strategy", "point", "base>", "new>", "delta>", "verdict", "accuracy delta"});
  std::vector<const PointComparison*> missing, added;
  for (const auto& p : r.points) {
    if (p.verdict == Verdict::missing || p.verdict == Verdict::added) {
      (p.verdict == Verdict::missing ? missing : added).push_back(&p);
      continue;
    }
    const bool timed = is_timed(p.verdict);
    // The label names the strategy first; the point column is the rest ("-" when only the
    // strategy varies).
    std::string point = labels.label(p.axes).substr(p.axes.strategy.size());
    if (!point.empty() && point[0] == ' ') point.erase(0, 1);
    std::vector<std::string> why = reasons(p, r.options);
    std::string accuracy = accuracy_delta_text(p);
    for (const auto& w : why)
      if (w.rfind("accuracy: ", 0) == 0)
        accuracy += (accuracy.empty() ? "" : "; ") + std::string("**") + w.substr(10) + "**";
    t.add_row(
        {p.axes.strategy, point.empty() ? "-" : point, median_cell(p.old_status, p.old_step),
         median_cell(p.new_status, p.new_step),
         timed ? format_percent(p.change, true) + " ± " + format_percent(p.change_rel_noise) : "",
         std::string(verdict_name(p.verdict)) + (p.regression() ? " ❗" : ""), accuracy});
  }
  const GeoMean& g = r.geomean;
  t.add_row({"**geomean**", std::to_string(g.n) + " timed point(s)", "", "",
             g.n ? format_percent(g.ratio - 1, true) + " ± " + format_percent(g.rel_noise) : "n/a",
             g.n ? verdict_name(g.verdict) : "-", ""});
  md += t.markdown();
  md +=
      "\n*delta*: new median / base median - 1, ± both runs' robust noise (IQR / 1.349 "
      "median) in quadrature. *verdict*: " +
      verdict_rules_text(r) +
      ". *geomean*: the geometric mean of new/base over the timed points, SAME under the min "
      "effect, FASTER/SLOWER beyond twice its noise, else NOISY; informational, the exit status "
      "is judged point by point. Accuracy target: " +
      r.target.describe() + " (a point that met it in base and misses it in new fails).\n";
  if (!missing.empty() || !added.empty()) {
    std::string counts;
    if (!missing.empty()) counts = std::to_string(missing.size()) + " MISSING (base only)";
    if (!added.empty())
      counts += (counts.empty() ? "" : ", ") + std::to_string(added.size()) + " NEW (new only)";
    md += "\n<details><summary>" + counts + "</summary>\n\n";
    for (const auto* p : missing) md += "- MISSING: `" + benchmark_name(p->axes) + "`\n";
    for (const auto* p : added) md += "- NEW: `" + benchmark_name(p->axes) + "`\n";
    md += "\n</details>\n";
  }
  if (!r.warnings.empty()) {
    md += "\n";
    for (const auto& w : r.warnings) md += "> warning: " + w + "\n";
  }
  md += "\n" + std::to_string(r.points.size()) + " points:" + counts_text(r) + "\n";
  for (const auto& line : agreement_lines(r)) md += "\n" + line + "\n";
  return md;
}

std::string compare_json_text(const CompareResult& r, const std::string& old_source,
                              const std::string& new_source) {
  using json = nlohmann::ordered_json;
  auto summary = [](std::optional<PointStatus> status, const SampleSummary& s) -> json {
    if (status != PointStatus::ok || s.count == 0) return nullptr;
    return {{"median_ns", s.median},
            {"rel_stdev", s.rel_stdev()},
            {"robust_rel_noise", robust_rel_noise(s)},
            {"count", s.count}};
  };
  // Headline accuracy of one side (null: not scored); NaN figures are null too.
  auto accuracy = [](const Accuracy& a) -> json {
    if (!scored(a)) return nullptr;
    auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
    return {{"mass_recall", num(a.mass_recall)},
            {"cosine", num(a.cosine)},
            {"needle_success_rate", a.has_needle() ? num(a.needle_success_rate) : json(nullptr)}};
  };
  json points = json::array();
  for (const auto& p : r.points) {
    const bool timed = is_timed(p.verdict), relative = p.against_group || p.against_control;
    points.push_back({{"name", benchmark_name(p.axes)},
                      {"verdict", verdict_name(p.verdict)},
                      {"regression", p.regression()},
                      {"reasons", reasons(p, r.options)},
                      {"notes", p.notes},
                      {"old_status", p.old_status ? json(to_string(*p.old_status)) : json(nullptr)},
                      {"new_status", p.new_status ? json(to_string(*p.new_status)) : json(nullptr)},
                      {"old", summary(p.old_status, p.old_step)},
                      {"new", summary(p.new_status, p.new_step)},
                      {"change", timed ? json(p.change) : json(nullptr)},
                      {"group_shift", p.against_group ? json(p.group_shift) : json(nullptr)},
                      {"judged_change", relative ? json(p.judged_change) : json(nullptr)},
                      {"control_shift", p.against_control ? json(p.control_shift) : json(nullptr)},
                      {"change_rel_noise", timed ? json(p.change_rel_noise) : json(nullptr)},
                      {"p_value", timed ? json(p.p_value) : json(nullptr)},
                      {"exact_test", p.exact_test},
                      {"single_pass", p.single_pass},
                      {"medians_tested", {p.old_medians, p.new_medians}},
                      {"old_accuracy", accuracy(p.old_accuracy)},
                      {"new_accuracy", accuracy(p.new_accuracy)}});
  }
  json counts = json::object();
  for (auto v : kAllVerdicts) counts[verdict_name(v)] = r.count(v);
  const auto& o = r.options;
  json j = {
      {"schema", "hybridbench.compare/1"},
      {"old", old_source},
      {"new", new_source},
      {"options",
       {{"threshold", o.threshold},
        {"alpha", o.alpha},
        {"min_effect", o.min_effect},
        {"max_noise_fraction", o.max_noise},
        {"drift_allowance",
         std::isinf(o.drift_allowance) ? json(nullptr) : json(o.drift_allowance)},
        {"group_drift", o.group_drift},
        {"fail_unjudged", o.fail_unjudged},
        {"rel_l2_rel_tolerance", o.rel_l2_rel_tolerance},
        {"rel_l2_abs_tolerance", o.rel_l2_abs_tolerance},
        {"mass_recall_tolerance", o.mass_recall_tolerance},
        {"needle_tolerance", o.needle_tolerance}}},
      {"regression", r.has_regression()},
      {"regressions", r.regressions},
      {"outcome", outcome_name(r.outcome())},
      {"timed_points", r.timed_pairs()},
      {"unjudged", r.unjudged()},
      {"counts", counts},
      {"accuracy_target", r.target.text()},
      {"geomean",
       {{"points", r.geomean.n},
        {"ratio", r.geomean.n ? json(r.geomean.ratio) : json(nullptr)},
        {"rel_noise", r.geomean.n ? json(r.geomean.rel_noise) : json(nullptr)},
        {"verdict", r.geomean.n ? json(verdict_name(r.geomean.verdict)) : json(nullptr)}}},
      {"deciding_command", r.deciding_command.empty() ? json(nullptr) : json(r.deciding_command)},
      {"warnings", r.warnings},
      {"agreement", agreement_json(r.agreement)},
      {"points", points}};
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace hb::reports
