#pragma once
// The in-memory report: what one `hybridbench run` measured, as plain structs. The runner fills
// it, reports/ writes and reads it as JSON (reports/json_io.h), compares two of them and renders
// tables and HTML. No JSON types here, so the runner and the renderers do not depend on the
// serialisation, and the schema lives in one place (reports/schema.cpp + reports/README.md).
//
// Closed vocabularies: status, provenance and host status are enums (core/vocabulary.h), turned
// into text only by the schema (reports/schema.cpp) and by what renders text; reading a report
// rejects names outside them. The stop reason is still a string, checked against its list on
// both writing and reading, so a typo cannot reach a file.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/accelerator.h"
#include "core/stats.h"
#include "core/strategy.h"
#include "core/traffic.h"
#include "core/vocabulary.h"
#include "reports/capacity.h"

namespace hb::reports {

// Schema identity written to every file as "schema": "<id>/<version>". The version changes
// whenever a field is renamed, removed or changes its type or meaning (rules: reports/README.md);
// readers accept kOldestReadableSchemaVersion..kSchemaVersion and refuse the rest.
// 2: context.sweep values are JSON numbers, booleans and arrays where they are such (1: strings).
inline constexpr const char* kSchemaId = "hybridbench.report";
inline constexpr int kSchemaVersion = 2;
inline constexpr int kOldestReadableSchemaVersion = 1;
std::string schema_string();  // "hybridbench.report/2", what writers write

// Allowed values (kebab-case, as written to JSON).

// A point's outcome: the strategy's plan status, or error when the point failed while running.
enum class PointStatus { ok, oom, unsupported, error };
inline constexpr Vocabulary<PointStatus, 4> kPointStatuses{{"ok", "oom", "unsupported", "error"}};
inline const char* to_string(PointStatus s) { return kPointStatuses.name(s); }
PointStatus point_status(PlanStatus s);  // ok, oom and unsupported carry over unchanged

// Where a point's figures come from, strongest first (a speedup carries the weaker of its two).
enum class Provenance { measured, emulated, modeled };
inline constexpr Vocabulary<Provenance, 3> kProvenances{{"measured", "emulated", "modeled"}};
inline const char* to_string(Provenance p) { return kProvenances.name(p); }
Provenance weaker(Provenance a, Provenance b);

// Whether a fleet rank finished (error: its points are missing or marked error).
enum class HostStatus { ok, error };
inline constexpr Vocabulary<HostStatus, 2> kHostStatuses{{"ok", "error"}};
inline const char* to_string(HostStatus s) { return kHostStatuses.name(s); }

// Why the timing loop stopped: noise under --max-noise; the step cap; the time limit; none when
// nothing was timed (status != ok). One value per stopping rule (bench/README.md, "Adding a
// stopping rule"). Files may also hold "min-samples" and "min-time", which no runner produced:
// the reader maps them (reports/schema.cpp, read_stop_reason).
enum class StopReason { noise, max_steps, timeout, none };
inline constexpr Vocabulary<StopReason, 4> kStopReasons{{"noise", "max-steps", "timeout", "none"}};
inline const char* to_string(StopReason r) { return kStopReasons.name(r); }

// ---------------------------------------------------------------------------------------------
// Context: where and how the figures were produced.

struct MemoryNodeSummary {
  int node = -1;     // NUMA node id
  std::string kind;  // memory_kind_name(): "local-dram", "cxl", ...
  int64_t size_bytes = 0;
  bool emulated = false;  // the kind is stood in for (e.g. a remote node playing CXL)
  std::string note;       // classification reason, free text
};

struct TopologySummary {
  std::map<std::string, std::string> facts;  // free-form: "sockets" -> "2", "source" -> "hwloc"
  std::vector<MemoryNodeSummary> nodes;
};

// One process of a fleet run (`mpirun ... hybridbench run --distribute ...`, cli/fleet*): where
// it ran, what it found there, and whether it finished. A single-process report has none.
struct HostRecord {
  int rank = 0;      // MPI rank in the world communicator
  std::string host;  // gethostname() of that rank ("unknown" when it never answered)
  // Unique within the report: the host name, or "host/gpuN" / "host/rN" when several ranks share
  // a host. In replicate mode it is the points' "host" axis (PointAxes::extra), so a fleet's
  // points line up per platform in tables and in compare.
  std::string label;
  std::string os, cpu_model, simd_level;
  TopologySummary topology;
  std::map<std::string, std::string> system_settings;
  AcceleratorInfo accelerator;
  std::string binding;  // CPUs the rank ran on and why: "CPUs 0-7 (NUMA node 0, local to GPU 0)"
  HostStatus status = HostStatus::ok;
  std::string error;  // what went wrong (status error): its points are then missing or marked error
  int64_t points = 0;  // points this rank contributed
};

// How far model mode's figures may be off (issue 49 item 5): the |error| of the rows of
// `validate-model --published` (model/published/) for one kind of modeled figure, written by
// `run --mode model` and printed with every modeled figure of that kind instead of "± 0.0%".
struct ModelUncertainty {
  std::string figure;  // "itl" (step times and ITL) or "tokens_per_s"
  double rel = 0;      // the ± printed: the largest |error| of the rows (a fraction)
  double median_abs_error = 0;
  int rows = 0;
  std::string source;  // "validate-model --published, 9 rows (...), median |error| 1.2%, max 5.1%"
};

// One figure a modeled platform assumes, as its profile gives it with its source and date
// ("price per hour", "43.26 (AWS EC2 ..., 2024-12)"); the report's assumptions section.
struct PlatformAssumption {
  std::string platform, figure, text;
};

struct ReportContext {
  // Build (fill_host_context() fills these from core/build_info.h).
  std::string tool_version, git_commit, build_type, compiler;
  bool cuda = false;         // built with the CUDA backend
  std::string cuda_version;  // toolkit at compile time, empty without CUDA
  // Run and host (fill_host_context() fills these too).
  std::string date_utc;  // ISO 8601, "2025-01-31T12:34:56Z"
  std::string host, os, cpu_model, simd_level;
  // Filled by the runner from memtier.
  TopologySummary topology;
  std::map<std::string, std::string>
      system_settings;  // "thp" -> "madvise", "numa_balancing" -> "0", ...
  AcceleratorInfo
      accelerator;  // core/accelerator.h: kind cpu|cuda, name, emulated, capacity, details
  std::string command_line;
  std::map<std::string, std::string> sweep;  // sweep spec echo: "seq_len" -> "4k:128k:x2", ...
  // Fleet runs only (empty otherwise): every rank, in rank order. The fields above then describe
  // rank 0 (build, accelerator, topology), except `host`, which lists every distinct host name.
  std::vector<HostRecord> hosts;
  // Model mode only (empty otherwise and in older reports): the figures' uncertainty per kind,
  // and each platform's price, power and bandwidth with their sources.
  std::vector<ModelUncertainty> model_uncertainty;
  std::vector<PlatformAssumption> assumptions;
  // The uncertainty of modeled figures of a kind ("itl", "tokens_per_s"); null when unknown.
  const ModelUncertainty* uncertainty(const std::string& figure) const;
};

// Fills build facts, date, host name, OS/kernel, CPU model and SIMD level of this process.
void fill_host_context(ReportContext& ctx);

// ---------------------------------------------------------------------------------------------
// One sweep point.

// The coordinates of a point. Two reports' points match when their axes are equal; points of
// one report that differ only in `strategy` are comparable to each other (speedups). Put
// sweep axes only in `extra` (e.g. placement options); a strategy's own knobs belong in
// Point::strategy_params, or they would split its points from the others'.
struct PointAxes {
  std::string model, family;
  int64_t seq_len = 0;  // prompt tokens in the KV cache before decoding
  int batch = 1;
  std::string strategy;
  std::string kv_dtype;     // "fp16", "bf16", "fp32", ...
  std::string workload;     // "structured", "uniform", "needle", "trace:FILE"
  std::string accelerator;  // "cpu" | "cuda"
  int decode_steps = 0;
  int page_tokens = 0;
  std::map<std::string, std::string> extra;

