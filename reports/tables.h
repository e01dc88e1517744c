#pragma once
// The "procurement table": for each setting (model, batch, dtype, workload, accelerator, ...),
// strategies x sequence lengths with step time, speedup against a reference strategy, and
// accuracy. One model of it feeds the markdown, the CSV and the HTML, so they never disagree.
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "reports/accuracy_target.h"
#include "reports/report.h"
#include "reports/text_table.h"

namespace hb::reports {

// Platforms per strategy in the procurement tables of a report without --full.
inline constexpr int kTopPlatformsPerStrategy = 2;

struct TableOptions {
  // Strategy the speedups are relative to; empty: "full-gpu" when the report has it (the
  // everything-in-accelerator-memory ideal), otherwise the first strategy by name.
  std::string reference;
  // report --itl-slo: the procurement view's largest batch whose ITL stays under it (ns).
  std::optional<double> itl_slo_ns;
  // report --full: every section; without it a report over several platforms is its first
  // screen and the procurement view's top rows (reports/first_screen.h).
  bool full = false;
};

struct ProcurementTable {
  std::string
      setting_key;    // PointAxes::group_key() with seq_len = 0 and no host: what the rows share
  std::string title;  // "llama-3.1-8b, batch 1, fp16, structured, accelerator cpu"
  std::vector<int64_t> seq_lens;        // ascending
  std::vector<std::string> strategies;  // by name
  // Fleet reports in replicate mode (reports/fleet.h): the hosts' labels in rank order, one
  // column per (sequence length, host); empty otherwise (host "" everywhere below).
  std::vector<std::string> hosts;
  std::map<std::tuple<std::string, int64_t, std::string>, const Point*>
      cells;                             // (strategy, seq_len, host) -> point
  std::string reference;                 // strategy the speedups are against
  std::vector<std::string> provenances;  // distinct labels of the points shown, sorted
  std::vector<Speedup> speedups;         // the report's speedups among this table's points
  std::optional<double> noise_target;    // the run's --max-noise, when the report says
  double tie_margin = 0;                 // the run's --tie-margin (fraction; 0: older reports)
  AccuracyTarget target;                 // the report's --accuracy-target (report_accuracy_target)
  // Modeled step times and ITL: the relative uncertainty `validate-model --published` gives them
  // (ReportContext::model_uncertainty, "itl"), printed instead of their zero noise; none in
  // reports without it.
  std::optional<double> model_uncertainty;

