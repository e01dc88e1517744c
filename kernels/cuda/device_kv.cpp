#include "kernels/cuda/device_kv.h"

#include <algorithm>
#include <cstring>

namespace hb::cuda {

DeviceKvCopy::DeviceKvCopy(Accelerator& acc, const PagedKvView& host) : view_(host) {
  const size_t block =
      static_cast<size_t>(host.page_tokens) * host.head_dim * dtype_size(host.dtype);
  int64_t max_pages = 0, total_pages = 0;
  for (int h = 0; h < host.kv_heads; ++h) {
    const int64_t p = (host.heads[h].num_tokens + host.page_tokens - 1) / host.page_tokens;
    max_pages = std::max(max_pages, p);
    total_pages += p;
  }
  pages_.resize(host.kv_heads);
  heads_.resize(host.kv_heads);
  const size_t bytes = static_cast<size_t>(total_pages) * 2 * block;
  if (bytes > 0) {
    auto dev_alloc = acc.memory();
    mem_ = dev_alloc->allocate(bytes);
    std::vector<std::byte> staging(bytes);
    auto* dev = mem_.as<std::byte>();
    size_t slot = 0;
    for (int64_t i = 0; i < max_pages; ++i) {
      for (int h = 0; h < host.kv_heads; ++h) {
        const KvHeadView& v = host.heads[h];
        if (i * host.page_tokens >= v.num_tokens) continue;
        std::memcpy(staging.data() + slot * block, v.pages[i].k, block);
        std::memcpy(staging.data() + (slot + 1) * block, v.pages[i].v, block);
        pages_[h].push_back(PageRef{dev + slot * block, dev + (slot + 1) * block});
        slot += 2;
      }
    }
    dev_alloc->copy_in(dev, staging.data(), bytes);  // synchronous, ordered with the queue
  }
  for (int h = 0; h < host.kv_heads; ++h)
    heads_[h] = KvHeadView{pages_[h].data(), host.heads[h].num_tokens};
  view_.heads = heads_.data();
}

}  // namespace hb::cuda
