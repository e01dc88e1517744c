#include "reports/first_screen.h"

#include <algorithm>
#include <cmath>

#include "reports/format.h"
#include "reports/procurement_markdown.h"
#include "reports/procurement_rank.h"
#include "reports/summary.h"
#include "reports/text_table.h"

namespace hb::reports {

using M = ProcurementMetric;

const ProcurementSetting* headline_setting(const std::vector<ProcurementSetting>& settings) {
  for (auto it = settings.rbegin(); it != settings.rend(); ++it)
    if (!rank_on(it->candidates(), M::tokens_per_s).leaders.empty()) return &*it;
  return nullptr;
}

namespace {

// "most tokens/s: ..." from best_lines' "Most tokens/s: ...".
std::string lowered(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

}  // namespace

FirstScreen procurement_first_screen(const std::vector<ProcurementSetting>& settings) {
  FirstScreen f;
  const ProcurementSetting* s = headline_setting(settings);
  if (!s) return f;
  const auto lines = best_lines(*s);  // in ProcurementMetric's order
  f.headline = *s;
  f.answer.push_back("At " + s->title + " (" + s->target +
                     "): " + lowered(lines[static_cast<size_t>(M::tokens_per_s)]));
  f.answer.push_back(lines[static_cast<size_t>(M::cost)]);
  std::string prov, platforms;
  for (const auto& p : s->provenances) prov += (prov.empty() ? "" : ", ") + p;
  f.answer.push_back("Figures " + prov + "; " + std::to_string(settings.size()) +
                     " setting(s) of " + std::to_string(s->platforms.size()) + " platforms below.");
  return f;
}

FirstScreen first_screen(const Report& report, const TableOptions& options) {
  // A fleet's report is about its ranks (which finished, which failed and why): it opens with
  // its summary and keeps every section, as over one platform.
  if (report_platforms(report).size() > 1 && report.context.hosts.empty()) {
    FirstScreen f = procurement_first_screen(procurement_settings({&report}, {options.itl_slo_ns}));
    if (!f.answer.empty()) return f;
  }
  FirstScreen f;
  f.answer = summary_sentences(report, options);
  if (f.answer.size() > 3) f.answer.resize(3);
  return f;
}

std::string text_bar(double value, double max, int width) {
  const int n = max > 0 ? static_cast<int>(std::lround(width * value / max)) : 0;
  std::string bar;
  for (int i = 0; i < std::clamp(n, 1, width); ++i) bar += "█";
  return bar;
}

std::string tokens_bars_markdown(const ProcurementSetting& s) {
  struct Bar {
    std::string platform, strategy;
    double value;
  };
  std::vector<Bar> bars;
  std::vector<std::string> none;
  const std::vector<Candidate> cs = s.candidates();
  for (const auto& platform : s.platforms) {
    const Candidate* best = nullptr;
    for (const auto& c : cs)
      if (c.platform == platform && c.eligible && c.figure(M::tokens_per_s).value &&
          (!best || *c.figure(M::tokens_per_s).value > *best->figure(M::tokens_per_s).value))
        best = &c;
    if (best)
      bars.push_back({platform, best->strategy, *best->figure(M::tokens_per_s).value});
    else
      none.push_back(platform);
  }
  std::stable_sort(bars.begin(), bars.end(),
                   [](const Bar& a, const Bar& b) { return a.value > b.value; });
  size_t name_width = 0;
  for (const auto& b : bars) name_width = std::max(name_width, b.platform.size());
  std::string md = "Tokens/s at " + s.title + ", each platform's best strategy within " + s.target +
                   ":\n\n```text\n";
  for (const auto& b : bars) {
    const std::string bar = text_bar(b.value, bars.front().value, 40);
    md += b.platform + std::string(name_width - b.platform.size() + 1, ' ') + bar + " " +
          metric_text(M::tokens_per_s, b.value) + " (" + b.strategy + ")\n";
  }
  if (bars.empty()) md += "no platform has a ranked tokens/s here\n";
  md += "```\n";
  if (!none.empty()) {
    md += "\nNo bar (nothing that fits and meets the target): ";
    for (size_t i = 0; i < none.size(); ++i) md += (i ? ", " : "") + none[i];
    md += ".\n";
  }
  return md;
}

}  // namespace hb::reports

namespace hb::reports {

TextTable assumptions_table(const ReportContext& c, bool full) {
  TextTable t;
  if (full) {
    t.add_column("platform");
    t.add_column("figure");
    t.add_column("value (source, date)");
    std::string last;
    for (const auto& a : c.assumptions)
      t.add_row({a.platform == last ? "" : a.platform, a.figure, a.text}), last = a.platform;
    return t;
  }
  // One row per platform, a column per figure, the value alone (the text up to its source).
  std::vector<std::string> figures, platforms;
  for (const auto& a : c.assumptions) {
    if (std::find(figures.begin(), figures.end(), a.figure) == figures.end())
      figures.push_back(a.figure);
    if (std::find(platforms.begin(), platforms.end(), a.platform) == platforms.end())
      platforms.push_back(a.platform);
  }
  t.add_column("platform");
  for (const auto& f : figures) t.add_column(f, TextTable::Align::right);
  for (const auto& p : platforms) {
    std::vector<std::string> row = {p};
    for (const auto& f : figures) {
      std::string cell = "-";
      for (const auto& a : c.assumptions)
        if (a.platform == p && a.figure == f) cell = a.text.substr(0, a.text.find(" ("));
      row.push_back(cell);
    }
    t.add_row(std::move(row));
  }
  return t;
}

std::string assumptions_markdown(const ReportContext& c, bool full) {
  if (c.assumptions.empty()) return "";
  return "## Assumptions: each platform's price, power and bandwidth\n\n"
         "As the platform profiles give them (model/profiles/), with their sources and dates" +
         std::string(full ? "" : " under `--full`") + ".\n\n" +
         assumptions_table(c, full).markdown();
}

}  // namespace hb::reports
