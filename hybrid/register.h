#pragma once
#include "core/strategy.h"

namespace hb {
// Registers HybridGen and its ablation variants with the registry.
void register_hybrid(StrategyRegistry& registry);
}  // namespace hb
