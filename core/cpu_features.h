#pragma once
// What the CPU we are running on can do, detected once at run time (not at compile time:
// one binary serves AVX2-only and AVX-512 machines).
namespace hb {

struct CpuFeatures {
  bool avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512_bf16 = false;
  bool has_avx2_path() const { return avx2 && fma && f16c; }
  bool has_avx512_path() const { return avx512f && avx512bw && avx512vl && has_avx2_path(); }
};

const CpuFeatures& cpu_features();

// SIMD levels the kernels dispatch over, best first.
enum class SimdLevel { scalar, avx2, avx512 };
SimdLevel best_simd_level();
const char* simd_level_name(SimdLevel s);  // "scalar", "avx2", "avx512"

}  // namespace hb
