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

// One stream_attention call: its shape and chunking, its launch and the host scratch of its
// chunk planning, shared by the steps below.
struct CudaAcceleratorImpl::StreamCall {
  const DecodeAttentionArgs* seqs = nullptr;
  int batch = 0;
  LaunchShape s;
  int64_t C = 0;                                 // tokens per chunk
  size_t block_bytes = 0;                        // one page's K (or V) block
  std::vector<TokenRange> ranges;                // [batch][kv_heads], clamped
  int64_t first_chunk = 0, chunks = 0, end = 0;  // end: past the last attended token
  DecodeLaunch L{};
  int64_t chunk_splits = 1;  // partial slots per chunk
  std::string what;          // names the call in errors
  Scratch part, seq_dev;     // partial slots; sequence descriptors
  std::byte* buf = nullptr;  // the two chunk buffers, `half` bytes each
  size_t half = 0;
  std::vector<HeadDesc> heads;  // [batch][kv_heads] of the chunk being planned
  std::vector<const std::byte*> blocks;
  std::vector<DevPage> table;
  std::vector<Scratch> keep;  // chunk tables live until the call's work is queued (freed in order)
};

namespace {

// Every (sequence, head)'s token range and the chunks covering them; returns the sequences'
// descriptors.
std::vector<SeqDesc> plan_stream_ranges(CudaAcceleratorImpl::StreamCall& c) {
  const int H = c.s.kv_heads;
  c.ranges.resize(static_cast<size_t>(c.batch) * H);
  int64_t lo_all = INT64_MAX, hi_all = 0;
  std::vector<SeqDesc> seq_desc(c.batch);
  for (int b = 0; b < c.batch; ++b) {
    const DecodeAttentionArgs& a = c.seqs[b];
    const float scale = a.scale > 0 ? a.scale : 1.0f / std::sqrt(static_cast<float>(c.s.head_dim));
    seq_desc[b] = SeqDesc{a.q, a.o, a.lse, a.logits_out, a.logits_stride, scale, 0};
    for (int h = 0; h < H; ++h) {
      const TokenRange r = clamp_range(a.token_begin, a.token_end, a.kv.heads[h].num_tokens);
      if (r.end >= INT32_MAX)
        throw Error("stream_attention: sequence too long for the CUDA kernels", {}, kExitUsage);
      c.ranges[static_cast<size_t>(b) * H + h] = r;
      if (!r.empty()) {
        lo_all = std::min(lo_all, r.begin);
        hi_all = std::max(hi_all, r.end);
      }
    }
  }
  c.end = hi_all;
  c.first_chunk = hi_all > 0 ? lo_all / c.C : 0;
  c.chunks = hi_all > 0 ? (hi_all + c.C - 1) / c.C - c.first_chunk : 0;
  return seq_desc;
}

// Chunk c's pages: every page of every (sequence, head) overlapping its tokens. Sets each
// head's descriptor (its pages as an index into the chunk's table, a pointer once the table
// is on the device) and lists the host K and V blocks to copy in table order; returns the
// table's entries.
size_t plan_chunk_pages(CudaAcceleratorImpl::StreamCall& call, int64_t c) {
  const int P = call.s.page_tokens, H = call.s.kv_heads;
  const int64_t C = call.C;
  call.blocks.clear();
  size_t entries = 0;
  for (int b = 0; b < call.batch; ++b) {
    for (int h = 0; h < H; ++h) {
      const size_t hi_idx = static_cast<size_t>(b) * H + h;
      const TokenRange& r = call.ranges[hi_idx];
      const int64_t t0 = std::max(r.begin, c * C), t1 = std::min(r.end, (c + 1) * C);
      HeadDesc& hd = call.heads[hi_idx];
      hd = HeadDesc{nullptr, 0, 0, 0, r.begin};
      if (t0 >= t1) continue;
      const int64_t p0 = t0 / P, p1 = (t1 + P - 1) / P;
      const PageRef* pages = call.seqs[b].kv.heads[h].pages;
      hd.base = p0 * P;
      hd.begin = t0;
      hd.end = t1;
      hd.pages = reinterpret_cast<const DevPage*>(entries);  // index for now, pointer below
      for (int64_t p = p0; p < p1; ++p) {
        call.blocks.push_back(pages[p].k);
        call.blocks.push_back(pages[p].v);
      }
      entries += static_cast<size_t>(p1 - p0);
    }
  }
  return entries;
}

}  // namespace

