#include "hybrid/register.h"

namespace hb {

void register_hybrid(StrategyRegistry& registry) { (void)registry; }

}  // namespace hb
