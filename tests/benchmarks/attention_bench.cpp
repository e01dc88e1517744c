// Decode attention vs a plain streaming read of the same number of bytes, in one binary.
//
// Shape: Llama-3.1-8B (32 query heads, 8 KV heads, head_dim 128, fp16 KV), one sequence, at
// 4K/32K/128K tokens, on 1 thread and on all threads. bytes_per_second counts the K and V
// bytes attention must read; the stream cases read buffers of exactly that size.
//
// Caches flatter nothing: each case rotates over copies whose total exceeds kRotateBytes (far
// above any L3), so every iteration reads from DRAM. The machine is shared and noisy, so run
// the attention and stream cases interleaved and compare medians:
//   hybridbench_kernels_bench --benchmark_repetitions=7 --benchmark_enable_random_interleaving=true
//                             --benchmark_report_aggregates_only=true
// Cache pages are appended token by token for all heads (as a real cache fills), so one head's
// pages are interleaved with the other heads' in memory, not one linear stream.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <string>
#include <memory>
#include <vector>

#include "core/cpu_features.h"
#include "core/kv_cache.h"
#include "core/memory.h"
#include "core/rng.h"
#include "core/shape.h"
#include "core/thread_pool.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/compute_roof.h"
#include "kernels/cpu/stream_read.h"
#include "kernels/cpu/select.h"
#include "kernels/cpu/topk_select.h"
#include "tests/benchmarks/bench_buffers.h"

