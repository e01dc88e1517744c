// `hybridbench validate-model`: how far the projection model (model) is from this
// machine. Measures a small sweep here and prices each of its steps from the step's exact
// traffic with a profile of this machine (given, or probed and calibrated on the fly), then
// prints the per-point and per-strategy error. Parsing and wiring only.
#include <algorithm>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "baselines/register.h"
#include "cli/command.h"
#include "cli/model_uncertainty.h"
#include "cli/numeric_options.h"
#include "cli/platform_setup.h"
#include "cli/output_options.h"
#include "cli/progress.h"
#include "cli/sweep_options.h"
#include "core/input_file.h"
#include "core/error.h"
#include "core/model_presets.h"
#include "core/thread_pool.h"
#include "hybrid/register.h"
#include "kernels/backend.h"
#include "reports/json_io.h"
#include "reports/output_file.h"
#include "model/calibrate.h"
#include "model/published.h"
#include "model/published_projection.h"
#include "model/validate.h"

namespace hb::cli {

namespace {

struct ValidateArgs {
  bench::SweepSpec spec;
  SweepAxesText axes{.seq_lens = "8k,32k,64k",
                     .kv_budgets = {},
                     .strategy_options = {}};  // --model, --seq-len, ... (cli/sweep_options.h)
  std::string platform, out, json, report, write_model;
  double goal = 0.15;
  bool check = false, quiet = false, no_live = false, published = false;
};

std::string read_file(const std::string& path) {
  return read_input_file(path, {"platform profile", kMaxProfileBytes, "check the path"});
}

// The model is calibrated here only for emulated backends (CPU threads playing a GPU, every
// figure from this machine's own probes); a real device needs a complete profile of its own,
// which is not wired yet. `auto` is refused too: which backend it takes depends on the machine.
void check_calibratable(AcceleratorKind kind) {
  if (kind != AcceleratorKind::auto_select && backend(kind).emulated) return;
  std::string names;
  for (const Backend& b : backends())
    if (b.emulated) names += std::string(names.empty() ? "" : " or ") + b.name();
  throw Error("validate-model calibrates the " + names + " accelerator only (--accelerator " +
                  std::string(kAcceleratorKinds.name(kind)) + ")",
              "use --accelerator " + names +
                  "; GPU validation needs a complete cuda profile and is not wired yet");
}

// The sweep to measure, checked and resolved once (its workload opened, as `run` does): one KV
// type, an emulated accelerator, thread counts pinned to what the runner would pick so the
// calibration measures the same ones.
bench::ResolvedSweep resolve_sweep(ValidateArgs& a) {
  auto& spec = a.spec;
  apply_sweep_axes(a.axes, spec);
  if (spec.kv_dtypes.size() != 1)
    throw Error("validate-model calibrates one KV element type at a time (--kv-dtype " +
                    a.axes.kv_dtypes + ")",
                "give one of fp16, bf16, fp32 and run again for another");
  check_calibratable(spec.accelerator.kind);
  const int cpus = static_cast<int>(allowed_cpus().size());
  if (spec.accelerator.cpu_threads <= 0) spec.accelerator.cpu_threads = std::max(1, cpus / 2);
  if (spec.host_threads <= 0) spec.host_threads = std::max(1, cpus - spec.accelerator.cpu_threads);
  return spec.validate();
}

// Before calibrating or measuring anything. --write-model may be --platform: it extends the
// document it read (see --help); the validation and the report may not overwrite the profile.
void check_outputs(ValidateArgs& a) {
  a.out = out_or_json(a.out, a.json);
  reports::check_output_path(a.json.empty() ? "--out" : "--json", a.out, {a.platform});
  reports::check_output_path("--report", a.report, {a.platform});
  reports::check_output_path("--write-model", a.write_model);
  reports::check_distinct_outputs(
      {{"--out", a.out}, {"--report", a.report}, {"--write-model", a.write_model}});
}

using Say = std::function<void(const std::string&)>;

// This machine's profile with its model figures: --platform's when complete for the cpu
// accelerator, else calibrated now (probing first without --platform). `doc`: the platform
// document --write-model extends.
model::PlatformModel machine_profile(const ValidateArgs& a, const model::CalibrationOptions& co,
                                     const Say& say, std::string& doc) {
  model::PlatformModel m;
  if (a.platform.empty()) {
    say("no --platform: probing this machine (quick) and calibrating");
    m = model::measure_this_machine(co, say, &doc);
  } else {
    doc = read_file(a.platform);
    m = model::parse_platform_model(doc, a.platform, false);
    bool complete = true;
    try {
      m.validate();
    } catch (const Error&) {
      complete = false;
    }
    if (!complete || !m.accelerator.emulated()) {
      say("profile " + a.platform +
          " lacks figures for this run's cpu accelerator: calibrating them");
      m = model::calibrate_this_machine(m, co, false, say);
    } else if (m.cpu.cores != a.spec.host_threads) {
      say("profile has cpu.cores " + std::to_string(m.cpu.cores) + "; this run uses " +
          std::to_string(a.spec.host_threads) + " host thread(s), so the model does too");
      m.cpu.cores = a.spec.host_threads;
    }
  }
  m.validate();
  return m;
}

model::CalibrationOptions calibration_options(const bench::SweepSpec& spec) {
  model::CalibrationOptions co;
  co.host_threads = spec.host_threads;
  co.accelerator_threads = spec.accelerator.cpu_threads;
  co.accelerator_capacity_bytes =
      spec.accelerator.capacity_bytes > 0 ? spec.accelerator.capacity_bytes : int64_t{2} << 30;
  co.shape = spec.model(spec.models[0]).shape;
  co.shape.kv_dtype = spec.kv_dtypes[0];
  co.page_tokens = spec.page_tokens;
  return co;
}

// Measures the sweep here, pricing each step with `m` (and, unless --no-live, with ceilings
// re-measured next to it: the bench covers the sweep's largest working set, offload's
// accelerator side touching the KV twice).
model::Validation measure_and_price(const ValidateArgs& a, const bench::ResolvedSweep& sweep,
                                    const model::PlatformModel& m,
                                    const model::CalibrationOptions& co) {
  const auto& spec = sweep.spec;
  PlatformSetup platform = setup_platform(spec);
  ProgressBar bar(a.quiet);
  model::CalibrationOptions live = co;
  const int64_t max_n =
      *std::max_element(spec.seq_lens.begin(), spec.seq_lens.end()) + spec.decode_steps;
  const int max_b = *std::max_element(spec.batches.begin(), spec.batches.end());
  live.max_bytes = static_cast<size_t>(2 * max_n * max_b * co.shape.kv_bytes_per_token());
  model::Validation v = model::validate_model(
      sweep, platform.env, m, [&](const bench::Progress& p) { bar.update(p); },
      a.no_live ? nullptr : &live);
  bar.finish();
  fill_context(v.measured.context, platform);
  v.measured.context.command_line = platform.command_line;
  return v;
}

// --published: no sweep here; every row of the shipped table projected with model mode on its
// platform preset, beside the published value. The sweep's axes and the profile options do not
// apply (each row names its own), so giving them is refused rather than ignored.
int validate_published(ValidateArgs& a, const CLI::App& sub) {
  for (const char* o : {"--platform", "--report", "--write-model", "--seq-len", "--batch",
                        "--model", "--strategy", "--kv-dtype", "--no-live", "--goal"})
    if (sub.count(o) > 0)
      throw Error(std::string("--published projects the shipped rows, each with its own "
                              "platform, model and lengths: ") +
                      o + " does not apply",
                  "drop " + std::string(o) + ", or drop --published to validate on this machine");
  a.out = out_or_json(a.out, a.json);
  reports::check_output_path(a.json.empty() ? "--out" : "--json", a.out);
  const model::PublishedValidation v = published_validation([&](const std::string& row) {
    if (!a.quiet) std::cerr << "validate-model: projecting " << row << "\n";
  });
  (reports::is_stdout_path(a.out) ? std::cerr : std::cout) << model::published_text(v);
  if (!a.out.empty()) reports::write_output(a.out, model::published_json(v));
  if (a.check && !model::published_goal_met(v)) return kExitRegression;
  return kExitOk;
}

int validate_command(ValidateArgs& a, const CLI::App& sub) {
  register_baselines(StrategyRegistry::instance());
  register_hybrid(StrategyRegistry::instance());
  if (a.published) return validate_published(a, sub);
  const bench::ResolvedSweep sweep = resolve_sweep(a);
  check_outputs(a);
  // With an output on standard output, the human text goes to stderr so stdout stays JSON.
  const bool json_on_stdout = reports::is_stdout_path(a.out) || reports::is_stdout_path(a.report) ||
                              reports::is_stdout_path(a.write_model);
  const Say say = [&](const std::string& line) {
    if (!a.quiet) std::cerr << "validate-model: " << line << "\n";
  };
  const model::CalibrationOptions co = calibration_options(a.spec);
  std::string doc;
  const model::PlatformModel m = machine_profile(a, co, say, doc);
  if (!a.write_model.empty()) {
    reports::write_output(a.write_model, model::with_model_section(
                                             doc, m, a.platform.empty() ? "probe" : a.platform));
    say("wrote the profile with its \"model\" member to " + a.write_model);
  }
  const model::Validation v = measure_and_price(a, sweep, m, co);
  (json_on_stdout ? std::cerr : std::cout) << model::validation_text(v, a.goal);
  if (!a.out.empty()) {
    reports::write_output(a.out, model::validation_json(v, a.goal));
    say("wrote " + a.out);
  }
  if (!a.report.empty()) {
    reports::write_report(a.report, v.measured);
    say("wrote the measured report to " + a.report);
  }
  if (a.check && !model::goal_met(v, a.goal)) return kExitRegression;
  return kExitOk;
}

}  // namespace

CommandFn add_validate_model_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "validate-model",
      "Model error on this machine: measure a small sweep here and price every measured step from "
      "its exact\n"
      "traffic with a profile of this machine; print the per-point and per-strategy error.\n\n"
      "Examples:\n"
      "  hybridbench validate-model                                   # quick probe + calibration, "
      "default sweep\n"
      "  hybridbench probe --out me.json && hybridbench validate-model --platform me.json "
      "--write-model me.json\n"
      "  hybridbench validate-model --strategy cpu-only,offload --seq-len 4k:32k:x2 --out "
      "err.json\n"
      "  hybridbench validate-model --published --out published.json   # against GPU papers\n");
  auto a = std::make_shared<ValidateArgs>();
  auto& s = a->spec;
  s.decode_steps = 16;
  s.accuracy_steps = 1;
  s.accelerator.kind = AcceleratorKind::cpu;
  add_sweep_options(*sub, a->axes, s);
  sub->add_option("--platform", a->platform,
                  "Profile of this machine (`probe --out`, possibly with a \"model\" member); "
                  "default: probe and "
                  "calibrate now");
  add_accelerator_option(*sub, s.accelerator.kind, "Only cpu is calibrated so far");
  add_real_option(*sub, "--goal", a->goal,
                  "Largest |error| accepted on CPU-bound strategies (fraction)",
                  parse::RealRange{0, 10, true, false})
      ->capture_default_str();
  sub->add_flag("--check", a->check,
                "Exit 3 when a CPU-bound strategy misses the goal (--published: when the "
                "published rows miss theirs)");
  sub->add_flag("--published", a->published,
                "Instead of this machine: project every published GPU measurement "
                "(model/published/) with --mode model; per row the projection, the published "
                "value and the error, then the median and largest |error| (goal 10% and 25%)");
  sub->add_flag("--no-live", a->no_live,
                "Price steps only with the ceilings calibrated before the sweep (default: also "
                "re-measure them "
                "next to each step, for machines shared with other work)");

  sub->add_option(
      "--out", a->out,
      "Write the validation (JSON: figures with sources, points, per strategy; - = stdout)");
  add_json_option(*sub, a->json, "the validation (a second name of --out)");
  sub->add_option("--report", a->report, "Also write the measured sweep as a report JSON");
  sub->add_option(
      "--write-model", a->write_model,
      "Write the platform document with the \"model\" member used (reusable with --platform)");
  sub->add_flag("-q,--quiet", a->quiet, "No progress, no calibration lines");
  return [a, sub] { return validate_command(*a, *sub); };
}

}  // namespace hb::cli
