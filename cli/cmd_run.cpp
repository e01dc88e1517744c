// `hybridbench run`: parse the sweep, resolve the platform, run it, write the report.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <variant>

#include <nlohmann/json.hpp>

#include "baselines/register.h"
#include "bench/model_config.h"
#include "cli/command.h"
#include "cli/model_uncertainty.h"
#include "cli/economics_options.h"
#include "cli/fleet_run.h"
#include "cli/numeric_options.h"
#include "cli/output_options.h"
#include "cli/pass_processes.h"
#include "cli/platform_setup.h"
#include "cli/progress.h"
#include "cli/run_help.h"
#include "cli/run_session.h"
#include "cli/usage_error.h"
#include "core/json_text.h"
#include "memtier/machine_load.h"
#include "reports/busy_machine.h"
#include "cli/sweep_options.h"
#include "core/input_file.h"
#include "core/error.h"
#include "core/model_presets.h"
#include "kernels/backend.h"
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
#include "reports/point_table.h"
#include "reports/tables.h"
#include "reports/summary.h"
#include "reports/text_table.h"
#include "model/capacity.h"
#include "model/model_run.h"
#include "model/step_pricer.h"
#include "model/whole_model.h"
#include "bench/runner.h"
#include "bench/trace.h"

namespace hb::cli {

namespace {

// A measured run's defaults: passes, and each group's sampling time per pass.
constexpr int kMeasuredPasses = 3;
constexpr double kMeasuredPassTimeoutS = 10;
// Model mode's and a fleet rank's: one pass, 30 s a group.
constexpr int kOnePass = 1;
constexpr double kOnePassTimeoutS = 30;

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
  std::string tp = "auto";             // --tp: GPUs per replica in model mode
  std::string precision = "fp16";      // --precision: weights and KV types in model mode
  std::string distribute;              // fleet mode under mpirun/srun: points | replicate
  std::string pass_process = "fresh";  // --pass-process: fresh | same (cli/pass_processes.h)
  std::string kv_node;                 // --kv-node as given: spec.kv_nodes once parsed
  double gather_timeout_s = 0;
  bool list_strategies = false, list_models = false, quiet = false;
};

// Applies a --config JSON file: same names as the long options (with - or _), command-line
// flags win over the file.
void apply_config(RunArgs& a, CLI::App& sub) {
  const std::string text =
      read_input_file(a.config, {"config file", kMaxProfileBytes, "check the --config path"});
  nlohmann::json j;
  try {
    j = parse_json_text<nlohmann::json>(text);
  } catch (const std::exception& e) {
    throw Error("config file '" + a.config + "' is not valid JSON: " + e.what(),
                "fix the file (see `run --help-all`)");
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
      std::vector<std::string> names;
      for (const CLI::Option* o : sub.get_options())
        for (const auto& l : o->get_lnames()) names.push_back(l);
      const std::string near = nearest_name(key, names);
      throw Error("config file '" + a.config + "' has unknown key '" + it.key() + "'",
                  (near.empty() ? "" : "did you mean \"" + near + "\"? ") +
                      "use the long option names of `hybridbench run --help-all`");
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
      throw Error(
          "config file '" + a.config + "', key '" + it.key() + "': " + e.what(),
          "fix the value in the file (`hybridbench run --help-all` gives each option's range)");
    }
  }
}

std::string default_out_path() {
  char buf[64];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "hybridbench-%Y%m%d-%H%M%S.json", std::gmtime(&t));
  return buf;
}

