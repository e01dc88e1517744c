// The shared mechanisms the baselines rely on (kernels/cpu additions and the cpu
// accelerator's streaming path and host kernels), checked on their own.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numeric>

#include "core/error.h"
#include "core/kv_set.h"
#include "core/rng.h"
#include "kernels/backend.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/linalg.h"
#include "kernels/cpu/page_meta.h"
#include "kernels/cpu/page_pack.h"
#include "kernels/cpu/select.h"
#include "kernels/cpu/token_select.h"

namespace hb {
namespace {

std::unique_ptr<Accelerator> cpu_accel(int64_t capacity = 0) {
  AcceleratorOptions o;
  o.kind = AcceleratorKind::cpu;
  o.cpu_threads = 1;
  o.capacity_bytes = capacity;
  return make_accelerator(o);
}

DenseKv random_kv(int64_t n, int kvh, int d, uint64_t seed) {
  DenseKv kv;
  kv.tokens = n;
  kv.kv_heads = kvh;
  kv.head_dim = d;
  Rng rng(seed, 0, 0);
  kv.k.resize(static_cast<size_t>(n) * kvh * d);
  kv.v.resize(kv.k.size());
  for (auto& x : kv.k) x = rng.normal();
  for (auto& x : kv.v) x = rng.normal();
  round_through(DType::f16, kv.k.data(), kv.k.size());
  round_through(DType::f16, kv.v.data(), kv.v.size());
  return kv;
}

TEST(Mechanisms, StreamAttentionEqualsDecodeAttention) {
  const AttentionShape shape{8, 2, 64, DType::f16};
  auto acc = cpu_accel();
  PageArena arena(host_allocator(), 16 * 64 * 2);
  std::vector<std::unique_ptr<PagedKvCache>> caches;
  std::vector<DenseKv> src;
  for (int b = 0; b < 3; ++b) {
    src.push_back(random_kv(300 + 157 * b, 2, 64, 7 + b));
    caches.push_back(std::make_unique<PagedKvCache>(shape, 16));
    caches.back()->append(src.back(), 0, src.back().tokens, arena, arena);
  }
  Rng rng(1, 2, 3);
  std::vector<float> q(3 * 8 * 64);
  for (auto& x : q) x = rng.normal();
  for (int64_t chunk : {16, 48, 128, 4096}) {
    for (int ranged = 0; ranged < 2; ++ranged) {
      SCOPED_TRACE("chunk " + std::to_string(chunk) + (ranged ? " ranged" : ""));
      std::vector<float> o1(3 * 8 * 64), l1(3 * 8), o2(o1.size()), l2(l1.size());
      std::vector<float> g1(3 * 8 * 700, 0.0f), g2(g1.size(), 0.0f);  // logits, stride 700
      std::vector<DecodeAttentionArgs> a(3);
      for (int b = 0; b < 3; ++b) {
        a[b].q = q.data() + b * 8 * 64;
        a[b].kv = caches[b]->view();
        a[b].q_heads = 8;
        if (ranged) {
          a[b].token_begin = 37;
          a[b].token_end = 250 + 100 * b;
        }
        a[b].o = o1.data() + b * 8 * 64;
        a[b].lse = l1.data() + b * 8;
        a[b].logits_out = g1.data() + b * 8 * 700;
        a[b].logits_stride = 700;
      }
      ThreadPool pool(1);
      cpu::decode_attention(a.data(), 3, pool);
      for (int b = 0; b < 3; ++b) {
        a[b].o = o2.data() + b * 8 * 64;
        a[b].lse = l2.data() + b * 8;
        a[b].logits_out = g2.data() + b * 8 * 700;
      }
      acc->enqueue(StreamAttentionArgs{a.data(), 3, chunk});
      acc->synchronize();
      for (size_t i = 0; i < o1.size(); ++i) ASSERT_NEAR(o1[i], o2[i], 1e-5);
      for (size_t i = 0; i < l1.size(); ++i) ASSERT_NEAR(l1[i], l2[i], 1e-4);
      for (size_t i = 0; i < g1.size(); ++i) ASSERT_NEAR(g1[i], g2[i], 1e-4) << i;
    }
  }
  // The chunk buffers count against the accelerator's capacity.
  EXPECT_GT(acc->bytes_in_use(), 0);
}

TEST(Mechanisms, HostKernelsRunInQueueOrderAndReportErrorsAtSynchronize) {
  auto acc = cpu_accel();
  ASSERT_TRUE(acc->supports(OpKind::host_kernel));
  std::vector<int> order;
  acc->enqueue(HostKernelArgs{[&](ThreadPool&) { order.push_back(1); }});
  acc->enqueue(HostKernelArgs{[&](ThreadPool& pool) {
    EXPECT_GE(pool.size(), 1);
    order.push_back(2);
  }});
  acc->synchronize();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  acc->enqueue(HostKernelArgs{[](ThreadPool&) { throw Error("boom"); }});
  EXPECT_THROW(acc->synchronize(), Error);
  acc->synchronize();  // the error is reported once
}

TEST(Mechanisms, PageBoundsAreUpperBoundsOfEveryKeyInThePage) {
  const AttentionShape shape{4, 2, 32, DType::f16};
  PageArena arena(host_allocator(), 16 * 32 * 2);
  PagedKvCache cache(shape, 16);
  const DenseKv kv = random_kv(101, 2, 32, 5);
  cache.append(kv, 0, 101, arena, arena);
  const int64_t pages = 7;
  // Center and radius planes, K-block layout with 16 page slots per block (one block here).
  std::vector<std::byte> cb(2 * 16 * 32 * 2), rb(cb.size());
  std::vector<PageRef> ct{{cb.data(), nullptr}, {cb.data() + 1024, nullptr}};
  std::vector<PageRef> rt{{rb.data(), nullptr}, {rb.data() + 1024, nullptr}};
  std::vector<float> lo(32), hi(32), ilo(32), ihi(32);
  for (int h = 0; h < 2; ++h)
    for (int64_t p = 0; p < pages; ++p) {
      cpu::page_box(cache.view(), h, p, lo.data(), hi.data());
      // Folding the page's keys one by one gives the same box.
      for (int64_t t = p * 16; t < std::min<int64_t>(101, p * 16 + 16); ++t)
        cpu::page_box_add(kv.k_row(t, h), 32, t == p * 16, ilo.data(), ihi.data());
      EXPECT_EQ(lo, ilo);
      EXPECT_EQ(hi, ihi);
      cpu::write_page_bound(lo.data(), hi.data(), 32, 16, DType::f16, static_cast<int>(p), ct[h].k,
                            rt[h].k);
    }
  Rng rng(9, 9, 9);
  std::vector<float> q(4 * 32), qa(q.size());
  for (auto& x : q) x = rng.normal();
  cpu::abs_query(q.data(), q.size(), qa.data());
  std::vector<KvHeadView> chv{{&ct[0], pages}, {&ct[1], pages}},
      rhv{{&rt[0], pages}, {&rt[1], pages}};
  std::vector<float> s1(4 * pages), s2(4 * pages);
  ThreadPool pool(1);
  cpu::score_logits(q.data(), 4, PagedKvView{2, 32, 16, DType::f16, chv.data()}, 0, pages, 1.0f,
                    s1.data(), pages, pool);
  cpu::score_logits(qa.data(), 4, PagedKvView{2, 32, 16, DType::f16, rhv.data()}, 0, pages, 1.0f,
                    s2.data(), pages, pool);
  for (int qh = 0; qh < 4; ++qh) {
    const int h = qh / 2;
    for (int64_t p = 0; p < pages; ++p) {
      const float u = s1[qh * pages + p] + s2[qh * pages + p];
      cpu::page_box(cache.view(), h, p, lo.data(), hi.data());
      float want = 0, best = -INFINITY;
      for (int j = 0; j < 32; ++j) want += std::max(q[qh * 32 + j] * hi[j], q[qh * 32 + j] * lo[j]);
      for (int64_t t = p * 16; t < std::min<int64_t>(101, p * 16 + 16); ++t) {
        float dot = 0;
        for (int j = 0; j < 32; ++j) dot += q[qh * 32 + j] * kv.k_row(t, h)[j];
        best = std::max(best, dot);
      }
      EXPECT_NEAR(u, want, 2e-2);  // center/radius rounded to fp16
      EXPECT_GE(u, best - 2e-2);
    }
  }
}

TEST(Mechanisms, SymmetricEigenReconstructs) {
  const int n = 24;
  Rng rng(3, 1, 4);
  std::vector<double> x(40 * n), a(n * n, 0.0);
  for (auto& v : x) v = rng.normal();
  for (int r = 0; r < 40; ++r)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) a[i * n + j] += x[r * n + i] * x[r * n + j];
  std::vector<double> values, vecs;
  cpu::symmetric_eigen(n, a, values, vecs);
  for (int k = 1; k < n; ++k) EXPECT_GE(values[k - 1], values[k]);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0, dot = 0;
      for (int k = 0; k < n; ++k) {
        s += vecs[i * n + k] * values[k] * vecs[j * n + k];
        dot += vecs[k * n + i] * vecs[k * n + j];
      }
      EXPECT_NEAR(s, a[i * n + j], 1e-8 * (1 + std::fabs(a[i * n + j])));
      EXPECT_NEAR(dot, i == j ? 1.0 : 0.0, 1e-10);
    }
}

