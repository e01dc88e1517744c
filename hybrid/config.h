#pragma once
// HybridGen's configuration: every option of every mechanism, its default, and how it is read
// from `--opt <variant>.<key>=<value>` (hybrid/README.md, "Options", lists them with ranges).
#include <cstdint>
#include <string>

#include "core/strategy.h"
#include "core/vocabulary.h"
#include "hybrid/feedback_scheduler.h"
#include "hybrid/kv_mapping.h"

namespace hb::hybrid {

// Mechanism 1's merge: the CPU ships its top-k logits + V rows (the paper's logit
// parallelism), or the exact partial (o, lse) over all its tokens (our exact mode).
enum class MergeMode { logit, lse };
inline constexpr Vocabulary<MergeMode, 2> kMergeModes{{"logit", "lse"}};

// How the accelerator budget is split between the recent window, the hot-page slots and the
// shipped-row buffers. `hybridgen` (default): as the full `hybridgen` would split it, whatever
// the variant, so an ablation changes its one mechanism only. `own`: each
// variant sizes for what it uses (an lse variant no shipped rows, a non-semantic one no hot
// slots, a static one rows for its fixed ratio).
enum class BudgetPolicy { hybridgen, own };
inline constexpr Vocabulary<BudgetPolicy, 2> kBudgetPolicies{{"hybridgen", "own"}};

// Logit mode's CPU selection (mechanism 1, step 4): `fused` scores K and keeps a streaming
// per-head top-k in one pass (kernels/cpu/select.h, select_topk; no logit array), `separate`
// writes every logit, then selects (score_logits + topk_select_rows). Same rows, same logits.
enum class CpuSelect { fused, separate };
inline constexpr Vocabulary<CpuSelect, 2> kCpuSelects{{"fused", "separate"}};

// Logit mode's shipped V rows (mechanism 1, step 5): `head` ships every query head's rows on
// its own, duplicates included (the port's format, default); `group` ships each row a GQA
// group's query heads selected once per KV head, with a row index per (query head, entry)
// [OURS]: fewer bytes over the link, a union to build on the CPU. Same rows attended, same
// logits, same output (hybrid/README.md, "Shipping a group's rows once").
enum class ShipRows { head, group };
inline constexpr Vocabulary<ShipRows, 2> kShipRows{{"head", "group"}};

struct HybridGenConfig {
  MergeMode merge = MergeMode::logit;
  double ratio = 0.05;        // top-k share of the CPU tokens per query head ([PORT] 0.05)
  SchedulerConfig scheduler;  // scheduler=feedback|static, boundary=adaptive|fixed, cpu_k_cap...
  int64_t gpu_tokens = -1;    // recent tokens on the accelerator; -1 = as many as fit
  int64_t min_gpu_tokens = 1024;  // floor of the recent window when the boundary adapts
  double min_host_share = 0.0;    // share of pages kept on the host even when all would fit
  // Mechanism 3's policy (hybrid/kv_mapping.h): semantic, naive or interleave.
  KvMappingPolicy kv_mapping = KvMappingPolicy::semantic;
  int naive_tier = 0;          // host tier index for kv_mapping=naive
  int migrate_every = 8;       // decode steps between promotion/demotion passes
  double hot_share = 0.1;      // accelerator pages reserved for promoted (hot) pages
  double fast_v_share = 0.25;  // host pages whose V may be promoted to the fast tier
  double score_alpha = 0.25;   // EMA weight of a step's top-k hits in a page's score
  double ext_share = 0.25;     // cap on accelerator memory for shipped logits + V rows
  BudgetPolicy budget = BudgetPolicy::hybridgen;
  bool overlap = true;                      // false: CPU side, then accelerator side (ablation)
  bool report_attended = true;              // fill StepResult::attended (attention-mass recall)
  CpuSelect cpu_select = CpuSelect::fused;  // logit mode: fused score + top-k, or separate
  bool select_hint = true;   // fused: start each head from last step's k-th logit - margin
  double hint_margin = 0.1;  // margin, as a share of last step's (top logit - k-th logit)
  ShipRows ship_rows = ShipRows::head;  // logit mode: rows per query head, or per group

  bool logit() const { return merge == MergeMode::logit; }
  bool semantic() const { return kv_mapping == KvMappingPolicy::semantic; }

  // The configuration whose buffers the accelerator budget is sized for: this one under
  // budget=own, otherwise `hybridgen`'s (logit merge, feedback scheduler, semantic mapping)
  // with this variant's sizes and shares.
  HybridGenConfig budget_config() const;

  // The options KvMapping takes from this configuration.
  KvMappingOptions kv_mapping_options() const;

  // Reads `<name>.<key>` options over these defaults; throws hb::Error on bad values.
  static HybridGenConfig from_options(const StrategyOptions& opts, const std::string& name,
                                      const HybridGenConfig& defaults);
};

}  // namespace hb::hybrid
