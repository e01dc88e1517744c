#include "core/cpu_features.h"

#include <cpuid.h>

namespace hb {

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = [] {
    CpuFeatures c;
    __builtin_cpu_init();
    c.avx2 = __builtin_cpu_supports("avx2");
    c.fma = __builtin_cpu_supports("fma");
    // CPUID leaf 1, ECX bit 29 directly: clang (14) has no "f16c" for __builtin_cpu_supports.
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    c.f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
    c.avx512f = __builtin_cpu_supports("avx512f");
    c.avx512bw = __builtin_cpu_supports("avx512bw");
    c.avx512vl = __builtin_cpu_supports("avx512vl");
    c.avx512_bf16 = __builtin_cpu_supports("avx512bf16");
    return c;
  }();
  return f;
}

SimdLevel best_simd_level() {
  const auto& f = cpu_features();
  if (f.has_avx512_path()) return SimdLevel::avx512;
  if (f.has_avx2_path()) return SimdLevel::avx2;
  return SimdLevel::scalar;
}

const char* simd_level_name(SimdLevel s) {
  switch (s) {
    case SimdLevel::scalar:
      return "scalar";
    case SimdLevel::avx2:
      return "avx2";
    case SimdLevel::avx512:
      return "avx512";
  }
  return "?";
}

}  // namespace hb
