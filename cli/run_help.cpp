#include "cli/run_help.h"

#include "cli/help_format.h"

#include <utility>

namespace hb::cli {

void group_run_help(CLI::App& run) {
  use_help_groups(
      run, {{"Sweep",
             {{"--model", "Presets (--list-models) or a config.json"},
              {"--seq-len", "Prompt lengths: 4k,32k or 4k:128k:x2"},
              {"--batch", "Batch sizes, comma separated"},
              {"--strategy", "Strategies, 'all' or 'headline' (--list-strategies)"},
              {"--workload", "Synthetic family:knobs, or trace:FILE"},
              {"--kv-budget", "Tokens each sparse strategy attends: 2k or 6% of the context"},
              {"--scope", "A timed step is one decoder layer, or attention alone"},
              {"--kv-dtype", ""},
              {"--opt", ""},
              {"--microbatches", ""},
              {"--layers", ""},
              {"--seed", ""},
              {"--page-tokens", ""}}},
            {"Measurement",
             {{"--decode-steps", "Most decode steps per point"},
              {"--timeout", "Seconds of sampling per point group and pass"},
              {"--repetitions", "Passes over the sweep, each in a fresh process"},
              {"--max-noise", "Noise target in percent: a point stops once it is met"},
              {"--accuracy-target", "Accuracy a point needs: recall:X, cosine:X"},
              {"--rounds", ""},
              {"--warmup", ""},
              {"--min-samples", ""},
              {"--max-samples", ""},
              {"--min-time", ""},
              {"--accuracy-steps", ""},
              {"--tie-margin", ""},
              {"--pass-process", ""}}},
            {"Machine",
             {{"--accelerator", "cuda, cpu (CPU threads emulating a GPU) or auto"},
              {"--accelerator-memory", "KV budget per layer in accelerator memory (512M, 60G)"},
              {"--device", ""},
              {"--accelerator-threads", ""},
              {"--host-threads", ""},
              {"--kv-node", ""},
              {"--emulate-cxl", ""},
              {"--kv-pages", ""}}},
            {"Model mode",
             {{"--mode", "Time this machine, or model --platform"},
              {"--platform", "Profiles: FILE.json, preset:NAME, 'presets'"},
              {"--tp", "GPUs per replica (tensor parallel): auto or N"},
              {"--precision", "fp16, fp8, fp8-weights (comma separated)"},
              {"--price", "The node's USD per hour, for $ per million tokens"},
              {"--power", ""},
              {"--gpus-per-node", ""}}},
            {"Fleet (under mpirun/srun)",
             {{"--distribute", "points: split the sweep over ranks; replicate: each runs it all"},
              {"--gather-timeout", ""}}},
            {"Output",
             {{"--out", "Report path (- = stdout)"},
              {"--resume", "Continue the interrupted sweep whose report is OUT"},
              {"--config", "JSON file of these options by long name; flags win"},
              {"--quiet", "No progress bar, no summary table"},
              {"--list-strategies", "List strategies and exit"},
              {"--list-models", "List model presets and exit"},
              {"--json", ""},
              {"--help", "This help"},
              {"--help-all", "Every option with its full description"}}}});
  // Placeholders that say what the text is (CLI11 would print TEXT).
  for (const auto& [name, placeholder] : {std::pair{"--model", "LIST"},
                                          {"--seq-len", "LIST"},
                                          {"--batch", "LIST"},
                                          {"--strategy", "LIST"},
                                          {"--workload", "SPEC"},
                                          {"--kv-budget", "LIST"},
                                          {"--kv-dtype", "LIST"},
                                          {"--opt", "S.KEY=V"},
                                          {"--platform", "LIST"},
                                          {"--price", "USD/h"},
                                          {"--power", "KIND=W,..."},
                                          {"--out", "FILE"},
                                          {"--config", "FILE"},
                                          {"--kv-node", "N"}})
    run.get_option(name)->option_text(placeholder);
}

}  // namespace hb::cli