void CudaAcceleratorImpl::plan_stream_launch(StreamCall& c, const std::vector<SeqDesc>& seq_desc) {
  const LaunchShape& s = c.s;
  c.L = decode_launch(s, c.batch, true);
  DecodeLaunch& L = c.L;
  const SplitPlan plan = plan_splits(
      c.C / kDecodeTile, int64_t{c.batch} * s.kv_heads * L.head_chunks, resident_ctas(s, true));
  c.chunk_splits = plan.splits;
  L.splits = plan.splits;
  L.tiles_per_split = plan.tiles_per_split;
  L.slots = static_cast<int>(std::max<int64_t>(1, c.chunks * plan.splits));
  L.write_logits =
      std::any_of(c.seqs, c.seqs + c.batch, [](const auto& a) { return a.logits_out != nullptr; })
          ? 1
          : 0;
  const int64_t rows = int64_t{c.batch} * s.q_heads;
  c.part = Scratch(*ctx_, static_cast<size_t>(rows * L.slots * (s.head_dim + 1)) * sizeof(float),
                   "stream_attention partials");
  L.part_o = c.part.as<float>();
  L.part_lse = L.part_o + rows * L.slots * s.head_dim;
  // Sequence descriptors for the chunk kernels and the final merge.
  c.seq_dev = upload_scratch(seq_desc.data(), seq_desc.size() * sizeof(SeqDesc),
                             "stream_attention sequences");
  L.seqs = c.seq_dev.as<SeqDesc>();
  c.what = "batch " + std::to_string(c.batch) + ", " + s.describe() + ", chunks of " +
           std::to_string(c.C) + " tokens";
}

void CudaAcceleratorImpl::reserve_stream_buffers(StreamCall& c) {
  // Two chunk buffers, each room for every block one chunk can name (K and V of all heads):
  // a chunk spans at most C tokens, and no more than the attended span when that is shorter.
  const int64_t span = std::min<int64_t>(c.C, c.end - c.first_chunk * c.C);
  const size_t blocks_per_chunk = static_cast<size_t>(c.batch) * c.s.kv_heads * 2 *
                                  static_cast<size_t>(span / c.s.page_tokens + 1);
  c.half = blocks_per_chunk * c.block_bytes;
  if (c.chunks > 0 && stream_buf_.size() < 2 * c.half) {
    stream_buf_.reset();  // cudaFree waits for the previous call's kernels
    stream_buf_ = memory_->allocate(2 * c.half);
  }
  c.buf = stream_buf_.as<std::byte>();
}

