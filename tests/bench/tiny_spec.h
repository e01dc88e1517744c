#pragma once
// The smallest sweep that still exercises GQA and two strategies on the cpu accelerator, for the
// runner's tests: qwen2.5-0.5b (14 q heads, 2 KV heads, d = 64), a few short lengths, six
// decode steps (one pass, five rounds), one thread each. Registers the baselines and HybridGen
// first.
#include <cstdint>
#include <utility>
#include <vector>

#include "baselines/register.h"
#include "core/strategy.h"
#include "hybrid/register.h"
#include "bench/sweep_spec.h"

namespace hb::bench::testing {

inline SweepSpec tiny_spec(std::vector<int64_t> seq_lens) {
  register_baselines(StrategyRegistry::instance());
  register_hybrid(StrategyRegistry::instance());
  SweepSpec s;
  s.scope =
      Scope::attention;  // attention's own figures; layer scope: tests/bench/layer_scope_test.cpp
  s.models = {"qwen2.5-0.5b"};
  s.seq_lens = std::move(seq_lens);
  s.strategies = {"full-gpu", "cpu-only"};
  s.decode_steps = 6;
  s.stop.warmup_steps = 1;
  s.stop.min_samples = 3;
  // One pass over the 5 timed positions in 5 rounds of one step: the tests' step counts stay
  // the positions (the ones about replays raise max_samples themselves).
  s.stop.rounds = 5;
  s.stop.max_samples = 5;
  s.accuracy_steps = 2;
  s.accelerator.kind = AcceleratorKind::cpu;
  s.accelerator.cpu_threads = 1;
  s.host_threads = 1;
  return s;
}

}  // namespace hb::bench::testing
