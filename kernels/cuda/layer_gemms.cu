#include "kernels/cuda/layer_gemms.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "core/layer_work.h"
#include "kernels/cuda/cublas_loader.h"
#include "kernels/cuda/cuda_check.h"

namespace hb::cuda {

namespace {

bool gated(const ModelPreset& m) { return layer_dims(m).gated; }

// Widths of the layer's GEMMs: in -> out.
struct Dims {
  int64_t hidden, qkv, attn, ffn, up;  // up = 2 * ffn when gated (gate and up fused)
};
Dims dims_of(const ModelPreset& m) {
  const LayerDims l = layer_dims(m);
  return Dims{l.hidden, l.qkv_out, l.attn_out, l.ffn, l.gated ? 2 * int64_t{l.ffn} : l.ffn};
}
int64_t params_of(const ModelPreset& m) { return layer_dims(m).weight_elements(); }

// Counter-based uniform values in [-scale, scale]: reproducible, no RNG state to carry.
__global__ void fill_uniform(__half* p, int64_t n, uint64_t seed, float scale) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    uint64_t z = seed + 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(i + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    const float u = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);  // [0, 1)
    p[i] = __float2half((2.0f * u - 1.0f) * scale);
  }
}

// Gated: a[b][f] = silu(h[b][f]) * h[b][ffn + f] (gate and up side by side); plain: relu.
__global__ void ffn_activation(const __half* h, __half* a, int64_t batch, int64_t ffn,
                               int is_gated) {
  const int64_t n = batch * ffn;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t b = i / ffn, f = i - b * ffn;
    if (is_gated) {
      const float g = __half2float(h[b * 2 * ffn + f]), u = __half2float(h[b * 2 * ffn + ffn + f]);
      a[i] = __float2half(g / (1.0f + __expf(-g)) * u);
    } else {
      a[i] = __float2half(fmaxf(__half2float(h[i]), 0.0f));
    }
  }
}

const char* cublas_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    default:
      return "cuBLAS error";
  }
}

void check_cublas(cublasStatus_t s, const char* call, const std::string& what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("cuBLAS error in ") + call + " (" + what + "): " + cublas_name(s),
                "check the GPU with nvidia-smi", kExitFailure);
}

}  // namespace

struct LayerGemms::Impl {
  CudaAccelerator& acc;
  ModelPreset model;
  Dims d;
  int max_batch;
  cublasHandle_t handle = nullptr;
  Buffer w_qkv, w_o, w_up, w_down;  // row-major [in][out]
  Buffer x, qkv, attn, y, h, a;     // activations [max_batch][width]
  Buffer workspace;                 // cuBLAS's, from the accelerator's memory so it is counted

  Impl(CudaAccelerator& ac, const ModelPreset& m, int mb)
      : acc(ac), model(m), d(dims_of(m)), max_batch(mb) {}
  ~Impl() {
    if (handle) cublas_api().destroy(handle);
  }

  Buffer alloc_random(int64_t n, float scale, uint64_t seed, cudaStream_t s) {
    Buffer b = acc.memory()->allocate(static_cast<size_t>(n) * sizeof(__half));
    fill_uniform<<<1024, 256, 0, s>>>(b.as<__half>(), n, seed, scale);
    HB_CUDA_CHECK_LAUNCH("layer weight init", std::to_string(n) + " values");
    return b;
  }

  // out[batch][n_out] = in[batch][n_in] . W[n_in][n_out]. Row-major operands are column-major
  // transposes, so cuBLAS computes out^T = W^T in^T with no explicit transposes.
  void gemm(const Buffer& w, const Buffer& in, Buffer& out, int64_t n_in, int64_t n_out, int batch,
            const char* what) {
    const float one = 1.0f, zero = 0.0f;
    check_cublas(cublas_api().gemm_ex(
                     handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n_out), batch,
                     static_cast<int>(n_in), &one, w.data(), CUDA_R_16F, static_cast<int>(n_out),
                     in.data(), CUDA_R_16F, static_cast<int>(n_in), &zero, out.data(), CUDA_R_16F,
                     static_cast<int>(n_out), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx",
                 std::string(what) + " " + std::to_string(batch) + "x" + std::to_string(n_in) +
                     " . " + std::to_string(n_in) + "x" + std::to_string(n_out));
  }
};

LayerGemms::LayerGemms(CudaAccelerator& acc, const ModelPreset& model, int max_batch, uint64_t seed)
    : impl_(std::make_unique<Impl>(acc, model, max_batch)) {
  Impl& m = *impl_;
  if (max_batch <= 0) throw Error("LayerGemms: max_batch must be positive", {}, kExitUsage);
  acc.run_on_queue("hb.cuda.layer_init", [&](void* stream) {
    auto s = static_cast<cudaStream_t>(stream);
    check_cublas(cublas_api().create(&m.handle), "cublasCreate", model.name);
    check_cublas(cublas_api().set_stream(m.handle, s), "cublasSetStream", model.name);
    // Given, not left to cuBLAS's own cudaMalloc, so it counts against the capacity budget.
    m.workspace = acc.memory()->allocate(static_cast<size_t>(kLayerWorkspaceBytes));
    check_cublas(cublas_api().set_workspace(m.handle, m.workspace.data(),
                                            static_cast<size_t>(kLayerWorkspaceBytes)),
                 "cublasSetWorkspace", model.name);
    const Dims& d = m.d;
    // Weights ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)) keep activations O(1) through the layer.
    auto sc = [](int64_t fan_in) { return 1.0f / std::sqrt(static_cast<float>(fan_in)); };
    m.w_qkv = m.alloc_random(d.hidden * d.qkv, sc(d.hidden), seed + 1, s);
    m.w_o = m.alloc_random(d.attn * d.hidden, sc(d.attn), seed + 2, s);
    m.w_up = m.alloc_random(d.hidden * d.up, sc(d.hidden), seed + 3, s);
    m.w_down = m.alloc_random(d.ffn * d.hidden, sc(d.ffn), seed + 4, s);
    const int64_t B = max_batch;
    m.x = m.alloc_random(B * d.hidden, 1.0f, seed + 5, s);
    m.qkv = m.alloc_random(B * d.qkv, 1.0f, seed + 6, s);
    m.attn = m.alloc_random(B * d.attn, 1.0f, seed + 7, s);
    m.y = m.alloc_random(B * d.hidden, 1.0f, seed + 8, s);
    m.h = m.alloc_random(B * d.up, 1.0f, seed + 9, s);
    m.a = m.alloc_random(B * d.ffn, 1.0f, seed + 10, s);
  });
}

