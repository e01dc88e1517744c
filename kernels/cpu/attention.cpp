#include "kernels/cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "kernels/cpu/decode_kernel.h"
#include "kernels/cpu/merge.h"
#include "kernels/cpu/work_split.h"

namespace hb::cpu {

namespace {

// Tokens [begin, end) a sequence's arguments select in one KV head.
TokenRange head_range(const DecodeAttentionArgs& a, const KvHeadView& h) {
  const int64_t b = std::clamp<int64_t>(a.token_begin, 0, h.num_tokens);
  const int64_t e = a.token_end < 0 ? h.num_tokens : std::clamp<int64_t>(a.token_end, b, h.num_tokens);
  return {b, e};
}

struct SeqPlan {
  int group = 0;
  const KernelTable* kernels = nullptr;
  int64_t splits = 1, split_tokens = 0;
  size_t scratch = 0;  // offset of this sequence's split partials in the scratch buffer
};

}  // namespace

void decode_attention(const DecodeAttentionArgs* seqs, int batch, ThreadPool& pool, SimdLevel simd) {
  if (batch <= 0) return;

  // Split each sequence's KV heads into token ranges so there are enough tasks to balance
  // the pool; ranges of one head are merged afterwards.
  std::vector<SeqPlan> plan(batch);
  int64_t head_tokens = 0;
  for (int b = 0; b < batch; ++b) {
    const DecodeAttentionArgs& a = seqs[b];
    if (a.kv.kv_heads <= 0 || a.q_heads % a.kv.kv_heads != 0 || a.q_heads / a.kv.kv_heads > kMaxGroup)
      throw Error("decode_attention: " + std::to_string(a.q_heads) + " query heads cannot share " +
                      std::to_string(a.kv.kv_heads) + " KV heads",
                  "q_heads must be a multiple of kv_heads, at most " + std::to_string(kMaxGroup) + " per KV head");
    plan[b].group = a.q_heads / a.kv.kv_heads;
    plan[b].kernels = &kernels_for(simd, a.kv.head_dim);  // throws here, not on a worker
    for (int h = 0; h < a.kv.kv_heads; ++h) head_tokens += head_range(a, a.kv.heads[h]).size();
  }
  const int64_t split_tokens = split_size(head_tokens, pool.size());
  size_t scratch_floats = 0;
  std::vector<int64_t> task_start(batch + 1, 0);
  for (int b = 0; b < batch; ++b) {
    const DecodeAttentionArgs& a = seqs[b];
    int64_t longest = 0;
    for (int h = 0; h < a.kv.kv_heads; ++h) longest = std::max(longest, head_range(a, a.kv.heads[h]).size());
    SeqPlan& p = plan[b];
    p.split_tokens = split_tokens;
    p.splits = std::max<int64_t>(1, (longest + split_tokens - 1) / split_tokens);
    if (p.splits > 1) {
      p.scratch = scratch_floats;
      scratch_floats += static_cast<size_t>(p.splits) * a.q_heads * (a.kv.head_dim + 1);
    }
    task_start[b + 1] = task_start[b] + p.splits * a.kv.kv_heads;
  }
  thread_local std::vector<float> scratch_buf;  // the caller's; workers get the pointer
  if (scratch_buf.size() < scratch_floats) scratch_buf.resize(scratch_floats);
  float* const scratch = scratch_buf.data();

  pool.parallel_for(task_start[batch], [&](int64_t task, int) {
    const int b = static_cast<int>(std::upper_bound(task_start.begin(), task_start.end(), task) - task_start.begin()) - 1;
    const DecodeAttentionArgs& a = seqs[b];
    const SeqPlan& p = plan[b];
    const int64_t local = task - task_start[b];
    const int kvh = static_cast<int>(local / p.splits);
    const int64_t split = local % p.splits;
    const int d = a.kv.head_dim, G = p.group;
    const KvHeadView& head = a.kv.heads[kvh];
    const TokenRange all = head_range(a, head);
    const TokenRange r = all.part(split, p.split_tokens);

    AttendJob job;
    job.q = a.q + static_cast<size_t>(kvh) * G * d;
    job.scale = a.scale > 0 ? a.scale : 1.0f / std::sqrt(static_cast<float>(d));
    job.pages = head.pages;
    job.page_tokens = a.kv.page_tokens;
    job.head_dim = d;
    job.group = G;
    job.dtype = a.kv.dtype;
    job.begin = r.begin;
    job.end = r.end;
    if (p.splits == 1) {
      job.o = a.o + static_cast<size_t>(kvh) * G * d;
      job.lse = a.lse + static_cast<size_t>(kvh) * G;
    } else {  // [split][q_heads][d] then [split][q_heads]
      float* base_o = scratch + p.scratch;
      job.o = base_o + (static_cast<size_t>(split) * a.q_heads + static_cast<size_t>(kvh) * G) * d;
      job.lse = base_o + static_cast<size_t>(p.splits) * a.q_heads * d + split * a.q_heads + kvh * G;
    }
    if (a.logits_out) {
      job.logits = a.logits_out + static_cast<size_t>(kvh) * G * a.logits_stride;
      job.logits_stride = a.logits_stride;
      job.logits_base = all.begin;
    }
    if (r.size() <= 0) {  // the neutral partial
      std::fill(job.o, job.o + static_cast<size_t>(G) * d, 0.0f);
      std::fill(job.lse, job.lse + G, -std::numeric_limits<float>::infinity());
      return;
    }
    p.kernels->attend(job);
  });

  // Merge the split partials of each sequence (all heads at once: merge is per query head).
  for (int b = 0; b < batch; ++b) {
    const DecodeAttentionArgs& a = seqs[b];
    const SeqPlan& p = plan[b];
    if (p.splits == 1) continue;
    const int d = a.kv.head_dim;
    std::vector<const float*> o(p.splits), l(p.splits);
    const float* base_o = scratch + p.scratch;
    for (int64_t s = 0; s < p.splits; ++s) {
      o[s] = base_o + static_cast<size_t>(s) * a.q_heads * d;
      l[s] = base_o + static_cast<size_t>(p.splits) * a.q_heads * d + s * a.q_heads;
    }
    merge_partials(static_cast<int>(p.splits), o.data(), l.data(), a.q_heads, d, a.o, a.lse);
  }
}

}  // namespace hb::cpu
