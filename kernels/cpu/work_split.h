#pragma once
// How the CPU kernels cut token ranges into pool tasks. One rule for attention, scoring and
// the streaming-read yardstick, so they are compared under the same scheduling.
#include <algorithm>
#include <cstdint>

#include "kernels/cpu/decode_kernel.h"

namespace hb::cpu {

struct TokenRange {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
  // The i-th piece of `piece` tokens (empty past the end).
  TokenRange part(int64_t i, int64_t piece) const {
    const int64_t b = std::min(end, begin + i * piece);
    return {b, std::min(end, b + piece)};
  }
};

// Tasks per worker: enough that a worker slowed by noise (the machine is shared) leaves
// little tail, few enough that per-task and merge overheads stay negligible.
inline constexpr int kTasksPerWorker = 8;
// Smallest piece worth a task: 256 tokens of one KV head (a few tens of KiB at any shape).
inline constexpr int64_t kMinSplitTokens = 256;

// Piece size for `units` of work (tokens of a stream, or head-tokens of attention) spread over
// `workers`; a multiple of 16 so a piece that starts on a sub-block boundary ends on one.
inline int64_t split_size(int64_t units, int workers) {
  const int64_t want =
      (units + int64_t{kTasksPerWorker} * workers - 1) / (int64_t{kTasksPerWorker} * workers);
  return (std::max(want, kMinSplitTokens) + 15) / 16 * 16;
}

// How one sequence's KV heads and tokens become DecodeJobs: groups of heads (as many as a job
// holds) times token splits of about `piece_units` head-tokens each.
struct HeadSplit {
  int heads_per_job = 1, head_jobs = 1;
  int64_t split_tokens = 16, splits = 1;
};
inline HeadSplit split_heads(int kv_heads, int group, int64_t longest, int64_t piece_units) {
  HeadSplit s;
  s.heads_per_job = std::max(1, std::min({kv_heads, kMaxJobHeads, kMaxJobQueryHeads / group}));
  s.head_jobs = (kv_heads + s.heads_per_job - 1) / s.heads_per_job;
  s.split_tokens = std::max<int64_t>(16, (piece_units / s.heads_per_job + 15) / 16 * 16);
  s.splits = std::max<int64_t>(1, (longest + s.split_tokens - 1) / s.split_tokens);
  return s;
}

}  // namespace hb::cpu
