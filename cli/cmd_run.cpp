// `hybridbench run`: parse the sweep, resolve the platform, run it, write the report.
#include <algorithm>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "baselines/register.h"
#include "cli/command.h"
#include "cli/economics_options.h"
#include "cli/fleet_run.h"
#include "cli/numeric_options.h"
#include "cli/output_options.h"
#include "cli/platform_setup.h"
#include "cli/progress.h"
#include "cli/run_session.h"
#include "memtier/machine_load.h"
#include "reports/busy_machine.h"
#include "cli/sweep_options.h"
#include "core/error.h"
#include "core/model_presets.h"
#include "core/workload.h"
#include "core/vocabulary.h"
#include "hybrid/register.h"
#include "memtier/settings.h"
#include "reports/convergence.h"
#include "reports/accuracy_loss.h"
#include "reports/point_warnings.h"
#include "reports/format.h"
#include "reports/json_io.h"
#include "reports/layer_stack.h"
#include "reports/output_file.h"
#include "reports/tables.h"
#include "reports/summary.h"
#include "reports/text_table.h"
#include "model/capacity.h"
#include "model/model_run.h"
#include "model/whole_model.h"
#include "bench/runner.h"
#include "bench/trace.h"

namespace hb::cli {

namespace {

// --mode: time this machine, or project onto platform profiles with the model (model).
enum class RunMode { measure, model };
constexpr Vocabulary<RunMode, 2> kRunModes{{"measure", "model"}};

struct RunArgs {
  bench::SweepSpec spec;
  SweepAxesText axes;  // --model, --seq-len, --batch, ... (cli/sweep_options.h)
  std::string out, json, config;
  std::string resume;  // --resume OUT: continue OUT's interrupted sweep (cli/run_session.h)
  std::string mode = "measure";        // measure | model (model)
  std::vector<std::string> platforms;  // --platform: profiles for --mode model
  EconomicsArgs economics;             // --price, --power, --gpus-per-node
  std::string distribute;              // fleet mode under mpirun/srun: points | replicate
  double gather_timeout_s = 0;
  bool list_strategies = false, list_models = false, quiet = false;
};

// Applies a --config JSON file: same names as the long options (with - or _), command-line
// flags win over the file.
void apply_config(RunArgs& a, CLI::App& sub) {
  std::ifstream f(a.config);
  if (!f) throw Error("cannot open config file '" + a.config + "'", "check the --config path");
  nlohmann::json j;
  try {
    f >> j;
  } catch (const std::exception& e) {
    throw Error("config file '" + a.config + "' is not valid JSON: " + e.what(),
                "fix the file (see `run --help`)");
  }
  if (!j.is_object())
    throw Error("config file '" + a.config + "' must hold a JSON object",
                "e.g. {\"seq-len\": \"4k:32k:x2\"}");
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::string key = it.key();
    for (auto& c : key)
      if (c == '_') c = '-';
    CLI::Option* opt = nullptr;
    try {
      opt = sub.get_option("--" + key);
    } catch (const CLI::OptionNotFound&) {
      throw Error("config file '" + a.config + "' has unknown key '" + it.key() + "'",
                  "use the long option names of `hybridbench run --help`");
    }
    if (opt->count() > 0 || key == "config") continue;  // the command line wins
    std::vector<std::string> values;
    const auto& v = it.value();
    auto text = [](const nlohmann::json& x) {
      return x.is_string() ? x.get<std::string>()
                           : x.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    };
    if (v.is_array()) {
      std::string joined;
      for (const auto& x : v) joined += (joined.empty() ? "" : ",") + text(x);
      values.push_back(joined);
    } else if (v.is_object()) {
      for (auto o = v.begin(); o != v.end(); ++o) values.push_back(o.key() + "=" + text(o.value()));
    } else {
      values.push_back(text(v));
    }
    if (opt->get_expected_min() == 0) {  // a flag
      if (v.is_boolean() && !v.get<bool>()) continue;
      values = {"true"};
    }
    try {  // the option's own strict parser (cli/numeric_options.h) judges the value
      for (const auto& val : values) opt->add_result(val);
      opt->run_callback();
    } catch (const CLI::ParseError& e) {
      throw Error("config file '" + a.config + "', key '" + it.key() + "': " + e.what(),
                  "fix the value in the file (`hybridbench run --help` gives each option's range)");
    }
  }
}

std::string default_out_path() {
  char buf[64];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "hybridbench-%Y%m%d-%H%M%S.json", std::gmtime(&t));
  return buf;
}

