// The accelerator's ops and backends, listed from their registries (core/accelerator_ops.h,
// kernels/backend.h), so one added without registering is caught: the lists are the ones a
// reviewer expects; every backend-independent path handles every op (the cpu accelerator runs
// them all, AcceleratorShare forwards each op and its support, an accelerator without an op
// falls back or names it); every kind but auto has exactly one backend, with its capabilities.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "bench/accelerator_share.h"
#include "core/accelerator.h"
#include "core/error.h"
#include "kernels/backend.h"

namespace hb {
namespace {

// A default-made op of each kind, in kind order.
template <size_t... I>
std::vector<AcceleratorOp> one_of_each(std::index_sequence<I...>) {
  return {AcceleratorOp(std::in_place_index<I>)...};
}
std::vector<AcceleratorOp> one_of_each() {
  return one_of_each(std::make_index_sequence<std::variant_size_v<AcceleratorOp>>());
}

// Supports nothing: every op goes to the base class's fallback. Does nothing itself but record
// the batches it attends.
class Bare : public Accelerator {
 public:
  AcceleratorInfo info_{AcceleratorKind::cpu, "bare", true, 0, 0, -1, ""};
  std::vector<int> attended;
  const AcceleratorInfo& info() const override { return info_; }
  std::shared_ptr<BufferAllocator> memory() override { return nullptr; }
  int64_t bytes_in_use() const override { return 0; }
  std::shared_ptr<BufferAllocator> staging_memory(int) override { return nullptr; }
  void copy_to_device(void*, const void*, size_t) override {}
  void copy_to_host(void*, const void*, size_t) override {}
  void decode_attention(const DecodeAttentionArgs*, int batch) override {
    attended.push_back(batch);
  }
  void score_logits(const float*, int, const PagedKvView&, int64_t, int64_t, float, float*,
                    int64_t) override {}
  void logit_merge_attention(const LogitMergeArgs&) override {}
  void merge_partials(int, const float* const*, const float* const*, int, int, float*,
                      float*) override {}
  int64_t synchronize() override { return 0; }
};

// Supports the ops whose kind index is odd; records every op that reaches it.
class Tap final : public Bare {
 public:
  std::vector<std::string> log;
  bool supports(OpKind op) const override { return static_cast<int>(op) % 2 == 1; }
  void enqueue(const AcceleratorOp& op) override {
    log.push_back(kAcceleratorOps.name(op_kind(op)));
  }
};

TEST(AcceleratorOps, TheRegistryListsEachOpOnceInVariantOrder) {
  const std::vector<std::string> expected = {
      "heavy_hitter_update", "fold_page_bounds", "score_page_bounds",
      "topk_rows",           "group_max_rows",   "project_rows",
      "rows_to_pages",       "stream_attention", "host_kernel"};
  std::vector<std::string> listed(kAcceleratorOps.names.begin(), kAcceleratorOps.names.end());
  EXPECT_EQ(listed, expected) << "a new op: add it here, to the backends and to README";
  const auto ops = one_of_each();
  ASSERT_EQ(ops.size(), expected.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(op_kind(ops[i])), i);
    EXPECT_TRUE(kAcceleratorOps.parse(expected[i]) == op_kind(ops[i])) << expected[i];
  }
  EXPECT_TRUE(std::holds_alternative<StreamAttentionArgs>(ops[int(OpKind::stream_attention)]));
  EXPECT_TRUE(std::holds_alternative<HostKernelArgs>(ops[int(OpKind::host_kernel)]));
  EXPECT_TRUE(std::holds_alternative<HeavyHitterArgs>(ops[int(OpKind::heavy_hitter_update)]));
}

TEST(AcceleratorOps, TheCpuAcceleratorSupportsEveryOp) {
  AcceleratorOptions o;
  o.kind = AcceleratorKind::cpu;
  o.cpu_threads = 1;
  const auto acc = make_accelerator(o);
  for (const AcceleratorOp& op : one_of_each())
    EXPECT_TRUE(acc->supports(op_kind(op))) << kAcceleratorOps.name(op_kind(op));
}

TEST(AcceleratorOps, TheShareForwardsEveryOpAndWhetherItIsSupported) {
  Tap real;
  bench::AcceleratorShare share(real, 100, std::make_shared<bench::BusyCarry>());
  std::vector<std::string> all;
  for (const AcceleratorOp& op : one_of_each()) {
    const OpKind k = op_kind(op);
    EXPECT_EQ(share.supports(k), real.supports(k)) << kAcceleratorOps.name(k);
    share.enqueue(op);
    all.push_back(kAcceleratorOps.name(k));
  }
  EXPECT_EQ(real.log, all) << "every op reaches the real accelerator, in order";
}

TEST(AcceleratorOps, AnUnsupportedOpRunsItsFallbackOrNamesItself) {
  Bare acc;
  for (const AcceleratorOp& op : one_of_each()) EXPECT_FALSE(acc.supports(op_kind(op)));
  DecodeAttentionArgs seqs[3];
  acc.enqueue(StreamAttentionArgs{seqs, 3, 64});
  EXPECT_EQ(acc.attended, std::vector<int>{3}) << "streamed attention reads the pages in place";
  for (const AcceleratorOp& op : one_of_each()) {
    if (op_kind(op) == OpKind::stream_attention) continue;
    try {
      acc.enqueue(op);
      ADD_FAILURE() << kAcceleratorOps.name(op_kind(op)) << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(e.problem().find(kAcceleratorOps.name(op_kind(op))), std::string::npos)
          << e.problem();
      EXPECT_NE(e.problem().find("bare"), std::string::npos) << e.problem();
    }
  }
}

TEST(AcceleratorBackends, TheRegistryListsOneBackendPerKindInAutoOrder) {
  std::vector<std::string> listed;
  for (const Backend& b : backends()) listed.push_back(b.name());
  EXPECT_EQ(listed, (std::vector<std::string>{"cuda", "cpu"}))
      << "a new backend: add it here, to kAcceleratorKinds and to backends()";
  for (size_t i = 0; i < kAcceleratorKinds.names.size(); ++i) {
    const auto kind = static_cast<AcceleratorKind>(i);
    if (kind == AcceleratorKind::auto_select) continue;
    int found = 0;
    for (const Backend& b : backends()) found += b.kind == kind;
    EXPECT_EQ(found, 1) << kAcceleratorKinds.name(kind) << " has no line in backends()";
    EXPECT_EQ(backend(kind).kind, kind);
  }
  for (const Backend& b : backends()) {
    EXPECT_TRUE(b.usable && b.make && b.numa_nodes) << b.name();
    EXPECT_FALSE(std::string(b.device).empty()) << b.name();
  }
}

TEST(AcceleratorBackends, TheCpuBackendIsEmulatedAlwaysUsableAndHasNoDevicesOfItsOwn) {
  const Backend& b = backend(AcceleratorKind::cpu);
  EXPECT_TRUE(b.emulated);
  EXPECT_TRUE(b.usable(0, nullptr));
  EXPECT_TRUE(b.numa_nodes().empty());
  EXPECT_TRUE(b.link_probe == nullptr);
  EXPECT_EQ(b.layer_workspace_bytes, 0) << "its GEMV takes no workspace";
  AcceleratorOptions o;
  o.kind = AcceleratorKind::cpu;
  o.cpu_threads = 1;
  const auto acc = b.make(o);
  EXPECT_EQ(acc->info().kind, AcceleratorKind::cpu);
  EXPECT_TRUE(acc->info().emulated) << "the capability and the made accelerator agree";
}

TEST(AcceleratorBackends, TheCudaBackendIsARealDeviceWithAGemmWorkspace) {
  const Backend& b = backend(AcceleratorKind::cuda);
  EXPECT_FALSE(b.emulated);
  EXPECT_EQ(b.layer_workspace_bytes, kLayerWorkspaceBytes) << "cuBLAS's workspace";
  EXPECT_TRUE(b.link_probe != nullptr);
  std::string why;
  if (b.usable(0, &why)) GTEST_SKIP() << "a GPU is usable: the refusal is not testable here";
  EXPECT_FALSE(why.empty()) << "an unusable backend says why";
  AcceleratorOptions o;
  o.kind = AcceleratorKind::auto_select;
  EXPECT_EQ(&backend(o.kind), &backend(AcceleratorKind::cpu)) << "auto: the first usable";
  o.kind = AcceleratorKind::cuda;
  try {
    make_accelerator(o);
    ADD_FAILURE() << "cuda was made without a GPU";
  } catch (const Error& e) {
    EXPECT_NE(e.problem().find("no GPU is usable: " + why), std::string::npos) << e.problem();
  }
}

}  // namespace
}  // namespace hb
