#pragma once
// Scores strategy outputs against the fp64 reference on the same queries. The reference for a
// step is computed once and shared by every strategy at the point (it costs more than most
// strategies' steps at long context).
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "core/huge_page_allocator.h"
#include "core/strategy.h"
#include "reports/report.h"

namespace hb::bench {

// Exact attention of every sequence at one decode step.
struct StepReference {
  int step = -1;
  std::vector<double> o;    // [batch][q_heads][head_dim]
  std::vector<double> lse;  // [batch][q_heads]
  // Softmax probability of every context token: [batch][q_heads][context]; only kept when
  // some strategy reports attended subsets (mass recall).
  // 64 MiB a step at 128k tokens and 64 heads, every step kept in model mode: huge pages.
  std::vector<double, HugePageAllocator<double>> probs;
  int64_t context = 0;
};

class ReferenceOracle {
 public:
  // keep_all: every step's reference is kept, for a unit whose strategies run in several waves
  // one after another (model mode's platforms, runner.h), each wave from step 0.
  explicit ReferenceOracle(const Problem& problem, ThreadPool& pool, bool keep_all = false);
  // Reference for step s (computed on first use; only the latest step is kept, unless keep_all).
  const StepReference& at(int s, bool with_probs);

 private:
  const Problem& problem_;
  ThreadPool& pool_;
  std::vector<DenseKv> generated_;  // per sequence: the decode tokens' k, v
  StepReference cur_;
  bool keep_all_ = false;
  // keep_all and one step's probabilities fit kEagerProbsBytes: every step is computed with them
  // (64 query heads to 256k tokens: a sparse strategy's request would keep them all anyway).
  static constexpr double kEagerProbsBytes = 128.0 * (1 << 20);
  bool eager_probs_ = false;
  std::map<int, StepReference> kept_;  // keep_all: by step
};

// Averages accuracy figures over the scored steps of one strategy at one point.
class AccuracyAccumulator {
 public:
  AccuracyAccumulator(const Problem& problem) : problem_(problem) {}
  void add(const StepReference& ref, const StepResult& out);
  int scored() const { return static_cast<int>(steps_); }  // the steps added so far
  reports::Accuracy result() const;
  // Tokens attended per (sequence, query head) over the steps added; none before the first.
  std::optional<reports::AttendedTokens> attended() const;

 private:
  const Problem& problem_;
  int64_t steps_ = 0;
  double rel_l2_ = 0, cosine_ = 0, max_abs_ = 0, recall_ = 0;
  std::vector<reports::Accuracy::StepRecall> recall_per_step_;
  int64_t needle_trials_ = 0, needle_hits_ = 0;
  double captured_rel_l2_ = 0;  // against the trace's captured outputs, when it has them
  int64_t captured_steps_ = 0;
  double attended_sum_ = 0;
  int64_t attended_n_ = 0, attended_min_ = 0, attended_max_ = 0;
};

}  // namespace hb::bench
