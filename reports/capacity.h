#pragma once
// The report's capacity section (issue 34 item 3): how far each platform's memory carries each
// strategy, the longest context at a batch and the largest batch at a context, as its own plan
// decides (model/capacity.h computes the rows; `run` writes them; the procurement view reads
// them). Plain data, like report.h.
#include <cstdint>
#include <string>

#include "core/vocabulary.h"

namespace hb::reports {

// max-context: the longest context (tokens per sequence, prompt and generated) at `batch`;
// max-batch: the largest batch at `seq_len` tokens per sequence. Both count memory only; the
// procurement view adds the ITL limit (--itl-slo).
enum class CapacityKind { max_context, max_batch };
inline constexpr Vocabulary<CapacityKind, 2> kCapacityKinds{{"max-context", "max-batch"}};
inline const char* to_string(CapacityKind k) { return kCapacityKinds.name(k); }

struct CapacityRow {
  CapacityKind kind = CapacityKind::max_context;
  // The points' platform: axes.extra["platform"] (model mode), the host label (fleet, replicate),
  // or "" for the machine a measured report ran on.
  std::string platform;
  std::string model, kv_dtype, strategy;
  std::string kv_budget;  // the --kv-budget axis ("" = each strategy's own budget)
  int batch = 1;          // max-context: the batch it holds at; max-batch: the answer
  int64_t seq_len = 0;    // max-batch: the context it holds at; max-context: the answer
  // Nothing fits: not one page of context (max-context) or one sequence (max-batch).
  bool none = false;
  // Still fits at the search bound (the answer is then the bound).
  bool unbounded = false;
  // What binds one step beyond the answer: "accelerator", a host tier's kind ("local-dram",
  // "cxl"), several joined by " + ", "weights" (the model's weights leave no room), or "model"
  // (the context reached the model's max_position_embeddings), then ": "
  // and the strategy's own reason (its figures are one layer's share).
  std::string limit;

  // The answer: max_context's tokens or max_batch's sequences.
  int64_t value() const { return kind == CapacityKind::max_context ? seq_len : batch; }
};

}  // namespace hb::reports
