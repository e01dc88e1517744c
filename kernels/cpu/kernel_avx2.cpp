// The engine instantiated with the avx2 traits. This file alone is compiled with the ISA
// flags for avx2 (CMakeLists.txt); nothing here runs unless dispatch.cpp selects it.
#include "kernels/cpu/simd_avx2.h"
#include "kernels/cpu/engine.h"

namespace hb::cpu {

const KernelTable kAvx2Kernels = make_table<Avx2>();

}  // namespace hb::cpu