// One line per point on `to` (stdout, or stderr when the JSON goes to stdout; the JSON has
// everything). Noise is the reports' robust figure, IQR / (1.349 median), so a few preempted steps
// do not make a quiet point look noisy.
void print_summary(const reports::Report& r, std::FILE* to) {
  // The answer first (issue 19): the same sentences the markdown and HTML reports open with.
  std::fputs("Summary:\n", to);
  for (const auto& s : reports::summary_sentences(r)) std::fprintf(to, "  - %s\n", s.c_str());
  std::fputs("\n", to);
  const bool any_modeled = std::any_of(r.points.begin(), r.points.end(),
                                       [](const auto& p) { return p.modeled.present(); });
  reports::TextTable t;
  using A = reports::TextTable::Align;
  for (const char* h : {"strategy", "seq_len", "batch"}) t.add_column(h);
  // run --kv-budget: the budget each point was given, as typed.
  const bool any_budget = std::any_of(r.points.begin(), r.points.end(), [](const auto& p) {
    return p.axes.extra.count("kv_budget");
  });
  if (any_budget) t.add_column("budget", A::right);
  // How much of the point's KV the accelerator's budget holds: where "all" turns into a share,
  // the KV stops fitting.
  const bool any_fit = std::any_of(r.points.begin(), r.points.end(),
                                   [](const auto& p) { return p.kv_fit_fraction.has_value(); });
  if (any_fit) t.add_column("kv fit", A::right);
  t.add_column("median", A::right);
  t.add_column("noise", A::right);
  if (any_modeled) t.add_column("modeled (err)", A::right);
  // Headline accuracy (reports/README.md): mass recall, cosine, needle where planted; rel_l2 is
  // in the JSON.
  const bool any_needle = std::any_of(r.points.begin(), r.points.end(), [](const auto& p) {
    return p.accuracy.steps_scored > 0 && p.accuracy.has_needle();
  });
  t.add_column("recall", A::right);
  t.add_column("cosine", A::right);
  if (any_needle) t.add_column("needle", A::right);
  // A trace with the traced model's own outputs: rel L2 against them (exact strategies ~0).
  const bool any_captured = std::any_of(r.points.begin(), r.points.end(), [](const auto& p) {
    return p.accuracy.steps_scored > 0 && p.accuracy.captured_rel_l2;
  });
  if (any_captured) t.add_column("vs trace o", A::right);
  t.add_column("attended", A::right);  // tokens per step and query head: mean (min-max)
  t.add_column("figures");
  // Fleet reports: the same point can come from several hosts, so say which.
  const bool fleet = !r.context.hosts.empty();
  if (fleet) t.add_column("ran on");
  for (const auto& p : r.points) {
    std::vector<std::string> row = {p.axes.strategy, reports::format_tokens(p.axes.seq_len),
                                    std::to_string(p.axes.batch)};
    if (any_budget) {
      const auto it = p.axes.extra.find("kv_budget");
      row.push_back(it != p.axes.extra.end() ? it->second : "-");
    }
    if (any_fit) row.push_back(reports::kv_fit_cell(p.kv_fit_fraction));
    if (!p.timed()) {
      row.insert(row.end(), {"-", "-"});
      if (any_modeled) row.push_back("-");
      row.insert(row.end(), {"-", "-", "-"});
      if (any_needle) row.push_back("-");
      if (any_captured) row.push_back("-");
      row.push_back(reports::status_cell(p));
    } else {
      row.push_back(reports::format_duration_ns(p.step.summary.median));
      row.push_back(reports::format_percent(reports::robust_rel_noise(p.step.summary)) +
                    (reports::missed_noise_target(p, reports::noise_target(r.context))
                         ? reports::kUnconvergedMark
                         : ""));
      if (any_modeled) {
        row.push_back(p.modeled.present()
                          ? reports::format_duration_ns(p.modeled.step.summary.median) + " (" +
                                reports::format_percent(p.modeled.error_vs_measured, true) + ")"
                          : "-");
      }
      const bool scored = p.accuracy.steps_scored > 0;
      row.push_back(scored ? reports::format_percent(p.accuracy.mass_recall) : "-");
      char cosine[32];
      std::snprintf(cosine, sizeof cosine, "%.4f", p.accuracy.cosine);
      row.push_back(scored ? cosine : "-");
      if (any_needle)
        row.push_back(scored && p.accuracy.has_needle()
                          ? reports::format_percent(p.accuracy.needle_success_rate)
                          : "-");
      if (any_captured) {
        char rel[32] = "-";
        if (scored && p.accuracy.captured_rel_l2)
          std::snprintf(rel, sizeof rel, "%.1e", *p.accuracy.captured_rel_l2);
        row.push_back(rel);
      }
      row.push_back(reports::attended_cell(p.attended_tokens));
      row.push_back(reports::to_string(p.provenance));
    }
    if (fleet) row.push_back(p.ran_on.host);
    t.add_row(std::move(row));
  }
  std::fputs(t.plain().c_str(), to);
  if (const std::string b = reports::kv_budget_sentence(r); !b.empty())
    std::fprintf(to, "%s\n", b.c_str());
  // Per setting and length, what the noise lets the headline claim within the accuracy target:
  // one winner, or the tie of every strategy it cannot separate from the fastest.
  for (const auto& pt : reports::procurement_tables(r)) {
    std::string line;
    for (const auto& [len, host] : pt.columns()) {
      const std::vector<std::string> lead = pt.leaders(len, host);
      if (pt.fastest(len, host).empty()) continue;
      std::string names;
      for (const auto& n : lead) names += (names.empty() ? "" : ", ") + n;
      line += (line.empty() ? "" : "; ") + reports::format_tokens(len) +
              (host.empty() ? "" : " @ " + host) + " " +
              (lead.empty()       ? "none"
               : lead.size() == 1 ? names
                                  : "tie " + names);
    }
    if (!line.empty())
      std::fprintf(to,
                   "fastest within %s per length (ablations aside; a tie lists every strategy the "
                   "95%% intervals cannot separate from the fastest): %s\n",
                   pt.target.describe().c_str(), line.c_str());
  }
}

