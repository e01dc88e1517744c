#include "model/calibrate.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "core/stats.h"
#include "core/thread_pool.h"
#include "core/timer.h"
#include "kernels/backend.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/layer_gemv.h"
#include "kernels/cpu/stream_read.h"
#include "kernels/cpu/topk_select.h"
#include "memtier/discover.h"
#include "memtier/probe.h"
#include "memtier/settings.h"

namespace hb::model {

namespace {

// 10th percentile of fn()'s seconds over repeats (at least 5, until `seconds` have passed, at
// most 200): the run least disturbed by other processes, as a machine's capability.
// `before` runs untimed ahead of each repeat (the cache flush of cold measurements).
template <class F, class B = void (*)()>
double fast_seconds(
    F&& fn, double seconds, B before = [] {}) {
  fn();  // warm: first touch, thread wake-up
  std::vector<double> v;
  const int64_t t0 = now_ns();
  while (v.size() < 5 || ((now_ns() - t0) * 1e-9 < seconds && v.size() < 200)) {
    before();
    const int64_t a = now_ns();
    fn();
    v.push_back((now_ns() - a) * 1e-9);
  }
  return quantile(v, 0.1);
}

std::string fmt(const char* f, double v) {
  char b[96];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// One sequence's KV of `tokens` tokens with the given shape, in plain host memory.
struct AttentionBench {
  AttentionShape shape;
  int64_t tokens;
  std::unique_ptr<PageArena> arena;
  std::unique_ptr<PagedKvCache> cache;
  std::vector<float> q, o, lse;
  AttentionBench(const AttentionShape& s, int page_tokens, int64_t n) : shape(s), tokens(n) {
    cache = std::make_unique<PagedKvCache>(s, page_tokens);
    arena = std::make_unique<PageArena>(host_allocator(), cache->block_bytes());
    DenseKv kv;
    kv.tokens = n;
    kv.kv_heads = s.kv_heads;
    kv.head_dim = s.head_dim;
    kv.k.resize(static_cast<size_t>(n) * s.kv_heads * s.head_dim);
    kv.v.resize(kv.k.size());
    Rng rng(7);
    for (auto& x : kv.k) x = rng.uniformf(-1, 1);
    for (auto& x : kv.v) x = rng.uniformf(-1, 1);
    cache->append(kv, 0, n, *arena, *arena);
    q.resize(static_cast<size_t>(s.q_heads) * s.head_dim);
    for (auto& x : q) x = rng.uniformf(-1, 1);
    o.resize(q.size());
    lse.resize(s.q_heads);
  }
  void run(ThreadPool& pool, int64_t n) {
    DecodeAttentionArgs a;
    a.q = q.data();
    a.kv = cache->view();
    a.token_end = n;
    a.q_heads = shape.q_heads;
    a.o = o.data();
    a.lse = lse.data();
    cpu::decode_attention(&a, 1, pool);
  }
  double flops(int64_t n) const {
    return 4.0 * shape.q_heads * shape.head_dim * static_cast<double>(n);
  }
};

// A decode GEMV (one row of x) over `bytes` of blocked weights in the sweep's dtype, as the
// layer's GEMMs stream theirs (kernels/cpu/layer_gemv.h): rows of 4096 inputs.
struct GemvBench {
  std::vector<std::byte> storage;
  cpu::BlockedWeights w;
  std::vector<float> x, y;
  GemvBench(DType dtype, size_t bytes) {
    constexpr int kIn = 4096;
    const int out =
        std::max<int>(cpu::kWeightBlockCols,
                      static_cast<int>(bytes / (static_cast<size_t>(kIn) * dtype_size(dtype))) /
                          cpu::kWeightBlockCols * cpu::kWeightBlockCols);
    storage.resize(cpu::BlockedWeights::bytes(kIn, out, dtype));
    w = cpu::BlockedWeights::over(storage.data(), kIn, out, dtype);
    w.fill_random(11);
    x.assign(kIn, 0.5f);
    y.resize(static_cast<size_t>(out));
  }
  double bytes() const { return static_cast<double>(storage.size()); }
  void run(ThreadPool& pool) { cpu::gemv(w, x.data(), 1, y.data(), pool); }
};

}  // namespace

PlatformModel calibrate_this_machine(PlatformModel m, const CalibrationOptions& o, bool overwrite,
                                     const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& s) {
    if (progress) progress(s);
  };
  auto& S = m.sources;
  auto set = [&](double& field, double v, const std::string& key, const std::string& how) {
    if (!overwrite && field > 0) return;
    field = v;
    S[key] = how;
  };
  auto set_curve = [&](BandwidthCurve& field, BandwidthCurve v, const std::string& key,
                       const std::string& how) {
    if (!overwrite && !field.empty()) return;
    field = std::move(v);
    S[key] = how;
  };
  const std::string here =
      "calibrated on this machine by hybridbench validate-model (10th percentile of repeats, "
      "caches flushed before "
      "each): ";
  const int ht = std::max(1, o.host_threads), at = std::max(1, o.accelerator_threads);
  std::vector<size_t> ladder;
  for (size_t b = std::max<size_t>(o.min_bytes, 64 << 10); b < o.max_bytes; b *= 2)
    ladder.push_back(b);
  ladder.push_back(o.max_bytes);

