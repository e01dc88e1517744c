#pragma once
// Device copies of the host page tables (PageRef arrays) kernels walk. A decode step usually
// sees the same tables as the previous step plus one token, so each host array keeps a device
// mirror and a shadow of what was uploaded; a call compares the host array with the shadow
// and uploads only the changed range (a new page, a migrated page). The compare is O(pages)
// host work (1 MiB for 128K tokens x 8 heads), which is still far cheaper than re-uploading,
// and it keeps results right when a caller edits its tables in place, which the Accelerator
// contract allows.
#include <cuda_runtime.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/kv_cache.h"
#include "kernels/cuda/device_context.h"
#include "kernels/cuda/kernel_args.h"
#include "kernels/cuda/upload_ring.h"

namespace hb::cuda {

class PageTableCache {
 public:
  explicit PageTableCache(const DeviceContext& ctx) : ctx_(ctx) {}
  ~PageTableCache();
  PageTableCache(const PageTableCache&) = delete;
  PageTableCache& operator=(const PageTableCache&) = delete;

  // Starts an operation: mirrors unused for a long time may be dropped now (never one handed
  // out during the current operation, whose kernels are not queued yet).
  void begin_op();
  // Device copy of host[0, n), current as of the caller's queue position. n == 0 gives null.
  const DevPage* get(const PageRef* host, int64_t n, UploadRing& ring);

 private:
  struct Mirror {
    DevPage* dev = nullptr;
    int64_t capacity = 0;
    std::vector<PageRef> shadow;  // what the device copy holds
    uint64_t last_op = 0;
  };
  const DeviceContext& ctx_;
  std::unordered_map<const PageRef*, Mirror> mirrors_;
  uint64_t op_ = 0;
};

}  // namespace hb::cuda