// run --layers N: each point's measured N-layer stack against N x its one-layer step, and the
// sentence that sums the errors up (reports/layer_stack.h); nothing without stacks.
void print_layer_stacks(const reports::Report& r, std::FILE* to) {
  const reports::TextTable t = reports::layer_stack_table(r);
  if (t.rows() == 0) return;
  std::fputs(
      "\nLayer stacks (measured stack of N distinct layers vs N x the one-layer step, same "
      "rounds; error = stack / (N x one layer) - 1, 95% interval over the paired rounds):\n",
      to);
  std::fputs(t.plain().c_str(), to);
  std::fprintf(to, "%s\n", reports::layer_stack_sentence(r).c_str());
}

// Every point that stopped before its noise target, on stderr even with --quiet (issue 18: most
// points of a default run used to miss the target without a word).
void warn_unconverged(const reports::Report& r) {
  if (const std::string busy = reports::busy_machine_warning(r.context); !busy.empty())
    std::fprintf(stderr, "hybridbench: warning: %s\n", busy.c_str());
  if (const std::string w = reports::unconverged_warning(r); !w.empty()) {
    std::fflush(stdout);  // after the summary table when both go to one terminal or file
    std::fputs(w.c_str(), stderr);
  }
  // Strategies that ran on a stand-in (H2O / InfiniGen without prompt queries), also --quiet.
  if (const std::string w = reports::point_warnings_text(r); !w.empty()) {
    std::fflush(stdout);
    std::fputs(w.c_str(), stderr);
  }
  for (const auto& line : reports::accuracy_loss_lines(r))
    std::fprintf(stderr, "hybridbench: warning: lost most of the exact attention: %s\n",
                 line.c_str());
}

