#pragma once
// The few lines of softmax arithmetic every CUDA kernel shares, written once for device and
// host (the host build lets CPU-only tests check the exact formulas the kernels use).
//
// Empty partial states have lse = -inf. Every function here keeps them neutral: a weight of
// exp(-inf - M) is 0, and an all-empty set (M = -inf) gives o = 0, lse = -inf, never NaN.
#include <cmath>

#include "kernels/cuda/host_device.h"

namespace hb::cuda {

inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr float kLn2 = 0.6931471805599453f;

HB_HD float neg_inf() { return -INFINITY; }

// exp(x - m) with the guard that makes an all-masked set neutral: when m is -inf every x is
// -inf too, and the result must be 0, not exp(NaN).
HB_HD float exp_shifted(float x, float m) {
#if defined(__CUDA_ARCH__)
  return m == -INFINITY ? 0.0f : exp2f((x - m) * kLog2e);
#else
  return m == -INFINITY ? 0.0f : std::exp2((x - m) * kLog2e);
#endif
}

// Factor that rescales a running sum from max m_old to m_new (m_new >= m_old). 1 while both
// are -inf, so an empty running state stays (0, -inf).
HB_HD float rescale_factor(float m_old, float m_new) {
  return m_new == -INFINITY ? 1.0f : exp_shifted(m_old, m_new);
}

// lse of a finished state: m + ln(l), or -inf for an empty one (l == 0).
HB_HD float finish_lse(float m, float l) {
#if defined(__CUDA_ARCH__)
  return l > 0.0f ? m + logf(l) : -INFINITY;
#else
  return l > 0.0f ? m + std::log(l) : -INFINITY;
#endif
}

}  // namespace hb::cuda
