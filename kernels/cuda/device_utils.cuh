#pragma once
// Device helpers shared by the .cu kernels: KV element conversion to fp32, 16-byte async
// copies into shared memory (cp.async, sm_80+), and warp reductions. Include from .cu only.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace hb::cuda {

// --- fp16 / bf16 -> fp32 ------------------------------------------------------------------
// Unpacks two 16-bit values held in one 32-bit word (low half first).
__device__ __forceinline__ float2 unpack2(uint32_t w, __half) {
  __half2 h;
  static_assert(sizeof(h) == sizeof(w));
  memcpy(&h, &w, sizeof(w));
  return __half22float2(h);
}
__device__ __forceinline__ float2 unpack2(uint32_t w, __nv_bfloat16) {
  // bf16 is the top half of an fp32: widening is a shift, exact.
  return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u));
}

// 4 consecutive elements (8 bytes, 8-byte aligned) -> fp32.
template <class E>
__device__ __forceinline__ void load4(const E* p, float* out) {
  const uint2 raw = *reinterpret_cast<const uint2*>(p);
  const float2 a = unpack2(raw.x, E{}), b = unpack2(raw.y, E{});
  out[0] = a.x;
  out[1] = a.y;
  out[2] = b.x;
  out[3] = b.y;
}

// 8 consecutive elements (16 bytes, 16-byte aligned) -> fp32.
template <class E>
__device__ __forceinline__ void load8(const E* p, float* out) {
  const uint4 raw = *reinterpret_cast<const uint4*>(p);
  const float2 a = unpack2(raw.x, E{}), b = unpack2(raw.y, E{}), c = unpack2(raw.z, E{}),
               d = unpack2(raw.w, E{});
  out[0] = a.x;
  out[1] = a.y;
  out[2] = b.x;
  out[3] = b.y;
  out[4] = c.x;
  out[5] = c.y;
  out[6] = d.x;
  out[7] = d.y;
}
template <>
__device__ __forceinline__ void load8<float>(const float* p, float* out) {
  const float4 a = reinterpret_cast<const float4*>(p)[0], b = reinterpret_cast<const float4*>(p)[1];
  out[0] = a.x;
  out[1] = a.y;
  out[2] = a.z;
  out[3] = a.w;
  out[4] = b.x;
  out[5] = b.y;
  out[6] = b.z;
  out[7] = b.w;
}

// One element -> fp32 (for the few strided reads: K columns in gather and min/max).
__device__ __forceinline__ float to_f32(__half h) { return __half2float(h); }
__device__ __forceinline__ float to_f32(__nv_bfloat16 h) { return __bfloat162float(h); }
__device__ __forceinline__ float to_f32(float f) { return f; }

// --- async copies global -> shared ----------------------------------------------------------
// 16 bytes, cached in L2 only (.cg): KV is streamed once per step, L1 would only be polluted.
__device__ __forceinline__ void cp_async16(void* smem_dst, const void* gmem_src) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst),
               "l"(__cvta_generic_to_global(gmem_src))
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// --- warp reductions --------------------------------------------------------------------------
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// --- small fixed-size row loads from shared memory --------------------------------------------
// N consecutive floats (N a power of two, 4N-byte aligned) with the widest loads that fit.
template <int N>
__device__ __forceinline__ void load_row(const float* p, float* out) {
  if constexpr (N % 4 == 0) {
#pragma unroll
    for (int i = 0; i < N; i += 4) {
      const float4 v = *reinterpret_cast<const float4*>(p + i);
      out[i] = v.x;
      out[i + 1] = v.y;
      out[i + 2] = v.z;
      out[i + 3] = v.w;
    }
  } else if constexpr (N == 2) {
    const float2 v = *reinterpret_cast<const float2*>(p);
    out[0] = v.x;
    out[1] = v.y;
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) out[i] = p[i];
  }
}

}  // namespace hb::cuda