int run_command(RunArgs& a, CLI::App& sub) {
  register_baselines(StrategyRegistry::instance());
  register_hybrid(StrategyRegistry::instance());
  if (a.list_models) {
    std::printf("%-16s %-6s %6s %6s %4s %4s %5s %8s %7s\n", "model", "family", "layers", "hidden",
                "q", "kv", "d", "ctx", "vocab");
    for (const auto& m : model_presets())
      std::printf("%-16s %-6s %6d %6d %4d %4d %5d %8d %7d\n", m.name.c_str(),
                  kModelFamilies.name(m.family), m.layers, m.hidden, m.shape.q_heads,
                  m.shape.kv_heads, m.shape.head_dim, m.max_context, m.vocab);
    return kExitOk;
  }
  if (a.list_strategies) {
    for (const auto& s : StrategyRegistry::instance().all())
      std::printf("%-16s %-10s %s\n", s.name.c_str(), s.family.c_str(), s.summary.c_str());
    return kExitOk;
  }
  if (!a.config.empty()) apply_config(a, sub);
  auto& spec = a.spec;
  // A trace fixes its own length unless --seq-len was given.
  const bool length_from_trace =
      spec.workload.rfind("trace:", 0) == 0 && sub.get_option("--seq-len")->count() == 0;
  apply_sweep_axes(a.axes, spec, length_from_trace);
  if (length_from_trace) {
    const auto info = bench::inspect_trace(spec.workload.substr(6));
    spec.seq_lens = {info.tokens - info.steps};
  }
  // A trace without --model (or with --model trace) runs on its own attention shape.
  const auto given = [&](const char* o) { return sub.get_option(o)->count() > 0; };
  const std::string trace_note = bench::adopt_trace_model(
      spec, given("--model") && a.axes.models != "trace", given("--kv-dtype"), given("--scope"));
  if (!a.quiet) std::fputs(trace_note.c_str(), stderr);
  spec.validate();
  // Reports label a synthetic workload by its family and every knob that differs from its
  // defaults, however it was typed ("structured" is "diffuse", default knobs drop out).
  if (spec.workload.rfind("trace:", 0) != 0)
    spec.workload = parse_workload_spec(spec.workload).label();
  // Loaded (and validated) before anything runs. --mode model: the platforms to project onto;
  // measure mode: at most one profile, whose prediction of each measured step goes alongside.
  std::vector<model::PlatformModel> platforms;
  if (!a.platforms.empty())
    platforms = model::load_platform_models(bench::split_list([&] {
      std::string j;
      for (const auto& p : a.platforms) j += (j.empty() ? "" : ",") + p;
      return j;
    }()));
  const RunMode mode = *kRunModes.parse(a.mode);  // --mode's check admits only these names
  if (mode == RunMode::model && platforms.empty())
    throw Error("--mode model was given no platform profile",
                "add --platform presets, --platform preset:NAME or --platform FILE.json");
  // Huge pages asked for where the kernel grants none: say so once (each region's
  // observed_huge_page_bytes records what it got).
  if (!a.quiet && mode == RunMode::measure && spec.kv_pages == "thp")
    if (const std::string why = memtier::read_system_settings().huge_pages_refused(); !why.empty())
      std::fprintf(stderr, "hybridbench: warning: %s\n", why.c_str());
  if (mode == RunMode::measure && platforms.size() > 1)
    throw Error(
        "a measured run takes one --platform (its model's prediction is reported next to each "
        "measured point)",
        "pass one profile, or add --mode model to project onto several platforms");
  // What the node costs and draws: the profile's economics, with the command line's on top.
  const model::EconomicsOverride economics_given = parse_economics_args(a.economics);
  if (!economics_given.empty() && platforms.size() > 1)
    throw Error(
        "--price, --power and --gpus-per-node describe one node, but the run projects "
        "onto " +
            std::to_string(platforms.size()) + " platforms",
        "give each platform its \"economics\" in a profile file (--platform FILE, "
        "model/README.md), or project onto one platform");
  model::PlatformEconomics measured_economics;
  if (!platforms.empty()) measured_economics = platforms[0].economics;
  model::apply_override(measured_economics, economics_given, today_utc());
  if (!platforms.empty()) platforms[0].economics = measured_economics;

  check_fleet_arguments(spec, a.distribute);
  a.out = out_or_json(a.out, a.json);
  if (!a.resume.empty()) {
    if (!a.distribute.empty())
      throw Error("--resume does not apply to --distribute runs",
                  "re-run the fleet sweep without --resume");
    if (!a.out.empty() && a.out != a.resume)
      throw Error("--resume " + a.resume + " writes that report, but --out names " + a.out,
                  "drop --out");
    a.out = a.resume;
  }
  std::shared_ptr<const bench::SweepControl>
      control;  // single-process runs: journal, signals, resume
  std::function<void(int64_t)>
      on_points_done;  // the session's test hook (HB_TEST_FAIL_AFTER_POINTS)
  const std::string out = a.out.empty() ? default_out_path() : a.out;
  // Before the sweep: a bad --out would otherwise lose it, and one that is an input would destroy
  // it. (Fleet runs: only rank 0 writes, on a host the others may not share, so ranks do not
  // check.)
  if (a.distribute.empty()) {
    std::vector<std::string> inputs = {a.config};
    if (spec.workload.rfind("trace:", 0) == 0) inputs.push_back(spec.workload.substr(6));
    for (const auto& p : a.platforms)
      for (const auto& f : bench::split_list(p)) inputs.push_back(f);
    reports::check_output_path(a.json.empty() ? "--out" : "--json", out, inputs);
  }
  std::FILE* const summary_to = reports::is_stdout_path(out) ? stderr : stdout;
  // One process's sweep on its own platform: the whole run, or one rank's share of a fleet run.
  auto sweep = [&](const bench::SweepSpec& s, bool show_progress) {
    PlatformSetup platform = setup_platform(s);
    if (mode == RunMode::measure && !platforms.empty())
      platform.env.model = model::make_step_model(platforms[0], false);
    platform.env.control = control;
    const memtier::LoadSnapshot load_start = memtier::take_load_snapshot();
    ProgressBar bar(a.quiet || !show_progress);
    const bench::ProgressFn on_progress = [&](const bench::Progress& p) {
      bar.update(p);
      if (on_points_done) on_points_done(p.done);
    };
    reports::Report report = mode == RunMode::model
                                 ? model::run_model_sweep(s, platforms, platform.env, on_progress)
                                 : bench::run_sweep(s, platform.env, on_progress);
    bar.finish();
    // How far this machine's memory carries each strategy (model mode: each profile's, above).
    if (mode == RunMode::measure)
      report.capacity =
          model::machine_capacity(s, report.context.accelerator, platform.env.host_tiers);
    // The whole model's ITL, tokens/s and economics per point (model/whole_model.h).
    if (mode == RunMode::model)
      model::attach_modeled_whole_model(report, platforms);
    else
      model::attach_measured_whole_model(
          report, s, measured_economics, platforms.empty() ? "" : platforms[0].name,
          !platforms.empty() && platforms[0].tier(MemoryKind::cxl) != nullptr);
    fill_context(report.context, platform);
    for (auto& [k, v] : memtier::load_facts(load_start, memtier::take_load_snapshot()))
      report.context.system_settings[k] = v;
    report.context.command_line = platform.command_line;
    return report;
  };
  if (!a.distribute.empty()) {
    bench::resolve_strategies(spec.strategies);  // a typo fails here, before any rank starts MPI
    // --distribute's check admits only the vocabulary's names.
    FleetRunOptions fo{*reports::kFleetModes.parse(a.distribute), a.gather_timeout_s,
                       sub.get_option("--device")->count() > 0, out};
    return run_fleet(spec, fo, sweep, [&](const reports::Report& r) {
      if (!a.quiet) print_summary(r, summary_to);
      if (!a.quiet) print_layer_stacks(r, summary_to);
      warn_unconverged(r);
    });
  }
  std::map<std::string, std::string> resume_must_match = {{"--mode", a.mode}};
  for (const auto& p : platforms)
    resume_must_match["--platform " + p.name] = p.origin + " (" + model::to_string(p.source) + ")";
  SweepSession session(out, sweep_identity(spec, resume_must_match, command_line_text()),
                       !a.resume.empty());
  control = session.control();
  on_points_done = [&](int64_t done) { session.check_injected_failure(done); };
  reports::Report report = sweep(spec, true);
  return session.finish(report, [&](const reports::Report& r) {
    if (!a.quiet) print_summary(r, summary_to);
    if (!a.quiet) print_layer_stacks(r, summary_to);
    warn_unconverged(r);
  });
}

}  // namespace

