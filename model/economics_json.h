#pragma once
// Reading a platform profile's "economics" member (schema: model/README.md). Internal to model/.
#include "model/economics.h"
#include "model/profile_reader.h"

namespace hb::model {

// Every figure is {"value": N, "source": "...", "date": "YYYY-MM[-DD]"} or {"value": N,
// "source": "the reasoning", "estimate": true}; unknown members, a figure without a source or
// without a date (unless an estimate), a value out of range (prices, years and the GPU's power
// > 0, the GPU count a whole number >= 1, other power >= 0), both an hourly and a purchase
// price, or one half of purchase + years are refused with the JSON path (exit 2).
PlatformEconomics read_economics(const ProfileReader& j);

}  // namespace hb::model
