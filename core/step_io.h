#pragma once
// The per-step activations a strategy exchanges with the rest of the model: the query and the
// new token's k, v (produced on the accelerator by the QKV projection in a real model) and the
// attention output (consumed there by the output projection). Strategies stage inputs into
// accelerator memory before the timed step so they move them exactly as the real system would.
#include <cstddef>
#include <vector>

#include "core/accelerator.h"
#include "core/strategy.h"

namespace hb {

// fp32 values in the accelerator's staging memory (pinned host memory on CUDA), so copies to and
// from the accelerator are asynchronous at full link speed rather than blocking bounces through
// pageable memory; host code uses it like an array.
class HostRows {
 public:
  HostRows() = default;
  HostRows(BufferAllocator& staging, size_t n) : buf_(staging.allocate(n * 4)), n_(n) {}
  float* data() const { return buf_.as<float>(); }
  size_t size() const { return n_; }
  float* begin() const { return data(); }
  float* end() const { return data() + n_; }
  float& operator[](size_t i) const { return data()[i]; }
  std::vector<float> to_vector() const { return std::vector<float>(begin(), end()); }
  MemoryLocation location() const { return buf_.location(); }

 private:
  Buffer buf_;
  size_t n_ = 0;
};

class StepIO {
 public:
  StepIO(const Problem& problem, Accelerator& accel);
  // Untimed: copies step s's q, k, v of every sequence into accelerator memory.
  void stage(int s);

  // Accelerator-memory buffers, [batch][heads][head_dim] (lse: [batch][q_heads]).
  float* q_dev() const { return q_.as<float>(); }
  float* k_dev() const { return k_.as<float>(); }
  float* v_dev() const { return v_.as<float>(); }
  float* o_dev() const { return o_.as<float>(); }
  float* lse_dev() const { return lse_.as<float>(); }
  size_t q_bytes() const { return q_.size(); }
  size_t kv_row_bytes() const { return k_.size(); }  // new k (or v) of all sequences, fp32
  size_t o_bytes() const { return o_.size(); }
  // Host staging of the same shapes (for strategies that compute on the CPU), in the
  // accelerator's staging memory on its local NUMA node.
  HostRows q_host, k_host, v_host, o_host, lse_host;

 private:
  const Problem& problem_;
  Accelerator& accel_;
  Buffer q_, k_, v_, o_, lse_;
};

}  // namespace hb