  const Point* at(const std::string& strategy, int64_t seq_len, const std::string& host = "") const;
  // Time of b / time of a (> 1: a is faster) and its relative noise, from the report's
  // speedups section; nullopt when either point did not run. ratio(a, a) is 1 when a ran.
  std::optional<std::pair<double, double>> ratio(const std::string& a, const std::string& b,
                                                 int64_t seq_len,
                                                 const std::string& host = "") const;
  // ratio(strategy, reference): > 1 means faster than the reference.
  std::optional<std::pair<double, double>> speedup(const std::string& strategy, int64_t seq_len,
                                                   const std::string& host = "") const {
    return ratio(strategy, reference, seq_len, host);
  }
  // The longest sequence length at which at least two strategies ran (for the pairwise
  // matrix), or -1.
  int64_t pairwise_length(const std::string& host = "") const;
  // The fastest timed headline strategy (not an ablation: Point::role) at a length, or "" when
  // none ran.
  std::string fastest(int64_t seq_len, const std::string& host = "") const;
  // The same among those whose accuracy meets `target` (a point without accuracy figures is
  // not eligible), or "" when none does.
  std::string fastest_within_target(int64_t seq_len, const std::string& host = "") const;
  // The speedups entry of a over b at a length (a's point's group), or null.
  const Speedup* speedup_entry(const std::string& a, const std::string& b, int64_t seq_len,
                               const std::string& host = "") const;
  // What the headline may claim at a length: the fastest headline strategy within target
  // (within_target false: of all that ran) first, then every other eligible one the noise
  // cannot separate from it by more than tie_margin (Speedup::decided false). One name: a
  // winner; several: a tie; none: nothing eligible ran.
  std::vector<std::string> leaders(int64_t seq_len, const std::string& host = "",
                                   bool within_target = true) const;
  // The eligible strategies leaders() leaves out although their interval against the fastest
  // still reaches into the tie margin (paired, ci_low <= 1 + tie_margin): out on the median
  // ratio, not beyond the margin by the interval. Such a membership is a coin toss between runs
  // (quest at 4k: 1.038-1.066 over eight runs against a 5% margin), so the headline says so.
  std::vector<std::string> at_margin(int64_t seq_len, const std::string& host = "",
                                     bool within_target = true) const;
  // On the speed-accuracy Pareto front of its column: timed, scored, and no other timed scored
  // point of the column is at least as fast and at least as accurate (target's metric) with one
  // of the two strictly better.
  bool on_pareto_front(const std::string& strategy, int64_t seq_len,
                       const std::string& host = "") const;
  // The grids' columns: each length, and within it each host (just "" without hosts).
  std::vector<std::pair<int64_t, std::string>> columns() const;
  // One host's part as a table of its own (no hosts; title names the host), for charts and the
  // pairwise matrix, which compare strategies on one machine.
  ProcurementTable for_host(const std::string& host) const;
  // The role its points carry (Point::role; older reports: role_from_name), baseline when the
  // table has no point of it.
  StrategyRole role_of(const std::string& strategy) const;
  // What the headline compares: the system, the baselines and the reference, without the
  // system's ablations; and the system beside its ablations (and the reference, so speedups keep
  // their denominator). Charts draw the two apart, so ablations never crowd the headline's.
  ProcurementTable headline_part() const;
  ProcurementTable ablation_part() const;
};

// What the headline names at a column: "none", "h2o", "tie h2o, quest", each followed by
// " (hybridgen at the margin)" when at_margin names any.
std::string leaders_text(const std::vector<std::string>& leaders,
                         const std::vector<std::string>& at_margin = {});

// Tables in a stable order (by title). Throws hb::Error when options.reference names a strategy
// that is not in the report.
std::vector<ProcurementTable> procurement_tables(const Report& report,
                                                 const TableOptions& options = {});

// Context as (label, value) lines for the page header: tool, build, date, host, CPU,
// accelerator, memory nodes, system settings, command line; for a fleet report one line per
// rank (label, CPU, accelerator, binding, points or its error).
std::vector<std::pair<std::string, std::string>> context_facts(const ReportContext& c);

// Cell texts shared by the renderers.
// " ± 3.0%" after a ratio of two points with relative noise `noise`; of two modeled points
// (`modeled`) in a report with the model's uncertainty, both of it in quadrature: " ± 7.2%
// (model)".
std::string ratio_uncertainty(const ProcurementTable& t, bool modeled, double noise);
// "1.23 ms ± 2.1%", or the status ("oom"), or "-"; a modeled point with the model's
// uncertainty (ProcurementTable::model_uncertainty): "1.23 ms ± 5.1% (model)".
std::string time_cell(const Point* p, std::optional<double> noise_target = std::nullopt,
                      std::optional<double> model_uncertainty = std::nullopt);
// Tokens attended per step and query head: "2048", or "1990 (1985-2048)" when it varied.
std::string attended_cell(const std::optional<AttendedTokens>& a);
// Headline accuracy: "recall 99.8%, cosine 0.9991, needle 100%, attended 2048", or the status.
// rel_l2 is only in the JSON and CSV (reports/README.md says why it is no headline).
std::string accuracy_cell(const Point* p);
std::string status_cell(const Point& p);  // "oom: KV 2.0 GiB > capacity 1.0 GiB"

// The three grids of a table (rows: strategies, columns: sequence lengths), rendered by
// markdown (TextTable::markdown) and HTML (TextTable::html) alike. The time grid ends with a
// "fastest" row, a "fastest within <target>" row ("none" where no point meets it), then (reports
// that carry it) a "KV on accelerator" row, kv_fit_cell per column;
// cells of points that did not run show their status.
TextTable time_grid(const ProcurementTable& t);
TextTable speedup_grid(const ProcurementTable& t);
// Accuracy cells; a point on the speed-accuracy Pareto front ends with kParetoMark.
TextTable accuracy_grid(const ProcurementTable& t);
inline constexpr const char* kParetoMark = " ◆";
// Measured points a platform profile also priced (Point::modeled): "measured | modeled (error)"
// per cell. Empty string from modeled_platforms() = the table has none.
std::string modeled_platforms(const ProcurementTable& t);
TextTable modeled_grid(const ProcurementTable& t);
// Every strategy against every other at one length: row a, column b, cell ratio(a, b).
TextTable pairwise_grid(const ProcurementTable& t, int64_t seq_len);
// "measured", or "mixed: measured, emulated; (e) emulated, (m) modeled" (cells then carry marks).
std::string provenance_heading(const ProcurementTable& t);
// Share of a column's KV cache that fits the accelerator's KV budget (Point::kv_fit_fraction of
// its first point that has one; every strategy of a column shares it); nullopt for reports
// without it.
std::optional<double> kv_fit(const ProcurementTable& t, int64_t seq_len,
                             const std::string& host = "");
// "all" when it all fits, "50%" when half does, "-" when unknown.
std::string kv_fit_cell(std::optional<double> fraction);
// Where the KV stops fitting: "The KV cache stops fitting the accelerator's KV budget at 16k
// (50% of it fits there, 25% at 32k)." or that it fits at every length, or at none; "" when the
// table's points do not say.
std::string kv_boundary_line(const ProcurementTable& t);
// "- full-gpu at 128k: oom: ..." lines for the points that did not run; empty when all ran.
std::vector<std::string> not_run_lines(const ProcurementTable& t);
// Fleet reports whose points are spread over ranks (--distribute points): which rank and host
// measured each cell ("r1 nodeB"); nullopt when the table's points carry no ran_on or all ran on
// one rank.
std::optional<TextTable> ran_on_grid(const ProcurementTable& t);

// Renderers. Markdown: context, then per setting the time, speedup and accuracy tables and the
// points that did not run with their reasons. CSV: one row per point (long form, which any
// spreadsheet pivots into the strategies x lengths grid), RFC 4180 quoting, units in headers.
std::string markdown_report(const Report& report, const TableOptions& options = {});
std::string csv_report(const Report& report, const TableOptions& options = {});

}  // namespace hb::reports
