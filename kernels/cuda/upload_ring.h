#pragma once
// Small host-to-device uploads (descriptors, page-table deltas) staged through pinned memory:
// the bytes are copied into a pinned block at enqueue time (so the caller's arrays may be
// temporaries, as the Accelerator contract allows) and an async H2D copy is queued. A block
// is reused only after an event shows its copies have finished, so nothing waits in the
// common case.
#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

namespace hb::cuda {

class UploadRing {
 public:
  explicit UploadRing(size_t block_bytes = size_t{1} << 20) : block_bytes_(block_bytes) {}
  ~UploadRing();
  UploadRing(const UploadRing&) = delete;
  UploadRing& operator=(const UploadRing&) = delete;

  // Queues a copy of host [src, src + bytes) to device `dst` on `stream` (while held: stages
  // the bytes now and queues the copy at release).
  void upload(void* dst, const void* src, size_t bytes, cudaStream_t stream);
  // An operation's host phase (validation, descriptors) holds the copies back, so its first GPU
  // work, and the busy-time event before it, is queued only once the host work is done;
  // release() queues the held copies in order.
  void hold() { holding_ = true; }
  void release(cudaStream_t stream);
  // Call after the stream has been synchronised: every block is free again.
  void reset();

 private:
  struct Block {
    char* p = nullptr;
    size_t size = 0, used = 0;
    cudaEvent_t done = nullptr;  // recorded when the block is retired
    bool in_flight = false;
  };
  Block& acquire(size_t bytes, cudaStream_t stream);
  void queue_held(cudaStream_t stream);
  struct Held {
    void* dst;
    const void* src;
    size_t bytes;
  };

  size_t block_bytes_;
  std::vector<Block> blocks_;
  int current_ = -1;
  bool holding_ = false;
  std::vector<Held> held_;
};

}  // namespace hb::cuda
