// The fp64 oracle's group pass (ref::attention_group), what the runner's accuracy scoring
// calls for every KV head at every scored decode step: at 128k tokens it was a quarter of a
// model-mode run's time. Llama-3.1-70B's layout (64 query heads over 8 KV heads, head_dim
// 128, dense fp32 rows [n][kv_heads][head_dim]), one KV head's group of 8, with probabilities
// (as the runner asks). The rows are 1 GiB in all, far above any L3. Compare medians:
//   hybridbench_kernels_bench --benchmark_filter=BM_ReferenceGroup --benchmark_repetitions=3
//                             --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "core/shape.h"
#include "kernels/reference/attention_ref.h"

namespace hb {
namespace {

// Argument: the SIMD level of the group loops (0 scalar, 1 AVX2, 2 AVX-512; every level gives
// the same bits, so this is a speed comparison only).
void BM_ReferenceGroup(benchmark::State& state) {
  const auto level = static_cast<SimdLevel>(state.range(0));
  if (static_cast<int>(level) > static_cast<int>(best_simd_level())) {
    state.SkipWithError("this CPU lacks the SIMD level");
    return;
  }
  state.SetLabel(simd_level_name(level));
  const AttentionShape shape{64, 8, 128, DType::f32};
  const int64_t n = int64_t{128} << 10;
  const int d = shape.head_dim;
  std::mt19937 gen(11);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> q(static_cast<size_t>(shape.q_heads) * d);
  std::vector<float> k(static_cast<size_t>(n) * shape.kv_heads * d), v(k.size());
  for (auto* x : {&q, &k, &v})
    for (float& f : *x) f = nd(gen);
  const std::vector<int> heads = {0, 1, 2, 3, 4, 5, 6, 7};  // KV head 0's group
  std::vector<double> o(heads.size() * d), lse(heads.size()), probs(heads.size() * n);
  for (auto _ : state) {
    ref::attention_group(shape, heads, q.data(), k.data(), v.data(), n, o.data(), lse.data(),
                         probs.data(), 0, level);
    benchmark::DoNotOptimize(o.data());
  }
  state.SetItemsProcessed(state.iterations() * n);  // tokens
}
BENCHMARK(BM_ReferenceGroup)->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace hb
