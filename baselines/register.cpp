// The baselines' catalogue: each strategy's file holds its policy and a make_ function; this
// table gives each its name, the one-line summary `run --list-strategies` prints, and its family.
#include "baselines/register.h"

#include <memory>

namespace hb {

std::unique_ptr<Strategy> make_full_gpu(const StrategyOptions& options);
std::unique_ptr<Strategy> make_cpu_only(const StrategyOptions& options);
std::unique_ptr<Strategy> make_offload(const StrategyOptions& options);
std::unique_ptr<Strategy> make_h2o(const StrategyOptions& options);
std::unique_ptr<Strategy> make_streamingllm(const StrategyOptions& options);
std::unique_ptr<Strategy> make_infinigen(const StrategyOptions& options);
std::unique_ptr<Strategy> make_quest(const StrategyOptions& options);

void register_baselines(StrategyRegistry& registry) {
  const StrategyInfo catalogue[] = {
      {"full-gpu",
       "all KV resident in accelerator memory, dense attention there (oom when it does not fit)",
       "reference", make_full_gpu, StrategyRole::reference},
      {"cpu-only",
       "all KV in host memory, attention on the CPU; only q, new k/v and the output cross the link",
       "offload", make_cpu_only},
      {"offload",
       "FlexGen path 0: all KV in host memory, streamed to the accelerator in double-buffered "
       "chunks each step; "
       "dense exact attention there (opts: chunk_tokens)",
       "offload", make_offload},
      {"h2o",
       "Heavy-Hitter Oracle: accelerator keeps 10% heavy hitters (accumulated attention) + 10% "
       "recent tokens, "
       "evicting one per step (opts: heavy_ratio, recent_ratio, heavy, recent)",
       "pruning", make_h2o},
      {"streamingllm",
       "4 attention sinks + recent window on the accelerator (budget 20% of context); evicted "
       "tokens are gone "
       "(opts: sinks, window, budget_ratio)",
       "pruning", make_streamingllm},
      {"infinigen",
       "InfiniGen: KV in host memory, skewed 20% partial keys on the accelerator speculate each "
       "step's tokens "
       "(within alpha=4 of the best, <=20% of context); only those rows are fetched (opts: "
       "partial_ratio, alpha, "
       "max_ratio, skew)",
       "selection", make_infinigen},
      {"quest",
       "Quest: per-page min/max key bounds pick the top 16-token pages within a 2048-token budget; "
       "exact "
       "attention over them (opts: budget, offload=0|1, min_pages)",
       "selection", make_quest},
  };
  for (const auto& info : catalogue) registry.add(info);
}

}  // namespace hb
