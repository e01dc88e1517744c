#pragma once
// HybridGen (arXiv 2604.18529) as this project reads it; hybrid/README.md documents every
// mechanism, parameter and default, and which parts are ours.
//   1. Attention logit parallelism: the newest tokens' KV on the accelerator, older tokens' KV
//      in host tiers. Per step the CPU scores q.K^T/sqrt(d) over its tokens, keeps the top-k
//      per query head and ships those logits and V rows; the accelerator attends over its own
//      tokens at the same time; one softmax over [CPU top-k | accelerator] logits gives the
//      output. merge=lse: the CPU returns the exact partial (o, lse) instead.
//   2. Feedback-driven scheduler (hybrid/feedback_scheduler.h): top-k ratio and the
//      CPU/accelerator boundary.
//   3. Semantic-aware KV mapping (hybrid/kv_mapping.h): K of host tokens on the fastest host
//      tier, V on the CXL/far tier; pages the top-k selects often are promoted (V to the fast
//      tier, whole pages to the accelerator) and cold ones demoted, every migration interval.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/step_io.h"
#include "core/strategy.h"
#include "hybrid/config.h"
#include "hybrid/feedback_scheduler.h"
#include "hybrid/kv_mapping.h"

namespace hb::hybrid {

class HybridGen final : public Strategy {
 public:
  HybridGen(std::string name, HybridGenConfig cfg);
  ~HybridGen() override;
  std::string name() const override { return name_; }
  PlanResult plan(const Problem& problem, const Platform& platform) override;
  void load() override;
  void prepare_step(int s) override;
  void step(int s, StepResult& out) override;
  void fill_attended(int s, StepResult& out) override;
  std::vector<MemoryRegion> memory_regions() const override;
  std::vector<std::map<std::string, double>> trajectory() const override;
  // CPU scoring/top-k/gather overlaps the accelerator's attention over its resident tokens; then
  // the top-k rows (or the CPU's partial) cross the link and the merge is waited for. The
  // no-overlap ablation (hybridgen-serial) does each part after the other.
  OverlapStructure overlap() const override {
    if (!cfg_.overlap) return OverlapStructure::serial();
    return {{{Resource::cpu, Resource::accelerator}, {Resource::transfer}, {Resource::sync}}};
  }
  bool follows_timings() const override { return cfg_.scheduler.adaptive; }

  // Inspection (tests, reports).
  const HybridGenConfig& config() const { return cfg_; }
  const FeedbackScheduler& scheduler() const { return *sched_; }
  // Blocks per "K@<location>" / "V@<location>" over every page of every head and sequence.
  std::map<std::string, int64_t> block_placement() const;
  // Home and tiers of one page (sequence b, KV head h, page i).
  PageHome page_home(int b, int h, int64_t i) const;
  float page_score(int b, int h, int64_t i) const;  // EMA of top-k hits per step
  MemoryLocation page_k_location(int b, int h, int64_t i) const;
  MemoryLocation page_v_location(int b, int h, int64_t i) const;
  int64_t accelerator_pages_per_head() const { return acc_pages_; }
  int64_t window_pages() const { return window_pages_; }
  int64_t hot_slots() const { return hot_slots_; }
  int64_t pages_migrated() const { return pages_migrated_; }

 private:
  struct Impl;  // hybrid/hybridgen_impl.h: the state the mechanisms' files share
  // Fills the plan's parameters (what the report shows per point).
  void describe(std::map<std::string, std::string>& par) const;
  std::string name_;
  HybridGenConfig cfg_;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<FeedbackScheduler> sched_;
  int64_t acc_pages_ = 0, window_pages_ = 0, hot_slots_ = 0, pages_migrated_ = 0;
};

}  // namespace hb::hybrid