LayerGemms::~LayerGemms() = default;

namespace {
void check_batch(int batch, int max_batch) {
  if (batch <= 0 || batch > max_batch)
    throw Error("LayerGemms: batch " + std::to_string(batch) + " outside [1, " +
                    std::to_string(max_batch) + "]",
                {}, kExitUsage);
}
}  // namespace

void LayerGemms::enqueue_qkv(int batch) {
  Impl& m = *impl_;
  check_batch(batch, m.max_batch);
  m.acc.run_on_queue("hb.cuda.layer_qkv", [&](void*) {
    m.gemm(m.w_qkv, m.x, m.qkv, m.d.hidden, m.d.qkv, batch, "qkv");
  });
}

void LayerGemms::enqueue_out_proj(int batch) {
  Impl& m = *impl_;
  check_batch(batch, m.max_batch);
  m.acc.run_on_queue("hb.cuda.layer_out_proj", [&](void*) {
    m.gemm(m.w_o, m.attn, m.y, m.d.attn, m.d.hidden, batch, "out_proj");
  });
}

void LayerGemms::enqueue_ffn(int batch) {
  Impl& m = *impl_;
  check_batch(batch, m.max_batch);
  m.acc.run_on_queue("hb.cuda.layer_ffn", [&](void* stream) {
    m.gemm(m.w_up, m.y, m.h, m.d.hidden, m.d.up, batch, "ffn_up");
    const int64_t n = int64_t{batch} * m.d.ffn;
    const int blocks = static_cast<int>(std::min<int64_t>((n + 255) / 256, 4096));
    ffn_activation<<<blocks, 256, 0, static_cast<cudaStream_t>(stream)>>>(
        m.h.as<__half>(), m.a.as<__half>(), batch, m.d.ffn, gated(m.model) ? 1 : 0);
    HB_CUDA_CHECK_LAUNCH("ffn activation", std::to_string(batch) + "x" + std::to_string(m.d.ffn));
    m.gemm(m.w_down, m.a, m.x, m.d.ffn, m.d.hidden, batch, "ffn_down");
  });
}

void LayerGemms::enqueue_all(int batch) {
  enqueue_qkv(batch);
  enqueue_out_proj(batch);
  enqueue_ffn(batch);
}

std::vector<float> LayerGemms::read_back(const std::string& name) const {
  const Impl& m = *impl_;
  const std::pair<const char*, const Buffer*> named[] = {
      {"w_qkv", &m.w_qkv}, {"w_o", &m.w_o}, {"w_up", &m.w_up}, {"w_down", &m.w_down},
      {"x", &m.x},         {"qkv", &m.qkv}, {"attn", &m.attn}, {"y", &m.y},
      {"h", &m.h},         {"a", &m.a}};
  for (const auto& [n, buf] : named) {
    if (name != n) continue;
    const size_t count = buf->size() / sizeof(__half);
    std::vector<uint16_t> raw(count);
    m.acc.memory()->copy_out(raw.data(), buf->data(), buf->size());
    std::vector<float> out(count);
    convert_to_fp32(DType::f16, raw.data(), out.data(), count);
    return out;
  }
  throw Error("LayerGemms::read_back: no buffer named '" + name + "'", {}, kExitUsage);
}

int64_t LayerGemms::weight_bytes() const { return weight_bytes(impl_->model); }
int64_t LayerGemms::weight_bytes(const ModelPreset& model) { return layer_weight_bytes(model); }
double LayerGemms::flops(const ModelPreset& model, int batch) {
  return 2.0 * static_cast<double>(params_of(model)) * batch;
}

namespace {

// LayerGemms behind the accelerator-neutral interface the runner's layer scope uses.
class CudaLayerWork final : public LayerWork {
 public:
  CudaLayerWork(CudaAccelerator& acc, const ModelPreset& model, int max_batch, int layer)
      : gemms_(acc, model, max_batch, layer_weight_seed(layer)), max_batch_(max_batch) {}
  void enqueue_qkv(int batch) override { gemms_.enqueue_qkv(batch); }
  void enqueue_out_proj(int batch) override { gemms_.enqueue_out_proj(batch); }
  void enqueue_ffn(int batch) override { gemms_.enqueue_ffn(batch); }
  int64_t weight_bytes() const override { return gemms_.weight_bytes(); }
  int max_batch() const override { return max_batch_; }

 private:
  LayerGemms gemms_;
  int max_batch_;
};

}  // namespace

std::unique_ptr<LayerWork> CudaAccelerator::make_layer_work(const ModelPreset& model, int max_batch,
                                                            int layer) {
  return std::make_unique<CudaLayerWork>(*this, model, max_batch, layer);
}

}  // namespace hb::cuda
