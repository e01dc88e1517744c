#include "kernels/cuda/upload_ring.h"

#include <cstring>
#include <string>

#include "kernels/cuda/cuda_check.h"

namespace hb::cuda {

UploadRing::~UploadRing() {
  for (auto& b : blocks_) {
    if (b.done) {
      cudaEventSynchronize(b.done);
      cudaEventDestroy(b.done);
    }
    cudaFreeHost(b.p);
  }
  cudaGetLastError();
}

UploadRing::Block& UploadRing::acquire(size_t bytes, cudaStream_t stream) {
  if (current_ >= 0) {
    Block& cur = blocks_[current_];
    if (cur.used + bytes <= cur.size) return cur;
    // Retire the current block: its copies are queued before this event.
    queue_held(stream);
    HB_CUDA_CHECK(cudaEventRecord(cur.done, stream), "upload ring");
    cur.in_flight = true;
  }
  for (size_t i = 0; i < blocks_.size(); ++i) {
    Block& b = blocks_[i];
    if (b.size < bytes || static_cast<int>(i) == current_) continue;
    if (b.in_flight) {
      const cudaError_t q = cudaEventQuery(b.done);
      if (q == cudaErrorNotReady) continue;
      HB_CUDA_CHECK(q, "upload ring");
    }
    b.in_flight = false;
    b.used = 0;
    current_ = static_cast<int>(i);
    return b;
  }
  Block b;
  b.size = bytes > block_bytes_ ? bytes : block_bytes_;
  HB_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&b.p), b.size, cudaHostAllocPortable),
                "upload ring block, " + std::to_string(b.size) + " bytes");
  HB_CUDA_CHECK(cudaEventCreateWithFlags(&b.done, cudaEventDisableTiming), "upload ring event");
  blocks_.push_back(b);
  current_ = static_cast<int>(blocks_.size()) - 1;
  return blocks_.back();
}

void UploadRing::upload(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  const size_t need = (bytes + 15) / 16 * 16;  // keeps every upload 16-byte aligned
  Block& b = acquire(need, stream);
  char* p = b.p + b.used;
  std::memcpy(p, src, bytes);
  b.used += need;
  if (holding_) {
    held_.push_back(Held{dst, p, bytes});
    return;
  }
  HB_CUDA_CHECK(cudaMemcpyAsync(dst, p, bytes, cudaMemcpyHostToDevice, stream),
                "upload of " + std::to_string(bytes) + " bytes of descriptors");
}

void UploadRing::queue_held(cudaStream_t stream) {
  std::vector<Held> held;
  held.swap(held_);  // cleared even when a copy fails, so a later op never replays them
  for (const Held& h : held)
    HB_CUDA_CHECK(cudaMemcpyAsync(h.dst, h.src, h.bytes, cudaMemcpyHostToDevice, stream),
                  "upload of " + std::to_string(h.bytes) + " bytes of descriptors");
}

void UploadRing::release(cudaStream_t stream) {
  holding_ = false;
  queue_held(stream);
}

void UploadRing::reset() {
  for (auto& b : blocks_) {
    b.used = 0;
    b.in_flight = false;
  }
}

}  // namespace hb::cuda
