// cuBLAS layer GEMMs: the projection is x . W in the row-major convention the class
// documents, the whole layer runs at a preset's dims, and weights count against the budget.
#include "tests/kernels/cuda_test_util.h"

#ifdef HB_WITH_CUDA
#include <cmath>

#include "core/error.h"
#include "core/model_presets.h"
#include "kernels/cuda/cublas_loader.h"
#include "kernels/cuda/layer_gemms.h"

namespace hb {
namespace {

// cuBLAS is opened at run time, not linked: it must be found where the build found it (no GPU
// needed to load it), and the binary must not need it to start (tests/vm load its libraries).
TEST(CublasLoader, OpensTheCublasTheBuildCompiledAgainst) {
  const cuda::CublasApi& api = cuda::cublas_api();
  EXPECT_NE(api.create, nullptr);
  EXPECT_NE(api.destroy, nullptr);
  EXPECT_NE(api.set_stream, nullptr);
  EXPECT_NE(api.set_workspace, nullptr);
  EXPECT_NE(api.gemm_ex, nullptr);
}

TEST(CudaLayerGemms, QkvProjectionIsXTimesW) {
  HB_REQUIRE_GPU_OR_SKIP();
  auto& acc = test::gpu();
  const ModelPreset& m = find_model_preset("qwen2.5-0.5b");
  const int batch = 3;
  cuda::LayerGemms layer(acc, m, 4);
  layer.enqueue_qkv(batch);
  acc.synchronize();
  const auto x = layer.read_back("x"), w = layer.read_back("w_qkv"), y = layer.read_back("qkv");
  const int64_t in = m.hidden,
                out = int64_t{m.shape.q_heads + 2 * m.shape.kv_heads} * m.shape.head_dim;
  ASSERT_EQ(static_cast<int64_t>(w.size()), in * out);
  for (int b = 0; b < batch; ++b)
    for (int64_t o = 0; o < out; o += 7) {
      double want = 0;
      for (int64_t i = 0; i < in; ++i) want += double(x[b * in + i]) * w[i * out + o];
      // fp16 output rounding (2^-11 relative) plus fp32 accumulation.
      ASSERT_NEAR(y[b * out + o], want, 2e-3 + 1e-3 * std::abs(want))
          << "row " << b << " col " << o;
    }
}

TEST(CudaLayerGemms, WholeLayerRunsAtPresetDimsAndIsTimed) {
  HB_REQUIRE_GPU_OR_SKIP();
  auto& acc = test::gpu();
  const ModelPreset& m = find_model_preset("llama-3.1-8b");
  cuda::LayerGemms layer(acc, m, 16);
  EXPECT_EQ(layer.weight_bytes(),
            int64_t{2} * (4096LL * 6144 + 4096LL * 4096 + 4096LL * 2 * 14336 + 14336LL * 4096));
  acc.synchronize();
  for (int batch : {1, 16}) layer.enqueue_all(batch);
  EXPECT_GT(acc.synchronize(), 0);
  for (float v : layer.read_back("x")) ASSERT_TRUE(std::isfinite(v));
}

// Issue 16: cuBLAS's workspace comes from the accelerator's memory, so it is in bytes_in_use
// (and within layer_work_bytes, what the runner reserves for a layer).
TEST(CudaLayerGemms, CublasWorkspaceIsCounted) {
  HB_REQUIRE_GPU_OR_SKIP();
  auto acc = cuda::make_cuda_device(0, int64_t{1} << 30);
  const ModelPreset& m = find_model_preset("qwen2.5-0.5b");
  const int64_t before = acc->bytes_in_use();
  {
    cuda::LayerGemms layer(*acc, m, 4);
    layer.enqueue_all(4);
    acc->synchronize();
    const int64_t used = acc->bytes_in_use() - before;
    EXPECT_GE(used, layer.weight_bytes() + kLayerWorkspaceBytes);
    EXPECT_LE(layer.weight_bytes() + kLayerWorkspaceBytes,
              layer_work_bytes(m, 4) + backend(AcceleratorKind::cuda).layer_workspace_bytes);
  }
}

TEST(CudaLayerGemms, WeightsCountAgainstTheCapacityBudget) {
  HB_REQUIRE_GPU_OR_SKIP();
  auto small = cuda::make_cuda_device(0, 64 << 20);
  const ModelPreset& m = find_model_preset("llama-3.1-8b");  // ~436 MiB of weights per layer
  try {
    cuda::LayerGemms layer(*small, m, 1);
    FAIL() << "expected a capacity error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("capacity"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hb
#else
TEST(CudaLayerGemms, SkippedWithoutCuda) {
  GTEST_SKIP() << "built without CUDA (HYBRIDBENCH_CUDA=OFF)";
}
#endif
