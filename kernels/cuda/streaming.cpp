// The streaming path of the offload baseline (the stream_attention op, core/accelerator_ops.h): KV
// pages in host memory flow through two device chunk buffers. For chunk c, on the copy stream: wait
// until the buffer's previous chunk (c-2) has been attended, copy chunk c's blocks in
// (host-contiguous blocks coalesced into one cudaMemcpyAsync), record `copied`. On the queue:
// upload chunk c's page table, wait for `copied`, run the split-KV kernel writing chunk c's
// partial slots, record `used`. So the copy of chunk c+1 overlaps attention on chunk c; one
// LSE merge over all slots finishes. Host planning of chunk c+1 overlaps the GPU as well.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "kernels/cuda/accelerator_impl.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch_plan.h"

namespace hb::cuda {

void CudaAcceleratorImpl::stream_attention(const DecodeAttentionArgs* seqs, int batch,
                                           int64_t chunk_tokens) {
  Op op(*this, "hb.cuda.stream_attention", Op::Start::deferred);
  if (batch <= 0) return;
  const LaunchShape s = check_shape(seqs, batch, "stream_attention");
  const int P = s.page_tokens, H = s.kv_heads;
  const int64_t C = stream_chunk_tokens(chunk_tokens, P, kDecodeTile);
  const size_t block_bytes = static_cast<size_t>(P) * s.head_dim * 2;

  std::vector<TokenRange> ranges(static_cast<size_t>(batch) * H);
  int64_t lo_all = INT64_MAX, hi_all = 0;
  std::vector<SeqDesc> seq_desc(batch);
  for (int b = 0; b < batch; ++b) {
    const DecodeAttentionArgs& a = seqs[b];
    const float scale = a.scale > 0 ? a.scale : 1.0f / std::sqrt(static_cast<float>(s.head_dim));
    seq_desc[b] = SeqDesc{a.q, a.o, a.lse, a.logits_out, a.logits_stride, scale, 0};
    for (int h = 0; h < H; ++h) {
      const TokenRange r = clamp_range(a.token_begin, a.token_end, a.kv.heads[h].num_tokens);
      if (r.end >= INT32_MAX)
        throw Error("stream_attention: sequence too long for the CUDA kernels", {}, kExitUsage);
      ranges[static_cast<size_t>(b) * H + h] = r;
      if (!r.empty()) {
        lo_all = std::min(lo_all, r.begin);
        hi_all = std::max(hi_all, r.end);
      }
    }
  }
  const int64_t first_chunk = hi_all > 0 ? lo_all / C : 0;
  const int64_t chunks = hi_all > 0 ? (hi_all + C - 1) / C - first_chunk : 0;

  DecodeLaunch L = decode_launch(s, batch, true);
  const SplitPlan plan =
      plan_splits(C / kDecodeTile, int64_t{batch} * H * L.head_chunks, resident_ctas(s, true));
  L.splits = plan.splits;
  L.tiles_per_split = plan.tiles_per_split;
  L.slots = static_cast<int>(std::max<int64_t>(1, chunks * plan.splits));
  L.write_logits =
      std::any_of(seqs, seqs + batch, [](const auto& a) { return a.logits_out != nullptr; }) ? 1
                                                                                             : 0;
  const int64_t rows = int64_t{batch} * s.q_heads;
  Scratch part(*ctx_, static_cast<size_t>(rows * L.slots * (s.head_dim + 1)) * sizeof(float),
               "stream_attention partials");
  L.part_o = part.as<float>();
  L.part_lse = L.part_o + rows * L.slots * s.head_dim;
  // Sequence descriptors for the chunk kernels and the final merge.
  Scratch seq_dev = upload_scratch(seq_desc.data(), seq_desc.size() * sizeof(SeqDesc),
                                   "stream_attention sequences");
  L.seqs = seq_dev.as<SeqDesc>();
  const std::string what = "batch " + std::to_string(batch) + ", " + s.describe() + ", chunks of " +
                           std::to_string(C) + " tokens";

  // Two chunk buffers, each room for every block one chunk can name (K and V of all heads):
  // a chunk spans at most C tokens, and no more than the attended span when that is shorter.
  const int64_t span = std::min<int64_t>(C, hi_all - first_chunk * C);
  const size_t blocks_per_chunk =
      static_cast<size_t>(batch) * H * 2 * static_cast<size_t>(span / P + 1);
  const size_t half = blocks_per_chunk * block_bytes;
  if (chunks > 0 && stream_buf_.size() < 2 * half) {
    stream_buf_.reset();  // cudaFree waits for the previous call's kernels
    stream_buf_ = memory_->allocate(2 * half);
  }
  auto* buf = stream_buf_.as<std::byte>();

  op.gpu_begins();
  HB_CUDA_CHECK(cudaEventRecord(stream_ready_, ctx_->stream), what);
  HB_CUDA_CHECK(cudaStreamWaitEvent(ctx_->copy_stream, stream_ready_), what);
  std::vector<const std::byte*> blocks;
  std::vector<std::pair<size_t, int>>
      owners;  // (head desc index, page offset within chunk) per K block
  std::vector<DevPage> table;
  std::vector<HeadDesc> heads(static_cast<size_t>(batch) * H);
  std::vector<Scratch> keep;  // chunk tables live until the call's work is queued (freed in order)
  for (int64_t ci = 0; ci < chunks; ++ci) {
    const int64_t c = first_chunk + ci;
    const int which = static_cast<int>(ci % 2);
    std::byte* dst = buf + which * half;
    // Plan: every page of every (sequence, head) overlapping this chunk's tokens.
    blocks.clear();
    table.clear();
    size_t entries = 0;
    for (int b = 0; b < batch; ++b) {
      for (int h = 0; h < H; ++h) {
        const size_t hi_idx = static_cast<size_t>(b) * H + h;
        const TokenRange& r = ranges[hi_idx];
        const int64_t t0 = std::max(r.begin, c * C), t1 = std::min(r.end, (c + 1) * C);
        HeadDesc& hd = heads[hi_idx];
        hd = HeadDesc{nullptr, 0, 0, 0, r.begin};
        if (t0 >= t1) continue;
        const int64_t p0 = t0 / P, p1 = (t1 + P - 1) / P;
        const PageRef* pages = seqs[b].kv.heads[h].pages;
        hd.base = p0 * P;
        hd.begin = t0;
        hd.end = t1;
        hd.pages = reinterpret_cast<const DevPage*>(entries);  // index for now, pointer below
        for (int64_t p = p0; p < p1; ++p) {
          blocks.push_back(pages[p].k);
          blocks.push_back(pages[p].v);
        }
        entries += static_cast<size_t>(p1 - p0);
      }
    }
    const CopyPlan cp = plan_copy_runs(blocks, block_bytes);
    table.resize(entries);
    for (size_t i = 0; i < entries; ++i)
      table[i] =
          DevPage{dst + cp.slot_of[2 * i] * block_bytes, dst + cp.slot_of[2 * i + 1] * block_bytes};
    // Copies of chunk c, once the buffer's previous chunk has been attended.
    {
      HB_NVTX_RANGE("hb.cuda.stream_copy");
      if (ci >= 2) HB_CUDA_CHECK(cudaStreamWaitEvent(ctx_->copy_stream, chunk_used_[which]), what);
      for (const CopyRun& run : cp.runs)
        HB_CUDA_CHECK(
            cudaMemcpyAsync(dst + run.first_slot * block_bytes, run.src, run.blocks * block_bytes,
                            cudaMemcpyDefault, ctx_->copy_stream),
            what + ", chunk " + std::to_string(c));
      HB_CUDA_CHECK(cudaEventRecord(chunk_copied_[which], ctx_->copy_stream), what);
    }
    // Attention on chunk c, on the queue, after its copies.
    Scratch tab(*ctx_, entries * sizeof(DevPage) + heads.size() * sizeof(HeadDesc),
                "stream_attention chunk table");
    auto* dev_table = tab.as<DevPage>();
    for (auto& hd : heads)
      if (hd.end > hd.begin) hd.pages = dev_table + reinterpret_cast<size_t>(hd.pages);
    ring_.upload(dev_table, table.data(), entries * sizeof(DevPage), ctx_->stream);
    auto* dev_heads = reinterpret_cast<HeadDesc*>(dev_table + entries);
    ring_.upload(dev_heads, heads.data(), heads.size() * sizeof(HeadDesc), ctx_->stream);
    HB_CUDA_CHECK(cudaStreamWaitEvent(ctx_->stream, chunk_copied_[which]), what);
    L.heads = dev_heads;
    L.slot_offset = static_cast<int>(ci * plan.splits);
    launch_decode(L, ctx_->stream);
    HB_CUDA_CHECK_LAUNCH("stream_attention chunk kernel", what + ", chunk " + std::to_string(c));
    HB_CUDA_CHECK(cudaEventRecord(chunk_used_[which], ctx_->stream), what);
    keep.push_back(std::move(tab));
  }
  if (chunks == 0) {
    // Nothing to attend: one empty chunk writes neutral partials so the merge gives (0, -inf).
    for (auto& hd : heads) hd = HeadDesc{nullptr, 0, 0, 0, 0};
    Scratch hd_dev =
        upload_scratch(heads.data(), heads.size() * sizeof(HeadDesc), "stream_attention heads");
    L.heads = hd_dev.as<HeadDesc>();
    L.splits = 1;
    L.slot_offset = 0;
    launch_decode(L, ctx_->stream);
    HB_CUDA_CHECK_LAUNCH("stream_attention empty kernel", what);
  }
  HB_NVTX_RANGE("hb.cuda.merge_splits");
  launch_split_merge(
      SplitMergeLaunch{L.seqs, batch, s.q_heads, s.head_dim, L.slots, L.part_o, L.part_lse},
      ctx_->stream);
  HB_CUDA_CHECK_LAUNCH("stream_attention merge kernel", what);
}

}  // namespace hb::cuda
