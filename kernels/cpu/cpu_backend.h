#pragma once
// The cpu accelerator's line in the backend registry (kernels/backend.h).
#include "kernels/backend.h"

namespace hb::cpu {

// Always usable; emulated; no devices of its own (no NUMA nodes, no link to probe).
Backend backend();

}  // namespace hb::cpu
