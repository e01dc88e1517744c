#include "baselines/register.h"

namespace hb {

void register_baselines(StrategyRegistry& registry) { (void)registry; }

}  // namespace hb
