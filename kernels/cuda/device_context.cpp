#include "kernels/cuda/device_context.h"

#include <cstdint>
#include <string>

#include "core/error.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch_plan.h"

namespace hb::cuda {

DeviceContext::DeviceContext(int dev) : device(dev), info(query_device_info(dev)) {
  activate();
  // Blocking streams (not cudaStreamNonBlocking): legacy-default-stream work by other code in
  // the process (e.g. a library's synchronous cudaMemcpy) stays ordered with ours.
  HB_CUDA_CHECK(cudaStreamCreate(&stream), "accelerator queue on device " + std::to_string(dev));
  HB_CUDA_CHECK(cudaStreamCreate(&copy_stream), "copy stream on device " + std::to_string(dev));
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;  // device memory, not managed
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = dev;
  HB_CUDA_CHECK(cudaMemPoolCreate(&scratch_pool, &props),
                "scratch pool on device " + std::to_string(dev));
  // Keep freed scratch in the pool: per-step descriptors and partials are reused, not
  // returned to the driver at every synchronisation.
  uint64_t keep = UINT64_MAX;
  HB_CUDA_CHECK(cudaMemPoolSetAttribute(scratch_pool, cudaMemPoolAttrReleaseThreshold, &keep),
                "scratch pool release threshold");
}

DeviceContext::~DeviceContext() {
  cudaSetDevice(device);
  if (stream) cudaStreamSynchronize(stream);
  if (copy_stream) cudaStreamSynchronize(copy_stream);
  if (scratch_pool) cudaMemPoolDestroy(scratch_pool);
  if (copy_stream) cudaStreamDestroy(copy_stream);
  if (stream) cudaStreamDestroy(stream);
  cudaGetLastError();  // nothing to report from a destructor
}

void DeviceContext::activate() const {
  int cur = -1;
  if (cudaGetDevice(&cur) != cudaSuccess || cur != device)
    HB_CUDA_CHECK(cudaSetDevice(device), "selecting device " + std::to_string(device));
}

namespace {
int64_t pool_attr(cudaMemPool_t pool, cudaMemPoolAttr a) {
  uint64_t v = 0;
  if (!pool || cudaMemPoolGetAttribute(pool, a, &v) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return static_cast<int64_t>(v);
}
}  // namespace

int64_t DeviceContext::scratch_reserved() const {
  return pool_attr(scratch_pool, cudaMemPoolAttrReservedMemCurrent);
}

void DeviceContext::check_scratch(size_t bytes, const char* what) const {
  const int64_t reserved = scratch_reserved(), used = budget_used.load();
  if (scratch_fits(used, reserved, pool_attr(scratch_pool, cudaMemPoolAttrUsedMemCurrent),
                   static_cast<int64_t>(bytes), capacity))
    return;
  throw CapacityError(std::string(what) + ": " + std::to_string(bytes) +
                          " bytes of scratch do not fit the accelerator capacity of " +
                          std::to_string(capacity) + " bytes (" + std::to_string(used) +
                          " in buffers, " + std::to_string(reserved) + " in scratch)",
                      "raise --accelerator-memory, or use a strategy that keeps KV in host memory",
                      kExitFailure);
}

Scratch::Scratch(const DeviceContext& ctx, size_t bytes, const char* what) : stream_(ctx.stream) {
  if (bytes == 0) return;
  ctx.check_scratch(bytes, what);
  HB_CUDA_CHECK(cudaMallocFromPoolAsync(&p_, bytes, ctx.scratch_pool, stream_),
                std::string(what) + ", " + std::to_string(bytes) + " bytes of scratch");
}

Scratch::~Scratch() {
  if (p_) cudaFreeAsync(p_, stream_);
}

Scratch& Scratch::operator=(Scratch&& o) noexcept {
  if (this != &o) {
    if (p_) cudaFreeAsync(p_, stream_);
    p_ = o.p_;
    stream_ = o.stream_;
    o.p_ = nullptr;
  }
  return *this;
}

}  // namespace hb::cuda
