// The engine instantiated with the portable one-lane traits (no ISA flags): runs anywhere.
#include "kernels/cpu/simd_scalar.h"
#include "kernels/cpu/engine.h"

namespace hb::cpu {

const KernelTable kScalarKernels = make_table<Scalar>();

}  // namespace hb::cpu
