#include "baselines/register.h"

namespace hb {

void register_full_gpu(StrategyRegistry& r);
void register_cpu_only(StrategyRegistry& r);
void register_offload(StrategyRegistry& r);
void register_h2o(StrategyRegistry& r);
void register_streamingllm(StrategyRegistry& r);
void register_infinigen(StrategyRegistry& r);
void register_quest(StrategyRegistry& r);

void register_baselines(StrategyRegistry& registry) {
  register_full_gpu(registry);
  register_cpu_only(registry);
  register_offload(registry);
  register_h2o(registry);
  register_streamingllm(registry);
  register_infinigen(registry);
  register_quest(registry);
}

}  // namespace hb
