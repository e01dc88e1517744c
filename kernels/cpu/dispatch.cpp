#include "core/error.h"
#include "kernels/cpu/decode_kernel.h"

namespace hb::cpu {

const KernelTable& kernels_for(SimdLevel level) {
  if (static_cast<int>(level) > static_cast<int>(best_simd_level()))
    throw Error(std::string("this CPU cannot run the ") + simd_level_name(level) +
                    " kernels (best here: " + simd_level_name(best_simd_level()) + ")",
                "ask for a lower SIMD level, or auto");
  switch (level) {
    case SimdLevel::avx512:
      return kAvx512Kernels;
    case SimdLevel::avx2:
      return kAvx2Kernels;
    case SimdLevel::scalar:
      break;
  }
  return kScalarKernels;
}

const KernelTable& kernels_for(SimdLevel level, int head_dim) {
  // The engine works in whole registers of head_dim: step down until the width fits
  // (head_dim 72: AVX-512's 16 lanes do not divide it, AVX2's 8 do).
  for (int l = static_cast<int>(level); l > 0; --l) {
    const KernelTable& t = kernels_for(static_cast<SimdLevel>(l));
    if (head_dim % t.lanes == 0) return t;
  }
  return kScalarKernels;
}

}  // namespace hb::cpu
