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

namespace {

const std::string kHere =
    "calibrated on this machine by hybridbench validate-model (10th percentile of repeats, "
    "caches flushed before "
    "each): ";

// Working sets for the bandwidth curves: min_bytes (at least 64 KiB), doubling, then max_bytes.
std::vector<size_t> working_set_ladder(const CalibrationOptions& o) {
  std::vector<size_t> ladder;
  for (size_t b = std::max<size_t>(o.min_bytes, 64 << 10); b < o.max_bytes; b *= 2)
    ladder.push_back(b);
  ladder.push_back(o.max_bytes);
  return ladder;
}

// The cpu accelerator's copy curve and the rates at the largest working set.
struct CopyFigures {
  BandwidthCurve curve;
  double h2d_gbps = 0, d2h_gbps = 0;
};

// A queued op's cost and the synchronize after it, in microseconds.
struct LaunchFigures {
  double launch_us = 0, sync_us = 0, one_op_us = 0;
};

// Measures the figures of calibrate_this_machine, one group per method, into `m`: each figure
// with its source, kept when `m` has it already and !overwrite.
class Calibrator {
 public:
  Calibrator(PlatformModel& m, const CalibrationOptions& o, bool overwrite,
             const std::function<void(const std::string&)>& progress)
      : m_(m),
        o_(o),
        overwrite_(overwrite),
        progress_(progress),
        ht_(std::max(1, o.host_threads)),
        at_(std::max(1, o.accelerator_threads)),
        ladder_(working_set_ladder(o)),
        bpt_(o.shape.kv_bytes_per_token()),
        max_tokens_(std::max<int64_t>(64, static_cast<int64_t>(o.max_bytes) / bpt_)),
        bench_(o.shape, o.page_tokens, max_tokens_),
        what_("decode attention " + o.shape.to_string()),
        flush_(o.flush_bytes, std::byte{1}),
        flusher_(1) {}

  void cpu_attention();
  void host_pool();
  void selection();
  void accelerator_compute();
  void accelerator_gemv();
  void links_and_launches();

 private:
  void say(const std::string& s) {
    if (progress_) progress_(s);
  }
  void set(double& field, double v, const std::string& key, const std::string& how) {
    if (!overwrite_ && field > 0) return;
    field = v;
    m_.sources[key] = how;
  }
  void set_curve(BandwidthCurve& field, BandwidthCurve v, const std::string& key,
                 const std::string& how) {
    if (!overwrite_ && !field.empty()) return;
    field = std::move(v);
    m_.sources[key] = how;
  }
  // Cold caches: the sweep interleaves every strategy's steps (and a whole model, every
  // layer's), so a step finds little of its KV left in the caches from its previous step. Each
  // repeat is preceded by a read of a buffer larger than any last-level cache.
  void cold() { (void)cpu::stream_read(flush_.data(), flush_.size(), flusher_); }
  void attention_curve(int threads, BandwidthCurve& curve, double& gflops);
  CopyFigures copies(Accelerator& acc, Buffer& dev);
  LaunchFigures launches(Accelerator& acc, Buffer& dev);

