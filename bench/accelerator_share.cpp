#include "bench/accelerator_share.h"

#include <utility>

namespace hb::bench {

AcceleratorShare::AcceleratorShare(Accelerator& real, int64_t capacity_bytes,
                                   std::shared_ptr<BusyCarry> carry)
    : real_(real), info_(real.info()), carry_(std::move(carry)) {
  info_.capacity_bytes = capacity_bytes;
}

int64_t AcceleratorShare::synchronize() {
  const int64_t busy = real_.synchronize();
  flush();  // after: the host's wait must not include the held work
  return busy + std::exchange(carry_->ns, 0);
}

void AcceleratorShare::defer(std::function<void()> work) {
  flush();
  deferred_ = std::move(work);
}

void AcceleratorShare::flush() {
  if (!deferred_) return;
  auto work = std::exchange(deferred_, nullptr);
  work();
}

}  // namespace hb::bench