namespace hb {
namespace {

const AttentionShape kShape{32, 8, 128, DType::f16};
constexpr size_t kRotateBytes = size_t{256} << 20;  // 8x a 32 MiB L3

ThreadPool& pool_of(int threads) {
  static ThreadPool one(1), all(0);
  return threads == 1 ? one : all;
}

std::string threads_label(const ThreadPool& pool, SimdLevel level) {
  return std::to_string(pool.size()) + " thread" + (pool.size() > 1 ? "s " : " ") +
         simd_level_name(level);
}

size_t kv_bytes(int64_t tokens) {
  return static_cast<size_t>(tokens) * kShape.kv_bytes_per_token();
}
int copies_for(int64_t tokens) {
  return static_cast<int>(std::max<size_t>(2, kRotateBytes / kv_bytes(tokens)));
}

// One paged cache filled with random K/V (kShape's, in `dtype`: fp16 or bf16, the same bytes).
struct FilledCache {
  std::unique_ptr<PageArena> k_arena, v_arena;
  std::unique_ptr<PagedKvCache> cache;
  PagedKvView view;
};

std::unique_ptr<FilledCache> fill_cache(int64_t tokens, uint64_t seed, DType dtype = DType::f16) {
  auto c = std::make_unique<FilledCache>();
  AttentionShape shape = kShape;
  shape.kv_dtype = dtype;
  c->cache = std::make_unique<PagedKvCache>(shape);
  const size_t pages = static_cast<size_t>((tokens + 15) / 16) * kShape.kv_heads;
  const auto alloc = std::make_shared<microbench::HugePageAllocator>();
  c->k_arena = std::make_unique<PageArena>(alloc, c->cache->block_bytes(), pages);
  c->v_arena = std::make_unique<PageArena>(alloc, c->cache->block_bytes(), pages);
  // Four random 1024-token chunks appended in turn: the values do not change the work, and
  // drawing normals for every token would make a 128K cache take seconds to fill.
  std::vector<DenseKv> chunks(4);
  Rng rng(seed);
  for (DenseKv& ch : chunks) {
    ch.tokens = 1024;
    ch.kv_heads = kShape.kv_heads;
    ch.head_dim = kShape.head_dim;
    ch.k.resize(static_cast<size_t>(ch.tokens) * kShape.kv_heads * kShape.head_dim);
    ch.v.resize(ch.k.size());
    for (auto& x : ch.k) x = rng.normal();
    for (auto& x : ch.v) x = rng.normal();
  }
  for (int64_t t = 0, i = 0; t < tokens; t += 1024, ++i)
    c->cache->append(chunks[i % 4], 0, std::min<int64_t>(1024, tokens - t), *c->k_arena,
                     *c->v_arena);
  c->view = c->cache->view();
  return c;
}

// Built on first use and kept: the random interleaving visits sizes in any order.
const std::vector<std::unique_ptr<FilledCache>>& caches(int64_t tokens, DType dtype = DType::f16) {
  static std::map<std::pair<int64_t, DType>, std::vector<std::unique_ptr<FilledCache>>> all;
  auto& v = all[{tokens, dtype}];
  if (v.empty())
    for (int i = 0; i < copies_for(tokens); ++i) v.push_back(fill_cache(tokens, 1000 + i, dtype));
  return v;
}

const std::vector<Buffer>& stream_buffers(int64_t tokens) {
  static std::map<int64_t, std::vector<Buffer>> all;
  auto& v = all[tokens];
  if (v.empty())
    for (int i = 0; i < copies_for(tokens); ++i) {
      v.push_back(microbench::huge_page_buffer(kv_bytes(tokens)));  // as the probe's: the best read
      auto* w = v.back().as<uint64_t>();
      for (size_t j = 0; j < kv_bytes(tokens) / 8; ++j) w[j] = j * 0x9e3779b97f4a7c15ull + i;
    }
  return v;
}

void BM_DecodeAttention(benchmark::State& state) {
  const int64_t tokens = state.range(0);
  ThreadPool& pool = pool_of(static_cast<int>(state.range(1)));
  const auto& cs = caches(tokens);
  std::vector<float> q(static_cast<size_t>(kShape.q_heads) * kShape.head_dim), o(q.size()),
      lse(kShape.q_heads);
  Rng rng(7);
  for (auto& x : q) x = rng.normal();
  size_t i = 0;
  for (auto _ : state) {
    DecodeAttentionArgs a;
    a.q = q.data();
    a.kv = cs[i++ % cs.size()]->view;
    a.q_heads = kShape.q_heads;
    a.o = o.data();
    a.lse = lse.data();
    cpu::decode_attention(&a, 1, pool);
    benchmark::DoNotOptimize(o.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kv_bytes(tokens)));
  state.SetLabel(threads_label(pool, best_simd_level()));
}

// The same kernel on a cache small enough to stay in L2: the compute ceiling, i.e. what the
// engine would reach if memory were free. Attention near DRAM speed needs this well above it.
// Args: {tokens, SIMD level (0 scalar, 1 avx2, 2 avx512)}.
void BM_DecodeAttentionInCache(benchmark::State& state) {
  const auto level = static_cast<SimdLevel>(state.range(1));
  if (static_cast<int>(level) > static_cast<int>(best_simd_level())) {
    state.SkipWithError("this CPU lacks the SIMD level");
    return;
  }
  static std::map<int64_t, std::unique_ptr<FilledCache>> by_size;
  auto& c = by_size[state.range(0)];
  if (!c) c = fill_cache(state.range(0), 99);
  ThreadPool& pool = pool_of(1);
  std::vector<float> q(static_cast<size_t>(kShape.q_heads) * kShape.head_dim), o(q.size()),
      lse(kShape.q_heads);
  Rng rng(7);
  for (auto& x : q) x = rng.normal();
  for (auto _ : state) {
    DecodeAttentionArgs a;
    a.q = q.data();
    a.kv = c->view;
    a.q_heads = kShape.q_heads;
    a.o = o.data();
    a.lse = lse.data();
    cpu::decode_attention(&a, 1, pool, level);
    benchmark::DoNotOptimize(o.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kv_bytes(state.range(0))));
  state.SetLabel(simd_level_name(level));
}

void BM_StreamRead(benchmark::State& state) {
  const int64_t tokens = state.range(0);
  ThreadPool& pool = pool_of(static_cast<int>(state.range(1)));
  const auto& bufs = stream_buffers(tokens);
  size_t i = 0;
  for (auto _ : state)
    benchmark::DoNotOptimize(
        cpu::stream_read(bufs[i++ % bufs.size()].data(), kv_bytes(tokens), pool));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kv_bytes(tokens)));
  state.SetLabel(threads_label(pool, best_simd_level()));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double process_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// The kernel's own ceiling beside a measurement (a diagnostic, not a roof): the kernel at
// `level` on an L2-resident cache (256 tokens, 1 MiB at this shape) on one thread, as GB/s per
// core; the fastest of kInCacheReps calls. The hardware's compute roof (compute_roof.h) must not
// fall below it: if it did, the roof would not be measuring the kernel's instruction mix.
constexpr int64_t kInCacheTokens = 256;
constexpr int kInCacheReps = 8;
double in_cache_gbps_per_core(SimdLevel level, DType dtype) {
  static std::map<DType, std::unique_ptr<FilledCache>> by_dtype;
  auto& c = by_dtype[dtype];
  if (!c) c = fill_cache(kInCacheTokens, 99, dtype);
  std::vector<float> q(static_cast<size_t>(kShape.q_heads) * kShape.head_dim, 0.5f), o(q.size()),
      lse(kShape.q_heads);
  DecodeAttentionArgs a;
  a.q = q.data();
  a.kv = c->view;
  a.q_heads = kShape.q_heads;
  a.o = o.data();
  a.lse = lse.data();
  double best = 1e30;
  for (int r = 0; r < kInCacheReps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    cpu::decode_attention(&a, 1, pool_of(1), level);
    benchmark::DoNotOptimize(o.data());
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return static_cast<double>(kv_bytes(kInCacheTokens)) / 1e9 / best;
}

// BM_AttentionVsStream's per-iteration figures and the counters made of their medians.
struct RoofTimes {
  std::vector<double> attn_s, stream_s, ratio, ratio_cpu, compute_gbps, ceiling_gbps;
  void counters(benchmark::State& state, double gb) const {
    const double attn = gb / median(attn_s), read = gb / median(stream_s);
    const double compute = median(compute_gbps);
    state.counters["attn_GBps"] = attn;
    state.counters["stream_GBps"] = read;
    state.counters["ratio"] = median(ratio);
    state.counters["ratio_cpu"] = median(ratio_cpu);
    state.counters["read_roof_GBps"] = read;
    state.counters["compute_roof_GBps"] = compute;
    state.counters["own_ceiling_GBps"] = median(ceiling_gbps);
    state.counters["roof"] = compute < read ? 1 : 0;
    state.counters["of_roof"] = attn / std::min(read, compute);
  }
};

// Attention and the stream read alternate within every iteration (order flipped each time),
// so both see the same machine state; `ratio` is the median over iterations of
// stream time / attention time for the same bytes, i.e. attention's fraction of streaming
// bandwidth. Iteration time (and bytes_per_second) is the attention half. Each iteration also
// measures the two roofs: `read_roof_GBps` is the stream, `compute_roof_GBps` the hardware's
// compute roof (cpu::compute_roof_gbps: the kernel's instruction mix at peak issue rate from
// L1, per core x threads); `roof` says which binds (0 read, 1 compute: the lower median) and
// `of_roof` is attention over the binding roof, the figure the goal is judged on.
// `own_ceiling_GBps` is the kernel's own in-cache ceiling (in_cache_gbps_per_core x threads), a
// diagnostic. `ratio_cpu` is `ratio` with process CPU time (all threads) instead of wall time:
// when other processes take the cores, wall time counts their share but CPU time does not
// (pool spin-waits are counted on both sides).
// Args: {tokens, threads (1, or 0 = all)}; attention runs on `level` over a `dtype` cache.
void BM_AttentionVsStream(benchmark::State& state, SimdLevel level, DType dtype) {
  using clock = std::chrono::steady_clock;
  const int64_t tokens = state.range(0);
  if (static_cast<int>(level) > static_cast<int>(best_simd_level())) {
    state.SkipWithError("this CPU lacks the SIMD level");
    return;
  }
  ThreadPool& pool = pool_of(static_cast<int>(state.range(1)));
  const auto& cs = caches(tokens, dtype);
  const auto& bufs = stream_buffers(tokens);
  std::vector<float> q(static_cast<size_t>(kShape.q_heads) * kShape.head_dim), o(q.size()),
      lse(kShape.q_heads);
  Rng rng(7);
  for (auto& x : q) x = rng.normal();
  RoofTimes t;
  size_t i = 0;
  for (auto _ : state) {
    DecodeAttentionArgs a;
    a.q = q.data();
    a.kv = cs[i % cs.size()]->view;
    a.q_heads = kShape.q_heads;
    a.o = o.data();
    a.lse = lse.data();
    const void* buf = bufs[(i + 1) % bufs.size()].data();  // not the copy attention just warmed
    double ta = 0, ts = 0, ca = 0, cs_ = 0;
    for (int half = 0; half < 2; ++half) {
      const auto t0 = clock::now();
      const double c0 = process_cpu_seconds();
      if ((half == 0) == (i % 2 == 0)) {
        cpu::decode_attention(&a, 1, pool, level);
        benchmark::DoNotOptimize(o.data());
        ta = std::chrono::duration<double>(clock::now() - t0).count();
        ca = process_cpu_seconds() - c0;
      } else {
        benchmark::DoNotOptimize(cpu::stream_read(buf, kv_bytes(tokens), pool));
        ts = std::chrono::duration<double>(clock::now() - t0).count();
        cs_ = process_cpu_seconds() - c0;
      }
    }
    state.SetIterationTime(ta);
    t.compute_gbps.push_back(
        cpu::compute_roof_gbps(level, dtype, kShape.group_size(), kShape.head_dim) * pool.size());
    t.ceiling_gbps.push_back(in_cache_gbps_per_core(level, dtype) * pool.size());
    t.attn_s.push_back(ta);
    t.stream_s.push_back(ts);
    t.ratio.push_back(ts / ta);
    t.ratio_cpu.push_back(cs_ / ca);
    ++i;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kv_bytes(tokens)));
  t.counters(state, static_cast<double>(kv_bytes(tokens)) / 1e9);
  state.SetLabel(threads_label(pool, level) + " " + std::string(dtype_name(dtype)));
}

// The hardware's compute roof alone, per core, for each SIMD level and cache dtype at this
// shape (GB/s of K+V; the `roof_GBps` counter). Args: {SIMD level (0 scalar, 1 avx2, 2 avx512),
// dtype (0 fp32, 1 fp16, 2 bf16)}.
void BM_ComputeRoof(benchmark::State& state) {
  const auto level = static_cast<SimdLevel>(state.range(0));
  const auto dtype = static_cast<DType>(state.range(1));
  if (static_cast<int>(level) > static_cast<int>(best_simd_level())) {
    state.SkipWithError("this CPU lacks the SIMD level");
    return;
  }
  std::vector<double> gbps;
  for (auto _ : state)
    gbps.push_back(cpu::compute_roof_gbps(level, dtype, kShape.group_size(), kShape.head_dim));
  state.counters["roof_GBps"] = median(gbps);
  if (dtype != DType::f32)  // the benchmark caches are 2-byte: no fp32 ceiling to show
    state.counters["own_ceiling_GBps"] = in_cache_gbps_per_core(level, dtype);
  state.SetLabel(std::string(simd_level_name(level)) + " " + std::string(dtype_name(dtype)));
}

// HybridGen's per-step CPU selection at the 8B shape: top 5% of 128K logits for 32 heads.
void BM_TopK(benchmark::State& state) {
  const int rows = kShape.q_heads;
  const int64_t n = state.range(0), k = n / 20;
  std::vector<float> logits(static_cast<size_t>(rows) * n);
  Rng rng(5);
  for (auto& x : logits) x = rng.normal();
  std::vector<int32_t> idx(rows * k);
  std::vector<float> val(rows * k);
  for (auto _ : state)
    cpu::topk_rows(logits.data(), rows, n, n, k, idx.data(), val.data(), &pool_of(0));
  state.SetItemsProcessed(state.iterations() * rows * n);
}

// BM_SelectVsAttention's times per iteration: wall time of each part (0 fused, 1 separate,
// 2 attention) and their ratios to attention (wall and process CPU time); the scans alone.
struct SelectVsAttentionTimes {
  std::vector<double> fused_s, sep_s, attn_s, r_fused, r_sep, rc_fused, rc_sep, scan_s, hint_s;
  void add(const double (&wall)[4], const double (&cpu)[4]) {
    fused_s.push_back(wall[0]);
    sep_s.push_back(wall[1]);
    attn_s.push_back(wall[2]);
    r_fused.push_back(wall[0] / wall[2]);
    r_sep.push_back(wall[1] / wall[2]);
    rc_fused.push_back(cpu[0] / cpu[2]);
    rc_sep.push_back(cpu[1] / cpu[2]);
  }
  // Medians over the iterations.
  void counters(benchmark::State& state) const {
    state.counters["fused_ms"] = 1e3 * median(fused_s);
    state.counters["fused_scan_ms"] = 1e3 * median(scan_s);
    state.counters["hinted_scan_ms"] = 1e3 * median(hint_s);
    state.counters["separate_ms"] = 1e3 * median(sep_s);
    state.counters["attention_ms"] = 1e3 * median(attn_s);
    state.counters["fused/attn"] = median(r_fused);
    state.counters["separate/attn"] = median(r_sep);
    state.counters["fused/attn_cpu"] = median(rc_fused);
    state.counters["separate/attn_cpu"] = median(rc_sep);
  }
};

// HybridGen's hint rule (hybrid/README.md, select_hint) from one selection's values: each
// head's k-th logit minus a share of its spread. The benchmark's cache copies hold different
// random K, so the share is 0.25 here, wider than HybridGen's default 0.1 for consecutive steps.
std::vector<float> floor_hint(const std::vector<float>& val, int hq, int64_t k) {
  std::vector<float> hint(hq);
  for (int h = 0; h < hq; ++h) {
    const auto [lo, hi] = std::minmax_element(val.begin() + h * k, val.begin() + (h + 1) * k);
    hint[h] = *lo - 0.25f * (*hi - *lo);
  }
  return hint;
}

// HybridGen's CPU part in its two modes (issue 15 part 3), side by side on the same caches:
// logit mode = score q.K over the tokens, per-head top 5%, gather the winners' V rows, as
// `fused` (cpu::select_topk: one K pass, streaming top-k, floors sampled), `hinted` (the same
// started from HybridGen's floor hint) or `separate` (score_logits into a logit array, then
// topk_select_rows); LSE mode = exact decode attention (K and V). Each iteration runs all four,
// in a rotating order, each on its own cache copy; the counters are
// medians over iterations of fused / attention and separate / attention (wall time, and
// process CPU time, which a loaded machine disturbs less). Iteration time: the fused part.
// Args: {tokens, threads (1, or 0 = all)}.
void BM_SelectVsAttention(benchmark::State& state) {
  using clock = std::chrono::steady_clock;
  const int64_t tokens = state.range(0), k = (tokens + 19) / 20;
  ThreadPool& pool = pool_of(static_cast<int>(state.range(1)));
  const auto& cs = caches(tokens);
  const int hq = kShape.q_heads, d = kShape.head_dim;
  std::vector<float> q(static_cast<size_t>(hq) * d), o(q.size()), lse(hq);
  Rng rng(7);
  for (auto& x : q) x = rng.normal();
  std::vector<float> logits(static_cast<size_t>(hq) * tokens), val(static_cast<size_t>(hq) * k);
  std::vector<int32_t> idx(val.size());
  std::vector<int64_t> ks(hq, k);
  std::vector<std::byte> rows(static_cast<size_t>(hq) * k * d * 2);
  auto gather = [&](const PagedKvView& kv) {
    pool.parallel_for(hq, [&](int64_t h, int) {
      cpu::gather_rows(kv, static_cast<int>(h) / kShape.group_size(), idx.data() + h * k, k,
                       rows.data() + static_cast<size_t>(h) * k * d * 2);
    });
  };
  SelectVsAttentionTimes times;
  cpu::select_topk(q.data(), hq, cs[0]->view, 0, 0, ks.data(), idx.data(), val.data(), k, pool);
  const std::vector<float> hint = floor_hint(val, hq, k);
  const int64_t misses0 = cpu::g_select_hint_misses.load();
  const int64_t fallbacks0 = cpu::g_select_fallbacks.load();
  size_t i = 0;
  for (auto _ : state) {
    double wall[4], cpu[4];
    for (int j = 0; j < 4; ++j) {
      const int which = static_cast<int>((i + j) % 4);
      const PagedKvView& kv = cs[(4 * i + j) % cs.size()]->view;
      const auto t0 = clock::now();
      const double c0 = process_cpu_seconds();
      if (which == 0) {
        cpu::select_topk(q.data(), hq, kv, 0, 0, ks.data(), idx.data(), val.data(), k, pool);
        times.scan_s.push_back(std::chrono::duration<double>(clock::now() - t0).count());
        gather(kv);
      } else if (which == 3) {
        cpu::select_topk(q.data(), hq, kv, 0, 0, ks.data(), idx.data(), val.data(), k, pool,
                         best_simd_level(), hint.data());
        times.hint_s.push_back(std::chrono::duration<double>(clock::now() - t0).count());
        gather(kv);
      } else if (which == 1) {
        cpu::score_logits(q.data(), hq, kv, 0, -1, 0, logits.data(), tokens, pool);
        pool.parallel_for(hq, [&](int64_t h, int) {
          cpu::topk_select_rows(logits.data() + h * tokens, 1, tokens, tokens, k,
                                idx.data() + h * k, val.data() + h * k);
        });
        gather(kv);
      } else {
        DecodeAttentionArgs a;
        a.q = q.data();
        a.kv = kv;
        a.q_heads = hq;
        a.o = o.data();
        a.lse = lse.data();
        cpu::decode_attention(&a, 1, pool);
      }
      benchmark::DoNotOptimize(rows.data());
      benchmark::DoNotOptimize(o.data());
      wall[which] = std::chrono::duration<double>(clock::now() - t0).count();
      cpu[which] = process_cpu_seconds() - c0;
    }
    state.SetIterationTime(wall[0]);
    times.add(wall, cpu);
    ++i;
  }
  state.counters["fallbacks"] = static_cast<double>(cpu::g_select_fallbacks.load() - fallbacks0);
  state.counters["hint_misses"] = static_cast<double>(cpu::g_select_hint_misses.load() - misses0);
  times.counters(state);
  state.SetLabel(threads_label(pool, best_simd_level()));
}

// The latency-bound roof of a gather: reads (no copy) the V rows of kv_head at `tokens`, in
// that order, requesting each row kAhead places ahead, as fast as plain loads go. Returns a
// checksum so the reads stay.
uint64_t read_rows(const PagedKvView& kv, int kv_head, const int32_t* tokens, int64_t count) {
  const size_t row_bytes = static_cast<size_t>(kv.head_dim) * dtype_size(kv.dtype);
  const int P = kv.page_tokens;
  const KvHeadView& h = kv.heads[kv_head];
  auto row = [&](int64_t i) { return h.pages[tokens[i] / P].v + (tokens[i] % P) * row_bytes; };
  uint64_t x[4] = {};  // independent xor chains: the loads, not the xors, set the pace
  for (int64_t i = 0; i < count; ++i) {
    constexpr int64_t kAhead = 8;
    if (i + kAhead < count)
      for (size_t b = 0; b < row_bytes; b += 64) __builtin_prefetch(row(i + kAhead) + b);
    const auto* w = reinterpret_cast<const uint64_t*>(row(i));
    for (size_t j = 0; j + 4 <= row_bytes / 8; j += 4)
      for (int u = 0; u < 4; ++u) x[u] ^= w[j + u];
  }
  return x[0] ^ x[1] ^ x[2] ^ x[3];
}

// HybridGen's CPU part against its roofs, per iteration on one cache copy (rotating): the
// logit scan + top-k (cpu::select_topk, top 5% per query head) against the stream read of K's
// bytes (half the KV), and the gather of the selected V rows (cpu::gather_rows, every query
// head's rows) against read_rows of the same rows, the two in alternating order. Counters are
// medians: scan_GBps (K bytes / scan time), k_read_GBps, scan_of_roof; gather_GBps (row bytes /
// gather time), row_read_GBps, gather_of_roof. Args: {tokens, threads (1, or 0 = all)}.
void BM_HybridScanGather(benchmark::State& state) {
  using clock = std::chrono::steady_clock;
  auto secs = [](clock::time_point t0) {
    return std::chrono::duration<double>(clock::now() - t0).count();
  };
  const int64_t tokens = state.range(0), k = (tokens + 19) / 20;
  ThreadPool& pool = pool_of(static_cast<int>(state.range(1)));
  const auto& cs = caches(tokens);
  const auto& bufs = stream_buffers(tokens);
  const int hq = kShape.q_heads, d = kShape.head_dim, group = kShape.group_size();
  std::vector<float> q(static_cast<size_t>(hq) * d), val(static_cast<size_t>(hq) * k);
  Rng rng(7);
  for (auto& x : q) x = rng.normal();
  std::vector<int32_t> idx(val.size());
  std::vector<int64_t> ks(hq, k);
  std::vector<std::byte> rows(static_cast<size_t>(hq) * k * d * 2);
  std::vector<uint64_t> sink(hq);
  std::vector<double> scan_s, kread_s, gather_s, rread_s;
  size_t i = 0;
  for (auto _ : state) {
    const PagedKvView& kv = cs[i % cs.size()]->view;
    auto t0 = clock::now();
    cpu::select_topk(q.data(), hq, kv, 0, 0, ks.data(), idx.data(), val.data(), k, pool);
    scan_s.push_back(secs(t0));
    t0 = clock::now();
    benchmark::DoNotOptimize(
        cpu::stream_read(bufs[(i + 1) % bufs.size()].data(), kv_bytes(tokens) / 2, pool));
    kread_s.push_back(secs(t0));
    for (int half = 0; half < 2; ++half) {  // which goes first alternates: the rows warm L3
      t0 = clock::now();
      if ((half == 0) == (i % 2 == 0)) {
        pool.parallel_for(hq, [&](int64_t h, int) {
          cpu::gather_rows(kv, static_cast<int>(h) / group, idx.data() + h * k, k,
                           rows.data() + static_cast<size_t>(h) * k * d * 2);
        });
        gather_s.push_back(secs(t0));
      } else {
        pool.parallel_for(hq, [&](int64_t h, int) {
          sink[h] = read_rows(kv, static_cast<int>(h) / group, idx.data() + h * k, k);
        });
        rread_s.push_back(secs(t0));
      }
    }
    benchmark::DoNotOptimize(rows.data());
    benchmark::DoNotOptimize(sink.data());
    state.SetIterationTime(scan_s.back());
    ++i;
  }
  const double kgb = static_cast<double>(kv_bytes(tokens)) / 2e9, rgb = 1e-9 * rows.size();
  state.counters["scan_GBps"] = kgb / median(scan_s);
  state.counters["k_read_GBps"] = kgb / median(kread_s);
  state.counters["scan_of_roof"] = median(kread_s) / median(scan_s);
  state.counters["gather_GBps"] = rgb / median(gather_s);
  state.counters["row_read_GBps"] = rgb / median(rread_s);
  state.counters["gather_of_roof"] = median(rread_s) / median(gather_s);
  state.SetLabel(threads_label(pool, best_simd_level()));
}

// Args: {tokens, threads (1, or 0 = all)}. Each attention case is registered next to its
// stream case; modest minimum time keeps the default run short.
void register_all() {
  benchmark::RegisterBenchmark("BM_TopK", BM_TopK)
      ->Arg(131072)
      ->ArgName("tokens")
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond)
      ->MinTime(0.2);
  benchmark::RegisterBenchmark("BM_DecodeAttentionInCache", BM_DecodeAttentionInCache)
      ->ArgsProduct({{64, 256}, {0, 1, 2}})
      ->ArgNames({"tokens", "simd"})
      ->Unit(benchmark::kMicrosecond)
      ->MinTime(0.2);
  for (int64_t tokens : {4096, 32768, 131072})
    for (int threads : {1, 0}) {
      benchmark::RegisterBenchmark("BM_DecodeAttention", BM_DecodeAttention)
          ->Args({tokens, threads})
          ->ArgNames({"tokens", "threads"})
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.2);
      benchmark::RegisterBenchmark("BM_StreamRead", BM_StreamRead)
          ->Args({tokens, threads})
          ->ArgNames({"tokens", "threads"})
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.2);
      benchmark::RegisterBenchmark("BM_AttentionVsStream", BM_AttentionVsStream, best_simd_level(),
                                   DType::f16)
          ->Args({tokens, threads})
          ->ArgNames({"tokens", "threads"})
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.2);
    }
  // bf16 KV (the same bytes as fp16, a different conversion) where it matters: 32K and 128K.
  benchmark::RegisterBenchmark("BM_AttentionVsStream_bf16", BM_AttentionVsStream, best_simd_level(),
                               DType::bf16)
      ->ArgsProduct({{32768, 131072}, {1, 0}})
      ->ArgNames({"tokens", "threads"})
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->MinTime(0.2);
  benchmark::RegisterBenchmark("BM_HybridScanGather", BM_HybridScanGather)
      ->ArgsProduct({{32768, 131072}, {1, 0}})
      ->ArgNames({"tokens", "threads"})
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->MinTime(0.2);
  benchmark::RegisterBenchmark("BM_ComputeRoof", BM_ComputeRoof)
      ->ArgsProduct({{1, 2}, {0, 1, 2}})
      ->ArgNames({"simd", "dtype"})
      ->Iterations(3)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_SelectVsAttention", BM_SelectVsAttention)
      ->ArgsProduct({{16384, 32768}, {1, 0}})
      ->ArgNames({"tokens", "threads"})
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->MinTime(0.5);
  // The AVX2 path at 32K on all threads: what an AVX2-only CPU of this bandwidth would see.
  benchmark::RegisterBenchmark("BM_AttentionVsStream_avx2", BM_AttentionVsStream, SimdLevel::avx2,
                               DType::f16)
      ->Args({32768, 0})
      ->ArgNames({"tokens", "threads"})
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->MinTime(0.2);
}

}  // namespace
}  // namespace hb

int main(int argc, char** argv) {
  hb::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