  PlatformModel& m_;
  const CalibrationOptions& o_;
  bool overwrite_;
  const std::function<void(const std::string&)>& progress_;
  int ht_, at_;
  std::vector<size_t> ladder_;
  int64_t bpt_, max_tokens_;
  AttentionBench bench_;
  std::string what_;
  std::vector<std::byte> flush_;
  ThreadPool flusher_;
  BandwidthCurve cpu_curve_;
  double cpu_gflops_ = 0, select_rate_ = 0;
};

// Per-core (per-thread) bandwidth curve and compute roof with `threads` threads.
void Calibrator::attention_curve(int threads, BandwidthCurve& curve, double& gflops) {
  ThreadPool pool(threads);
  gflops = 0;
  for (size_t w : ladder_) {
    const int64_t tokens = std::clamp<int64_t>(static_cast<int64_t>(w) / bpt_, 16, max_tokens_);
    if (!curve.points.empty() && static_cast<double>(tokens * bpt_) <= curve.points.back().first)
      continue;
    const double t =
        fast_seconds([&] { bench_.run(pool, tokens); }, o_.seconds_per_figure, [this] { cold(); });
    const double bytes = static_cast<double>(tokens * bpt_);
    curve.points.emplace_back(bytes, bytes / t / threads * 1e-9);
    gflops = std::max(gflops, bench_.flops(tokens) / t / threads * 1e-9);
  }
}

// Decode attention over the working-set ladder on the host threads: the read curve and the
// compute roof.
void Calibrator::cpu_attention() {
  attention_curve(ht_, cpu_curve_, cpu_gflops_);
  std::string pts;
  for (const auto& [b, g] : cpu_curve_.points)
    pts += (pts.empty() ? "" : ", ") + fmt("%.0f MiB", b / 1048576) + fmt(" %.1f", g);
  say(what_ + " per core (GB/s of KV by working set): " + pts);
  const std::string curve_how =
      kHere + what_ + ", " + std::to_string(ht_) + " host thread(s), working sets " +
      fmt("%.2f", ladder_.front() / 1048576.0) + "-" + fmt("%.0f MiB", ladder_.back() / 1048576.0);
  set_curve(m_.cpu.read_curve, cpu_curve_, "cpu.read_curve", curve_how);
  set(m_.cpu.core_read_gbps, cpu_curve_.points.back().second, "cpu.core_read_gbps",
      kHere + what_ + " at the largest working set (" +
          fmt("%.0f MiB", ladder_.back() / 1048576.0) + "), per thread");
  set(m_.cpu.attention_gflops_per_core, cpu_gflops_, "cpu.attention_gflops_per_core",
      kHere + what_ + ", fastest working set, per thread");
  say(fmt("compute roof %.1f GFLOP/s per core", m_.cpu.attention_gflops_per_core));
}

// The host pool: its threads and its dispatch cost.
void Calibrator::host_pool() {
  m_.cpu.cores = ht_;
  m_.sources["cpu.cores"] = "the sweep's host threads (" + std::to_string(ht_) + ")";
  {
    ThreadPool host(ht_);
    const double t_disp = fast_seconds([&] { host.parallel_for(ht_, [](int64_t, int) {}); }, 0.05);
    set(m_.cpu.dispatch_us, std::max(1e-3, t_disp * 1e6), "cpu.dispatch_us",
        kHere + "empty parallel_for on the host pool");
  }
  if (m_.cpu.name.empty())
    m_.cpu.name = "this machine's CPU (" + std::to_string(ht_) + " host thread(s))";
}

// Selection: one core's top-k scan rate over rows of logits as a long context gives them
// (HybridGen's logit mode keeps about an eighth). Scattered values, so no branch is predictable.
void Calibrator::selection() {
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
      o_.seconds_per_figure);
  select_rate_ = kRows * kN / t * 1e-9;
  set(m_.cpu.select_gelems_per_core, select_rate_, "cpu.select_gelems_per_core",
      kHere + "top-k (k = n/8) of 8 rows of 32768 logits, one thread");
  say(fmt("selection %.2f G elements/s per core", select_rate_));
}

// The cpu accelerator's threads: its attention curve and roof, and its selection rate.
void Calibrator::accelerator_compute() {
  auto& A = m_.accelerator;
  A.kind = kAcceleratorKinds.name(AcceleratorKind::cpu);
  A.threads = at_;
  A.name = "cpu-accelerator (" + std::to_string(at_) + " thread" + (at_ == 1 ? "" : "s") + ")";
  A.memory_bytes = o_.accelerator_capacity_bytes;
  A.memory_usable_share = 1.0;
  m_.sources["accelerator.memory_bytes"] = "the sweep's accelerator capacity";
  A.attention_efficiency = 1.0;
  m_.sources["accelerator.attention_efficiency"] =
      "1: the curve below is measured with the same kernels";
  BandwidthCurve acc_curve = cpu_curve_;
  double acc_gflops = cpu_gflops_;
  if (at_ != ht_) {
    acc_curve.points.clear();
    attention_curve(at_, acc_curve, acc_gflops);
  }
  for (auto& [b, g] : acc_curve.points) g *= at_;  // the accelerator's curve is its total
  set_curve(A.memory_curve, acc_curve, "accelerator.memory_curve",
            kHere + what_ + ", the accelerator's " + std::to_string(at_) + " thread(s)");
  set(A.memory_gbps, acc_curve.points.back().second, "accelerator.memory_gbps",
      kHere + what_ + " at the largest working set, the accelerator's threads");
  set(A.tflops, acc_gflops * at_ * 1e-3, "accelerator.tflops",
      kHere + what_ + ", fastest working set, the accelerator's threads");
  set(A.select_gelems, select_rate_ * at_, "accelerator.select_gelems",
      kHere + "the per-core top-k rate x the accelerator's " + std::to_string(at_) + " thread(s)");
}

// The layer's GEMMs: decode GEMVs stream their weights at a rate of their own (issue 18 part 4:
// priced at the attention curve, every layer-scope step came out 10-20% off).
void Calibrator::accelerator_gemv() {
  auto& A = m_.accelerator;
  GemvBench g(o_.shape.kv_dtype, o_.max_bytes / 2);
  ThreadPool pool(at_);
  const double t = fast_seconds([&] { g.run(pool); }, o_.seconds_per_figure, [this] { cold(); });
  set(A.gemm_gbps, g.bytes() / t * 1e-9, "accelerator.gemm_gbps",
      kHere + "decode GEMV (1 row) over " + std::to_string(static_cast<int64_t>(g.bytes()) >> 20) +
          " MiB of blocked " + std::string(dtype_name(o_.shape.kv_dtype)) +
          " weights, the accelerator's " + std::to_string(at_) + " thread(s)");
  say(fmt("cpu accelerator: layer GEMV %.2f GB/s", A.gemm_gbps));
}

