#pragma once
// The procurement ranking over abstract candidates (issue 34 item 4): which platform, with
// which strategy, is best on one metric, and by how far ahead of the best other platform;
// leaders the noise cannot separate are named as a tie instead of one being crowned. Knows no
// report: procurement_view.h builds the candidates from one (or several merged) reports.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "core/paired_ratio.h"
#include "core/vocabulary.h"
#include "reports/report.h"

namespace hb::reports {

// The columns a buyer ranks by. ITL and $/Mtok: lower is better; the rest higher.
enum class ProcurementMetric { tokens_per_s, itl, cost, tokens_per_w, max_context };
inline constexpr Vocabulary<ProcurementMetric, 5> kProcurementMetrics{
    {"tokens/s", "ITL", "$/Mtok", "tokens/s/W", "max context"}};
inline constexpr size_t kProcurementMetricCount = 5;
bool higher_is_better(ProcurementMetric m);
// A value of the metric as tables and lines print it, about three significant figures:
// "312", "4.61" (tokens/s), "25.6 ms", "$0.421", "$87.64", "0.0310" (tokens/s/W), "128k", "1.81M".
std::string metric_text(ProcurementMetric m, double v);

// One figure of a candidate: a value, or blank with its reason (never a zero for "unknown").
struct Figure {
  std::optional<double> value;
  std::string blank_reason;
  // The value in each round (measured points stepped in rounds): two candidates with rounds are
  // compared by the median of their per-round ratios and its interval (core/paired_ratio.h).
  std::vector<double> rounds;
  // Robust relative noise of the value (IQR / 1.349 median of its steps; 0: exact, e.g. a
  // capacity). Candidates without rounds on both sides are compared with it.
  double rel_noise = 0;
  // Shown with the value ("at least": the search bound was reached).
  bool at_least = false;
  static Figure blank(std::string reason) {
    return {std::nullopt, std::move(reason), {}, 0, false};
  }
};

struct Candidate {
  std::string platform, strategy;
  Provenance provenance = Provenance::modeled;
  // Eligible for a ranking: it ran, meets the accuracy target and its memory holds the point
  // (`why_not` says which failed, e.g. "misses recall >= 0.9 (0.62)").
  bool eligible = true;
  std::string why_not;
  std::array<Figure, kProcurementMetricCount> figures;
  const Figure& figure(ProcurementMetric m) const { return figures[static_cast<size_t>(m)]; }
  Figure& figure(ProcurementMetric m) { return figures[static_cast<size_t>(m)]; }
};

// How one candidate compares with another on a metric: ratio > 1 means `a` is better, with its
// spread; decided() false: within noise.
struct Lead {
  double ratio = 0;
  double rel_noise = 0;             // unpaired: the two noises in quadrature
  std::optional<RatioInterval> ci;  // paired over rounds
  bool decided() const;
};
// nullopt when either has no value.
std::optional<Lead> compare_on(const Candidate& a, const Candidate& b, ProcurementMetric m);

// The verdict on one metric among the eligible candidates with a value.
struct Ranking {
  // The best first, then every candidate on another platform that the noise cannot separate
  // from it (one: a winner; several: a tie; none: nothing eligible has a value).
  std::vector<const Candidate*> leaders;
  // The best eligible candidate on a platform that is not among the leaders' (the one the
  // winner is ahead of), and by how much; null when every eligible platform leads.
  const Candidate* runner_up = nullptr;
  std::optional<Lead> lead;
  // Why nothing is ranked: no eligible candidate, or every eligible one is blank (its reason).
  std::string blank_reason;
};
Ranking rank_on(const std::vector<Candidate>& candidates, ProcurementMetric m);

// Every eligible candidate of `strategy` ordered best first on m (blank values last).
std::vector<const Candidate*> platforms_ranked(const std::vector<Candidate>& candidates,
                                               const std::string& strategy, ProcurementMetric m);

}  // namespace hb::reports
