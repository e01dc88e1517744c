#include "hybrid/register.h"

#include <memory>

#include "hybrid/hybridgen.h"

namespace hb {

namespace {

// One registered name per mode or ablation. Each reads its options under its own name
// (`--opt hybridgen-lse.ratio=...`), over the variant's defaults.
void add_variant(StrategyRegistry& r, const std::string& name, const std::string& summary,
                 const hybrid::HybridGenConfig& defaults,
                 StrategyRole role = StrategyRole::ablation) {
  r.add({name, summary, "hybrid",
         [name, defaults](const StrategyOptions& opts) {
           return std::make_unique<hybrid::HybridGen>(
               name, hybrid::HybridGenConfig::from_options(opts, name, defaults));
         },
         role});
}

}  // namespace

void register_hybrid(StrategyRegistry& registry) {
  hybrid::HybridGenConfig d;
  add_variant(registry, "hybridgen",
              "HybridGen: recent KV on the accelerator, older in host tiers; CPU top-k logits + V "
              "rows merged in one "
              "softmax, feedback scheduler, semantic K/V tier mapping",
              d, StrategyRole::system);
  // The mode and the ablations change one thing each; budget=hybridgen (the default) gives
  // them hybridgen's accelerator window, hot slots and shipped-row buffers.
  auto lse = d;
  lse.merge = hybrid::MergeMode::lse;
  add_variant(registry, "hybridgen-lse",
              "HybridGen, exact mode: the CPU returns the partial (o, lse) over its tokens, "
              "LSE-merged on the accelerator",
              lse);
  auto st = d;
  st.scheduler.adaptive = false;
  add_variant(registry, "hybridgen-static",
              "HybridGen ablation: feedback scheduler off (ratio and boundary fixed)", st);
  auto naive = d;
  naive.kv_mapping = hybrid::KvMappingPolicy::interleave;
  add_variant(registry, "hybridgen-naive",
              "HybridGen ablation: semantic mapping off (host KV pages interleaved over the host "
              "tiers as a system without it would place them; no promotion)",
              naive);
  auto serial = d;
  serial.overlap = false;
  add_variant(
      registry, "hybridgen-serial",
      "HybridGen ablation: no CPU/accelerator overlap (CPU side first, then the accelerator side)",
      serial);
}

}  // namespace hb
