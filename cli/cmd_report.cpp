// `hybridbench report FILE.json`: tables and the HTML page. Parsing and wiring only; rendering
// lives in reports/tables and reports/html.
#include <functional>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "cli/numeric_options.h"
#include "core/error.h"
#include "reports/exporters.h"
#include "reports/first_screen.h"
#include "reports/html.h"
#include "reports/json_io.h"
#include "reports/output_file.h"
#include "reports/procurement_html.h"
#include "reports/procurement_markdown.h"
#include "reports/tables.h"

namespace hb::cli {

namespace {

struct ReportArgs {
  std::vector<std::string> paths;  // one report, or several read together for --procurement
  std::string format = "md", out, html, json;
  bool procurement = false;
  double itl_slo_s = 0;  // 0 = not given
  reports::TableOptions tables;
};

// The same report twice (one file under two names, or a copy) would rank its platform against
// itself, #1 and #2: refused, naming both.
void refuse_duplicate_reports(const std::vector<std::string>& paths,
                              const std::vector<reports::Report>& reports) {
  std::vector<std::string> texts;
  for (const auto& r : reports) texts.push_back(reports::to_json_text(r));
  for (size_t i = 0; i < texts.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (texts[i] == texts[j])
        throw Error("--procurement: " + paths[i] + " is the same report as " + paths[j] +
                        (paths[i] == paths[j] ? " (given twice)" : " (a copy)"),
                    "pass each report once; to compare two runs of one platform use "
                    "`hybridbench compare OLD NEW`");
}

// The tables (--out, or standard output) and the HTML page (--html) are written as one: a page
// that cannot be written (/dev/full, a full disk) leaves no table file behind either.
void write_tables_and_page(const ReportArgs& a, const std::string& tables,
                           const std::function<std::string()>& page) {
  std::vector<std::pair<std::string, std::string>> outputs{{a.out.empty() ? "-" : a.out, tables}};
  if (!a.html.empty()) outputs.emplace_back(a.html, page());
  std::cout.flush();
  reports::write_outputs(outputs);
  if (!a.html.empty() && !reports::is_stdout_path(a.html))
    std::cerr << "hybridbench: wrote " << a.html << "\n";
}

// --procurement: the ranked view alone, of one report or several read side by side (a measured
// node next to model-mode projections), as markdown and optionally its HTML page.
int procurement_command(const ReportArgs& a) {
  if (a.format != "md")
    throw Error("--procurement writes markdown (and --html), not --format " + a.format,
                "drop --format, or drop --procurement for the other formats");
  std::vector<reports::Report> reports;
  for (const auto& p : a.paths) reports.push_back(reports::read_report(p));
  refuse_duplicate_reports(a.paths, reports);
  std::vector<const reports::Report*> all;
  for (const auto& r : reports) all.push_back(&r);
  const reports::ProcurementOptions o{a.tables.itl_slo_ns,
                                      a.tables.full ? 0 : reports::kTopPlatformsPerStrategy};
  const auto settings = reports::procurement_settings(all, o);
  // The answer and its chart first (issue 49), then the view (its top rows without --full).
  const reports::FirstScreen first = reports::procurement_first_screen(settings);
  std::string md;
  for (const auto& l : first.answer) md += "- " + l + "\n";
  if (first.headline) md += "\n" + reports::tokens_bars_markdown(*first.headline) + "\n";
  md += reports::procurement_markdown(settings, o);
  write_tables_and_page(a, md, [&] { return reports::procurement_page_html(all, o); });
  return kExitOk;
}

int report_command(const ReportArgs& a) {
  // --json means "write the machine-readable result" everywhere; report's input already is the
  // JSON, so the spelling would be ambiguous here: say which options do what the user wants.
  if (!a.json.empty())
    throw Error("report has no --json: its input is the JSON report, and it writes tables",
                "for machine-readable output use --format csv, bmf or github-benchmark with "
                "--out FILE (- = stdout)");
  // Before reading: a bad output path, or one that is an input, fails before any work.
  reports::check_output_path("--out", a.out, a.paths);
  reports::check_output_path("--html", a.html, a.paths);
  // No --out means the table goes to standard output, which --html - would share.
  reports::check_distinct_outputs({{"--out", a.out.empty() ? "-" : a.out}, {"--html", a.html}});
  if (a.procurement) return procurement_command(a);
  if (a.paths.size() > 1)
    throw Error("report reads several files only for the procurement view (" +
                    std::to_string(a.paths.size()) + " given)",
                "add --procurement to rank their platforms side by side, or pass one file");
  const reports::Report report = reports::read_report(a.paths[0]);
  // The option checked the name against the same vocabulary, so parse() has a value.
  const std::string text =
      reports::render_report(report, *reports::kReportFormats.parse(a.format), a.tables);
  write_tables_and_page(a, text, [&] { return reports::html_report(report, a.tables); });
  return kExitOk;
}

}  // namespace

CommandFn add_report_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "report",
      "Turn a JSON report into the procurement table (strategies x sequence lengths: step time,\n"
      "speedups, accuracy) as markdown or CSV, and optionally one self-contained HTML page with "
      "charts.\n\n"
      "Examples:\n"
      "  hybridbench report run.json                      # markdown on stdout\n"
      "  hybridbench report run.json --format csv --out run.csv\n"
      "  hybridbench report run.json --html run.html --reference cpu-only\n"
      "  hybridbench report run.json --format bmf --out bencher.json   # bencher run --adapter "
      "json\n");
  auto a = std::make_shared<ReportArgs>();
  sub->add_option("FILE", a->paths,
                  "Report written by `hybridbench run`; with --procurement several may be read "
                  "together (a measured node beside model-mode projections)")
      ->required();
  sub->add_flag(
      "--procurement", a->procurement,
      "Only the procurement view: per setting, the best platform and strategy on tokens/s, "
      "ITL, $/Mtok, tokens/s per W and the longest context, and the platforms ranked "
      "per strategy within the accuracy target (a section of the default output when "
      "a report has several platforms or hosts)");
  add_seconds_option(*sub, "--itl-slo", a->itl_slo_s,
                     "Inter-token latency SLO for the procurement view's largest batch, e.g. 50ms",
                     parse::RealRange{0, 3600, true, false});
  sub->add_flag("--full", a->tables.full,
                "Every section: without it a report over several platforms (and --procurement) "
                "gives the answer, its chart and the top platforms per strategy");
  sub->add_option("--format", a->format,
                  "md (markdown tables), csv (one row per point), html (the page with charts), "
                  "bmf (Bencher Metric Format) or github-benchmark (github-action-benchmark, "
                  "customSmallerIsBetter)")
      ->check(CLI::IsMember(reports::report_formats()))
      ->capture_default_str();
  sub->add_option("--out", a->out, "Write the table here instead of stdout (- = stdout)");
  sub->add_option(
      "--html", a->html,
      "Also write a self-contained HTML page with charts (works offline; - = stdout, then give the "
      "table --out FILE)");
  sub->add_option(
      "--reference", a->tables.reference,
      "Strategy the speedups are against (default: full-gpu when present, else the first by name)");
  sub->add_option("--json", a->json, "Not an option of report (it says what to use instead)")
      ->expected(0, 1)
      ->default_str("-")
      ->group("");  // hidden
  return [a, sub] {
    if (sub->get_option("--itl-slo")->count() > 0) a->tables.itl_slo_ns = a->itl_slo_s * 1e9;
    return report_command(*a);
  };
}

}  // namespace hb::cli
