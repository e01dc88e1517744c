#pragma once
#include <chrono>
#include <cstdint>

namespace hb {

// Monotonic nanoseconds; the one clock every timing in the tool uses.
inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace hb
