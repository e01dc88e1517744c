#pragma once
// Model mode's executor (a bench::UnitRunner): one sweep over several platforms at once, each a
// lane with its own host tiers, step pricer and per-model KV budget. What does not depend on the
// platform is done once per unit: the workload and the fp64 reference are made once for every
// lane (and kept for the next unit that executes the same sequences: a sampled batch's), and a
// strategy whose plan is the same on several lanes executes once, each lane pricing and
// recording the same steps (model/shared_execution.h). A batch of B executes one of its
// sequences on a 1/B share of each lane's budget (model/sampled_batch.h). Nothing is timed, so
// the strategies execute one at a time, lane after lane (holding one strategy's memory at a
// time); a unit's points come lane by lane, each lane's in strategy order, and are what a sweep
// per platform would give.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/sampled_batch.h"
#include "model/step_pricer.h"
#include "bench/unit.h"
#include "bench/unit_runner.h"

namespace hb::model {

// One platform of a model sweep.
struct Lane {
  std::vector<HostTier> host_tiers;  // empty: plain host memory as local DRAM
  std::shared_ptr<const StepPricer> pricer;
  std::map<std::string, int64_t> kv_budget_bytes;  // by model; one not listed: the sweep's own
  // By model: why nothing of it can run on this lane (e.g. its weights exceed the platform's
  // accelerator memory). Its points are "oom" with that reason, and nothing executes for them.
  std::map<std::string, std::string> refused = {};
  // Model mode on a profile (not --accelerator-memory): each unit's deployment (tensor
  // parallelism, dtypes; model/tensor_parallel.h) is chosen from the platform and the request,
  // and sets that unit's budget, refusal and pricer in place of the three above.
  const PlatformModel* platform = nullptr;
  DeploymentRequest request;
  PricerOptions pricer_options;
  // The pricer of one deployment (made once per deployment and kept).
  const StepPricer& pricer_for(const Deployment& d, int hidden) const;
  mutable std::map<std::string, std::shared_ptr<const StepPricer>> deployed = {};
};

class ModelSweep final : public bench::UnitRunner {
 public:
  // `env`: the sweep's environment (it must outlive this), whose host tiers and observer the
  // lanes replace.
  ModelSweep(std::vector<Lane> lanes, const bench::RunEnvironment& env);
  int points_per_strategy() const override { return static_cast<int>(lanes_.size()); }
  std::string unit_key(int pass, const bench::SweepGroup& g) const override;
  // One sequence of a batch stands for the batch (model/sampled_batch.h).
  int executed_batch(const bench::SweepSpec& spec, int batch) const override {
    return batch / stands_for(spec, batch);
  }
  // Its executed tokens of context, times the share of lanes that run its model.
  double point_cost(const bench::SweepRun& run, const bench::SweepGroup& g) const override;
  std::optional<std::vector<reports::Point>> run(bench::SweepRun& run, const bench::SweepGroup& g,
                                                 const std::string& where) override;

 private:
  const bench::UnitInputs& inputs(bench::SweepRun& run, const bench::SweepGroup& executed,
                                  const std::string& where);
  std::string lane_tag(size_t l) const;

  std::vector<Lane> lanes_;
  std::vector<bench::RunEnvironment> envs_;  // each lane's: env with its tiers, no observer
  std::shared_ptr<bench::UnitInputs> last_inputs_;
};

}  // namespace hb::model
