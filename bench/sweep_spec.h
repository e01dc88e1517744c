#pragma once
// What one `hybridbench run` sweeps: the cross product of models x KV dtypes x sequence
// lengths x batch sizes x strategies, plus how each point is timed and scored. Filled from the
// command line or a --config JSON by cli/cmd_run.cpp; validated here so every front end gets
// the same errors.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/dtype.h"
#include "core/layer_work.h"
#include "core/model_presets.h"
#include "core/vocabulary.h"
#include "core/workload.h"
#include "kernels/backend.h"

namespace hb::bench {

class TraceFile;  // bench/trace.h

// run --kv-budget: the tokens each sparse strategy attends per step, a count ("512", "2k") or a
// share of the point's context ("6%"). Parsed once (parse_kv_budget); text again only in the
// report (to_string).
struct KvBudget {
  enum class Unit { tokens, percent };
  Unit unit = Unit::tokens;
  int64_t tokens = 0;  // unit tokens: >= 1
  double percent = 0;  // unit percent: (0, 100]
  // The tokens attended at a point of `seq_len` prompt tokens (a share rounds to the nearest
  // token, at least 1).
  int64_t tokens_at(int64_t seq_len) const;
  std::string to_string() const;  // "512", "6%": what the report, the journal and tables show
  friend bool operator==(const KvBudget&, const KvBudget&) = default;
};

// Pages of the host KV tiers: transparent huge pages (madvise(MADV_HUGEPAGE), as the probe's
// tuned read) or base pages (what plain malloc gets).
enum class KvPages { thp, base };
inline constexpr Vocabulary<KvPages, 2> kKvPages{{"thp", "4k"}};

// A sweep's workload, resolved: a synthetic family with its knobs, or the trace file opened and
// checked against the sweep (shared read-only by the copies of a resolved sweep).
using SweepWorkload = std::variant<WorkloadSpec, std::shared_ptr<const TraceFile>>;

// "trace:FILE" -> FILE; nullopt for a synthetic workload. The one reader of the prefix.
std::optional<std::string> trace_path(const std::string& workload);
// Opens the workload `text` names: the trace file (header checked: hb::Error when it cannot be
// read) or the synthetic family and knobs (parse_workload_spec).
SweepWorkload open_workload(const std::string& text);

// When a point group stops sampling. Its strategies step side by side in interleaved rounds
// (bench/rounds.h) and stop together, at the end of a round, so every strategy's figures cover
// the same stretch of the machine's time and every per-round ratio has both sides.
struct StopCriteria {
  int warmup_steps = 2;     // executed, not timed (first-touch, caches, controller start)
  int min_samples = 5;      // timed steps before the noise test may stop the point
  double max_noise = 0.05;  // robust_rel_noise (fraction) of step times that counts as converged
  double min_time_s = 0.0;  // keep sampling at least this long (after min_samples)
  // Per point group: stop sampling after this much wall time (converged or not).
  double timeout_s = 30.0;
  // Rounds before the group may stop on noise: 6 is the fewest whose order-statistic interval
  // of a median ratio reaches 95% (core/paired_ratio.h).
  int rounds = 6;
  // Most timed steps per point. 0: up to kDefaultPasses passes over the decode positions (the
  // time limit binds first on a real run). A group still short of its noise target when its
  // positions run out replays them (strategies reloaded untimed, warm-up again).
  int max_samples = 0;
  static constexpr int kDefaultPasses = 8;
};

struct ResolvedSweep;

struct SweepSpec {
  std::vector<std::string> models = {"llama-3.1-8b"};
  // Models that are not presets, found by name before the presets: a trace's own shape
  // (`run --workload trace:FILE` without --model, trace_model_preset in bench/trace.h).
  std::vector<ModelPreset> own_models;
  std::vector<DType> kv_dtypes = {DType::f16};
  std::vector<int64_t> seq_lens = {4096, 16384, 32768};
  std::vector<int> batches = {1};
  std::vector<std::string> strategies = {"all"};
  // run --kv-budget: the attention budgets swept; empty = none (each strategy's own defaults).
  // A sweep axis: every group runs once per budget.
  std::vector<KvBudget> kv_budgets;
  int decode_steps = 24;  // upper bound on steps per point (warm-up + timed)
  int page_tokens = 16;
  // What a timed step covers (core/layer_work.h, bench/layer_scope.h): the decoder layer
  // (QKV, attention, O, FFN) by default, or attention alone.
  Scope scope = Scope::layer;
  int microbatches = 0;  // layer scope: micro-batches per batch (0 = 2 from batch 2 on, else 1)
  // run --layers N (bench/layer_stack.h): besides each point, its strategy stepped as a stack of
  // N distinct layers in the same rounds, to check "N layers = N x one layer". 1 = no stack.
  int layers = 1;
  // FAMILY[:KNOB=VALUE,...] (core/workload.h) | trace:FILE, as given: validate() opens it.
  std::string workload = "llama-like";
  uint64_t seed = 42;
  // Timed steps scored against the fp64 reference: -1 = every timed position of the first pass
  // (replays repeat the positions, so they are timed, not scored again).
  int accuracy_steps = -1;
  // run --accuracy-target, canonical (reports/accuracy_target.h): what "fastest within target"
  // in the report's tables requires. Read by the tables, not the runner; echoed in the report.
  std::string accuracy_target = "recall:0.9";
  // run --tie-margin (fraction): the headline crowns a strategy only when, against every
  // contender, its paired 95% interval excludes 1 and its ratio exceeds 1 + this; else it names
  // the tie (Speedup::decided). An
  // interval covers the noise inside one run; a ratio's SD between identical runs on the 2-core
  // VM was 1.9% (median over pairs, up to 3.4%), about 1.6x what the intervals imply, a shift no
  // single run can see (PERFORMANCE-LOG 2026-12-05). 5% is twice that SD, and the effect
  // `compare` calls SAME (--min-effect). Read by the tables, not the runner; echoed.
  double tie_margin = 0.05;
  // Passes over the whole sweep, one after another; each point's rounds from every pass are
  // pooled. Rounds (StopCriteria::rounds) already interleave a group's strategies; passes add
  // the drift between minutes, a group's rounds lying within seconds of each other.
  int repetitions = 1;
  StopCriteria stop;
  AcceleratorOptions accelerator;
  // With no accelerator.capacity_bytes: true (`hybridbench run`) takes the KV budget from the
  // deployment, per model (bench/kv_budget.h: a real accelerator's memory less the
  // weights, shared by the layers; the emulated one's sized so the sweep crosses the boundary);
  // false keeps the accelerator's own default (cpu 2 GiB, cuda free memory less 10%).
  bool deployment_kv_budget = false;
  int host_threads = 0;  // threads for strategies' CPU side (0 = CPUs left by the accelerator)
  std::map<std::string, std::string> strategy_options;  // "h2o.heavy_ratio" -> "0.2"
  // Placement (memtier): the host NUMA node for KV (--kv-node, parse_kv_nodes; empty = the CPU's
  // local node; a fleet run may list one per rank, each rank keeping its own) and CXL emulation.
  std::vector<int> kv_nodes;
  std::string emulate_cxl;
  // Pages of the host KV tiers. Whether the kernel grants huge pages is its THP setting (the
  // report's settings).
  KvPages kv_pages = KvPages::thp;
  // Fleet runs (`--distribute points`, cli/fleet*): run only the workload groups g (model x dtype
  // x length x batch, numbered in sweep order) with g % share_count == share_index. All strategies
  // of a group run in one process, so speedups never mix machines. Not in echo(): every rank
  // runs the same sweep and must echo it alike.
  int share_index = 0, share_count = 1;
  // `run --repetitions` with a fresh process per pass (cli/pass_processes.h): the one pass
  // (0-based) this process runs; -1 = every pass, one after another. Not in echo(): the pooled
  // report is the whole sweep's.
  int only_pass = -1;
  // run --pass-process: fresh (each --repetitions pass in its own process, the default) or
  // same (every pass in this one). Echoed when there are several passes.
  bool pass_per_process = true;