  // ---- decode attention over the working-set ladder: the read curve and the compute roof.
  const int64_t bpt = o.shape.kv_bytes_per_token();
  const int64_t max_tokens = std::max<int64_t>(64, static_cast<int64_t>(o.max_bytes) / bpt);
  AttentionBench bench(o.shape, o.page_tokens, max_tokens);
  const std::string what = "decode attention " + o.shape.to_string();
  // Cold caches: the sweep interleaves every strategy's steps (and a whole model, every
  // layer's), so a step finds little of its KV left in the caches from its previous step. Each
  // repeat is preceded by a read of a buffer larger than any last-level cache.
  std::vector<std::byte> flush(o.flush_bytes, std::byte{1});
  ThreadPool flusher(1);
  auto cold = [&] { (void)cpu::stream_read(flush.data(), flush.size(), flusher); };
  // Per-core (per-thread) bandwidth curve and compute roof with `threads` threads.
  auto attention_curve = [&](int threads, BandwidthCurve& curve, double& gflops) {
    ThreadPool pool(threads);
    gflops = 0;
    for (size_t w : ladder) {
      const int64_t tokens = std::clamp<int64_t>(static_cast<int64_t>(w) / bpt, 16, max_tokens);
      if (!curve.points.empty() && static_cast<double>(tokens * bpt) <= curve.points.back().first)
        continue;
      const double t = fast_seconds([&] { bench.run(pool, tokens); }, o.seconds_per_figure, cold);
      const double bytes = static_cast<double>(tokens * bpt);
      curve.points.emplace_back(bytes, bytes / t / threads * 1e-9);
      gflops = std::max(gflops, bench.flops(tokens) / t / threads * 1e-9);
    }
  };
  BandwidthCurve cpu_curve;
  double cpu_gflops = 0;
  attention_curve(ht, cpu_curve, cpu_gflops);
  std::string pts;
  for (const auto& [b, g] : cpu_curve.points)
    pts += (pts.empty() ? "" : ", ") + fmt("%.0f MiB", b / 1048576) + fmt(" %.1f", g);
  say(what + " per core (GB/s of KV by working set): " + pts);
  const std::string curve_how =
      here + what + ", " + std::to_string(ht) + " host thread(s), working sets " +
      fmt("%.2f", ladder.front() / 1048576.0) + "-" + fmt("%.0f MiB", ladder.back() / 1048576.0);
  set_curve(m.cpu.read_curve, cpu_curve, "cpu.read_curve", curve_how);
  set(m.cpu.core_read_gbps, cpu_curve.points.back().second, "cpu.core_read_gbps",
      here + what + " at the largest working set (" + fmt("%.0f MiB", ladder.back() / 1048576.0) +
          "), per thread");
  set(m.cpu.attention_gflops_per_core, cpu_gflops, "cpu.attention_gflops_per_core",
      here + what + ", fastest working set, per thread");
  say(fmt("compute roof %.1f GFLOP/s per core", m.cpu.attention_gflops_per_core));
  m.cpu.cores = ht;
  S["cpu.cores"] = "the sweep's host threads (" + std::to_string(ht) + ")";
  {
    ThreadPool host(ht);
    const double t_disp = fast_seconds([&] { host.parallel_for(ht, [](int64_t, int) {}); }, 0.05);
    set(m.cpu.dispatch_us, std::max(1e-3, t_disp * 1e6), "cpu.dispatch_us",
        here + "empty parallel_for on the host pool");
  }
  if (m.cpu.name.empty())
    m.cpu.name = "this machine's CPU (" + std::to_string(ht) + " host thread(s))";
  // Selection: one core's top-k scan rate over rows of logits as a long context gives them
  // (HybridGen's logit mode keeps about an eighth). Scattered values, so no branch is predictable.
  double select_rate = 0;
  {
    constexpr int kRows = 8;
    constexpr int64_t kN = 32768, kK = kN / 8;
    std::vector<float> logits(static_cast<size_t>(kRows) * kN);
    for (size_t i = 0; i < logits.size(); ++i)
      logits[i] = static_cast<float>((i * 2654435761u) % 100003u) * 1e-3f;
    std::vector<int32_t> idx(static_cast<size_t>(kRows) * kK);
    std::vector<float> val(idx.size());
    const double t = fast_seconds(
        [&] {
          cpu::topk_select_rows(logits.data(), kRows, kN, kN, kK, idx.data(), val.data(), nullptr);
        },
        o.seconds_per_figure);
    select_rate = kRows * kN / t * 1e-9;
    set(m.cpu.select_gelems_per_core, select_rate, "cpu.select_gelems_per_core",
        here + "top-k (k = n/8) of 8 rows of 32768 logits, one thread");
    say(fmt("selection %.2f G elements/s per core", select_rate));
  }

