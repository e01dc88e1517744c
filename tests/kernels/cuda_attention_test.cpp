// CUDA split-KV decode attention against the fp64 oracle and the CPU engine: shapes (MHA,
// GQA groups 2..16, head_dim 64..256), fp16/bf16, page sizes, edge lengths, token ranges,
// logits, mixed batches, long sequences, pages in pinned host memory, and page tables edited
// in place between calls.
//
// Tolerances as in attention_test.cpp: the cache holds K/V exactly, so only fp32 arithmetic
// differs (dot products summed in a different order, exp2 approximation): relative L2 of o
// < 1e-4, |lse error| < 1e-4 * max(1, |lse|). The GPU and CPU engines agree to the same bound.
#include "tests/kernels/cuda_test_util.h"

#ifdef HB_WITH_CUDA
#include <algorithm>
#include <limits>
#include <memory>
#include <tuple>

#include "core/thread_pool.h"
#include "kernels/cpu/attention.h"
#include "kernels/cuda/device_kv.h"
#include "tests/kernels/kv_fixture.h"

namespace hb {
namespace {

constexpr double kTol = 1e-4;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

struct Out {
  std::vector<float> o, lse, logits;
};

struct Request {
  const test::PagedInput* in;
  int64_t begin = 0, end = -1;
  int64_t logits_stride = 0;          // > 0: also fetch logits
  const PagedKvView* view = nullptr;  // device view to use instead of a fresh copy
};

// One batched GPU call over the requests; KV is copied to device memory unless a view is given.
std::vector<Out> gpu_decode(const std::vector<Request>& reqs) {
  auto& acc = test::gpu();
  std::vector<std::unique_ptr<cuda::DeviceKvCopy>> copies;
  std::vector<test::DevVec<float>> q, o, lse, lg;
  std::vector<DecodeAttentionArgs> args(reqs.size());
  for (size_t b = 0; b < reqs.size(); ++b) {
    const auto& r = reqs[b];
    const AttentionShape& s = r.in->w.shape;
    const size_t qn = static_cast<size_t>(s.q_heads) * s.head_dim;
    q.emplace_back(std::vector<float>(r.in->q(), r.in->q() + qn));
    o.emplace_back(std::vector<float>(qn, 123.0f));  // garbage that must be overwritten
    lse.emplace_back(std::vector<float>(s.q_heads, 9.0f));
    lg.emplace_back(
        std::vector<float>(r.logits_stride > 0 ? s.q_heads * r.logits_stride : 0, -7.0f));
    PagedKvView view;
    if (r.view) {
      view = *r.view;
    } else {
      copies.push_back(std::make_unique<cuda::DeviceKvCopy>(acc, r.in->view()));
      view = copies.back()->view();
    }
    auto& a = args[b];
    a.q = q.back().get();
    a.kv = view;
    a.q_heads = s.q_heads;
    a.token_begin = r.begin;
    a.token_end = r.end;
    a.o = o.back().get();
    a.lse = lse.back().get();
    if (r.logits_stride > 0) {
      a.logits_out = lg.back().get();
      a.logits_stride = r.logits_stride;
    }
  }
  acc.decode_attention(args.data(), static_cast<int>(args.size()));
  acc.synchronize();
  std::vector<Out> out(reqs.size());
  for (size_t b = 0; b < reqs.size(); ++b) out[b] = Out{o[b].read(), lse[b].read(), lg[b].read()};
  return out;
}

Out gpu_one(const test::PagedInput& in, int64_t begin = 0, int64_t end = -1) {
  return gpu_decode({{&in, begin, end}})[0];
}

void expect_matches(const Out& got, const test::RefOut& want, const std::string& what) {
  if (std::isinf(want.lse[0])) {  // empty range: the neutral partial, exactly
    for (float x : got.o) ASSERT_EQ(x, 0.0f) << what;
    for (float x : got.lse) ASSERT_EQ(x, kNegInf) << what;
    return;
  }
  EXPECT_LT(test::rel_l2(got.o.data(), want.o.data(), got.o.size()), kTol) << what;
  for (size_t h = 0; h < want.lse.size(); ++h)
    ASSERT_NEAR(got.lse[h], want.lse[h], kTol * std::max(1.0, std::abs(want.lse[h])))
        << what << " head " << h;
}

// The CPU engine on the same host cache, as a second opinion.
Out cpu_decode(const test::PagedInput& in, int64_t begin = 0, int64_t end = -1) {
  static ThreadPool pool(2);
  const AttentionShape& s = in.w.shape;
  Out r{std::vector<float>(static_cast<size_t>(s.q_heads) * s.head_dim),
        std::vector<float>(s.q_heads),
        {}};
  DecodeAttentionArgs a;
  a.q = in.q();
  a.kv = in.view();
  a.q_heads = s.q_heads;
  a.token_begin = begin;
  a.token_end = end;
  a.o = r.o.data();
  a.lse = r.lse.data();
  cpu::decode_attention(&a, 1, pool);
  return r;
}

void expect_same(const Out& gpu, const Out& cpu, const std::string& what) {
  std::vector<double> c(cpu.o.begin(), cpu.o.end());
  EXPECT_LT(test::rel_l2(gpu.o.data(), c.data(), c.size()), kTol) << what << " (vs CPU engine)";
  for (size_t h = 0; h < cpu.lse.size(); ++h) {
    if (std::isinf(cpu.lse[h])) {
      EXPECT_EQ(gpu.lse[h], cpu.lse[h]) << what;
    } else {
      EXPECT_NEAR(gpu.lse[h], cpu.lse[h], kTol * std::max(1.0f, std::abs(cpu.lse[h])))
          << what << " (vs CPU engine)";
    }
  }
}

std::string label(const AttentionShape& s, int64_t n, WorkloadSpec::Kind k, int page = 16) {
  return s.to_string() + " n=" + std::to_string(n) + " page=" + std::to_string(page) + " " +
         (k == WorkloadSpec::Kind::structured ? "structured" : "uniform");
}

// (q_heads, kv_heads, head_dim): MHA, GQA groups 2, 4, 7 (not a power of two), 16 (two head
// chunks per KV head), head_dim 64, 80, 128, 256.
using ShapeCase = std::tuple<int, int, int>;
class CudaDecodeAttention : public ::testing::TestWithParam<std::tuple<ShapeCase, DType>> {};

TEST_P(CudaDecodeAttention, MatchesReferenceAndCpuEngineAtEdgeLengths) {
  HB_REQUIRE_GPU_OR_SKIP();
  const auto [hq, hkv, d] = std::get<0>(GetParam());
  const AttentionShape shape{hq, hkv, d, std::get<1>(GetParam())};
  for (auto kind : {WorkloadSpec::Kind::structured, WorkloadSpec::Kind::uniform})
    for (int64_t n : {0, 1, 7, 16, 17, 64, 65, 4096 + 3}) {
      const auto in = test::make_paged_input(shape, n, kind, /*seed=*/n + 11);
      const Out got = gpu_one(in);
      expect_matches(got, test::reference(in, 0, n), label(shape, n, kind));
      expect_same(got, cpu_decode(in), label(shape, n, kind));
    }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CudaDecodeAttention,
    ::testing::Combine(::testing::Values(ShapeCase{32, 8, 128}, ShapeCase{40, 40, 128},
                                         ShapeCase{16, 8, 64}, ShapeCase{28, 4, 128},
                                         ShapeCase{32, 32, 80}, ShapeCase{64, 4, 128},
                                         ShapeCase{8, 2, 256}),
                       ::testing::Values(DType::f16, DType::bf16)));

TEST(CudaDecodeAttentionPages, EveryPageSizeIncludingNonPowersOfTwo) {
  HB_REQUIRE_GPU_OR_SKIP();
  const AttentionShape shape{32, 8, 128, DType::f16};
  for (int page : {16, 32, 48, 64, 128})
    for (int64_t n : {1, 100, 4096 + 3}) {
      const auto in = test::make_paged_input(shape, n, WorkloadSpec::Kind::structured, n, page);
      expect_matches(gpu_one(in), test::reference(in, 0, n),
                     label(shape, n, WorkloadSpec::Kind::structured, page));
    }
}

TEST(CudaDecodeAttentionRanges, SubRangesEmptyAndClampedRanges) {
  HB_REQUIRE_GPU_OR_SKIP();
  const AttentionShape shape{32, 8, 128, DType::f16};
  const int64_t n = 4096 + 3;
  const auto in = test::make_paged_input(shape, n, WorkloadSpec::Kind::structured, 5);
  for (auto [b, e] : {std::pair<int64_t, int64_t>{5, 4000},
                      {64, 128},
                      {63, 65},
                      {0, 1},
                      {4000, n},
                      {1000, 1000}}) {
    const std::string what = "range [" + std::to_string(b) + ", " + std::to_string(e) + ")";
    expect_matches(gpu_one(in, b, e), test::reference(in, b, e), what);
  }
  expect_matches(gpu_one(in, 4000, 100000), test::reference(in, 4000, n), "end clamped");
  expect_matches(gpu_one(in, 9000, 10000), test::reference(in, 0, 0),
                 "range past the end is empty");
}

TEST(CudaDecodeAttentionLogits, LogitsOutAreTheScaledDotProducts) {
  HB_REQUIRE_GPU_OR_SKIP();
  const AttentionShape shape{28, 4, 128, DType::bf16};
  const int64_t n = 1000, begin = 37, end = 900, stride = 1003;
  const auto in = test::make_paged_input(shape, n, WorkloadSpec::Kind::structured, 9);
  const Out got = gpu_decode({{&in, begin, end, stride}})[0];
  expect_matches(got, test::reference(in, begin, end), "with logits");
  for (int h = 0; h < shape.q_heads; ++h) {
    for (int64_t t = begin; t < end; ++t) {
      const double want = test::ref_logit(in, in.q(), h, t);
      ASSERT_NEAR(got.logits[h * stride + (t - begin)], want, 1e-4 * std::max(1.0, std::abs(want)))
          << "head " << h << " token " << t;
    }
    for (int64_t i = end - begin; i < stride; ++i)
      ASSERT_EQ(got.logits[h * stride + i], -7.0f) << "wrote past the range";
  }
}

TEST(CudaDecodeAttentionBatch, MixedLengthsInOneCall) {
  HB_REQUIRE_GPU_OR_SKIP();
  const AttentionShape shape{32, 8, 128, DType::f16};
  std::vector<test::PagedInput> ins;
  for (int64_t n : {0, 1, 7, 300, 4096 + 3, 64})
    ins.push_back(test::make_paged_input(shape, n, WorkloadSpec::Kind::structured, n + 1));
  std::vector<Request> reqs;
  for (const auto& in : ins) reqs.push_back({&in});
  const auto got = gpu_decode(reqs);
  for (size_t b = 0; b < ins.size(); ++b)
    expect_matches(got[b], test::reference(ins[b], 0, ins[b].w.prompt_len()),
                   "batch member " + std::to_string(b));
}

TEST(CudaDecodeAttentionLong, ThirtyTwoKTokensBatchTwo) {
  HB_REQUIRE_GPU_OR_SKIP();
  const AttentionShape shape{32, 8, 128, DType::f16};
  const int64_t n = 32768 + 5;
  const auto a = test::make_paged_input(shape, n, WorkloadSpec::Kind::structured, 1);
  const auto b = test::make_paged_input(shape, n - 1000, WorkloadSpec::Kind::uniform, 2);
  const auto got = gpu_decode({{&a}, {&b}});
  expect_matches(got[0], test::reference(a, 0, n), "32K structured");
  expect_matches(got[1], test::reference(b, 0, n - 1000), "31K uniform");
}

TEST(CudaDecodeAttentionMemory, PagesInPinnedHostMemoryAreReadInPlace) {
  HB_REQUIRE_GPU_OR_SKIP();
  auto& acc = test::gpu();
  const AttentionShape shape{32, 8, 128, DType::f16};
  const int64_t n = 2000;
  WorkloadSpec spec;
  const Workload w = make_workload(shape, n, 1, spec);
  const size_t block = size_t{kDefaultPageTokens} * shape.head_dim * 2;
  PageArena ka(acc.staging_memory(acc.info().numa_node), block);  // outlives the cache
  PageArena va(acc.staging_memory(acc.info().numa_node), block);
  PagedKvCache cache(shape);
  cache.append(w.prompt, 0, n, ka, va);
  test::PagedInput in;
  in.w = w;
  const PagedKvView host_view = cache.view();
  const Out got = gpu_decode({{&in, 0, -1, 0, &host_view}})[0];
  expect_matches(got, test::reference(in, 0, n), "pinned host pages");
}

TEST(CudaDecodeAttentionTables, EditedAndGrowingPageTablesAreReuploaded) {
  HB_REQUIRE_GPU_OR_SKIP();
  auto& acc = test::gpu();
  const AttentionShape shape{32, 8, 128, DType::f16};
  const int64_t n = 1000;
  const auto in = test::make_paged_input(shape, n, WorkloadSpec::Kind::structured, 3);
  cuda::DeviceKvCopy dev(acc, in.view());
  // Our own mutable tables over the device blocks, as a strategy would keep them.
  std::vector<std::vector<PageRef>> tables(shape.kv_heads);
  std::vector<KvHeadView> heads(shape.kv_heads);
  for (int h = 0; h < shape.kv_heads; ++h) {
    const KvHeadView& v = dev.view().heads[h];
    tables[h].assign(v.pages, v.pages + (v.num_tokens + 15) / 16);
    heads[h] = KvHeadView{tables[h].data(), 500};  // first only 500 tokens
  }
  PagedKvView view = dev.view();
  view.heads = heads.data();
  expect_matches(gpu_decode({{&in, 0, -1, 0, &view}})[0], test::reference(in, 0, 500),
                 "first 500 tokens");
  for (auto& h : heads) h.num_tokens = n;  // the cache grew
  expect_matches(gpu_decode({{&in, 0, -1, 0, &view}})[0], test::reference(in, 0, n),
                 "grown to 1000");
  // Migrate page 7 of head 3: copy its blocks elsewhere, wipe the old ones, edit the table.
  const size_t block = 16 * 128 * 2;
  Buffer moved = acc.memory()->allocate(2 * block);
  PageRef& p = tables[3][7];
  acc.copy_to_device(moved.as<std::byte>(), p.k, block);
  acc.copy_to_device(moved.as<std::byte>() + block, p.v, block);
  std::vector<std::byte> junk(block, std::byte{0x7c});  // fp16 0x7c7c is a large number
  acc.copy_to_device(p.k, junk.data(), block);
  acc.copy_to_device(p.v, junk.data(), block);
  acc.synchronize();
  p = PageRef{moved.as<std::byte>(), moved.as<std::byte>() + block};
  expect_matches(gpu_decode({{&in, 0, -1, 0, &view}})[0], test::reference(in, 0, n),
                 "after a page moved");
}

}  // namespace
}  // namespace hb
#else
TEST(CudaDecodeAttention, SkippedWithoutCuda) {
  GTEST_SKIP() << "built without CUDA (HYBRIDBENCH_CUDA=OFF)";
}
#endif
