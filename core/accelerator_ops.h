#pragma once
// The ops a strategy queues on an accelerator beyond copies and attention (core/accelerator.h:
// Accelerator::enqueue, Accelerator::supports): the scoring and selection steps of the sparse
// baselines, the streamed attention of offload and ordered host code. Each op is a typed struct
// with a plain contract (core/policy_args.h); the accelerator knows the op, never the strategy
// that queues it. An accelerator that does not support an op says so (supports() false) and
// enqueue() runs the op's fallback (accelerator.cpp: stream_attention falls back to
// decode_attention reading the host pages in place; the others have none and throw, naming the
// op). Adding an op: its struct here and in AcceleratorOp, its name in kAcceleratorOps (same
// order), a `run` for it in each backend that supports it (kernels/cpu, kernels/cuda); wrappers
// forward every op through enqueue() and need nothing.
#include <cstdint>
#include <functional>
#include <variant>

#include "core/attention_args.h"
#include "core/policy_args.h"
#include "core/vocabulary.h"

namespace hb {

class ThreadPool;

// Dense attention over KV whose pages live in host memory (the offload baseline): the pages
// stream through two chunk buffers of `chunk_tokens` tokens in accelerator memory, the copy of
// chunk c+1 (a copy engine) overlapping attention on chunk c; each chunk leaves an (o, lse)
// partial and one merge finishes. Same semantics as decode_attention; the chunk buffers count
// against the capacity budget. `seqs` is copied at enqueue, like decode_attention's.
struct StreamAttentionArgs {
  const DecodeAttentionArgs* seqs = nullptr;
  int batch = 0;
  int64_t chunk_tokens = 0;
};

// Host code run in queue order on the accelerator's own threads, over its memory: only an
// accelerator whose memory the host addresses supports it (the cpu accelerator; tests that need
// an ordered host step). Strategies use the policy kernels instead.
struct HostKernelArgs {
  std::function<void(ThreadPool& pool)> fn;
};

// The ops, in the order of OpKind and kAcceleratorOps.
using AcceleratorOp =
    std::variant<HeavyHitterArgs, PageBoundFoldArgs, PageBoundScoreArgs, TopkRowsArgs, GroupMaxArgs,
                 ProjectRowsArgs, RowsToPagesArgs, StreamAttentionArgs, HostKernelArgs>;

enum class OpKind {
  heavy_hitter_update,
  fold_page_bounds,
  score_page_bounds,
  topk_rows,
  group_max_rows,
  project_rows,
  rows_to_pages,
  stream_attention,
  host_kernel
};
inline constexpr Vocabulary<OpKind, 9> kAcceleratorOps{
    {"heavy_hitter_update", "fold_page_bounds", "score_page_bounds", "topk_rows", "group_max_rows",
     "project_rows", "rows_to_pages", "stream_attention", "host_kernel"}};
static_assert(std::variant_size_v<AcceleratorOp> == kAcceleratorOps.names.size(),
              "every op of AcceleratorOp has a name in kAcceleratorOps, in the same order");

inline OpKind op_kind(const AcceleratorOp& op) { return static_cast<OpKind>(op.index()); }

}  // namespace hb
