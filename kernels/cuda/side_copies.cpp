// Side copies (core/accelerator.h): H2D copies on the copy stream, beside the queue, so the
// copy engine moves them while the SMs run what was queued before; an event orders them before
// later queue work only when order_side_copies() asks. synchronize() already waits for the copy
// stream. Not an Op: a copy engine's time is not the queue's busy time.
#include <string>

#include "kernels/cuda/accelerator_impl.h"
#include "kernels/cuda/cuda_check.h"

namespace hb::cuda {

void CudaAcceleratorImpl::copy_to_device_async(void* dst, const void* src, size_t bytes) {
  std::lock_guard<std::mutex> lk(mu_);
  if (bytes == 0) return;
  HB_NVTX_RANGE("hb.cuda.copy_to_device_async");
  ctx_->activate();
  if (!side_done_) {
    cudaEvent_t e = nullptr;
    HB_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "side copy event");
    side_done_.reset(e);
  }
  HB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, ctx_->copy_stream),
                "copy_to_device_async, " + std::to_string(bytes) + " bytes");
  HB_CUDA_CHECK(cudaEventRecord(side_done_.get(), ctx_->copy_stream), "side copy event record");
  side_pending_ = true;
}

void CudaAcceleratorImpl::order_side_copies() {
  std::lock_guard<std::mutex> lk(mu_);
  if (!side_pending_) return;
  ctx_->activate();
  HB_CUDA_CHECK(cudaStreamWaitEvent(ctx_->stream, side_done_.get(), 0),
                "queue waits on side copies");
  side_pending_ = false;
}

}  // namespace hb::cuda