TEST(Mechanisms, TokenSelectionPieces) {
  // Probabilities: two query heads share KV head 0; logits - lse give probabilities.
  const float logits[2][3] = {{0.0f, std::log(3.0f), -INFINITY},
                              {std::log(2.0f), std::log(2.0f), 0.0f}};
  const float lse[2] = {std::log(4.0f), std::log(5.0f)};
  std::vector<float> scores(3, 1.0f);
  cpu::accumulate_probabilities(&logits[0][0], 3, lse, 2, 1, 3, scores.data(), 3);
  EXPECT_NEAR(scores[0], 1 + 0.25 + 0.4, 1e-6);
  EXPECT_NEAR(scores[1], 1 + 0.75 + 0.4, 1e-6);
  EXPECT_NEAR(scores[2], 1 + 0.0 + 0.2, 1e-6);
  const float v[5] = {3, 1, 1, 0, 2};
  const int64_t tags[5] = {0, 10, 11, 90, 3};
  EXPECT_EQ(cpu::argmin_tagged(v, tags, 5, 50), 1);  // 3 (tag 90) is excluded; tie -> lower index
  EXPECT_EQ(cpu::argmin_tagged(v, tags, 5, 0), -1);
  EXPECT_EQ(cpu::count_within(v, 5, 1.5f), 2);  // 3 and 2
  EXPECT_EQ(cpu::count_within(v, 5, 0.0f), 1);  // the maximum itself
  const float rows[4][2] = {{1, 5}, {2, 0}, {-1, -2}, {-3, 7}};
  float out[2][2];
  cpu::group_max_rows(&rows[0][0], 4, 2, 2, 2, &out[0][0], 2);
  EXPECT_EQ(out[0][0], 2);
  EXPECT_EQ(out[0][1], 5);
  EXPECT_EQ(out[1][0], -1);
  EXPECT_EQ(out[1][1], 7);
}

