#include "kernels/cuda/device_memory.h"

#include <mutex>
#include <string>

#include "core/error.h"
#include "kernels/cuda/cuda_check.h"

namespace hb::cuda {

namespace {

std::string mib(int64_t b) { return std::to_string((b + (1 << 20) - 1) >> 20) + " MiB"; }

class DeviceAllocator final : public BufferAllocator {
 public:
  DeviceAllocator(std::shared_ptr<DeviceContext> ctx, int64_t capacity)
      : ctx_(std::move(ctx)), capacity_(capacity) {}

  Buffer allocate(size_t bytes) override {
    if (bytes == 0) return Buffer();
    const int64_t b = static_cast<int64_t>(bytes);
    {
      std::lock_guard<std::mutex> lk(mu_);
      const int64_t used = ctx_->bytes_in_use();  // scratch and mirrors count too
      if (used + b > capacity_)
        throw CapacityError(
            "accelerator capacity exceeded on " + ctx_->info.name + ": " + mib(used + b) +
                " needed, " + mib(capacity_) + " budget (" + mib(used) + " in use)",
            "raise --accelerator-memory, or use a strategy that keeps KV in host memory",
            kExitFailure);
      ctx_->budget_used += b;
    }
    void* p = nullptr;
    ctx_->activate();
    const cudaError_t err = cudaMalloc(&p, bytes);
    if (err != cudaSuccess) {
      ctx_->budget_used -= b;
      HB_CUDA_CHECK(err, "accelerator memory, " + std::to_string(bytes) + " bytes");
    }
    std::shared_ptr<DeviceContext> ctx = ctx_;
    return Buffer(p, bytes, location(), [ctx, b](void* q, size_t) {
      cudaSetDevice(ctx->device);
      cudaFree(q);  // implicitly waits for work using it
      ctx->budget_used -= b;
    });
  }
  MemoryLocation location() const override {
    return MemoryLocation{MemoryKind::accelerator, ctx_->device, false};
  }
  bool host_accessible() const override { return false; }
  // Synchronous, but ordered on the accelerator's queue so they never overtake queued work.
  void copy_in(void* dst, const void* src, size_t bytes) override {
    copy(dst, src, bytes, "copy into device memory");
  }
  void copy_out(void* dst, const void* src, size_t bytes) override {
    copy(dst, src, bytes, "copy out of device memory");
  }
  // One cudaMemcpy2D per strided transfer (a K column of a page block), not one per element.
  void copy_in_2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                  size_t rows) override {
    copy_2d(dst, dpitch, src, spitch, width, rows, "strided copy into device memory");
  }
  void copy_out_2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                   size_t rows) override {
    copy_2d(dst, dpitch, src, spitch, width, rows, "strided copy out of device memory");
  }

 private:
  void copy(void* dst, const void* src, size_t bytes, const char* what) {
    if (bytes == 0) return;
    ctx_->activate();
    HB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, ctx_->stream),
                  std::string(what) + ", " + std::to_string(bytes) + " bytes");
    HB_CUDA_CHECK(cudaStreamSynchronize(ctx_->stream),
                  std::string(what) + ", " + std::to_string(bytes) + " bytes");
  }

  void copy_2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t rows,
               const char* what) {
    if (width == 0 || rows == 0) return;
    const std::string desc =
        std::string(what) + ", " + std::to_string(rows) + " x " + std::to_string(width) + " bytes";
    ctx_->activate();
    HB_CUDA_CHECK(
        cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, rows, cudaMemcpyDefault, ctx_->stream),
        desc);
    HB_CUDA_CHECK(cudaStreamSynchronize(ctx_->stream), desc);
  }

  std::shared_ptr<DeviceContext> ctx_;
  int64_t capacity_;
  std::mutex mu_;
};

class PinnedAllocator final : public BufferAllocator {
 public:
  PinnedAllocator(std::shared_ptr<DeviceContext> ctx, std::shared_ptr<BufferAllocator> src)
      : ctx_(std::move(ctx)), src_(std::move(src)) {}

  Buffer allocate(size_t bytes) override {
    if (bytes == 0) return Buffer();
    Buffer host = src_->allocate(bytes);  // placed (and prefaulted) by the host allocator
    void* p = host.data();
    ctx_->activate();
    // Portable: usable from every device's context; Mapped: kernels may read it directly.
    HB_CUDA_CHECK(cudaHostRegister(p, bytes, cudaHostRegisterPortable | cudaHostRegisterMapped),
                  "pinning " + std::to_string(bytes) + " bytes of staging memory at " +
                      location().to_string() + " (if this is an mlock limit, raise `ulimit -l`)");
    auto* holder = new Buffer(std::move(host));
    const int dev = ctx_->device;
    return Buffer(p, bytes, holder->location(), [holder, dev](void* q, size_t) {
      cudaSetDevice(dev);
      cudaHostUnregister(q);
      cudaGetLastError();
      delete holder;
    });
  }
  MemoryLocation location() const override { return src_->location(); }

 private:
  std::shared_ptr<DeviceContext> ctx_;
  std::shared_ptr<BufferAllocator> src_;
};

}  // namespace

std::shared_ptr<BufferAllocator> make_device_allocator(std::shared_ptr<DeviceContext> ctx,
                                                       int64_t capacity) {
  return std::make_shared<DeviceAllocator>(std::move(ctx), capacity);
}

std::shared_ptr<BufferAllocator> make_pinned_allocator(
    std::shared_ptr<DeviceContext> ctx, std::shared_ptr<BufferAllocator> host_source) {
  return std::make_shared<PinnedAllocator>(std::move(ctx), std::move(host_source));
}

}  // namespace hb::cuda