CommandFn add_run_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "run",
      "Sweep KV-cache strategies over models, sequence lengths and batch sizes; time each decode "
      "step\n"
      "until its noise converges, score it against an exact fp64 reference, and write a JSON "
      "report.\n\n"
      "Examples:\n"
      "  hybridbench run                                        # default sweep, < 2 min on 2 "
      "cores\n"
      "  hybridbench run --strategy cpu-only,hybridgen --seq-len 4k:128k:x2 --out r.json\n"
      "  hybridbench run --model qwen2.5-7b --batch 1,8 --workload needle\n"
      "  hybridbench run --workload llama-like:sink_mass=0.4,drift=0.3 --strategy quest,h2o\n"
      "  hybridbench run --workload trace:layer12.safetensors   # the trace's own shape "
      "(scripts/capture-trace.py)\n"
      "  hybridbench run --accelerator cpu --accelerator-memory 256M   # force offloading on a "
      "small budget\n"
      "  hybridbench run --opt h2o.heavy_ratio=0.2 --strategy h2o\n"
      "  mpirun -np 8 hybridbench run --distribute points --out node.json      # one rank per GPU\n"
      "  srun -N 4 hybridbench run --distribute replicate --out fleet.json     # one column per "
      "machine\n");
  auto a = std::make_shared<RunArgs>();
  auto& s = a->spec;
  s.deployment_kv_budget = true;  // no --accelerator-memory: the budget a deployment would have
  add_sweep_options(*sub, a->axes, s);
  sub->get_option("--accelerator-memory")
      ->description(
          "KV budget per layer in accelerator memory, e.g. 512M or 60G. Default, per model: "
          "cuda (device memory free less 10% - all layers' weights - activations) / layers, "
          "as a node serving the model has it; cpu (emulated memory) twice the KV of the "
          "sweep's smallest point, so longer lengths outgrow it (default sweep: about 32 MiB, "
          "4k fits, 16k and 32k do not). The report says per point how much of the KV fits "
          "(kv_fit_fraction)");
  sub->add_option("--workload", s.workload,
                  "Synthetic family with knobs, or a captured trace trace:FILE.safetensors "
                  "(knobs listed below; without --model a trace runs its own attention shape, "
                  "attention scope, model trace:NAME)")
      ->capture_default_str();
  sub->footer("--workload " + workload_help());
  add_integer_option(*sub, "--seed", s.seed,
                     "Workload seed (sequence b of a batch uses seed + 7919*b)")
      ->capture_default_str();
  add_accuracy_target_option(*sub, s.accuracy_target)->capture_default_str();
  add_integer_option(*sub, "--page-tokens", s.page_tokens, "Tokens per KV page (multiple of 16)",
                     16, 65536)
      ->capture_default_str();
  add_accelerator_option(*sub, s.accelerator.kind,
                         "cuda | cpu | auto (cpu = CPU threads emulating a GPU)");
  add_integer_option(*sub, "--device", s.accelerator.device, "CUDA device index", 0,
                     kMaxDeviceIndex)
      ->capture_default_str();
  add_seconds_option(*sub, "--min-time", s.stop.min_time_s,
                     "Sample each point for at least this many seconds",
                     parse::RealRange::between(0, bench::kMaxSeconds))
      ->capture_default_str();
  add_integer_option(
      *sub, "--layers", s.layers,
      "Check the whole-model shortcut (model = layers x one layer's step): besides each point, "
      "step its strategy as a stack of N distinct decoder layers (each its own KV, weights and "
      "scheduler state, each after the previous layer's output) in the same rounds; the report "
      "gives the stack's step and stack / (N x the point's step) - 1 per point. 1 = no stack; "
      "otherwise 4 up to the model's layers. Accuracy stays scored on one layer",
      1, bench::kMaxStackLayers)
      ->capture_default_str();
  add_integer_option(
      *sub, "--repetitions", s.repetitions,
      "Passes over the whole sweep, their rounds pooled per point: --rounds interleaves a "
      "group's strategies within seconds; passes add the machine's drift over minutes",
      1, 100)
      ->capture_default_str();
  sub->add_option("--kv-node", s.kv_node,
                  "Host NUMA node for offloaded KV (default: the CPU's local node); with "
                  "--distribute a list gives "
                  "one node per rank (0,1,...)");
  sub->add_option("--emulate-cxl", s.emulate_cxl,
                  "node=N (a NUMA node plays CXL) or bandwidth=GBps,latency=ns");
  sub->add_option("--kv-pages", s.kv_pages,
                  "Pages of host KV memory: 'thp' (transparent huge pages where the kernel's THP "
                  "setting allows, as the probe's read roof uses; a KV page is a 4 KiB block, so "
                  "on base pages every one costs a TLB miss) or '4k' (base pages, what plain "
                  "malloc gets)")
      ->capture_default_str();  // checked with the rest of the sweep (SweepSpec::validate)
  sub->add_option("--out", a->out,
                  "Report path (default: hybridbench-<UTC time>.json here; - = stdout, the summary "
                  "then goes to "
                  "stderr)");
  add_json_option(*sub, a->json, "the report (a second name of --out)");
  sub->add_option(
         "--resume", a->resume,
         "Continue the interrupted sweep whose report is OUT (Ctrl-C, SIGTERM, a failure "
         "mid-sweep): its finished "
         "points come from OUT.partial.jsonl, the rest run; give the same options as the first run")
      ->type_name("OUT");
  sub->add_option(
         "--mode", a->mode,
         "measure: time this machine; model: run each strategy here for its selection, accuracy "
         "and exact "
         "traffic, and time it with the --platform profiles' performance model (model)")
      ->check(
          CLI::IsMember(std::vector<std::string>(kRunModes.names.begin(), kRunModes.names.end())))
      ->capture_default_str();
  sub->add_option(
      "--platform", a->platforms,
      "--mode model: platform profiles to project onto, comma separated; measure mode: one profile "
      "(e.g. this machine's `probe --out` + `validate-model --write-model`) whose modeled time is "
      "reported "
      "next to each measured point. FILE.json, "
      "preset:NAME, or 'presets' for every shipped one (" +
          [] {
            std::string n;
            for (const auto& x : model::preset_names()) n += (n.empty() ? "" : ", ") + x;
            return n;
          }() +
          ")");
  add_economics_options(*sub, a->economics);
  sub->add_option("--distribute", a->distribute,
                  "Fleet run under mpirun/srun (needs an MPI build): points = split the sweep over "
                  "the ranks "
                  "(e.g. one per GPU of a node); replicate = every rank runs all of it on its own "
                  "hardware (compare "
                  "machines). Rank 0 writes one report of every rank's points and hosts")
      ->check(CLI::IsMember(std::vector<std::string>(reports::kFleetModes.names.begin(),
                                                     reports::kFleetModes.names.end())));
  add_seconds_option(
      *sub, "--gather-timeout", a->gather_timeout_s,
      "--distribute: seconds rank 0 waits for the other ranks after finishing its own share "
      "(0 = max(300, twice its own time)); ranks still silent then are reported failed and the job "
      "ends",
      parse::RealRange::between(0, bench::kMaxSeconds))
      ->capture_default_str();
  sub->add_option("--config", a->config,
                  "JSON file with any of these options by long name; flags win");
  sub->add_flag("--list-strategies", a->list_strategies, "List strategies and exit");
  sub->add_flag("--list-models", a->list_models, "List model presets and exit");
  sub->add_flag("-q,--quiet", a->quiet, "No progress bar, no summary table");
  return [a, sub] { return run_command(*a, *sub); };
}

}  // namespace hb::cli
