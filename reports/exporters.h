#pragma once
// CI dashboard formats for one report (the NEW one in `compare`). Both carry timed points only:
// a point that did not run has no value to plot, and compare already fails the build for it.
// Benchmark names are benchmark_name() (reports/labels.h): stable across sweeps, so dashboards
// keep their history.
#include <string>
#include <vector>

#include "core/vocabulary.h"
#include "reports/report.h"
#include "reports/tables.h"

namespace hb::reports {

// Bencher Metric Format (https://bencher.dev/docs/reference/bencher-metric-format):
// { "<name>": { "latency": {value, lower_value, upper_value} (ns: median, p10, p90),
//               "throughput": {...} (tokens/s = batch / step time),
//               "rel-l2": {value} (when accuracy was scored) } }
std::string bmf_json_text(const Report& report);

// github-action-benchmark, tool "customSmallerIsBetter": [ {name, unit, value, range, extra} ]:
// one entry per point for the median step time (unit "ns", range "± stdev") and one for
// rel_l2 when scored (both smaller-is-better; throughput is not, so it is left out).
std::string github_benchmark_json_text(const Report& report);

// Every format `report --format` writes, in the order its help lists them: md (the markdown
// tables), csv (one row per point), html (the page with charts), bmf and github-benchmark (the
// two functions above, the same ones compare --bmf / --github-benchmark call).
enum class ReportFormat { md, csv, html, bmf, github_benchmark };
inline constexpr Vocabulary<ReportFormat, 5> kReportFormats{
    {"md", "csv", "html", "bmf", "github-benchmark"}};
// The names, for the option's check and help.
const std::vector<std::string>& report_formats();
std::string render_report(const Report& report, ReportFormat format,
                          const TableOptions& options = {});

}  // namespace hb::reports