  // The model named `name`: one of own_models, else the preset (find_model_preset: an hb::Error
  // listing the known names when there is none). Every model lookup of a sweep goes through it.
  const ModelPreset& model(const std::string& name) const;
  // The sweep resolved (ResolvedSweep): the workload opened (a trace's header and every row a
  // point will read checked against the sweep) and every field checked. Throws hb::Error naming
  // the offending field and the fix. The second form takes a workload already opened
  // (open_workload: `run` reads a trace's shape and length before the sweep is complete).
  ResolvedSweep validate() const;
  ResolvedSweep validate(SweepWorkload opened) const;
  void check_scope_fits_models() const;  // part of validate()
  void check_layers() const;             // part of validate(): --layers

 private:
  void check_axes() const;      // part of validate(): models, lengths, batches, budgets
  void check_sampling() const;  // part of validate(): steps, rounds, noise, time limits
  void check_machine() const;   // part of validate(): threads, memory, pages, share
};

// A validated sweep with its typed values; every run of a sweep goes through one. Text is made
// again only for the report (echo(), workload_label()).
struct ResolvedSweep {
  SweepSpec spec;
  SweepWorkload workload;

  const TraceFile* trace() const;  // the opened trace; null for a synthetic workload
  // The points' workload axis: the trace's identity ("trace:NAME@HASH", bench/trace.h), or the
  // synthetic family with every knob that differs from its defaults (WorkloadSpec::label).
  std::string workload_label() const;
  std::map<std::string, std::string> echo() const;  // for the report context
};

// Limits on what a sweep may ask for, checked before anything is built.
inline constexpr int64_t kMaxTokens = int64_t{1} << 40;  // a sequence length (1 Ti tokens)
inline constexpr int64_t kMaxSeqLenPoints = 10000;       // distinct lengths in one sweep
inline constexpr int kMaxBatch = 4096;
inline constexpr int kMaxDecodeSteps = 100000;
inline constexpr int kMaxSeconds = 7 * 24 * 3600;  // --timeout, --min-time: a week
// --layers: 1 (no stack) or a stack of kMinStackLayers up to the model's layers; the option's
// own bound, before any model is known, is kMaxStackLayers.
inline constexpr int kMinStackLayers = 4;
inline constexpr int kMaxStackLayers = 1024;

// "4096", "4k", "32K", "1m" -> tokens (0 to kMaxTokens); `what` names the option in errors.
int64_t parse_token_count(const std::string& s, const std::string& what = "--seq-len");
// "4k,16k", "4k:128k:x2" (geometric), "1k:8k:+1k" (arithmetic) -> sorted unique list. A range's
// points are counted before any is built: more than kMaxSeqLenPoints is refused.
std::vector<int64_t> parse_seq_lens(const std::string& s, const std::string& what = "--seq-len");
// "1,4,16" -> batch sizes, each a whole number from 1 to kMaxBatch.
std::vector<int> parse_batches(const std::string& s, const std::string& what = "--batch");
// "h2o.heavy_ratio=0.2" -> {"h2o.heavy_ratio", "0.2"}. A value that reads as a number must be a
// finite one ("nan", "inf" refused here, before any strategy sees it).
std::pair<std::string, std::string> parse_strategy_option(const std::string& s,
                                                          const std::string& what = "--opt");
// Comma separated, each item trimmed; "" gives none. An empty item in a list ("1,,2", "4k,") or
// an item given twice is refused naming `what` (the option): never silently dropped or doubled.
std::vector<std::string> split_list(const std::string& s, const std::string& what = "the list");

// --kv-budget: "512", "2k" (tokens, >= 1) or "6%" (of the context, in (0, 100]), comma separated;
// duplicates dropped. Throws hb::Error (exit 2) for 0, negative, > 100%, nan or garbage.
std::vector<KvBudget> parse_kv_budgets(const std::string& s,
                                       const std::string& what = "--kv-budget");
KvBudget parse_kv_budget(const std::string& item, const std::string& what = "--kv-budget");
// --kv-node: "1", or one node per fleet rank "0,7" -> NUMA node numbers (0 to 65535); "" -> none.
// Throws hb::Error (exit 2) naming the bad item. Whether a node exists is the platform's to say
// (cli/platform_setup.cpp), on the machine that runs it.
std::vector<int> parse_kv_nodes(const std::string& s, const std::string& what = "--kv-node");
// --kv-dtype: "fp16,bf16" -> the element types (parse_dtype's names), comma separated.
std::vector<DType> parse_kv_dtypes(const std::string& s, const std::string& what = "--kv-dtype");

}  // namespace hb::bench
