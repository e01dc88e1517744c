#pragma once
// The copies `probe` times on a GPU (kernels/backend.h: measure_accelerator_links) and a
// platform profile records (memtier/probe.h: LinkProbe): pinned host memory to device memory and
// back over the link, and device to device (the accelerator memory's read + write bandwidth).
// The platform model (model) turns the first two into its link and the third into the
// accelerator's memory bandwidth. Text only in the profile JSON and `probe`'s listing.
#include "core/vocabulary.h"

namespace hb {

enum class CopyLink { h2d, d2h, hbm_copy };
inline constexpr Vocabulary<CopyLink, 3> kCopyLinks{{"h2d", "d2h", "hbm-copy"}};

}  // namespace hb
