#pragma once
// The compute roof of CPU decode attention: how fast one core can issue the decode kernel's
// instruction mix (conversions, q and weight broadcasts, FMAs, exp, reductions; roof_mix.h)
// with its data in L1, as GB/s of K+V it would get through. Attention is judged against the
// lower of this and the streaming read (stream_read.h); the kernel itself on an L2-resident
// cache is a different figure, its own ceiling, which this must not fall below.
#include "core/cpu_features.h"
#include "core/dtype.h"

namespace hb::cpu {

// GB/s of K+V per core for `group` query heads per KV head of width head_dim, on the kernel
// path decode_attention would take for (level, head_dim); the fastest of a few timed calls of
// about a millisecond each (the roof is what the core can do, not what it did while preempted).
double compute_roof_gbps(SimdLevel level, DType dtype, int group, int head_dim);

}  // namespace hb::cpu
