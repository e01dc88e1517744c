#include "reports/point_table.h"

#include <algorithm>
#include <cstdio>

#include "reports/convergence.h"
#include "reports/format.h"
#include "reports/tables.h"

namespace hb::reports {

namespace {

// The optional columns, each shown when some point has it.
struct Columns {
  bool budget = false, fit = false, modeled = false, needle = false, captured = false;
  bool fleet = false;
};

Columns columns_of(const Report& r) {
  const auto any = [&](auto pred) { return std::any_of(r.points.begin(), r.points.end(), pred); };
  Columns c;
  c.budget = any([](const Point& p) { return p.axes.extra.count("kv_budget") > 0; });
  // How much of the point's KV the accelerator's budget holds: where "all" turns into a share,
  // the KV stops fitting.
  c.fit = any([](const Point& p) { return p.kv_fit_fraction.has_value(); });
  c.modeled = any([](const Point& p) { return p.modeled.present(); });
  c.needle =
      any([](const Point& p) { return p.accuracy.steps_scored > 0 && p.accuracy.has_needle(); });
  // A trace with the traced model's own outputs: rel L2 against them (exact strategies ~0).
  c.captured =
      any([](const Point& p) { return p.accuracy.steps_scored > 0 && p.accuracy.captured_rel_l2; });
  c.fleet = !r.context.hosts.empty();  // the same point can come from several hosts
  return c;
}

void add_columns(TextTable& t, const Columns& c) {
  using A = TextTable::Align;
  for (const char* h : {"strategy", "seq_len", "batch"}) t.add_column(h);
  if (c.budget) t.add_column("budget", A::right);
  if (c.fit) t.add_column("kv fit", A::right);
  t.add_column("median", A::right);
  t.add_column("noise", A::right);
  if (c.modeled) t.add_column("modeled (err)", A::right);
  // Headline accuracy (reports/README.md): mass recall, cosine, needle where planted; rel_l2 is
  // in the JSON.
  t.add_column("recall", A::right);
  t.add_column("cosine", A::right);
  if (c.needle) t.add_column("needle", A::right);
  if (c.captured) t.add_column("vs trace o", A::right);
  t.add_column("attended", A::right);  // tokens per step and query head: mean (min-max)
  t.add_column("figures");
  if (c.fleet) t.add_column("ran on");
}

// The cells from "median" to "figures" of a point that timed.
void add_timed_cells(std::vector<std::string>& row, const Point& p, const Columns& c,
                     const Report& r) {
  row.push_back(format_duration_ns(p.step.summary.median));
  const int min_samples = noise_min_samples(r.context);
  row.push_back(
      noise_text(p, min_samples) +
      (missed_noise_target(p, noise_target(r.context), min_samples) ? kUnconvergedMark : ""));
  if (c.modeled)
    row.push_back(p.modeled.present() ? format_duration_ns(p.modeled.step.summary.median) + " (" +
                                            format_percent(p.modeled.error_vs_measured, true) + ")"
                                      : "-");
  const bool scored = p.accuracy.steps_scored > 0;
  row.push_back(scored ? format_percent(p.accuracy.mass_recall) : "-");
  char cosine[32];
  std::snprintf(cosine, sizeof cosine, "%.4f", p.accuracy.cosine);
  row.push_back(scored ? cosine : "-");
  if (c.needle)
    row.push_back(scored && p.accuracy.has_needle() ? format_percent(p.accuracy.needle_success_rate)
                                                    : "-");
  if (c.captured) {
    char rel[32] = "-";
    if (scored && p.accuracy.captured_rel_l2)
      std::snprintf(rel, sizeof rel, "%.1e", *p.accuracy.captured_rel_l2);
    row.push_back(rel);
  }
  row.push_back(attended_cell(p.attended_tokens));
  row.push_back(to_string(p.provenance));
}

std::vector<std::string> row_of(const Point& p, const Columns& c, const Report& r) {
  std::vector<std::string> row = {p.axes.strategy, format_tokens(p.axes.seq_len),
                                  std::to_string(p.axes.batch)};
  if (c.budget) {
    const auto it = p.axes.extra.find("kv_budget");
    row.push_back(it != p.axes.extra.end() ? it->second : "-");
  }
  if (c.fit) row.push_back(kv_fit_cell(p.kv_fit_fraction));
  if (p.timed()) {
    add_timed_cells(row, p, c, r);
  } else {
    row.insert(row.end(), {"-", "-"});
    if (c.modeled) row.push_back("-");
    row.insert(row.end(), {"-", "-", "-"});
    if (c.needle) row.push_back("-");
    if (c.captured) row.push_back("-");
    row.push_back(status_cell(p));
  }
  if (c.fleet) row.push_back(p.ran_on.host);
  return row;
}

}  // namespace

TextTable point_table(const Report& r) {
  const Columns c = columns_of(r);
  TextTable t;
  add_columns(t, c);
  for (const auto& p : r.points) t.add_row(row_of(p, c, r));
  return t;
}

std::vector<std::string> fastest_within_target_lines(const Report& r) {
  std::vector<std::string> out;
  // Per setting and length, what the noise lets the headline claim within the accuracy target:
  // one winner, or the tie of every strategy it cannot separate from the fastest.
  for (const auto& pt : procurement_tables(r)) {
    std::string line;
    for (const auto& [len, host] : pt.columns()) {
      if (pt.fastest(len, host).empty()) continue;
      line += (line.empty() ? "" : "; ") + format_tokens(len) + (host.empty() ? "" : " @ " + host) +
              " " + leaders_text(pt.leaders(len, host), pt.at_margin(len, host));
    }
    const std::string margin =
        pt.tie_margin > 0
            ? ", or that trails it by less than the " + format_percent(pt.tie_margin) +
                  " tie margin; \"at the margin\": trails by more, but its interval reaches into "
                  "the margin"
            : "";
    if (!line.empty())
      out.push_back("fastest within " + pt.target.describe() +
                    " per length (ablations aside; a tie lists every strategy the 95% intervals "
                    "cannot separate from the fastest" +
                    margin + "): " + line);
  }
  return out;
}

}  // namespace hb::reports