// Copies both ways over the working-set ladder.
CopyFigures Calibrator::copies(Accelerator& acc, Buffer& dev) {
  std::vector<std::byte> host_buf(o_.max_bytes, std::byte{3});
  CopyFigures c;
  for (size_t w : ladder_) {
    const double t_up = fast_seconds(
        [&] {
          acc.copy_to_device(dev.data(), host_buf.data(), w);
          acc.synchronize();
        },
        o_.seconds_per_figure / 2, [this] { cold(); });
    const double t_down = fast_seconds(
        [&] {
          acc.copy_to_host(host_buf.data(), dev.data(), w);
          acc.synchronize();
        },
        o_.seconds_per_figure / 2, [this] { cold(); });
    c.curve.points.emplace_back(static_cast<double>(w), 2.0 * w / (t_up + t_down) * 1e-9);
    c.h2d_gbps = w / t_up * 1e-9;
    c.d2h_gbps = w / t_down * 1e-9;
  }
  return c;
}

// Launch and sync: a compute op too small to cost anything but being queued, dispatched to the
// accelerator's threads and finished (one head of 8 dims, one partial), the unit every policy
// kernel pays; a 4-byte copy skipped the dispatch (issue 18 part 4: launches priced from it came
// out at 1 ns, and steps of many small ops were under-priced by 0.1-0.3 ms).
LaunchFigures Calibrator::launches(Accelerator& acc, Buffer& dev) {
  float* tiny = dev.as<float>();  // o[8], lse[1], then the output
  const float* o_in[1] = {tiny};
  const float* l_in[1] = {tiny + 8};
  const auto op = [&] { acc.merge_partials(1, o_in, l_in, 1, 8, tiny + 16, tiny + 24); };
  const double t_one = fast_seconds(
      [&] {
        op();
        acc.synchronize();
      },
      0.1);
  const double t_16 = fast_seconds(
      [&] {
        for (int i = 0; i < 16; ++i) op();
        acc.synchronize();
      },
      0.1);
  LaunchFigures l;
  l.launch_us = std::max(0.0, (t_16 - t_one) / 15 * 1e6);
  l.sync_us = std::max(0.0, t_one * 1e6 - l.launch_us);
  l.one_op_us = t_one * 1e6;
  return l;
}

// The cpu accelerator's link (copies) and its launch and sync costs.
void Calibrator::links_and_launches() {
  auto& A = m_.accelerator;
  AcceleratorOptions ao;
  ao.kind = hb::AcceleratorKind::cpu;
  ao.cpu_threads = at_;
  ao.capacity_bytes = std::max<int64_t>(o_.accelerator_capacity_bytes,
                                        static_cast<int64_t>(o_.max_bytes) + (4 << 20));
  auto acc = make_accelerator(ao);
  Buffer dev = acc->memory()->allocate(o_.max_bytes);
  const CopyFigures copy = copies(*acc, dev);
  const LaunchFigures l = launches(*acc, dev);
  say(fmt("cpu accelerator: a queued tiny op %.2f us", l.launch_us) +
      fmt(", op + synchronize %.2f us", l.one_op_us));
  if (m_.links.empty()) m_.links.emplace_back();
  auto& L = m_.links[0];
  L.host_node = A.numa_node;
  set(L.h2d_gbps, copy.h2d_gbps, "links[0].h2d_gbps",
      kHere + "cpu accelerator copy_to_device at the largest working set");
  set(L.d2h_gbps, copy.d2h_gbps, "links[0].d2h_gbps",
      kHere + "cpu accelerator copy_to_host at the largest working set");
  set_curve(L.copy_curve, copy.curve, "links[0].copy_curve",
            kHere + "cpu accelerator copies (both directions) by size");
  set(L.latency_us, std::max(1e-3, l.launch_us), "links[0].latency_us",
      kHere + "a queued tiny op (same as a launch)");
  set(A.launch_us, std::max(1e-3, l.launch_us), "accelerator.launch_us",
      kHere + "(16 queued tiny compute ops + sync - 1 op + sync) / 15");
  set(A.sync_us, std::max(1e-3, l.sync_us), "accelerator.sync_us",
      kHere + "tiny compute op + synchronize, minus a launch");
  say("cpu accelerator: copies " + fmt("%.2f GB/s", L.h2d_gbps) + " up, " +
      fmt("%.2f GB/s", L.d2h_gbps) + " down beyond the caches; launch " +
      fmt("%.1f us", A.launch_us) + ", sync " + fmt("%.1f us", A.sync_us));
}

}  // namespace

PlatformModel calibrate_this_machine(PlatformModel m, const CalibrationOptions& o, bool overwrite,
                                     const std::function<void(const std::string&)>& progress) {
  Calibrator c(m, o, overwrite, progress);
  c.cpu_attention();
  c.host_pool();
  c.selection();
  c.accelerator_compute();
  c.accelerator_gemv();
  c.links_and_launches();
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
