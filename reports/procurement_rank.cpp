#include "reports/procurement_rank.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "reports/format.h"

namespace hb::reports {

bool higher_is_better(ProcurementMetric m) {
  return m != ProcurementMetric::itl && m != ProcurementMetric::cost;
}

std::string metric_text(ProcurementMetric m, double v) {
  switch (m) {
    case ProcurementMetric::tokens_per_s:
      return format_fixed(v, v < 10 ? 2 : v < 100 ? 1 : 0);
    case ProcurementMetric::itl:
      return format_duration_ns(v);
    case ProcurementMetric::cost:
      return "$" + format_fixed(v, v < 10 ? 3 : v < 1000 ? 2 : 0);
    case ProcurementMetric::tokens_per_w:
      return format_fixed(v, v < 1 ? 4 : 2);
    case ProcurementMetric::max_context:
      return format_token_count(v);
  }
  return "";
}

bool Lead::decided() const {
  if (ci) return ci->excludes_one();
  // Two exact figures (capacities) differ when they differ at all; otherwise twice the combined
  // noise, as Speedup::decided and summary's within_noise judge an unpaired ratio.
  return ratio > 0 && std::fabs(std::log(ratio)) > 2 * rel_noise + 1e-12;
}

namespace {

// Rounds are a measurement's: modeled figures are priced per step, not sampled in rounds.
bool has_rounds(const Candidate& c, ProcurementMetric m) {
  return c.provenance != Provenance::modeled && c.figure(m).rounds.size() >= 2;
}

// a better than b on m (values present).
bool better(const Candidate& a, const Candidate& b, ProcurementMetric m) {
  const double va = *a.figure(m).value, vb = *b.figure(m).value;
  return higher_is_better(m) ? va > vb : va < vb;
}

}  // namespace

std::optional<Lead> compare_on(const Candidate& a, const Candidate& b, ProcurementMetric m) {
  const Figure &fa = a.figure(m), &fb = b.figure(m);
  if (!fa.value || !fb.value || *fa.value <= 0 || *fb.value <= 0) return std::nullopt;
  const bool up = higher_is_better(m);
  Lead l;
  l.ratio = up ? *fa.value / *fb.value : *fb.value / *fa.value;
  l.rel_noise = std::hypot(fa.rel_noise, fb.rel_noise);
  if (has_rounds(a, m) && has_rounds(b, m)) {
    // paired_ratio(x, y) is the median of y_i / x_i: a's advantage per round.
    const RatioInterval ci =
        up ? paired_ratio(fb.rounds, fa.rounds) : paired_ratio(fa.rounds, fb.rounds);
    if (ci.pairs >= 2) l.ci = ci, l.ratio = ci.ratio;
  }
  return l;
}

Ranking rank_on(const std::vector<Candidate>& candidates, ProcurementMetric m) {
  Ranking r;
  // Each platform's best eligible candidate: the ranking is of platforms.
  std::map<std::string, const Candidate*> best_of;
  const Candidate* first_blank = nullptr;
  for (const auto& c : candidates) {
    if (!c.eligible) continue;
    if (!c.figure(m).value) {
      if (!first_blank) first_blank = &c;
      continue;
    }
    auto& b = best_of[c.platform];
    if (!b || better(c, *b, m)) b = &c;
  }
  if (best_of.empty()) {
    r.blank_reason = first_blank ? first_blank->platform + " with " + first_blank->strategy + ": " +
                                       first_blank->figure(m).blank_reason
                                 : "no candidate ran within the accuracy target with memory "
                                   "to hold it";
    return r;
  }
  std::vector<const Candidate*> order;
  for (const auto& [platform, c] : best_of) order.push_back(c);
  std::stable_sort(order.begin(), order.end(),
                   [&](const Candidate* a, const Candidate* b) { return better(*a, *b, m); });
  r.leaders.push_back(order[0]);
  for (size_t i = 1; i < order.size(); ++i) {
    const auto l = compare_on(*order[0], *order[i], m);
    if (l && !l->decided()) {
      r.leaders.push_back(order[i]);
    } else if (!r.runner_up) {
      r.runner_up = order[i];
      r.lead = l;
    }
  }
  return r;
}

std::vector<const Candidate*> platforms_ranked(const std::vector<Candidate>& candidates,
                                               const std::string& strategy, ProcurementMetric m) {
  std::vector<const Candidate*> out;
  for (const auto& c : candidates)
    if (c.eligible && c.strategy == strategy) out.push_back(&c);
  std::stable_sort(out.begin(), out.end(), [&](const Candidate* a, const Candidate* b) {
    if (!a->figure(m).value || !b->figure(m).value)
      return a->figure(m).value.has_value() && !b->figure(m).value.has_value();
    return better(*a, *b, m);
  });
  return out;
}

}  // namespace hb::reports