  bool operator==(const PointAxes&) const = default;
  // Stable text of all axes ("model=...;seq_len=...;..."), for matching and sorting.
  std::string key() const;
  // The same without the strategy: the group whose strategies are compared with each other.
  std::string group_key() const;
};

// Reading order for tables: model, workload, dtype, accelerator, batch, then sequence length
// (numerically), strategy, and the remaining axes.
bool axes_less(const PointAxes& a, const PointAxes& b);

// The noise figure reports print and compare judges by, IQR / (1.349 x median): core/stats.h's,
// the same one run's stopping rule converges on.
using hb::robust_rel_noise;

// Raw samples and their summary (summary = hb::summarize(samples_ns)).
struct Timing {
  std::vector<double> samples_ns;
  SampleSummary summary;
  static Timing from_samples(std::vector<double> samples_ns);
};

struct StepTiming : Timing {
  StopReason stop_reason = StopReason::none;
  int warmup_steps = 0;
  // run --repetitions: timed steps of each pass, in order (they sum to samples_ns.size());
  // empty for a single pass. compare judges pooled runs on their pass medians.
  std::vector<int64_t> pass_sizes;
  // The median of each pass's samples (empty unless pass_sizes is).
  std::vector<double> pass_medians() const;
  // run's interleaved rounds: the point's place (0 = first) in each round's order, for every
  // round of pass_sizes (reproducible from the sweep's seed, bench/rounds.h); empty when not
  // recorded (reports from before rounds, pooled --repetitions passes).
  std::vector<int> round_slots;
  // run --repetitions: how many of the rounds (pass_sizes entries) each pass holds, in order;
  // empty for a single pass. Rounds of one pass share the pass's process and minute, so
  // speedups judge the passes' spread too (core/paired_ratio.h's repeated_ratio).
  std::vector<int64_t> repetition_rounds;
  // The machine control (bench/machine_control.h): the median time of a fixed reference workload
  // (a stream read over the point's KV bytes) in each round of pass_sizes, measured inside the
  // same rounds; empty when not measured (older reports, model mode, a pooled pass without it).
  // compare judges the point's round medians over these: a slower machine moves both alike.
  std::vector<double> control_ns;
};

// A KV region the strategy placed, with where its pages were actually found.
struct PlacedRegion {
  std::string role;      // "k", "v", "kv-recent", "kv-old", ...
  std::string intended;  // MemoryLocation::to_string() of the plan: "cxl@2(emulated)"
  int64_t bytes = 0;
  std::map<int, int64_t>
      observed_pages_per_node;  // NUMA node -> pages seen there; empty = not checked
  // Bytes of it on transparent huge pages (smaps; `run --kv-pages`); -1 = not checked.
  int64_t observed_huge_page_bytes = -1;
};

// Output accuracy against the fp64 reference, averaged over scored steps.
struct Accuracy {
  int64_t steps_scored = 0;  // 0: not scored (then the other fields are meaningless)
  double rel_l2 = 0;         // ||o - o_ref||_2 / ||o_ref||_2
  double cosine = 1;         // cosine similarity of o and o_ref
  double max_abs_err = 0;
  double mass_recall = 1;           // share of exact softmax mass on the attended tokens
  double needle_success_rate = -1;  // -1: the workload planted no needle
  // rel L2 against the attention output the traced model computed itself (a trace's `o`,
  // bench/trace.h); absent for other workloads and for points at another prompt length.
  std::optional<double> captured_rel_l2;
  // Mass recall of each scored step, in the order scored: joined with `trajectory` (HybridGen's
  // ratio per step) it gives recall per ratio, so a recall averaged over steps that ran at other
  // ratios than the later ones hides nothing (issue 33, item 9). Empty in older reports.
  struct StepRecall {
    int64_t step = 0;
    double recall = 1;
  };
  std::vector<StepRecall> recall_per_step;
  bool has_needle() const { return needle_success_rate >= 0; }
};

// Tokens a point really attended per decode step and query head, over its scored steps (the
// (sequence, query head, step) triples scored for accuracy): a dense strategy attends the whole
// context, a sparse one what StepResult::attended lists. Compares the work behind the accuracy
// figures across strategies (run --kv-budget sets the budget they aim at).
struct AttendedTokens {
  double mean = 0;
  int64_t min = 0, max = 0;
};

// A performance model's prediction of a measured point, priced from the very steps that were
// timed (`run --platform P` in measure mode, validate-model): modeled and measured side by side.
struct ModeledAlongside {
  std::string platform;  // the profile's name; empty = no prediction
  std::string overlap;   // the overlap structure used (core/overlap.h text form)
  Timing step;           // modeled time of each timed step
  std::map<std::string, double>
      phase_median_ns;  // modeled resources: cpu, accelerator, transfer, sync
  // (modeled median - measured median) / measured median; 0 when either is missing.
  double error_vs_measured = 0;
  bool present() const { return !platform.empty(); }
};

// run --layers N (bench/layer_stack.h): the point's strategy also stepped as a stack of N
// distinct decoder layers (each its own KV, weights and scheduler state; each layer after the
// previous layer's output), in the same rounds as the point, to check the whole-model shortcut
// "N layers take N x this point's step" (reports/layer_stack.h). Only on points of such runs.
struct LayerStackFigures {
  int layers = 0;  // N; 0 = not run (absent from the file)
  // The stack's layer that ran this point's own workloads: the point's accuracy is that layer's
  // (the stack itself is never scored).
  int scored_layer = 0;
  PointStatus status = PointStatus::ok;
  std::string reason;  // why, when status != ok
  StepTiming step;     // the stack's whole decode step (all N layers, whole batch), measured
  // Its phases, each summed over the N layers per step (compare with N x the point's phases to
  // see where the shortcut breaks); layer.tail is only the last layer's (the others' tails are
  // waited for by the next layer's first synchronize).
  std::map<std::string, Timing> phases;
  // stack / (N x this point's step) - 1 (> 0: the shortcut underestimates the stack). Paired
  // (rounds > 0): the median over rounds of the per-round ratio of the two round medians, with
  // its order-statistic interval [error_low, error_high] and that interval's exact coverage;
  // unpaired (rounds 0): from the two medians, no interval. Empty when either did not time.
  std::optional<double> shortcut_error;
  double error_low = 0, error_high = 0, coverage = 0;
  int rounds = 0;
  bool present() const { return layers > 0; }
};

// Where a point of a fleet report ran; rank -1 = not a fleet run.
struct RanOn {
  int rank = -1;
  std::string host;  // HostRecord::label of that rank
  bool known() const { return rank >= 0; }
};

// The whole model's decode, built from one point's layer step (issue 34; the arithmetic is
// reports/whole_model.h, what fills it model/whole_model.h). Written for timed points of scope
// layer whose model is a preset; absent otherwise and in older reports.
struct WholeModel {
  int layers = 0;            // the model's decoder layers
  double layer_step_ns = 0;  // the point's median step time (one layer, the whole batch)
  // Embedding, final norm, the LM head's GEMV over the vocabulary and sampling, per token.
  double outside_layers_ns = 0;
  Provenance outside_layers_provenance = Provenance::modeled;
  double itl_ns = 0;                 // inter-token latency: layers x layer_step_ns + outside
  double tokens_per_s = 0;           // batch / ITL: the accelerator's decode throughput
  double tokens_per_s_per_user = 0;  // 1 / ITL
  // Tensor parallelism (model/tensor_parallel.h): the GPUs one replica spans (tokens_per_s is
  // the replica's), its rate per GPU, and per node (gpus_per_node / gpus replicas; absent when
  // the node's GPU count is unknown), as InferenceMAX reports them.
  int gpus = 1;
  double tokens_per_s_per_gpu = 0;
  int gpus_per_node = 0;
  std::optional<double> tokens_per_s_per_node;
  // USD per million tokens and tokens/s per W; absent (null in the file) when an input is
  // missing, and then the reason says which one and how to give it. Never zero for "unknown".
  std::optional<double> cost_per_mtok_usd;
  std::string cost_blank_reason;
  std::optional<double> tokens_per_s_per_w;
  std::string power_blank_reason;
  // What they were computed from, present with them: the accelerator's share of its node's price
  // (USD per hour) and of its node's power (W), and how each was derived, with sources.
  std::optional<double> accelerator_usd_per_hour;
  std::string cost_basis;
  std::optional<double> accelerator_watts;
  std::string power_basis;
  // What the ITL assumes that the platform does not give, e.g. weights larger than the
  // accelerator's memory priced as if they fitted; empty when nothing.
  std::string caveat;
};

struct Point {
  PointAxes axes;
  // The strategy's part in the comparison (core/strategy.h): the headline compares the system
  // with the baselines and the reference; ablations get their own section. Reports from before
  // roles read it from the name (role_from_name).
  StrategyRole role = StrategyRole::baseline;
  PointStatus status = PointStatus::ok;
  std::string reason;  // why, when status != ok
  Provenance provenance = Provenance::measured;
  // Share of the point's KV cache (batch x (seq_len + decode_steps) tokens of one layer) that the
  // accelerator's KV budget holds, in [0, 1]: 1 = it all fits, below 1 = the rest lives on the
  // host (bench/kv_budget.h). Absent in reports written before it existed.
  std::optional<double> kv_fit_fraction;
  StepTiming step;                       // one decode step (all sequences of the batch, one layer)
  std::map<std::string, Timing> phases;  // "cpu", "accelerator", "transfer", "merge", ...
  Traffic traffic_per_step;              // averaged over timed steps
  // The traffic of the first pass's timed steps (decode positions warmup..decode_steps-1, the
  // same positions in every run of the sweep), summed: what a deterministic strategy does, so
  // compare compares it exactly (a change is a behaviour change, whatever the timing noise).
  // Absent when the first pass did not finish (a limit stopped it) and in older reports.
  std::optional<Traffic> first_pass_traffic;
  std::vector<PlacedRegion> placement;
  Accuracy accuracy;
  // Absent when no step was scored (--accuracy-steps 0, a failed point) and in reports written
  // before it existed.
  std::optional<AttendedTokens> attended_tokens;
  std::map<std::string, std::string> strategy_params;  // effective parameters
  // The strategy's warnings (PlanResult::warnings): it ran, but not as its method asks. Written
  // only when there are some.
  std::vector<std::string> warnings;
  std::vector<std::map<std::string, double>> trajectory;  // per-step scheduler state, if any
  ModeledAlongside modeled;               // only on measured points run with a platform profile
  RanOn ran_on;                           // fleet runs: which rank measured it
  LayerStackFigures layer_stack;          // run --layers N only
  std::optional<WholeModel> whole_model;  // the model's ITL, tokens/s, $/Mtok, tokens/s/W

