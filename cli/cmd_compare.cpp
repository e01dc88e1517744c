// `hybridbench compare OLD.json NEW.json`: the CI regression check. Parsing and wiring only; the
// statistics and the table live in reports/compare*.
#include <iostream>
#include <memory>
#include <utility>
#include <vector>

#include "cli/ab_run.h"
#include "cli/command.h"
#include "cli/numeric_options.h"
#include "cli/output_options.h"
#include "core/error.h"
#include "reports/compare.h"
#include "reports/compare_pairs.h"
#include "reports/compare_render.h"
#include "reports/exporters.h"
#include "reports/json_io.h"
#include "reports/output_file.h"

namespace hb::cli {

namespace {

// compare --fail-unjudged with points it could not judge (and no regression, which wins: 3).
// Declared here, not in core/error.h, because only compare returns it.
constexpr int kExitUnjudged = 4;

struct CompareArgs {
  std::string old_path, new_path;
  std::vector<std::string> ab_bins, rest;  // --ab OLD_BIN NEW_BIN; operands after OLD NEW
  int ab_passes = 6;
  std::string ab_dir;
  reports::CompareOptions options;
  std::string json_out, bmf_out, github_out, out, format = "text", accuracy_target;
  bool quiet = false;
};

// The files compare may write, by option.
std::vector<std::pair<std::string, std::string>> outputs(const CompareArgs& a) {
  return {{"--json", a.json_out},
          {"--bmf", a.bmf_out},
          {"--github-benchmark", a.github_out},
          {"--out", a.out}};
}

// The verdict on two reports, its table and files; compare's exit status. An A/B's timing
// verdicts are its pass pairs' (reports/compare_pairs.h).
int judge(const CompareArgs& a, const reports::Report& old_report,
          const reports::Report& new_report,
          const std::vector<std::pair<reports::Report, reports::Report>>* pairs = nullptr) {
  reports::CompareResult result = reports::compare_reports(old_report, new_report, a.options);
  if (pairs) reports::apply_pass_pairs(reports::judge_pass_pairs(*pairs, a.options), result);
  const std::string table = a.format == "md" ? reports::compare_markdown_text(result)
                                             : reports::compare_table_text(result);
  // With a result on standard output, human text goes to stderr so stdout stays machine-readable.
  bool any_stdout = false;
  for (const auto& o : outputs(a)) any_stdout = any_stdout || reports::is_stdout_path(o.second);
  std::ostream& human = any_stdout ? std::cerr : std::cout;
  // Every file output at once (reports/output_file.h): one that fails leaves none of them.
  std::vector<std::pair<std::string, std::string>> files;
  if (!a.out.empty()) files.emplace_back(a.out, table);
  if (!a.json_out.empty())
    files.emplace_back(a.json_out, reports::compare_json_text(result, a.old_path, a.new_path));
  if (!a.bmf_out.empty()) files.emplace_back(a.bmf_out, reports::bmf_json_text(new_report));
  if (!a.github_out.empty())
    files.emplace_back(a.github_out, reports::github_benchmark_json_text(new_report));
  std::cout.flush();
  reports::write_outputs(files);
  if (!a.out.empty()) {
    // The table went to a file: a CI log still needs the verdict.
    if (!a.quiet && !reports::is_stdout_path(a.out))
      human << reports::compare_verdict_line(result) << "\n";
  } else if (!a.quiet) {
    human << table;
  }
  switch (result.outcome()) {
    case reports::CompareResult::Outcome::regression:
      std::cerr << "hybridbench: compare: " << result.regressions << " regression(s) in "
                << a.new_path << " vs " << a.old_path << "\n";
      return kExitRegression;
    case reports::CompareResult::Outcome::unjudged:
      std::cerr << "hybridbench: compare: " << result.unjudged() << " of " << result.timed_pairs()
                << " timed points not judged (--fail-unjudged)\n";
      return kExitUnjudged;
    case reports::CompareResult::Outcome::ok:
      break;
  }
  return kExitOk;
}

// CLI11 puts `-- run ARGS...` into OLD, NEW and the rest: with --ab they are the run arguments.
std::vector<std::string> operands(const CompareArgs& a) {
  std::vector<std::string> v;
  if (!a.old_path.empty()) v.push_back(a.old_path);
  if (!a.new_path.empty()) v.push_back(a.new_path);
  v.insert(v.end(), a.rest.begin(), a.rest.end());
  return v;
}

int compare_command(CompareArgs& a) {
  if (!a.accuracy_target.empty())
    a.options.accuracy_target = reports::parse_accuracy_target(a.accuracy_target);
  reports::validate(a.options);  // before reading: a bad flag should not wait for two files
  const bool ab = !a.ab_bins.empty();
  if (!ab && (a.new_path.empty() || !a.rest.empty()))
    throw Error(
        "compare takes two reports, OLD and NEW (" + std::to_string(operands(a).size()) + " given)",
        "hybridbench compare OLD.json NEW.json, or compare --ab OLD_BIN NEW_BIN -- run "
        "ARGS...");
  const std::vector<std::string> inputs = ab ? a.ab_bins : operands(a);
  for (const auto& [option, path] : outputs(a)) reports::check_output_path(option, path, inputs);
  reports::check_distinct_outputs(outputs(a));
  if (!ab) return judge(a, reports::read_report(a.old_path), reports::read_report(a.new_path));
  AbSpec spec{a.ab_bins[0], a.ab_bins[1], operands(a), a.ab_passes, a.ab_dir, a.quiet};
  AbResult r = run_ab(spec);
  a.old_path = r.old_path;
  a.new_path = r.new_path;
  return judge(a, r.old_report, r.new_report, &r.pairs);
}

// The timing verdict's options (reports/COMPARE.md says how each is used).
void add_timing_options(CLI::App& sub, reports::CompareOptions& o) {
  using parse::RealRange;
  add_real_option(sub, "--threshold", o.threshold,
                  "Fail on a significant slowdown beyond this relative change", RealRange::above(0))
      ->capture_default_str();
  add_real_option(sub, "--alpha", o.alpha, "Significance level of the U test",
                  RealRange{0, 1, true, true})
      ->capture_default_str();
  add_real_option(
      sub, "--min-effect", o.min_effect,
      "Relative changes below this are SAME (must be <= --threshold; identical runs minutes "
      "apart differ by up to ~4% on a shared machine)",
      RealRange::at_least(0))
      ->capture_default_str();
  add_percent_option(sub, "--max-noise", o.max_noise,
                     "Noise limit in percent (10 or 10% = 10%): runs noisier than this (IQR / "
                     "1.349 median) are NOISY unless the change is 3x the noise",
                     RealRange::above(0));
  add_real_option(sub, "--drift-allowance", o.drift_allowance,
                  "With one round a side, only a change beyond this fraction is FASTER/SLOWER, "
                  "within it INCONCLUSIVE (e.g. 1 = a doubling; 0: judge every one)",
                  RealRange::at_least(0))
      ->capture_default_str();
  add_real_option(sub, "--group-drift", o.group_drift,
                  "With rounds, a group of strategies (one model, length, batch) that moved as a "
                  "whole by less than this fraction has each strategy judged against that move "
                  "(runs on one machine drift by ~10%); 0: judge every point as it is",
                  RealRange{0, 1, false, true})
      ->capture_default_str();
}

// How far each accuracy figure may fall before it is a regression.
void add_accuracy_options(CLI::App& sub, reports::CompareOptions& o) {
  using parse::RealRange;
  add_real_option(sub, "--accuracy-tolerance", o.rel_l2_rel_tolerance,
                  "Relative growth of rel_l2 allowed before it is an accuracy regression",
                  RealRange::at_least(0))
      ->capture_default_str();
  add_real_option(sub, "--recall-tolerance", o.mass_recall_tolerance,
                  "Absolute drop in attention-mass recall allowed", RealRange::between(0, 1))
      ->capture_default_str();
  add_real_option(sub, "--needle-tolerance", o.needle_tolerance,
                  "Absolute drop in needle success rate allowed", RealRange::between(0, 1))
      ->capture_default_str();
}

}  // namespace

CommandFn add_compare_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "compare",
      "Compare two reports point by point (CI regression check). Each point's step times are\n"
      "compared with a Mann-Whitney U test plus a minimum effect size: FASTER / SLOWER / SAME /\n"
      "NOISY. A change under --min-effect is SAME. Points with >= 2 rounds a side (`run`'s\n"
      "interleaved --rounds, 6 by default; --repetitions adds passes) are judged on their round\n"
      "medians; with one round (older reports), on 6 blocks\n"
      "of consecutive steps, and a change within --drift-allowance is INCONCLUSIVE (drift\n"
      "between runs is unmeasured). With rounds, a group whose strategies all moved together by\n"
      "less than --group-drift (machine drift between runs) has each judged against that move.\n"
      "The last line counts the points not judged (NOISY,\n"
      "INCONCLUSIVE); it is printed even when --out takes the table. The two lines before it\n"
      "say whether the runs give the same answer: the headline at each length (same, same but\n"
      "for a strategy at the tie margin, changed) and how many speedups lie inside the other\n"
      "run's interval (informational; reports/COMPARE.md).\n"
      "Exit status: 0 no regression; 3 a significant slowdown beyond --threshold, a point that no\n"
      "longer runs, or an accuracy regression (a point that fell below the run's "
      "--accuracy-target\n"
      "counts); 4 with --fail-unjudged, points not judged (and no regression); 2 unreadable\n"
      "input or nothing in common.\n"
      "--ab OLD_BIN NEW_BIN -- run ARGS...: one job runs the sweep with both builds, passes\n"
      "interleaved (--ab-passes each, fresh processes), and judges each strategy by the pass\n"
      "pairs: its NEW/OLD move in each pair over its group's, SLOWER when the median move is\n"
      "beyond 8% and 2 in 3 of the pairs agree (cli/AB.md); same exit status.\n\n"
      "Examples:\n"
      "  hybridbench run --out pr.json   # the gate's input: >= 6 interleaved rounds a point\n"
      "  hybridbench compare main.json pr.json\n"
      "  hybridbench compare main.json pr.json --threshold 0.10 --bmf bencher.json\n"
      "  hybridbench compare main.json pr.json --format md --out pr-comment.md\n"
      "  hybridbench compare main.json pr.json --github-benchmark gab.json --json verdicts.json\n"
      "  hybridbench compare --ab base/hybridbench head/hybridbench --ab-dir ab -- run "
      "--seq-len 4k\n");
  auto a = std::make_shared<CompareArgs>();
  auto& o = a->options;
  sub->add_option("OLD", a->old_path, "Baseline report (JSON from `hybridbench run`)");
  sub->add_option("NEW", a->new_path, "Report to check against it");
  sub->add_option("RUN", a->rest, "With --ab, after `--`: `run` and the sweep's options");
  CLI::Option* ab =
      sub->add_option(
             "--ab", a->ab_bins,
             "Run the sweep given after `--` with two hybridbench binaries, interleaved in "
             "fresh processes (OLD NEW NEW OLD OLD NEW ...), and judge NEW against OLD; the "
             "same binary twice is an A/A check")
          ->expected(2)
          ->type_name("OLD_BIN NEW_BIN");
  add_integer_option(*sub, "--ab-passes", a->ab_passes, "With --ab, passes per binary", 1, 100)
      ->capture_default_str()
      ->needs(ab);
  sub->add_option("--ab-dir", a->ab_dir,
                  "With --ab, the new or empty folder for each pass's report and log and the two "
                  "pooled reports old.json, new.json (default hybridbench-ab-<UTC time>)")
      ->needs(ab);
  add_timing_options(*sub, o);
  sub->add_flag("--fail-unjudged", o.fail_unjudged,
                "Exit 4 when points could not be judged (NOISY, INCONCLUSIVE) and none regressed");
  add_accuracy_options(*sub, o);
  add_accuracy_target_option(*sub, a->accuracy_target)
      ->description(
          "Accuracy a point must keep (recall:X, cosine:X or a bare recall number); default: "
          "NEW's own --accuracy-target from its sweep echo. A point that met it in OLD and "
          "misses it in NEW is an accuracy regression (exit 3)");
  sub->add_option("--format", a->format,
                  "Table format: text (aligned columns) or md (GitHub-flavoured markdown to paste "
                  "into a pull request: a geometric-mean row, MISSING/NEW collapsed)")
      ->check(CLI::IsMember({"text", "md"}))
      ->capture_default_str();
  sub->add_option("--out", a->out, "Write the table to FILE instead of stdout (- = stdout)");
  add_json_option(*sub, a->json_out, "the verdicts (schema hybridbench.compare/1)");
  sub->add_option("--bmf", a->bmf_out,
                  "Also write NEW in Bencher Metric Format (bencher run --adapter json)");
  sub->add_option("--github-benchmark", a->github_out,
                  "Also write NEW for github-action-benchmark (tool: customSmallerIsBetter)");
  sub->add_flag("-q,--quiet", a->quiet,
                "Print no table (unless --out asks for it); only the exit status and files tell");
  return [a] { return compare_command(*a); };
}

}  // namespace hb::cli