TEST(Mechanisms, RowsToPagesMatchesThePagedLayout) {
  const AttentionShape shape{2, 1, 32, DType::f16};
  const DenseKv kv = random_kv(21, 1, 32, 11);
  PageArena arena(host_allocator(), 16 * 32 * 2);
  PagedKvCache cache(shape, 16);
  cache.append(kv, 0, 20, arena, arena);
  cache.append_token(kv.k_row(20, 0), kv.v_row(20, 0), arena, arena);
  std::vector<uint16_t> krows(20 * 32), vrows(20 * 32);
  for (int t = 0; t < 20; ++t) {
    convert_from_fp32(DType::f16, kv.k_row(t, 0), krows.data() + t * 32, 32);
    convert_from_fp32(DType::f16, kv.v_row(t, 0), vrows.data() + t * 32, 32);
  }
  std::vector<std::byte> kb(2 * 1024, std::byte{0x7f}), vb(2 * 1024, std::byte{0x7f});
  cpu::rows_to_pages(krows.data(), vrows.data(), 20, 32, 16, DType::f16, kb.data(), vb.data());
  cpu::write_row_to_pages(kv.k_row(20, 0), kv.v_row(20, 0), 20, 32, 16, DType::f16, kb.data(),
                          vb.data());
  for (int p = 0; p < 2; ++p) {
    EXPECT_EQ(std::memcmp(kb.data() + p * 1024, cache.page(0, p).k, 1024), 0) << p;
    EXPECT_EQ(std::memcmp(vb.data() + p * 1024, cache.page(0, p).v, 1024), 0) << p;
  }
}

}  // namespace
}  // namespace hb
