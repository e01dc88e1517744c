#include "kernels/cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "kernels/cpu/decode_kernel.h"
#include "kernels/cpu/merge.h"
#include "kernels/cpu/work_split.h"
#include "kernels/nvtx.h"

namespace hb::cpu {

namespace {

// The tokens a sequence's arguments select: [begin, end_h) of each KV head h, with one begin
// for all heads (a head with fewer tokens just ends earlier, possibly at begin).
int64_t range_begin(const DecodeAttentionArgs& a) { return std::max<int64_t>(a.token_begin, 0); }
int64_t head_end(const DecodeAttentionArgs& a, const KvHeadView& h) {
  const int64_t b = range_begin(a);
  const int64_t e = a.token_end < 0 ? h.num_tokens : std::min(a.token_end, h.num_tokens);
  return std::max(b, e);
}

struct SeqPlan : HeadSplit {
  int group = 0;
  const KernelTable* kernels = nullptr;
  int64_t begin = 0, longest = 0;
  size_t scratch = 0;  // offset of this sequence's split partials in the scratch buffer
  int64_t first_task = 0;
};

// Plans every sequence: its head group and kernels, then its share of the tasks. Tasks are
// (sequence, group of KV heads, token split); a task walks its heads interleaved
// (decode_kernel.h). Splits give the pool enough tasks to balance; they are LSE-merged.
// Returns the floats of split partials the plan needs in scratch; `tasks` gets the task count.
size_t plan_sequences(const DecodeAttentionArgs* seqs, int batch, int workers, SimdLevel simd,
                      std::vector<SeqPlan>& plan, int64_t& tasks) {
  int64_t units = 0;  // head-tokens over all sequences
  for (int b = 0; b < batch; ++b) {
    const DecodeAttentionArgs& a = seqs[b];
    SeqPlan& p = plan[b];
    if (a.kv.kv_heads <= 0 || a.q_heads % a.kv.kv_heads != 0 ||
        a.q_heads / a.kv.kv_heads > kMaxJobQueryHeads)
      throw Error("decode_attention: " + std::to_string(a.q_heads) + " query heads cannot share " +
                      std::to_string(a.kv.kv_heads) + " KV heads",
                  "q_heads must be a multiple of kv_heads, at most " +
                      std::to_string(kMaxJobQueryHeads) + " per KV head");
    p.group = a.q_heads / a.kv.kv_heads;
    p.kernels = &kernels_for(simd, a.kv.head_dim);  // throws here, not on a worker
    p.begin = range_begin(a);
    for (int h = 0; h < a.kv.kv_heads; ++h)
      p.longest = std::max(p.longest, head_end(a, a.kv.heads[h]) - p.begin);
    units += p.longest * a.kv.kv_heads;
  }
  const int64_t piece_units = split_size(units, workers);
  size_t scratch_floats = 0;
  tasks = 0;
  for (int b = 0; b < batch; ++b) {
    const DecodeAttentionArgs& a = seqs[b];
    SeqPlan& p = plan[b];
    static_cast<HeadSplit&>(p) = split_heads(a.kv.kv_heads, p.group, p.longest, piece_units);
    if (p.splits > 1) {
      p.scratch = scratch_floats;
      scratch_floats += static_cast<size_t>(p.splits) * a.q_heads * (a.kv.head_dim + 1);
    }
    p.first_task = tasks;
    tasks += p.splits * p.head_jobs;
  }
  return scratch_floats;
}

// One task of sequence `a`: its heads' part of one token split, into the caller's o/lse when
// the sequence has one split, else into its split partials in scratch.
void attend_task(const DecodeAttentionArgs& a, const SeqPlan& p, int64_t local, float* scratch) {
  const int first_head = static_cast<int>(local / p.splits) * p.heads_per_job;
  const int nheads = std::min(p.heads_per_job, a.kv.kv_heads - first_head);
  const int64_t split = local % p.splits;
  const int d = a.kv.head_dim, G = p.group;

  DecodeJob job;
  job.scale = a.scale > 0 ? a.scale : 1.0f / std::sqrt(static_cast<float>(d));
  job.page_tokens = a.kv.page_tokens;
  job.head_dim = d;
  job.group = G;
  job.dtype = a.kv.dtype;
  job.begin = p.begin + split * p.split_tokens;
  job.heads = nheads;
  job.logits_stride = a.logits_stride;
  job.logits_base = p.begin;
  JobHead heads[kMaxJobHeads];
  bool any = false;
  for (int i = 0; i < nheads; ++i) {
    const int kvh = first_head + i;
    JobHead& h = heads[i];
    h.q = a.q + static_cast<size_t>(kvh) * G * d;
    h.pages = a.kv.heads[kvh].pages;
    h.end = std::clamp(head_end(a, a.kv.heads[kvh]), job.begin, job.begin + p.split_tokens);
    any |= h.end > job.begin;
    if (p.splits == 1) {
      h.o = a.o + static_cast<size_t>(kvh) * G * d;
      h.lse = a.lse + static_cast<size_t>(kvh) * G;
    } else {  // [split][q_heads][d] then [split][q_heads]
      float* base = scratch + p.scratch;
      h.o = base + (static_cast<size_t>(split) * a.q_heads + static_cast<size_t>(kvh) * G) * d;
      h.lse = base + static_cast<size_t>(p.splits) * a.q_heads * d + split * a.q_heads + kvh * G;
    }
    h.logits =
        a.logits_out ? a.logits_out + static_cast<size_t>(kvh) * G * a.logits_stride : nullptr;
  }
  job.head = heads;
  if (!any) {  // nothing to read: neutral partials without calling the kernel
    for (int i = 0; i < nheads; ++i) {
      std::fill(heads[i].o, heads[i].o + static_cast<size_t>(G) * d, 0.0f);
      std::fill(heads[i].lse, heads[i].lse + G, -std::numeric_limits<float>::infinity());
    }
    return;
  }
  p.kernels->attend(job);
}

// Merges the split partials of a sequence into its o/lse (all heads at once: merge is per
// query head).
void merge_splits(const DecodeAttentionArgs& a, const SeqPlan& p, const float* scratch) {
  const int d = a.kv.head_dim;
  std::vector<const float*> o(p.splits), l(p.splits);
  const float* base = scratch + p.scratch;
  for (int64_t s = 0; s < p.splits; ++s) {
    o[s] = base + static_cast<size_t>(s) * a.q_heads * d;
    l[s] = base + static_cast<size_t>(p.splits) * a.q_heads * d + s * a.q_heads;
  }
  merge_partials(static_cast<int>(p.splits), o.data(), l.data(), a.q_heads, d, a.o, a.lse);
}

}  // namespace

void decode_attention(const DecodeAttentionArgs* seqs, int batch, ThreadPool& pool,
                      SimdLevel simd) {
  HB_NVTX_RANGE("hb.cpu.decode_attention");
  if (batch <= 0) return;
  std::vector<SeqPlan> plan(batch);
  int64_t tasks = 0;
  const size_t scratch_floats = plan_sequences(seqs, batch, pool.size(), simd, plan, tasks);
  thread_local std::vector<float> scratch_buf;  // the caller's; workers get the pointer
  if (scratch_buf.size() < scratch_floats) scratch_buf.resize(scratch_floats);
  float* const scratch = scratch_buf.data();

  pool.parallel_for(tasks, [&](int64_t task, int) {
    int b = 0;
    while (b + 1 < batch && plan[b + 1].first_task <= task) ++b;
    attend_task(seqs[b], plan[b], task - plan[b].first_task, scratch);
  });
  for (int b = 0; b < batch; ++b)
    if (plan[b].splits > 1) merge_splits(seqs[b], plan[b], scratch);
}

}  // namespace hb::cpu