  // ---- the cpu accelerator: its threads' curve and roof, copies, launches, syncs.
  auto& A = m.accelerator;
  A.kind = kAcceleratorKinds.name(AcceleratorKind::cpu);
  A.threads = at;
  A.name = "cpu-accelerator (" + std::to_string(at) + " thread" + (at == 1 ? "" : "s") + ")";
  A.memory_bytes = o.accelerator_capacity_bytes;
  A.memory_usable_share = 1.0;
  S["accelerator.memory_bytes"] = "the sweep's accelerator capacity";
  A.attention_efficiency = 1.0;
  S["accelerator.attention_efficiency"] = "1: the curve below is measured with the same kernels";
  BandwidthCurve acc_curve = cpu_curve;
  double acc_gflops = cpu_gflops;
  if (at != ht) {
    acc_curve.points.clear();
    attention_curve(at, acc_curve, acc_gflops);
  }
  for (auto& [b, g] : acc_curve.points) g *= at;  // the accelerator's curve is its total
  set_curve(A.memory_curve, acc_curve, "accelerator.memory_curve",
            here + what + ", the accelerator's " + std::to_string(at) + " thread(s)");
  set(A.memory_gbps, acc_curve.points.back().second, "accelerator.memory_gbps",
      here + what + " at the largest working set, the accelerator's threads");
  set(A.tflops, acc_gflops * at * 1e-3, "accelerator.tflops",
      here + what + ", fastest working set, the accelerator's threads");
  set(A.select_gelems, select_rate * at, "accelerator.select_gelems",
      here + "the per-core top-k rate x the accelerator's " + std::to_string(at) + " thread(s)");
  {  // The layer's GEMMs: decode GEMVs stream their weights at a rate of their own (issue 18
     // part 4: priced at the attention curve, every layer-scope step came out 10-20% off).
    GemvBench g(o.shape.kv_dtype, o.max_bytes / 2);
    ThreadPool pool(at);
    const double t = fast_seconds([&] { g.run(pool); }, o.seconds_per_figure, cold);
    set(A.gemm_gbps, g.bytes() / t * 1e-9, "accelerator.gemm_gbps",
        here + "decode GEMV (1 row) over " + std::to_string(static_cast<int64_t>(g.bytes()) >> 20) +
            " MiB of blocked " + std::string(dtype_name(o.shape.kv_dtype)) +
            " weights, the accelerator's " + std::to_string(at) + " thread(s)");
    say(fmt("cpu accelerator: layer GEMV %.2f GB/s", A.gemm_gbps));
  }

