// The engine instantiated with the avx512 traits. This file alone is compiled with the ISA
// flags for avx512 (CMakeLists.txt); nothing here runs unless dispatch.cpp selects it.
#include "kernels/cpu/simd_avx512.h"
#include "kernels/cpu/engine.h"

namespace hb::cpu {

const KernelTable kAvx512Kernels = make_table<Avx512>();

}  // namespace hb::cpu
