#pragma once
// The cpu accelerator's offload streaming (the stream_attention op, core/accelerator_ops.h) in
// pieces: host pages flow chunk by chunk through two halves of a buffer in accelerator memory,
// a copy thread filling one half while the pool attends the other (cpu_accelerator.cpp wires
// the threads). Each piece does one job: plan the chunks, copy one, attend one, merge them.
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "core/attention_args.h"
#include "core/thread_pool.h"

namespace hb::cpu {

// One streaming call's plan: the token range of every (sequence, KV head), the chunks of C
// tokens that cover them, and where each page of a chunk lands in the buffer.
struct StreamPlan {
  int batch = 0, page_tokens = 0, kv_heads = 0, head_dim = 0, q_heads = 0;
  int64_t chunk_tokens = 0, pages_per_chunk = 0;
  size_t block = 0;                                // bytes of one page's K (or V) block
  std::vector<std::pair<int64_t, int64_t>> range;  // [batch][kv_heads], clamped as attention does
  int64_t first = 0, chunks = 0;                   // the chunks holding any token of a range

  // Blocks in one half of the buffer (K and V of every page a chunk can name), and its bytes.
  size_t half_blocks() const;
  size_t buffer_bytes() const { return 2 * half_blocks() * block; }
  // Where chunk ci's page `page_in_chunk` of (b, h) lands in `buf`: its K block (kv 0) or V (1).
  std::byte* slot(std::byte* buf, int64_t ci, int b, int h, int64_t page_in_chunk, int kv) const;
  // Pages [first, end) of (b, h) that chunk c must bring: those overlapping its part of the range.
  std::pair<int64_t, int64_t> chunk_pages(int64_t c, int b, int h) const;
};

// Plans a call over sequences of one shape (an Error otherwise).
StreamPlan plan_stream(const std::vector<DecodeAttentionArgs>& seqs, int64_t chunk_tokens);

// (o, lse) = (0, -inf) for every sequence: the result of a call with no token to attend.
void write_empty_partials(const std::vector<DecodeAttentionArgs>& seqs, const StreamPlan& plan);

// Copies chunk ci's pages from host memory into its half of `buf` (the copy thread's job).
void copy_chunk(const StreamPlan& plan, const std::vector<DecodeAttentionArgs>& seqs,
                std::byte* buf, int64_t ci);

// The attention arguments of each chunk, over the pages in the buffer, and every chunk's
// partials, merged at the end.
class ChunkAttention {
 public:
  ChunkAttention(const StreamPlan& plan, const std::vector<DecodeAttentionArgs>& seqs);
  // Attends chunk ci, whose pages are in `buf`, into its partials.
  void attend(std::byte* buf, int64_t ci, ThreadPool& pool);
  // LSE-merges every chunk's partials into the sequences' o and lse.
  void merge() const;

 private:
  const StreamPlan& plan_;
  const std::vector<DecodeAttentionArgs>& seqs_;
  std::vector<float> part_o_, part_lse_;
  std::vector<PageRef> table_;
  std::vector<KvHeadView> heads_;
  std::vector<DecodeAttentionArgs> args_;
};

// Hand-over between the copy thread and the attending thread: a buffer half is free once the
// chunk two before has been attended; a chunk is attended once it has been copied.
class ChunkHandover {
 public:
  void wait_half_free(int64_t ci);  // copy side, before copying chunk ci
  void copied(int64_t ci);          // copy side, chunk ci is in the buffer
  void copies_done();               // copy side, last touch of this object
  void wait_copied(int64_t ci);     // attention side, before attending chunk ci
  void attended(int64_t ci);        // attention side, chunk ci's half may be refilled
  // Attention side, on the way out (normally or on an error): releases a copy job still
  // waiting for buffer space and waits until it no longer touches this object.
  void finish(int64_t chunks);

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int64_t copied_ = 0, used_ = 0;
  bool done_ = false;
};

}  // namespace hb::cpu