  AcceleratorOptions ao;
  ao.kind = hb::AcceleratorKind::cpu;
  ao.cpu_threads = at;
  ao.capacity_bytes = std::max<int64_t>(o.accelerator_capacity_bytes,
                                        static_cast<int64_t>(o.max_bytes) + (4 << 20));
  auto acc = make_accelerator(ao);
  Buffer dev = acc->memory()->allocate(o.max_bytes);
  std::vector<std::byte> host_buf(o.max_bytes, std::byte{3});
  BandwidthCurve copy;
  double h2d = 0, d2h = 0;
  for (size_t w : ladder) {
    const double t_up = fast_seconds(
        [&] {
          acc->copy_to_device(dev.data(), host_buf.data(), w);
          acc->synchronize();
        },
        o.seconds_per_figure / 2, cold);
    const double t_down = fast_seconds(
        [&] {
          acc->copy_to_host(host_buf.data(), dev.data(), w);
          acc->synchronize();
        },
        o.seconds_per_figure / 2, cold);
    copy.points.emplace_back(static_cast<double>(w), 2.0 * w / (t_up + t_down) * 1e-9);
    h2d = w / t_up * 1e-9;
    d2h = w / t_down * 1e-9;
  }
  // Launch and sync: a compute op too small to cost anything but being queued, dispatched to
  // the accelerator's threads and finished (one head of 8 dims, one partial), the unit every
  // policy kernel pays; a 4-byte copy skipped the dispatch (issue 18 part 4: launches priced
  // from it came out at 1 ns, and steps of many small ops were under-priced by 0.1-0.3 ms).
  float* tiny = dev.as<float>();  // o[8], lse[1], then the output
  const float* o_in[1] = {tiny};
  const float* l_in[1] = {tiny + 8};
  const auto op = [&] { acc->merge_partials(1, o_in, l_in, 1, 8, tiny + 16, tiny + 24); };
  const double t_one = fast_seconds(
      [&] {
        op();
        acc->synchronize();
      },
      0.1);
  const double t_16 = fast_seconds(
      [&] {
        for (int i = 0; i < 16; ++i) op();
        acc->synchronize();
      },
      0.1);
  const double launch_us = std::max(0.0, (t_16 - t_one) / 15 * 1e6);
  const double sync_us = std::max(0.0, t_one * 1e6 - launch_us);
  say(fmt("cpu accelerator: a queued tiny op %.2f us", launch_us) +
      fmt(", op + synchronize %.2f us", t_one * 1e6));
  if (m.links.empty()) m.links.emplace_back();
  auto& L = m.links[0];
  L.host_node = A.numa_node;
  set(L.h2d_gbps, h2d, "links[0].h2d_gbps",
      here + "cpu accelerator copy_to_device at the largest working set");
  set(L.d2h_gbps, d2h, "links[0].d2h_gbps",
      here + "cpu accelerator copy_to_host at the largest working set");
  set_curve(L.copy_curve, copy, "links[0].copy_curve",
            here + "cpu accelerator copies (both directions) by size");
  set(L.latency_us, std::max(1e-3, launch_us), "links[0].latency_us",
      here + "a queued tiny op (same as a launch)");
  set(A.launch_us, std::max(1e-3, launch_us), "accelerator.launch_us",
      here + "(16 queued tiny compute ops + sync - 1 op + sync) / 15");
  set(A.sync_us, std::max(1e-3, sync_us), "accelerator.sync_us",
      here + "tiny compute op + synchronize, minus a launch");
  say("cpu accelerator: copies " + fmt("%.2f GB/s", L.h2d_gbps) + " up, " +
      fmt("%.2f GB/s", L.d2h_gbps) + " down beyond the caches; launch " +
      fmt("%.1f us", A.launch_us) + ", sync " + fmt("%.1f us", A.sync_us));
  m.source = PlatformSource::calibrated;
  if (m.name.empty()) m.name = "this-machine";
  return m;
}

struct LiveCeilings::Impl {
  CalibrationOptions o;
  AttentionBench bench;
  ThreadPool host, accel;
  std::unique_ptr<Accelerator> acc;
  Buffer dev;
  std::vector<std::byte> host_buf;
  std::unique_ptr<GemvBench> gemv;  // made on first use (a layer-scope step)
  Impl(const CalibrationOptions& opts)
      : o(opts),
        bench(opts.shape, opts.page_tokens,
              std::max<int64_t>(
                  64, static_cast<int64_t>(opts.max_bytes) / opts.shape.kv_bytes_per_token())),
        host(std::max(1, opts.host_threads)),
        accel(std::max(1, opts.accelerator_threads)),
        host_buf(opts.max_bytes, std::byte{3}) {
    AcceleratorOptions ao;
    ao.kind = hb::AcceleratorKind::cpu;
    ao.cpu_threads = std::max(1, opts.accelerator_threads);
    ao.capacity_bytes = static_cast<int64_t>(opts.max_bytes) + (4 << 20);
    acc = make_accelerator(ao);
    dev = acc->memory()->allocate(opts.max_bytes);
  }
  // GB/s of KV (total over the pool's threads) for decode attention at `bytes` of working set.
  double attention(ThreadPool& pool, double bytes) {
    const int64_t bpt = o.shape.kv_bytes_per_token();
    const int64_t n = std::clamp<int64_t>(static_cast<int64_t>(bytes) / bpt, 16, bench.tokens);
    const int64_t t0 = now_ns();
    bench.run(pool, n);
    return static_cast<double>(n * bpt) / static_cast<double>(std::max<int64_t>(1, now_ns() - t0));
  }
  // GB/s of a decode GEMV over 64 MiB of weights on the accelerator's threads: beyond the
  // caches, as the layer's weights are (a step streams hundreds of MiB of them).
  double gemm() {
    if (!gemv) gemv = std::make_unique<GemvBench>(o.shape.kv_dtype, size_t{64} << 20);
    const int64_t t0 = now_ns();
    gemv->run(accel);
    return gemv->bytes() / static_cast<double>(std::max<int64_t>(1, now_ns() - t0));
  }
  double copy(double bytes) {
    const size_t n = std::clamp<size_t>(static_cast<size_t>(bytes), 4096, o.max_bytes);
    const int64_t t0 = now_ns();
    acc->copy_to_device(dev.data(), host_buf.data(), n);
    acc->synchronize();
    return static_cast<double>(n) / static_cast<double>(std::max<int64_t>(1, now_ns() - t0));
  }
};

LiveCeilings::LiveCeilings(const CalibrationOptions& opts) : impl_(std::make_unique<Impl>(opts)) {}
LiveCeilings::~LiveCeilings() = default;

PlatformModel LiveCeilings::at(const PlatformModel& m, double cpu_bytes, double acc_bytes,
                               double copy_bytes, double weight_bytes) {
  PlatformModel x = m;
  if (weight_bytes > 0 && m.accelerator.gemm_gbps > 0 && m.accelerator.emulated())
    x.accelerator.gemm_gbps = impl_->gemm();
  if (cpu_bytes > 0)
    x.cpu.read_curve.points = {
        {cpu_bytes, impl_->attention(impl_->host, cpu_bytes) / impl_->host.size()}};
  if (acc_bytes > 0 && m.accelerator.emulated())
    x.accelerator.memory_curve.points = {{acc_bytes, impl_->attention(impl_->accel, acc_bytes)}};
  if (copy_bytes > 0 && m.accelerator.emulated() && !x.links.empty())
    x.links[0].copy_curve.points = {{copy_bytes, impl_->copy(copy_bytes)}};
  return x;
}

PlatformModel measure_this_machine(const CalibrationOptions& o,
                                   const std::function<void(const std::string&)>& progress,
                                   std::string* profile_json) {
  const memtier::Topology topo = memtier::discover({});
  memtier::ProbeOptions po = memtier::ProbeOptions::quick();
  po.cpu_nodes = {topo.cpu_node};
  po.read_kernel = cpu::stream_read_kernel();
  const memtier::ProbeResult pr = memtier::probe(topo, po, progress);
  const memtier::PlatformProfile profile =
      memtier::make_platform_profile(topo, memtier::read_system_settings(), pr);
  if (profile_json) *profile_json = memtier::platform_profile_json(profile);
  PlatformModel m = from_platform_profile(profile);
  m.description = "this machine: quick probe + calibration by hybridbench validate-model";
  return calibrate_this_machine(std::move(m), o, true, progress);
}

}  // namespace hb::model