// The summary sentences, then one line per point on `to` (stdout, or stderr when the JSON goes to
// stdout; the JSON has everything): reports/point_table.h.
void print_summary(const reports::Report& r, std::FILE* to) {
  // The answer first (issue 19): the same sentences the markdown and HTML reports open with.
  std::fputs("Summary:\n", to);
  for (const auto& s : reports::summary_sentences(r)) std::fprintf(to, "  - %s\n", s.c_str());
  std::fputs("\n", to);
  std::fputs(reports::point_table(r).plain().c_str(), to);
  if (const std::string b = reports::kv_budget_sentence(r); !b.empty())
    std::fprintf(to, "%s\n", b.c_str());
  for (const auto& line : reports::fastest_within_target_lines(r))
    std::fprintf(to, "%s\n", line.c_str());
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
  if (const std::string busy = reports::busy_machine_warning(r); !busy.empty())
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

// What a finished sweep prints: the summary and stacks (unless --quiet) and, always, warnings.
void print_after_sweep(const reports::Report& r, bool quiet, std::FILE* to) {
  if (!quiet) print_summary(r, to);
  if (!quiet) print_layer_stacks(r, to);
  warn_unconverged(r);
}

// --list-models, --list-strategies: true when one was given (and printed).
bool list_and_exit(const RunArgs& a) {
  if (a.list_models) {
    std::printf("%-16s %-6s %6s %6s %4s %4s %5s %8s %7s\n", "model", "family", "layers", "hidden",
                "q", "kv", "d", "ctx", "vocab");
    for (const auto& m : model_presets())
      std::printf("%-16s %-6s %6d %6d %4d %4d %5d %8d %7d\n", m.name.c_str(),
                  kModelFamilies.name(m.family), m.layers, m.hidden, m.shape.q_heads,
                  m.shape.kv_heads, m.shape.head_dim, m.max_context, m.vocab);
    return true;
  }
  if (a.list_strategies) {
    for (const auto& s : StrategyRegistry::instance().all())
      std::printf("%-16s %-10s %s\n", s.name.c_str(), s.family.c_str(), s.summary.c_str());
    return true;
  }
  return false;
}

// A measured run on an emulated accelerator (the cpu one) times attention unless --scope says
// otherwise: there the layer's GEMMs run on the CPU cores the strategies use (about 80% of a 4k
// layer step on a 2-core VM, under 5% on a GPU), so a layer step would mostly time the stand-in.
void default_scope(const RunArgs& a, bench::SweepSpec& spec, bool scope_given) {
  if (scope_given || spec.scope == Scope::attention || a.mode != "measure" || !a.distribute.empty())
    return;
  if (!backend(spec.accelerator.kind, spec.accelerator.device).emulated) return;
  spec.scope = Scope::attention;
  if (!a.quiet)
    std::fputs(
        "hybridbench: the accelerator is emulated (CPU threads): timing attention, what "
        "the strategies differ in; --scope layer times the whole decoder layer\n",
        stderr);
}

// The sweep the options ask for, resolved: --config applied, the axes parsed, the workload opened
// once (a trace: its length unless --seq-len, its own model unless --model), then validated.
bench::ResolvedSweep resolve_sweep(RunArgs& a, CLI::App& sub) {
  if (!a.config.empty()) apply_config(a, sub);
  auto& spec = a.spec;
  const auto given = [&](const char* o) { return sub.get_option(o)->count() > 0; };
  bench::SweepWorkload workload = bench::open_workload(spec.workload);
  const auto* opened = std::get_if<std::shared_ptr<const bench::TraceFile>>(&workload);
  const bench::TraceFile* trace = opened ? opened->get() : nullptr;
  const bool length_from_trace = trace && !given("--seq-len");
  apply_sweep_axes(a.axes, spec, length_from_trace);
  // Passes in fresh processes are a measured run's on one machine: model mode's timings are
  // modeled, and fleet ranks are MPI's processes (which must not fork). Those keep one pass.
  const bool one_pass_default = a.mode == "model" || !a.distribute.empty();
  if (one_pass_default && !given("--repetitions")) spec.repetitions = kOnePass;
  if (one_pass_default && !given("--timeout")) spec.stop.timeout_s = kOnePassTimeoutS;
  // Model mode answers which platform and strategy to buy: the ablations, which no ranking
  // reads, would cost half its time at long context (20 of 28 executions at 128k are
  // HybridGen's five variants).
  if (a.mode == "model" && !given("--strategy")) {
    spec.strategies = {"headline"};
    if (!a.quiet)
      std::fputs(
          "hybridbench: --mode model runs the headline strategies (no HybridGen ablations); "
          "--strategy all adds them\n",
          stderr);
  }
  spec.kv_nodes = bench::parse_kv_nodes(a.kv_node);
  spec.pass_per_process = a.pass_process == "fresh" && a.mode == "measure" && a.distribute.empty();
  if (given("--pass-process") && a.pass_process == "fresh" && !spec.pass_per_process)
    throw Error("--pass-process fresh applies to measured runs on one machine",
                "drop it (--mode model prices steps with a model; --distribute ranks are MPI's "
                "processes)");
  if (length_from_trace) spec.seq_lens = {trace->info().prompt_tokens()};
  // A trace without --model (or with --model trace) runs on its own attention shape.
  const std::string trace_note =
      bench::adopt_trace_model(spec, trace, given("--model") && a.axes.models != "trace",
                               given("--kv-dtype"), given("--scope"));
  if (!a.quiet) std::fputs(trace_note.c_str(), stderr);
  default_scope(a, spec, given("--scope"));  // after the trace's own choice, which it says
  return spec.validate(std::move(workload));
}

// --mode and the --platform profiles, loaded (and validated) before anything runs. --mode model:
// the platforms to project onto; measure mode: at most one profile, whose prediction of each
// measured step goes alongside. The node's economics: the profile's, the command line's on top.
struct RunPlatforms {
  RunMode mode = RunMode::measure;
  std::vector<model::PlatformModel> profiles;
  model::PlatformEconomics measured_economics;
  std::vector<model::DeploymentRequest> deployments;  // --tp and --precision (model mode)
};

RunPlatforms load_platforms(const RunArgs& a) {
  RunPlatforms p;
  p.mode = *kRunModes.parse(a.mode);  // --mode's check admits only these names
  if (!a.platforms.empty()) {
    std::string list;
    for (const auto& x : a.platforms) list += (list.empty() ? "" : ",") + x;
    p.profiles = model::load_platform_models(bench::split_list(list, "--platform"));
  }
  if (p.mode == RunMode::model && p.profiles.empty())
    throw Error("--mode model was given no platform profile",
                "add --platform presets, --platform preset:NAME or --platform FILE.json");
  if (p.mode == RunMode::measure && p.profiles.size() > 1)
    throw Error(
        "a measured run takes one --platform (its model's prediction is reported next to each "
        "measured point)",
        "pass one profile, or add --mode model to project onto several platforms");
  p.deployments = model::parse_deployments(a.tp, a.precision);
  if (p.mode == RunMode::measure && (a.tp != "auto" || a.precision != "fp16"))
    throw Error(
        "--tp and --precision price a deployment in model mode; a measured run runs what "
        "this machine runs",
        "add --mode model --platform ..., or drop them");
  const model::EconomicsOverride economics_given = parse_economics_args(a.economics);
  if (!economics_given.empty() && p.profiles.size() > 1)
    throw Error(
        "--price, --power and --gpus-per-node describe one node, but the run projects "
        "onto " +
            std::to_string(p.profiles.size()) + " platforms",
        "give each platform its \"economics\" in a profile file (--platform FILE, "
        "model/README.md), or project onto one platform");
  if (!p.profiles.empty()) p.measured_economics = p.profiles[0].economics;
  model::apply_override(p.measured_economics, economics_given, today_utc());
  if (!p.profiles.empty()) p.profiles[0].economics = p.measured_economics;
  return p;
}

// The report's path (--out / --json, --resume's, else a dated name here), checked before the
// sweep: a bad --out would otherwise lose it, and one that is an input would destroy it. (Fleet
// runs: only rank 0 writes, on a host the others may not share, so ranks do not check.)
std::string report_path(RunArgs& a, const bench::ResolvedSweep& sweep) {
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
  const std::string out = a.out.empty() ? default_out_path() : a.out;
  if (a.distribute.empty()) {
    std::vector<std::string> inputs = {a.config};
    if (const bench::TraceFile* t = sweep.trace()) inputs.push_back(t->path());
    for (const auto& p : a.platforms)
      for (const auto& f : bench::split_list(p, "--platform")) inputs.push_back(f);
    for (const auto& m : bench::split_list(a.axes.models, "--model"))  // config.json files
      if (bench::is_model_config_path(m))
        inputs.push_back(std::filesystem::is_directory(m) ? m + "/config.json" : m);
    const std::string option = !a.resume.empty() ? "--resume" : a.json.empty() ? "--out" : "--json";
    check_journal_name_room(option, out);
    reports::check_output_path(option, out, inputs);
  }
  return out;
}

// One process's sweep on its own platform: the whole run, or one rank's share of a fleet run.
// With --repetitions passes in fresh processes, each pass is such a sweep in its own child, and
// the figures that depend on the pooled points (the whole model's) are made after pooling.
struct MachineSweep {
  const RunPlatforms& platforms;
  bool quiet = false;
  std::shared_ptr<const bench::SweepControl> control;  // single-process runs: journal, signals
  std::function<void(int64_t)> on_points_done;         // the session's test hook
  PassProcessHooks passes;  // run_pass is filled here, stop_signal by the session

  reports::Report operator()(const bench::ResolvedSweep& s, bool show_progress) const {
    const memtier::LoadSnapshot load_start = memtier::take_load_snapshot();
    const auto began = std::chrono::steady_clock::now();
    reports::Report report;
    if (s.spec.repetitions > 1 && s.spec.pass_per_process) {
      PassProcessHooks h = passes;
      h.run_pass = [&](const bench::ResolvedSweep& one) {
        return sweep_here(one, show_progress, began);
      };
      report = run_passes_in_processes(s, h);
    } else {
      report = sweep_here(s, show_progress);
    }
    if (report.points.empty() && report.interruption.interrupted) return report;
    attach_whole_model(report, s);
    for (auto& [k, v] : memtier::load_facts(load_start, memtier::take_load_snapshot()))
      report.context.system_settings[k] = v;
    return report;
  }

  // The sweep (or one pass of it) in this process, with its context. A pass (only_pass) counts
  // its progress within the whole run's, which began at `began`.
  reports::Report sweep_here(const bench::ResolvedSweep& s, bool show_progress,
                             std::chrono::steady_clock::time_point began = {}) const {
    const RunMode mode = platforms.mode;
    const auto& profiles = platforms.profiles;
    PlatformSetup platform = setup_platform(s.spec);
    if (mode == RunMode::measure && !profiles.empty())
      platform.env.observer = model::make_step_pricer(profiles[0], {.replace = false});
    platform.env.control = control;
    ProgressBar bar(quiet || !show_progress);
    const bench::ProgressFn on_progress = [&](const bench::Progress& p) {
      if (on_points_done) on_points_done(p.done);
      if (s.spec.only_pass < 0) return bar.update(p);
      bench::Progress whole = p;
      const int pass = s.spec.only_pass, passes = s.spec.repetitions;
      whole.done += pass * p.total;
      whole.total *= passes;
      whole.done_cost += pass * p.total_cost;
      whole.total_cost *= passes;
      whole.elapsed_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
      bar.update(whole);
    };
    reports::Report report =
        mode == RunMode::model
            ? model::run_model_sweep(s, profiles, platform.env, on_progress, platforms.deployments)
            : bench::run_sweep(s, platform.env, on_progress);
    bar.finish();
    // How far this machine's memory carries each strategy (model mode: each profile's, above).
    if (mode == RunMode::measure)
      report.capacity =
          model::machine_capacity(s.spec, report.context.accelerator, platform.env.host_tiers);
    fill_context(report.context, platform);
    report.context.command_line = platform.command_line;
    return report;
  }

  // The whole model's ITL, tokens/s and economics per point (model/whole_model.h).
  void attach_whole_model(reports::Report& report, const bench::ResolvedSweep& s) const {
    const auto& profiles = platforms.profiles;
    if (platforms.mode == RunMode::model) {
      model::attach_modeled_whole_model(report, profiles, s.spec.own_models);
      // What the figures are worth (issue 49 item 5): the published rows' errors, and each
      // platform's sourced price, power and bandwidth.
      report.context.model_uncertainty = model_uncertainty();
      report.context.assumptions = platform_assumptions(profiles);
    } else
      model::attach_measured_whole_model(
          report, s.spec, platforms.measured_economics, profiles.empty() ? "" : profiles[0].name,
          !profiles.empty() && profiles[0].tier(MemoryKind::cxl) != nullptr);
  }
};

int run_command(RunArgs& a, CLI::App& sub) {
  register_baselines(StrategyRegistry::instance());
  register_hybrid(StrategyRegistry::instance());
  if (list_and_exit(a)) return kExitOk;
  const bench::ResolvedSweep sweep = resolve_sweep(a, sub);
  const RunPlatforms platforms = load_platforms(a);
  // Huge pages asked for where the kernel grants none: say so once (each region's
  // observed_huge_page_bytes records what it got).
  if (!a.quiet && platforms.mode == RunMode::measure && sweep.spec.kv_pages == bench::KvPages::thp)
    if (const std::string why = memtier::read_system_settings().huge_pages_refused(); !why.empty())
      std::fprintf(stderr, "hybridbench: warning: %s\n", why.c_str());
  check_fleet_arguments(sweep.spec, a.distribute);
  const std::string out = report_path(a, sweep);
  std::FILE* const summary_to = reports::is_stdout_path(out) ? stderr : stdout;
  const auto after = [&](const reports::Report& r) { print_after_sweep(r, a.quiet, summary_to); };
  MachineSweep machine{platforms, a.quiet, nullptr, nullptr, {}};
  if (!a.distribute.empty()) {
    bench::resolve_strategies(sweep.spec.strategies);  // a typo fails here, before MPI starts
    // --distribute's check admits only the vocabulary's names.
    FleetRunOptions fo{*reports::kFleetModes.parse(a.distribute), a.gather_timeout_s,
                       sub.get_option("--device")->count() > 0, out};
    return run_fleet(sweep, fo, machine, after);
  }
  std::map<std::string, std::string> resume_must_match = {{"--mode", a.mode}};
  for (const auto& p : platforms.profiles)
    resume_must_match["--platform " + p.name] = p.origin + " (" + model::to_string(p.source) + ")";
  SweepSession session(out, sweep_identity(sweep, resume_must_match, command_line_text()),
                       !a.resume.empty());
  machine.control = session.control();
  machine.on_points_done = [&](int64_t done) { session.check_injected_failure(done); };
  machine.passes.stop_signal = [&] { return session.stop_signal(); };
  reports::Report report;
  try {
    report = machine(sweep, true);
  } catch (const Error& e) {
    throw session.with_resume_hint(e);  // e.g. the first pass's process died: its points are kept
  }
  return session.finish(report, after);
}

}  // namespace

