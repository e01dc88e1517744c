// The offload streaming path: KV pages in host memory streamed through two device chunk
// buffers (copy of chunk c+1 overlapping attention on chunk c), against fp64.
#include "tests/kernels/cuda_test_util.h"

#ifdef HB_WITH_CUDA
#include <limits>
#include <memory>

#include "kernels/cpu/attention.h"
#include "tests/kernels/kv_fixture.h"

namespace hb {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// A workload's KV in host arenas from `alloc` (pinned staging memory, or plain pageable).
struct HostKv {
  Workload w;
  std::unique_ptr<PageArena> ka, va;
  std::unique_ptr<PagedKvCache> cache;
  HostKv(const AttentionShape& s, int64_t n, std::shared_ptr<BufferAllocator> alloc, uint64_t seed,
         int page = 16) {
    WorkloadSpec spec;
    spec.seed = seed;
    w = make_workload(s, n, 1, spec);
    const size_t block = static_cast<size_t>(page) * s.head_dim * dtype_size(s.kv_dtype);
    ka = std::make_unique<PageArena>(alloc, block);
    va = std::make_unique<PageArena>(alloc, block);
    cache = std::make_unique<PagedKvCache>(s, page);
    cache->append(w.prompt, 0, n, *ka, *va);
  }
  ~HostKv() { cache.reset(); }  // pages go back to the arenas before the arenas go
  test::RefOut reference(int64_t b, int64_t e) const {
    const AttentionShape& s = w.shape;
    test::RefOut r{std::vector<double>(static_cast<size_t>(s.q_heads) * s.head_dim),
                   std::vector<double>(s.q_heads)};
    const size_t row = static_cast<size_t>(s.kv_heads) * s.head_dim;
    ref::attention(s, w.steps[0].q.data(), w.prompt.k.data() + b * row, w.prompt.v.data() + b * row,
                   e - b, r.o.data(), r.lse.data());
    return r;
  }
};

void stream_and_check(const std::vector<const HostKv*>& kvs, int64_t chunk, int64_t begin,
                      int64_t end, const std::string& what) {
  auto& acc = test::gpu();
  std::vector<test::DevVec<float>> q, o, l;
  std::vector<PagedKvView> views;
  std::vector<DecodeAttentionArgs> args(kvs.size());
  for (size_t b = 0; b < kvs.size(); ++b) {
    const AttentionShape& s = kvs[b]->w.shape;
    const float* qh = kvs[b]->w.steps[0].q.data();
    q.emplace_back(std::vector<float>(qh, qh + static_cast<size_t>(s.q_heads) * s.head_dim));
    o.emplace_back(std::vector<float>(static_cast<size_t>(s.q_heads) * s.head_dim, 5.0f));
    l.emplace_back(std::vector<float>(s.q_heads, 5.0f));
    args[b].q = q.back().get();
    args[b].kv = kvs[b]->cache->view();
    args[b].q_heads = s.q_heads;
    args[b].token_begin = begin;
    args[b].token_end = end;
    args[b].o = o.back().get();
    args[b].lse = l.back().get();
  }
  acc.enqueue(StreamAttentionArgs{args.data(), static_cast<int>(args.size()), chunk});
  acc.synchronize();
  for (size_t b = 0; b < kvs.size(); ++b) {
    const int64_t n = kvs[b]->w.prompt_len();
    const int64_t e = end < 0 ? n : std::min(end, n), bb = std::min(begin, e);
    const auto want = kvs[b]->reference(bb, e);
    const auto go = o[b].read(), gl = l[b].read();
    const std::string w = what + " seq " + std::to_string(b);
    if (e <= bb) {
      for (float x : go) ASSERT_EQ(x, 0.0f) << w;
      for (float x : gl) ASSERT_EQ(x, kNegInf) << w;
      continue;
    }
    EXPECT_LT(test::rel_l2(go.data(), want.o.data(), go.size()), 1e-4) << w;
    for (size_t h = 0; h < gl.size(); ++h)
      ASSERT_NEAR(gl[h], want.lse[h], 1e-4 * std::max(1.0, std::abs(want.lse[h]))) << w;
  }
}

TEST(CudaStreamAttention, PinnedPagesAnyChunkSize) {
  HB_REQUIRE_GPU_OR_SKIP();
  auto& acc = test::gpu();
  const AttentionShape shape{32, 8, 128, DType::f16};
  const HostKv kv(shape, 10000 + 3, acc.staging_memory(acc.info().numa_node), 1);
  for (int64_t chunk : {64, 1000, 4096, 1 << 20})
    stream_and_check({&kv}, chunk, 0, -1, "chunk " + std::to_string(chunk));
}

TEST(CudaStreamAttention, MixedBatchRangesAndEdgeLengths) {
  HB_REQUIRE_GPU_OR_SKIP();
  auto& acc = test::gpu();
  const AttentionShape shape{28, 4, 128, DType::bf16};
  auto pinned = acc.staging_memory(-1);
  const HostKv a(shape, 0, pinned, 2), b(shape, 1, pinned, 3), c(shape, 7, pinned, 4),
      d(shape, 5000, pinned, 5);
  stream_and_check({&a, &b, &c, &d}, 1024, 0, -1, "mixed");
  stream_and_check({&d}, 1024, 1500, 4200, "sub-range");
  stream_and_check({&d}, 1024, 4999, 6000, "last token");
  stream_and_check({&a}, 1024, 0, -1, "only empty");
}

TEST(CudaStreamAttention, PageablePagesAreCorrectToo) {
  HB_REQUIRE_GPU_OR_SKIP();
  const AttentionShape shape{32, 8, 128, DType::f16};
  const HostKv kv(shape, 3000, host_allocator(), 6, 32);
  stream_and_check({&kv}, 512, 0, -1, "pageable, page 32");
}

}  // namespace
}  // namespace hb
#else
TEST(CudaStreamAttention, SkippedWithoutCuda) {
  GTEST_SKIP() << "built without CUDA (HYBRIDBENCH_CUDA=OFF)";
}
#endif
