#include "core/error.h"
#include "kernels/cpu/decode_kernel.h"

namespace hb::cpu {

const KernelTable& kernels_for(SimdLevel level) {
  if (static_cast<int>(level) > static_cast<int>(best_simd_level()))
    throw Error(std::string("this CPU cannot run the ") + simd_level_name(level) + " kernels (best here: " +
                    simd_level_name(best_simd_level()) + ")",
                "ask for a lower SIMD level, or auto");
  switch (level) {
    case SimdLevel::avx512: return kAvx512Kernels;
    case SimdLevel::avx2: return kAvx2Kernels;
    case SimdLevel::scalar: break;
  }
  return kScalarKernels;
}

const KernelTable& kernels_for(SimdLevel level, int head_dim) {
  const KernelTable& t = kernels_for(level);
  // The engine's V pass works in whole registers of head_dim.
  return head_dim % t.lanes == 0 ? t : kScalarKernels;
}

}  // namespace hb::cpu
