#pragma once
#include "core/strategy.h"

namespace hb {
// Registers every baseline strategy (one file each in baselines/) with the registry.
void register_baselines(StrategyRegistry& registry);
}  // namespace hb