namespace {

// What the points run on: the workload and how each is sampled beyond the shared options.
void add_workload_options(CLI::App& sub, bench::SweepSpec& s) {
  sub.add_option("--workload", s.workload,
                 "Synthetic family with knobs, or a captured trace trace:FILE.safetensors "
                 "(knobs listed below; without --model a trace runs its own attention shape, "
                 "attention scope, model trace:NAME)")
      ->capture_default_str();
  sub.footer("--workload " + workload_help());
  add_integer_option(sub, "--seed", s.seed,
                     "Workload seed (sequence b of a batch uses seed + 7919*b)")
      ->capture_default_str();
  add_accuracy_target_option(sub, s.accuracy_target)->capture_default_str();
  add_percent_option(
      sub, "--tie-margin", s.tie_margin,
      "Percent a strategy must lead every contender by (its median paired ratio, "
      "with the 95% interval excluding 1) for the headline to name it the winner, "
      "else it names the tie. Default: twice a ratio's spread between identical runs on a 2-core "
      "VM (SD 1.9%, which one run's intervals cannot see), and compare's "
      "--min-effect. 0 = the interval alone",
      parse::RealRange::between(0, 100));
  add_integer_option(sub, "--page-tokens", s.page_tokens, "Tokens per KV page (multiple of 16)", 16,
                     65536)
      ->capture_default_str();
  add_seconds_option(sub, "--min-time", s.stop.min_time_s,
                     "Sample each point for at least this many seconds",
                     parse::RealRange::between(0, bench::kMaxSeconds))
      ->capture_default_str();
  add_integer_option(
      sub, "--layers", s.layers,
      "Check the whole-model shortcut (model = layers x one layer's step): besides each point, "
      "step its strategy as a stack of N distinct decoder layers (each its own KV, weights and "
      "scheduler state, each after the previous layer's output) in the same rounds; the report "
      "gives the stack's step and stack / (N x the point's step) - 1 per point. 1 = no stack; "
      "otherwise 4 up to the model's layers. Accuracy stays scored on one layer",
      1, bench::kMaxStackLayers)
      ->capture_default_str();
  add_integer_option(
      sub, "--repetitions", s.repetitions,
      "Passes over the whole sweep, each in a fresh process (--pass-process), their rounds "
      "pooled per point: --rounds interleaves a group's strategies within seconds; passes add "
      "what a process and the minute it runs in fix, and each speedup's interval spans the "
      "passes' spread (Student's t from the point group's pass-to-pass spread)",
      1, 100)
      ->capture_default_str();
}

// Where the sweep runs: the accelerator, its memory, and where host KV lives.
void add_placement_options(CLI::App& sub, RunArgs& a) {
  bench::SweepSpec& s = a.spec;
  sub.get_option("--accelerator-memory")
      ->description(
          "KV budget per layer in accelerator memory, e.g. 512M or 60G. Default, per model: "
          "cuda (device memory free less 10% - all layers' weights - activations) / layers, "
          "as a node serving the model has it; cpu (emulated memory) twice the KV of the "
          "sweep's smallest point, so longer lengths outgrow it (default sweep: about 32 MiB, "
          "4k fits, 16k and 32k do not). The report says per point how much of the KV fits "
          "(kv_fit_fraction)");
  add_accelerator_option(sub, s.accelerator.kind,
                         "cuda | cpu | auto (cpu = CPU threads emulating a GPU)");
  add_integer_option(sub, "--device", s.accelerator.device, "CUDA device index", 0, kMaxDeviceIndex)
      ->capture_default_str();
  sub.add_option("--kv-node", a.kv_node,
                 "Host NUMA node for offloaded KV (default: the CPU's local node); with "
                 "--distribute a list gives one node per rank (0,1,...)");
  sub.add_option("--emulate-cxl", s.emulate_cxl,
                 "node=N (a NUMA node plays CXL) or bandwidth=GBps,latency=ns");
  add_vocabulary_option(sub, "--kv-pages", s.kv_pages, bench::kKvPages, "KV page kind",
                        "Pages of host KV memory: 'thp' (transparent huge pages where the kernel's "
                        "THP setting allows, as the probe's read roof uses; a KV page is a 4 KiB "
                        "block, so on base pages every one costs a TLB miss) or '4k' (base pages, "
                        "what plain malloc gets)");
}

// Measure here or project onto profiles, and fleet runs.
void add_mode_options(CLI::App& sub, RunArgs& a) {
  sub.add_option("--mode", a.mode,
                 "measure: time this machine; model: run each strategy here for its selection, "
                 "accuracy and exact traffic, and time it with the --platform profiles' "
                 "performance model (model)")
      ->check(
          CLI::IsMember(std::vector<std::string>(kRunModes.names.begin(), kRunModes.names.end())))
      ->capture_default_str();
  std::string presets;
  for (const auto& x : model::preset_names()) presets += (presets.empty() ? "" : ", ") + x;
  sub.add_option("--platform", a.platforms,
                 "--mode model: platform profiles to project onto, comma separated; measure "
                 "mode: one profile (e.g. this machine's `probe --out` + `validate-model "
                 "--write-model`) whose modeled time is reported next to each measured point. "
                 "FILE.json, preset:NAME, or 'presets' for every shipped one (" +
                     presets + ")");
  add_economics_options(sub, a.economics);
  sub.add_option("--tp", a.tp,
                 "--mode model: GPUs of the platform's node one model replica spans (tensor "
                 "parallelism: weights and KV heads split, two all-reduces a layer on the node's "
                 "interconnect), or auto: the smallest that holds the weights and the batch's KV "
                 "(model/README.md)")
      ->capture_default_str();
  sub.add_option("--precision", a.precision,
                 "--mode model: element types priced, comma separated, one lane each: fp16, "
                 "fp8 (weights and KV in fp8 e4m3), fp8-weights (KV fp16)")
      ->capture_default_str();
  sub.add_option("--pass-process", a.pass_process,
                 "fresh: each --repetitions pass runs in its own process (forked one after "
                 "another), so where its memory lands and how its threads settle vary between "
                 "passes as between runs; same: every pass in this process (shifts set per "
                 "process are then invisible to the intervals)")
      ->check(CLI::IsMember({"fresh", "same"}))
      ->capture_default_str();
  sub.add_option("--distribute", a.distribute,
                 "Fleet run under mpirun/srun (needs an MPI build): points = split the sweep over "
                 "the ranks (e.g. one per GPU of a node); replicate = every rank runs all of it on "
                 "its own hardware (compare machines). Rank 0 writes one report of every rank's "
                 "points and hosts")
      ->check(CLI::IsMember(std::vector<std::string>(reports::kFleetModes.names.begin(),
                                                     reports::kFleetModes.names.end())));
  add_seconds_option(
      sub, "--gather-timeout", a.gather_timeout_s,
      "--distribute: seconds rank 0 waits for the other ranks after finishing its own share "
      "(0 = max(300, twice its own time)); ranks still silent then are reported failed and the job "
      "ends",
      parse::RealRange::between(0, bench::kMaxSeconds))
      ->capture_default_str();
}

// Where the report goes, resuming, the config file, listings.
void add_output_options(CLI::App& sub, RunArgs& a) {
  sub.add_option("--out", a.out,
                 "Report path (default: hybridbench-<UTC time>.json here; - = stdout, the summary "
                 "then goes to stderr)");
  add_json_option(sub, a.json, "the report (a second name of --out)");
  sub.add_option("--resume", a.resume,
                 "Continue the interrupted sweep whose report is OUT (Ctrl-C, SIGTERM, a failure "
                 "mid-sweep): its finished points come from OUT.partial.jsonl, the rest run; give "
                 "the same options as the first run")
      ->type_name("OUT");
  sub.add_option("--config", a.config,
                 "JSON file with any of these options by long name; flags win");
  sub.add_flag("--list-strategies", a.list_strategies, "List strategies and exit");
  sub.add_flag("--list-models", a.list_models, "List model presets and exit");
  sub.add_flag("-q,--quiet", a.quiet, "No progress bar, no summary table");
}

}  // namespace