  bool timed() const { return status == PointStatus::ok && step.summary.count > 0; }
};

// ---------------------------------------------------------------------------------------------
// Speedups: how much faster strategy A is than strategy B at the same point.

struct Speedup {
  std::string group_key;  // PointAxes::group_key() of the two points
  std::string strategy_a, strategy_b;
  // B's time over A's (> 1: A faster). Points stepped in the same rounds (StepTiming::pass_sizes
  // of equal length): the median of the per-round ratios of their round medians, which cancels
  // what drifted between rounds. Otherwise (reports from before rounds) the ratio of the medians.
  double ratio = 0;
  // Relative noise of the ratio: half the interval's width over the ratio when paired; else the
  // two robust_rel_noise() figures added in quadrature (independent errors of a quotient).
  double rel_noise = 0;
  // Paired points: the order-statistic interval of the median ratio (core/paired_ratio.h), its
  // exact coverage and the rounds behind it; rounds 0 = not paired (no interval). Points of
  // several --repetitions passes: that interval widened to Student's t interval of the passes'
  // own ratios (repeated_ratio), coverage then nominal.
  double ci_low = 0, ci_high = 0, ci_coverage = 0;
  int rounds = 0;
  // --repetitions passes whose spread widened the interval (repeated_ratio); 0 = the rounds'.
  int passes = 0;
  Provenance provenance = Provenance::measured;  // the weaker of the two points' (weaker())
  // Unpaired: the fewer timed steps of the two points (-1: not known, a speedup read from a
  // file). Below 2 a point has no spread, so the ratio has no noise figure and is never decided.
  int64_t fewest_samples = -1;
  bool paired() const { return rounds > 0; }
  bool noise_known() const { return paired() || fewest_samples < 0 || fewest_samples >= 2; }
  // Whether A and B differ beyond the noise: the interval excludes 1 (paired); unpaired, the
  // ratio is more than twice the combined noise away from 1 (in log terms). With a margin
  // (run --tie-margin, a fraction), the ratio itself must also lie outside [1/(1+m), 1+m]:
  // significant and larger than the margin, the rule compare's --min-effect applies (the
  // median ratio moves less between runs than an interval's bound does).
  bool decided(double margin = 0) const;
};

// The number the sweep echo records under `key` (its leading number, as strtod reads it);
// nullopt when the key is absent or its text does not start with a number.
std::optional<double> sweep_number(const ReportContext& c, const std::string& key);

// The --tie-margin the sweep echo records (fraction, e.g. 0.03); 0 when it records none
// (reports from before the option: their headlines judged on the interval alone).
double tie_margin(const ReportContext& c);

// What a report from before roles meant by a strategy's name: hybridgen is the system, its
// hybridgen-* variants are ablations, full-gpu the reference, everything else a baseline.
StrategyRole role_from_name(const std::string& strategy);

// Every ordered pair (A, B), A != B, of timed points with the same group key, sorted by group
// key then strategies. Points that are not timed (oom, unsupported, error) get no entry.
std::vector<Speedup> compute_speedups(const std::vector<Point>& points);

// A sweep that did not run to its end: stopped by SIGINT/SIGTERM, or by a failure that escaped
// a point (bench/runner.h, SweepControl). `points` then holds only what finished; `run
// --resume` completes it from the journal (cli/README.md).
struct Interruption {
  bool interrupted = false;
  std::string reason;  // "SIGINT (Ctrl-C) after 12 of 36 points", "internal error: ..."
  // The exit status the run ends with (130 SIGINT, 143 SIGTERM, the failure's code). Process
  // state, not a property of the data: not written to the file (reads back as 0).
  int exit_code = 0;
};

struct Report {
  std::string schema = schema_string();
  Interruption interruption;  // written only when interrupted
  ReportContext context;
  std::vector<Point> points;
  std::vector<Speedup> speedups;  // compute_speedups(points) when written by the runner
  // How far each platform's memory carries each strategy (reports/capacity.h); empty in reports
  // written without it (older ones, traces) and then absent from the file.
  std::vector<CapacityRow> capacity;
};

}  // namespace hb::reports
