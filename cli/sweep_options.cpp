#include "cli/sweep_options.h"

#include "cli/numeric_options.h"
#include "bench/model_config.h"
#include "bench/sweep_spec.h"

namespace hb::cli {

namespace {

void add_axis_options(CLI::App& sub, SweepAxesText& axes) {
  sub.add_option("--model", axes.models,
                 "Models, comma separated: presets (see --list-models), or a Hugging Face "
                 "config.json or a folder holding one (llama, mistral, qwen2, gemma, opt)")
      ->capture_default_str();
  sub.add_option("--seq-len", axes.seq_lens,
                 "Prompt lengths: list (4k,32k) or range (4k:128k:x2, 1k:8k:+1k)")
      ->capture_default_str();
  sub.add_option("--batch", axes.batches,
                 "Batch sizes (sequences decoded together), comma separated")
      ->capture_default_str();
  sub.add_option("--strategy", axes.strategies,
                 "Strategies, comma separated, 'all', or 'headline' (all but the HybridGen "
                 "ablations; --mode model's default) (see --list-strategies)")
      ->capture_default_str();
  sub.add_option("--kv-budget", axes.kv_budgets,
                 "Tokens each sparse strategy attends per step (the new token included): a count "
                 "(2048, 2k) or a share of the context (6%), comma separated, a sweep axis. h2o "
                 "splits it heavy:recent by its ratios, streamingllm into sinks + window, quest "
                 "into pages, infinigen caps its k at it, hybridgen into the accelerator window + "
                 "the CPU top-k; dense strategies attend all (default: none, each strategy's own "
                 "budget). Every point reports attended_tokens");
  sub.add_option("--kv-dtype", axes.kv_dtypes, "KV cache element types: fp16, bf16, fp32")
      ->capture_default_str();
  sub.add_option("--opt", axes.strategy_options,
                 "Strategy parameter STRATEGY.KEY=VALUE (repeatable)");
}

void add_sampling_options(CLI::App& sub, bench::SweepSpec& s) {
  add_integer_option(sub, "--decode-steps", s.decode_steps,
                     "Most decode steps per point (warm-up + timed)", 1, bench::kMaxDecodeSteps)
      ->capture_default_str();
  add_integer_option(sub, "--warmup", s.stop.warmup_steps, "Untimed warm-up steps per point", 0,
                     bench::kMaxDecodeSteps - 1)
      ->capture_default_str();
  add_integer_option(sub, "--min-samples", s.stop.min_samples,
                     "Timed steps before the noise test may stop a point", 1,
                     bench::kMaxDecodeSteps)
      ->capture_default_str();
  add_integer_option(sub, "--max-samples", s.stop.max_samples,
                     "Most timed steps per point; a group short of its noise target when the "
                     "decode positions run out replays them (strategies reloaded untimed). 0 = up "
                     "to 8 passes over the positions (--timeout usually binds first)",
                     0, bench::kMaxDecodeSteps)
      ->capture_default_str();
  add_percent_option(sub, "--max-noise", s.stop.max_noise,
                     "Noise target in percent (5 or 5% = 5%): a point stops once the robust noise "
                     "of its step times (IQR / 1.349 median, as report prints) is at most this",
                     parse::RealRange{0, 100, true, false});
  add_integer_option(sub, "--rounds", s.stop.rounds,
                     "Interleaved rounds per point group before it may stop: every round steps "
                     "each strategy over the same decode positions in a fresh seeded random "
                     "order; a strategy's figure is the median over rounds, a speedup the median "
                     "of per-round ratios with a 95% order-statistic interval (6+ rounds)",
                     1, 1000)
      ->capture_default_str();
  add_seconds_option(sub, "--timeout", s.stop.timeout_s,
                     "Stop sampling a point group (all its strategies) after this many seconds "
                     "(per --repetitions pass)",
                     parse::RealRange{0, bench::kMaxSeconds, true, false})
      ->capture_default_str();
  add_integer_option(sub, "--accuracy-steps", s.accuracy_steps,
                     "Timed steps scored against the fp64 reference (-1 = every timed position)",
                     -1, bench::kMaxDecodeSteps)
      ->capture_default_str();
}

// What a timed step covers, and how the batch is cut when it covers the layer.
void add_scope_options(CLI::App& sub, bench::SweepSpec& s) {
  add_vocabulary_option(
      sub, "--scope", s.scope, kScopes, "scope",
      "What one timed step is: 'layer' (QKV projection, attention, output projection "
      "and FFN of one decoder layer, the layer's GEMMs on the accelerator, its weights in "
      "accelerator memory beside the KV budget) or 'attention' (attention alone)");
  add_integer_option(sub, "--microbatches", s.microbatches,
                     "Layer scope: cut the batch into N micro-batches so the CPU attends for one "
                     "while the accelerator runs another's output projection and FFN (0 = 2 "
                     "from batch 2 on for strategies whose CPU work overlaps the accelerator, "
                     "else 1: the others would only read the layer's weights once more)",
                     0, bench::kMaxBatch)
      ->capture_default_str();
}

void add_machine_options(CLI::App& sub, bench::SweepSpec& s) {
  add_size_option(
      sub, "--accelerator-memory", s.accelerator.capacity_bytes,
      "KV budget per layer in accelerator memory, e.g. 512M or 60G (default: cpu 2G, cuda free "
      "HBM - 10%)",
      kMinAcceleratorBytes);
  add_integer_option(sub, "--accelerator-threads", s.accelerator.cpu_threads,
                     "cpu accelerator threads (0 = half the CPUs)", 0, max_threads_option(),
                     max_threads_note())
      ->capture_default_str();
  add_integer_option(sub, "--host-threads", s.host_threads,
                     "Threads for strategies' CPU side (0 = the rest)", 0, max_threads_option(),
                     max_threads_note())
      ->capture_default_str();
}

}  // namespace

void add_sweep_options(CLI::App& sub, SweepAxesText& axes, bench::SweepSpec& spec) {
  add_axis_options(sub, axes);
  add_sampling_options(sub, spec);
  add_scope_options(sub, spec);
  add_machine_options(sub, spec);
}

CLI::Option* add_accelerator_option(CLI::App& sub, AcceleratorKind& kind, const std::string& help) {
  return add_vocabulary_option(sub, "--accelerator", kind, kAcceleratorKinds, "accelerator", help);
}

void apply_sweep_axes(const SweepAxesText& axes, bench::SweepSpec& spec, bool keep_seq_lens) {
  spec.models = bench::split_list(axes.models, "--model");
  bench::resolve_model_configs(spec);
  spec.kv_dtypes = bench::parse_kv_dtypes(axes.kv_dtypes);
  spec.strategies = bench::split_list(axes.strategies, "--strategy");
  spec.batches = bench::parse_batches(axes.batches);
  if (!keep_seq_lens) spec.seq_lens = bench::parse_seq_lens(axes.seq_lens);
  if (axes.kv_budgets) spec.kv_budgets = bench::parse_kv_budgets(*axes.kv_budgets);
  for (const auto& o : axes.strategy_options) {
    auto [key, value] = bench::parse_strategy_option(o);
    spec.strategy_options[key] = value;
  }
}

}  // namespace hb::cli