CommandFn add_run_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "run",
      "Sweep KV-cache strategies over models, sequence lengths and batch sizes; time each decode "
      "step\n"
      "until its noise converges, score it against an exact fp64 reference, and write a JSON "
      "report.\n\n"
      "Examples (README.md has more):\n"
      "  hybridbench run                                        # default sweep, ~2.5 min on 2 "
      "cores\n"
      "  hybridbench run --strategy cpu-only,hybridgen --seq-len 4k:128k:x2 --out r.json\n"
      "  hybridbench run --model qwen2.5-7b --batch 1,8 --workload needle\n"
      "  hybridbench run --accelerator cpu --accelerator-memory 256M   # force offloading on a "
      "small budget\n"
      "  mpirun -np 8 hybridbench run --distribute points --out node.json      # one rank per "
      "GPU\n");
  auto a = std::make_shared<RunArgs>();
  a->spec.deployment_kv_budget = true;  // no --accelerator-memory: the budget a deployment has
  // Three passes, each in a fresh process, so the intervals span what a process fixes (issue
  // 33); 10 s a group and pass keeps the default sweep's sampling time at 30 s a group.
  a->spec.repetitions = kMeasuredPasses;
  a->spec.stop.timeout_s = kMeasuredPassTimeoutS;
  add_sweep_options(*sub, a->axes, a->spec);
  add_workload_options(*sub, a->spec);
  add_placement_options(*sub, *a);
  add_output_options(*sub, *a);
  add_mode_options(*sub, *a);
  group_run_help(*sub);
  return [a, sub] { return run_command(*a, *sub); };
}

}  // namespace hb::cli