void CudaAcceleratorImpl::queue_stream_chunk(StreamCall& call, int64_t ci) {
  const int64_t c = call.first_chunk + ci;
  const int which = static_cast<int>(ci % 2);
  const size_t block_bytes = call.block_bytes;
  std::byte* dst = call.buf + which * call.half;
  const std::string& what = call.what;
  const size_t entries = plan_chunk_pages(call, c);
  const CopyPlan cp = plan_copy_runs(call.blocks, block_bytes);
  call.table.resize(entries);
  for (size_t i = 0; i < entries; ++i)
    call.table[i] =
        DevPage{dst + cp.slot_of[2 * i] * block_bytes, dst + cp.slot_of[2 * i + 1] * block_bytes};
  // Copies of chunk c, once the buffer's previous chunk has been attended.
  {
    HB_NVTX_RANGE("hb.cuda.stream_copy");
    if (ci >= 2) HB_CUDA_CHECK(cudaStreamWaitEvent(ctx_->copy_stream, chunk_used_[which]), what);
    for (const CopyRun& run : cp.runs)
      HB_CUDA_CHECK(cudaMemcpyAsync(dst + run.first_slot * block_bytes, run.src,
                                    run.blocks * block_bytes, cudaMemcpyDefault, ctx_->copy_stream),
                    what + ", chunk " + std::to_string(c));
    HB_CUDA_CHECK(cudaEventRecord(chunk_copied_[which], ctx_->copy_stream), what);
  }
  // Attention on chunk c, on the queue, after its copies.
  std::vector<HeadDesc>& heads = call.heads;
  Scratch tab(*ctx_, entries * sizeof(DevPage) + heads.size() * sizeof(HeadDesc),
              "stream_attention chunk table");
  auto* dev_table = tab.as<DevPage>();
  for (auto& hd : heads)
    if (hd.end > hd.begin) hd.pages = dev_table + reinterpret_cast<size_t>(hd.pages);
  ring_.upload(dev_table, call.table.data(), entries * sizeof(DevPage), ctx_->stream);
  auto* dev_heads = reinterpret_cast<HeadDesc*>(dev_table + entries);
  ring_.upload(dev_heads, heads.data(), heads.size() * sizeof(HeadDesc), ctx_->stream);
  HB_CUDA_CHECK(cudaStreamWaitEvent(ctx_->stream, chunk_copied_[which]), what);
  call.L.heads = dev_heads;
  call.L.slot_offset = static_cast<int>(ci * call.chunk_splits);
  launch_decode(call.L, ctx_->stream);
  HB_CUDA_CHECK_LAUNCH("stream_attention chunk kernel", what + ", chunk " + std::to_string(c));
  HB_CUDA_CHECK(cudaEventRecord(chunk_used_[which], ctx_->stream), what);
  call.keep.push_back(std::move(tab));
}

void CudaAcceleratorImpl::queue_empty_stream(StreamCall& c) {
  // Nothing to attend: one empty chunk writes neutral partials so the merge gives (0, -inf).
  for (auto& hd : c.heads) hd = HeadDesc{nullptr, 0, 0, 0, 0};
  Scratch hd_dev =
      upload_scratch(c.heads.data(), c.heads.size() * sizeof(HeadDesc), "stream_attention heads");
  c.L.heads = hd_dev.as<HeadDesc>();
  c.L.splits = 1;
  c.L.slot_offset = 0;
  launch_decode(c.L, ctx_->stream);
  HB_CUDA_CHECK_LAUNCH("stream_attention empty kernel", c.what);
  c.keep.push_back(std::move(hd_dev));
}

void CudaAcceleratorImpl::stream_attention(const DecodeAttentionArgs* seqs, int batch,
                                           int64_t chunk_tokens) {
  Op op(*this, "hb.cuda.stream_attention", Op::Start::deferred);
  if (batch <= 0) return;
  StreamCall c;
  c.seqs = seqs;
  c.batch = batch;
  c.s = check_shape(seqs, batch, "stream_attention");
  c.C = stream_chunk_tokens(chunk_tokens, c.s.page_tokens, kDecodeTile);
  c.block_bytes = static_cast<size_t>(c.s.page_tokens) * c.s.head_dim * 2;
  plan_stream_launch(c, plan_stream_ranges(c));
  reserve_stream_buffers(c);

  op.gpu_begins();
  HB_CUDA_CHECK(cudaEventRecord(stream_ready_, ctx_->stream), c.what);
  HB_CUDA_CHECK(cudaStreamWaitEvent(ctx_->copy_stream, stream_ready_), c.what);
  c.heads.resize(static_cast<size_t>(batch) * c.s.kv_heads);
  for (int64_t ci = 0; ci < c.chunks; ++ci) queue_stream_chunk(c, ci);
  if (c.chunks == 0) queue_empty_stream(c);
  HB_NVTX_RANGE("hb.cuda.merge_splits");
  launch_split_merge(SplitMergeLaunch{c.L.seqs, batch, c.s.q_heads, c.s.head_dim, c.L.slots,
                                      c.L.part_o, c.L.part_lse},
                     ctx_->stream);
  HB_CUDA_CHECK_LAUNCH("stream_attention merge kernel", c.what);
}

}  // namespace hb::cuda
