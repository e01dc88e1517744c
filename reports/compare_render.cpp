#include "reports/compare_render.h"

#include <nlohmann/json.hpp>
#include <optional>

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

std::string joined(const std::vector<std::string>& parts, const char* sep) {
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : sep) + p;
  return s;
}

std::vector<std::string> reasons(const PointComparison& p, const CompareOptions& o) {
  std::vector<std::string> r;
  if (p.slowdown_regression) r.push_back("slower than --threshold " + format_percent(o.threshold));
  if (p.verdict == Verdict::failed) r.push_back("no longer runs");
  for (const auto& a : p.accuracy_regressions) r.push_back("accuracy: " + a);
  return r;
}

std::vector<PointAxes> all_axes(const CompareResult& r) {
  std::vector<PointAxes> v;
  for (const auto& p : r.points) v.push_back(p.axes);
  return v;
}

}  // namespace

std::string compare_table_text(const CompareResult& r) {
  using A = TextTable::Align;
  const AxesLabeler labels(all_axes(r));
  TextTable t;
  t.add_column("verdict");
  t.add_column("point");
  t.add_column("old median", A::right);
  t.add_column("new median", A::right);
  t.add_column("change", A::right);
  t.add_column("± noise", A::right);
  t.add_column("p", A::right);
  t.add_column("notes");
  for (const auto& p : r.points) {
    const bool timed = p.verdict <= Verdict::noisy;  // faster, slower, same, noisy
    std::vector<std::string> notes = reasons(p, r.options);
    notes.insert(notes.end(), p.notes.begin(), p.notes.end());
    t.add_row({std::string(verdict_name(p.verdict)) + (p.regression() ? " !" : ""),
               labels.label(p.axes), median_cell(p.old_status, p.old_step),
               median_cell(p.new_status, p.new_step), timed ? format_percent(p.change, true) : "",
               timed ? format_percent(p.change_rel_noise) : "",
               timed ? format_p_value(p.p_value) : "", joined(notes, "; ")});
  }
  std::string out;
  const std::string constants = labels.constants();
  if (!constants.empty()) out += "points: " + constants + "\n\n";
  out += t.plain();
  for (const auto& w : r.warnings) out += "warning: " + w + "\n";
  out += "\n" + std::to_string(r.points.size()) + " points:";
  for (auto v : {Verdict::faster, Verdict::slower, Verdict::same, Verdict::noisy, Verdict::failed,
                 Verdict::recovered, Verdict::untimed, Verdict::missing, Verdict::added})
    if (int n = r.count(v)) out += " " + std::to_string(n) + " " + verdict_name(v);
  out += " (U test alpha " + format_fixed(r.options.alpha, 3) + ", min effect " +
         format_percent(r.options.min_effect) + ", threshold " +
         format_percent(r.options.threshold) + ")\n";
  out += r.has_regression()
             ? "REGRESSION: " + std::to_string(r.regressions) + " point(s) marked '!'\n"
             : "OK: no regression\n";
  return out;
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
  json points = json::array();
  for (const auto& p : r.points) {
    const bool timed = p.verdict <= Verdict::noisy;
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
                      {"change_rel_noise", timed ? json(p.change_rel_noise) : json(nullptr)},
                      {"p_value", timed ? json(p.p_value) : json(nullptr)},
                      {"exact_test", p.exact_test}});
  }
  json counts = json::object();
  for (auto v : {Verdict::faster, Verdict::slower, Verdict::same, Verdict::noisy, Verdict::failed,
                 Verdict::recovered, Verdict::untimed, Verdict::missing, Verdict::added})
    counts[verdict_name(v)] = r.count(v);
  const auto& o = r.options;
  json j = {{"schema", "hybridbench.compare/1"},
            {"old", old_source},
            {"new", new_source},
            {"options",
             {{"threshold", o.threshold},
              {"alpha", o.alpha},
              {"min_effect", o.min_effect},
              {"max_noise_fraction", o.max_noise},
              {"rel_l2_rel_tolerance", o.rel_l2_rel_tolerance},
              {"rel_l2_abs_tolerance", o.rel_l2_abs_tolerance},
              {"mass_recall_tolerance", o.mass_recall_tolerance},
              {"needle_tolerance", o.needle_tolerance}}},
            {"regression", r.has_regression()},
            {"regressions", r.regressions},
            {"counts", counts},
            {"warnings", r.warnings},
            {"points", points}};
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace hb::reports
