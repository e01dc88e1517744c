#include "kernels/cpu/chunk_stream.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/merge.h"

namespace hb::cpu {

size_t StreamPlan::half_blocks() const {
  return static_cast<size_t>(batch) * kv_heads * 2 * pages_per_chunk;
}

std::byte* StreamPlan::slot(std::byte* buf, int64_t ci, int b, int h, int64_t page_in_chunk,
                            int kv) const {
  return buf +
         ((ci % 2) * half_blocks() +
          ((static_cast<size_t>(b) * kv_heads + h) * pages_per_chunk + page_in_chunk) * 2 + kv) *
             block;
}

std::pair<int64_t, int64_t> StreamPlan::chunk_pages(int64_t c, int b, int h) const {
  const auto [rb, re] = range[static_cast<size_t>(b) * kv_heads + h];
  const int64_t C = chunk_tokens, P = page_tokens;
  const int64_t t0 = std::max(rb, c * C), t1 = std::min(re, (c + 1) * C);
  if (t0 >= t1) return {0, 0};
  return {t0 / P, (t1 + P - 1) / P};
}

StreamPlan plan_stream(const std::vector<DecodeAttentionArgs>& a, int64_t chunk_tokens) {
  StreamPlan s;
  const PagedKvView& v0 = a[0].kv;
  s.batch = static_cast<int>(a.size());
  s.page_tokens = v0.page_tokens;
  s.kv_heads = v0.kv_heads;
  s.head_dim = v0.head_dim;
  s.q_heads = a[0].q_heads;
  for (const auto& q : a)
    if (q.kv.page_tokens != s.page_tokens || q.kv.kv_heads != s.kv_heads ||
        q.kv.head_dim != s.head_dim || q.kv.dtype != v0.dtype || q.q_heads != s.q_heads)
      throw Error("stream_attention: all sequences of one call must share one shape", {},
                  kExitFailure);
  const int P = s.page_tokens, H = s.kv_heads;
  s.chunk_tokens = std::max<int64_t>(P, chunk_tokens / P * P);
  s.pages_per_chunk = s.chunk_tokens / P;
  s.block = static_cast<size_t>(P) * s.head_dim * dtype_size(v0.dtype);
  // Token range of every (sequence, head), as decode_attention clamps it.
  s.range.resize(static_cast<size_t>(s.batch) * H);
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = 0;
  for (int b = 0; b < s.batch; ++b)
    for (int h = 0; h < H; ++h) {
      const int64_t n = a[b].kv.heads[h].num_tokens;
      const int64_t rb = std::clamp<int64_t>(a[b].token_begin, 0, n);
      const int64_t re = a[b].token_end < 0 ? n : std::clamp<int64_t>(a[b].token_end, rb, n);
      s.range[static_cast<size_t>(b) * H + h] = {rb, re};
      if (re > rb) {
        lo = std::min(lo, rb);
        hi = std::max(hi, re);
      }
    }
  const int64_t C = s.chunk_tokens;
  s.first = hi > 0 ? lo / C : 0;
  s.chunks = hi > 0 ? (hi + C - 1) / C - s.first : 0;
  return s;
}

void write_empty_partials(const std::vector<DecodeAttentionArgs>& seqs, const StreamPlan& plan) {
  for (const auto& s : seqs) {
    std::fill(s.o, s.o + static_cast<size_t>(plan.q_heads) * plan.head_dim, 0.0f);
    std::fill(s.lse, s.lse + plan.q_heads, -std::numeric_limits<float>::infinity());
  }
}

void copy_chunk(const StreamPlan& plan, const std::vector<DecodeAttentionArgs>& seqs,
                std::byte* buf, int64_t ci) {
  const int64_t c = plan.first + ci, ppc = plan.pages_per_chunk;
  for (int b = 0; b < plan.batch; ++b)
    for (int h = 0; h < plan.kv_heads; ++h) {
      const auto [p0, p1] = plan.chunk_pages(c, b, h);
      const PageRef* pages = seqs[b].kv.heads[h].pages;
      for (int64_t p = p0; p < p1; ++p) {
        std::memcpy(plan.slot(buf, ci, b, h, p - c * ppc, 0), pages[p].k, plan.block);
        std::memcpy(plan.slot(buf, ci, b, h, p - c * ppc, 1), pages[p].v, plan.block);
      }
    }
}

ChunkAttention::ChunkAttention(const StreamPlan& plan, const std::vector<DecodeAttentionArgs>& seqs)
    : plan_(plan),
      seqs_(seqs),
      part_o_(static_cast<size_t>(plan.chunks) * plan.batch * plan.q_heads * plan.head_dim),
      part_lse_(static_cast<size_t>(plan.chunks) * plan.batch * plan.q_heads),
      table_(static_cast<size_t>(plan.batch) * plan.kv_heads * plan.pages_per_chunk),
      heads_(static_cast<size_t>(plan.batch) * plan.kv_heads),
      args_(seqs) {}

void ChunkAttention::attend(std::byte* buf, int64_t ci, ThreadPool& pool) {
  const int H = plan_.kv_heads, Hq = plan_.q_heads, d = plan_.head_dim, batch = plan_.batch;
  const int64_t C = plan_.chunk_tokens, ppc = plan_.pages_per_chunk, c = plan_.first + ci;
  for (int b = 0; b < batch; ++b) {
    const DecodeAttentionArgs& a = seqs_[b];
    for (int h = 0; h < H; ++h) {
      const size_t bh = static_cast<size_t>(b) * H + h;
      for (int64_t j = 0; j < ppc; ++j)
        table_[bh * ppc + j] =
            PageRef{plan_.slot(buf, ci, b, h, j, 0), plan_.slot(buf, ci, b, h, j, 1)};
      const int64_t n = a.kv.heads[h].num_tokens;
      heads_[bh] = KvHeadView{table_.data() + bh * ppc, std::clamp<int64_t>(n - c * C, 0, C)};
    }
    DecodeAttentionArgs& s = args_[b];
    s.kv.heads = heads_.data() + static_cast<size_t>(b) * H;
    s.token_begin = std::max<int64_t>(a.token_begin - c * C, 0);
    s.token_end = a.token_end < 0 ? -1 : std::max<int64_t>(a.token_end - c * C, 0);
    s.o = part_o_.data() + (static_cast<size_t>(ci) * batch + b) * Hq * d;
    s.lse = part_lse_.data() + (static_cast<size_t>(ci) * batch + b) * Hq;
    s.logits_out = nullptr;
    if (a.logits_out) {  // the chunk's logits land at their place in the whole range
      const int64_t begin = std::max<int64_t>(a.token_begin, 0);
      s.logits_out = a.logits_out + (std::max(begin, c * C) - begin);
    }
  }
  cpu::decode_attention(args_.data(), batch, pool);
}

void ChunkAttention::merge() const {
  const int Hq = plan_.q_heads, d = plan_.head_dim, batch = plan_.batch;
  const int64_t chunks = plan_.chunks;
  for (int b = 0; b < batch; ++b) {
    std::vector<const float*> o(chunks), l(chunks);
    for (int64_t ci = 0; ci < chunks; ++ci) {
      o[ci] = part_o_.data() + (static_cast<size_t>(ci) * batch + b) * Hq * d;
      l[ci] = part_lse_.data() + (static_cast<size_t>(ci) * batch + b) * Hq;
    }
    cpu::merge_partials(static_cast<int>(chunks), o.data(), l.data(), Hq, d, seqs_[b].o,
                        seqs_[b].lse);
  }
}

void ChunkHandover::wait_half_free(int64_t ci) {
  std::unique_lock<std::mutex> lk(m_);
  cv_.wait(lk, [&] { return used_ >= ci - 1; });
}

void ChunkHandover::copied(int64_t ci) {
  std::lock_guard<std::mutex> lk(m_);
  copied_ = ci + 1;
  cv_.notify_all();
}

void ChunkHandover::copies_done() {
  // Notified under the lock: once the attention side sees done_, the copy job never touches
  // this object again.
  std::lock_guard<std::mutex> lk(m_);
  done_ = true;
  cv_.notify_all();
}

void ChunkHandover::wait_copied(int64_t ci) {
  std::unique_lock<std::mutex> lk(m_);
  cv_.wait(lk, [&] { return copied_ >= ci + 1; });
}

void ChunkHandover::attended(int64_t ci) {
  {
    std::lock_guard<std::mutex> lk(m_);
    used_ = ci + 1;
  }
  cv_.notify_all();
}

void ChunkHandover::finish(int64_t chunks) {
  std::unique_lock<std::mutex> lk(m_);
  used_ = chunks;  // releases a copy job still waiting for buffer space
  cv_.notify_all();
  cv_.wait(lk, [&] { return done_; });
}

}  // namespace hb::cpu
