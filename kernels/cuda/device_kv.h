#pragma once
// A copy of a paged KV view in accelerator memory: all K and V blocks uploaded with one bulk
// copy into one allocation (page i of every head next to each other, as PagedKvCache appends
// them), and page tables pointing at the copies. For tests, benchmarks and strategies that
// build KV in host memory and then place it on the GPU (PagedKvCache::write_token on device
// arenas would cost one transfer per key element). Works with any Accelerator.
#include <cstdint>
#include <vector>

#include "core/accelerator.h"
#include "core/kv_cache.h"

namespace hb::cuda {

class DeviceKvCopy {
 public:
  // host_view's blocks must be host-accessible. The budget error of acc.memory() (CapacityError)
  // propagates when the copy does not fit.
  DeviceKvCopy(Accelerator& acc, const PagedKvView& host_view);
  // Valid while this object lives.
  const PagedKvView& view() const { return view_; }
  int64_t bytes() const { return static_cast<int64_t>(mem_.size()); }

 private:
  Buffer mem_;
  std::vector<std::vector<PageRef>> pages_;
  std::vector<KvHeadView> heads_;
  PagedKvView view_;
};

}  // namespace hb::cuda
