// The probe against a reference read, interleaved (issue 18 part 1): is `hybridbench probe`'s
// read bandwidth at the machine's real ceiling, and do back-to-back probes agree?
//
// Each iteration runs one probe of the reference CPU node's own memory (read figure only: the
// CLI's stream_read, its settling rule, seconds_per_figure 0.25) and then the reference read the
// issue describes: every allowed CPU on its own static contiguous share, 8 independent AVX2
// vpaddd accumulators, THP buffers, one round = one pass over 4 x 256 MiB (1 GiB), median of
// 5 rounds. It is written here without the thread pool or the engine, so it shares nothing with
// the probe but the memory. Counters (medians over iterations):
//   probe_GBps, ref_GBps, ratio (probe / ref of the same iteration; the goal is >= 0.90),
//   probe_noise (the probe's stated noise), b2b (|difference| of consecutive probes over their
//   mean) and b2b_in_noise (share of consecutive pairs within the sum of their stated noise),
//   settled (share of probes whose window settled).
//   chrt -f 10 build/tests/benchmarks/hybridbench_kernels_bench
//   --benchmark_filter=BM_ProbeVsReference
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "kernels/cpu/stream_read.h"
#include "memtier/discover.h"
#include "memtier/probe.h"
#include "tests/benchmarks/bench_buffers.h"

namespace hb {
namespace {

// Written out, not a loop over an array: GCC -O2 would keep such an array on the stack.
__attribute__((target("avx2"))) uint64_t reference_read(const std::byte* p, size_t bytes) {
  const auto* v = reinterpret_cast<const __m256i*>(p);
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,
          a7 = a0;
  for (size_t i = 0; i + 8 <= bytes / 32; i += 8) {
    a0 = _mm256_add_epi32(a0, _mm256_load_si256(v + i));
    a1 = _mm256_add_epi32(a1, _mm256_load_si256(v + i + 1));
    a2 = _mm256_add_epi32(a2, _mm256_load_si256(v + i + 2));
    a3 = _mm256_add_epi32(a3, _mm256_load_si256(v + i + 3));
    a4 = _mm256_add_epi32(a4, _mm256_load_si256(v + i + 4));
    a5 = _mm256_add_epi32(a5, _mm256_load_si256(v + i + 5));
    a6 = _mm256_add_epi32(a6, _mm256_load_si256(v + i + 6));
    a7 = _mm256_add_epi32(a7, _mm256_load_si256(v + i + 7));
  }
  a0 = _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3)),
                        _mm256_add_epi32(_mm256_add_epi32(a4, a5), _mm256_add_epi32(a6, a7)));
  alignas(32) uint64_t w[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(w), a0);
  return w[0] ^ w[1] ^ w[2] ^ w[3];
}

// One round: each buffer read by one thread per allowed CPU (the caller is the first), a static
// contiguous share each. Not pinned, like OpenMP's default: a pinned caller's new thread would
// inherit its CPU, and under chrt -f wait there until the caller's share is done (measured at
// 31 GB/s against 43 unpinned).
double reference_round_gbps(const std::vector<Buffer>& bufs, size_t threads) {
  std::vector<uint64_t> sums(threads);
  size_t total = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (const Buffer& b : bufs) {
    const size_t share = b.size() / threads / 64 * 64;
    const auto* base = static_cast<const std::byte*>(b.data());
    std::vector<std::thread> others;
    for (size_t t = 1; t < threads; ++t)
      others.emplace_back([&, t] { sums[t] = reference_read(base + t * share, share); });
    sums[0] = reference_read(base, share);
    for (auto& th : others) th.join();
    total += share * threads;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  benchmark::DoNotOptimize(sums.data());
  return double(total) / 1e9 / s;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void BM_ProbeVsReference(benchmark::State& state) {
  if (!cpu_features().avx2) {
    state.SkipWithError("the reference read needs AVX2");
    return;
  }
  const memtier::Topology topo = memtier::discover({});
  memtier::ProbeOptions o;
  o.cpu_nodes = o.mem_nodes = {topo.cpu_node};
  o.seconds_per_figure = 0.25;
  o.loaded_latency = false;
  o.latency_hops = 1 << 14;  // latency is not compared here: keep its share of the time small
  o.read_kernel = {"hb::cpu::stream_read", &cpu::stream_read};  // read only
  std::vector<Buffer> bufs;
  for (int i = 0; i < 4; ++i) bufs.push_back(microbench::huge_page_buffer(size_t{256} << 20));
  const std::vector<int> cpus = allowed_cpus();
  std::vector<double> probe, noise, ref, ratio, b2b, in_noise, settled;
  for (auto _ : state) {
    const memtier::ProbeResult r = memtier::probe(topo, o);
    const memtier::Figure& f = r.pairs.at(0).read_gbps;
    std::vector<double> rounds;
    for (int k = 0; k < 5; ++k) rounds.push_back(reference_round_gbps(bufs, cpus.size()));
    if (!probe.empty()) {
      const double d = std::abs(f.summary.median - probe.back());
      b2b.push_back(d / (0.5 * (f.summary.median + probe.back())));
      in_noise.push_back(d <= f.noise() * f.summary.median + noise.back() * probe.back() ? 1 : 0);
    }
    probe.push_back(f.summary.median);
    noise.push_back(f.noise());
    settled.push_back(f.settled() ? 1 : 0);
    ref.push_back(median_of(rounds));
    ratio.push_back(probe.back() / ref.back());
  }
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0 : s / double(v.size());
  };
  state.counters["probe_GBps"] = median_of(probe);
  state.counters["ref_GBps"] = median_of(ref);
  state.counters["ratio"] = median_of(ratio);
  state.counters["probe_noise"] = median_of(noise);
  state.counters["b2b"] = median_of(b2b);
  state.counters["b2b_in_noise"] = mean(in_noise);
  state.counters["settled"] = mean(settled);
  state.SetLabel(std::to_string(cpus.size()) + " threads");
}

BENCHMARK(BM_ProbeVsReference)->Iterations(6)->Unit(benchmark::kSecond);

}  // namespace
}  // namespace hb
