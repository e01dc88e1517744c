// `hybridbench report FILE.json`: tables and the HTML page. Parsing and wiring only; rendering
// lives in reports/tables and reports/html.
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "core/error.h"
#include "reports/html.h"
#include "reports/json_io.h"
#include "reports/output_file.h"
#include "reports/tables.h"

namespace hb::cli {

namespace {

struct ReportArgs {
  std::string path, format = "md", out, html;
  reports::TableOptions tables;
};

int report_command(const ReportArgs& a) {
  // Before reading: a bad output path, or one that is the input, fails before any work.
  reports::check_output_path("--out", a.out, {a.path});
  reports::check_output_path("--html", a.html, {a.path});
  // No --out means the table goes to standard output, which --html - would share.
  reports::check_distinct_outputs({{"--out", a.out.empty() ? "-" : a.out}, {"--html", a.html}});
  const reports::Report report = reports::read_report(a.path);
  const std::string text = a.format == "csv" ? reports::csv_report(report, a.tables)
                                             : reports::markdown_report(report, a.tables);
  if (a.out.empty())
    std::cout << text;
  else
    reports::write_output(a.out, text);
  if (!a.html.empty()) {
    reports::write_output(a.html, reports::html_report(report, a.tables));
    if (!reports::is_stdout_path(a.html)) std::cerr << "hybridbench: wrote " << a.html << "\n";
  }
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
      "  hybridbench report run.json --html run.html --reference cpu-only\n");
  auto a = std::make_shared<ReportArgs>();
  sub->add_option("FILE", a->path, "Report written by `hybridbench run`")->required();
  sub->add_option("--format", a->format, "Table format: md (markdown) or csv (one row per point)")
      ->check(CLI::IsMember({"md", "csv"}))
      ->capture_default_str();
  sub->add_option("--out", a->out, "Write the table here instead of stdout (- = stdout)");
  sub->add_option(
      "--html", a->html,
      "Also write a self-contained HTML page with charts (works offline; - = stdout, then give the "
      "table --out FILE)");
  sub->add_option(
      "--reference", a->tables.reference,
      "Strategy the speedups are against (default: full-gpu when present, else the first by name)");
  return [a] { return report_command(*a); };
}

}  // namespace hb::cli
