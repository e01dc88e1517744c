#include "bench/round_close.h"

#include "core/paired_ratio.h"
#include "core/stats.h"

namespace hb::bench {

namespace {

std::vector<double> round_medians(const Contender& c) {
  return block_medians(c.samples, c.rounds.sizes);
}

// Every pair of headline contenders of one context has a settled ratio. Layer stacks (run
// --layers) are no headline: their figure is their error against their own one-layer point.
bool headline_decided(const std::vector<std::pair<Contender*, int>>& rs) {
  for (size_t i = 0; i < rs.size(); ++i)
    for (size_t j = i + 1; j < rs.size(); ++j) {
      const Contender& a = *rs[i].first;
      const Contender& b = *rs[j].first;
      if (a.ctx != b.ctx || a.point.role == StrategyRole::ablation ||
          b.point.role == StrategyRole::ablation || a.stack() || b.stack())
        continue;
      if (!pair_decided(a, b, a.ctx->spec.stop.max_noise)) return false;
    }
  return true;
}

}  // namespace

bool pair_decided(const Contender& a, const Contender& b, double max_noise) {
  const RatioInterval r = paired_ratio(round_medians(a), round_medians(b));
  return r.excludes_one() || r.within(max_noise);
}

void finish_group(const std::vector<Contender*>& cs, reports::StopReason limit) {
  for (Contender* c : cs)
    if (c->active) finish(*c, c->stop.converged() ? reports::StopReason::noise : limit);
}

bool close_round(const std::vector<Contender*>& cs, const std::vector<size_t>& order,
                 int rounds_done) {
  std::vector<std::pair<Contender*, int>> rs;
  for (size_t slot = 0; slot < order.size(); ++slot)
    if (cs[order[slot]]->active) rs.emplace_back(cs[order[slot]], static_cast<int>(slot));
  return close_round(rs, rounds_done);
}

bool close_round(const std::vector<std::pair<Contender*, int>>& rs, int rounds_done) {
  if (rs.empty()) return true;
  const StoppingCriterion* limit = nullptr;
  bool all_converged = true;
  for (auto [r, slot] : rs) {
    r->rounds.sizes.push_back(static_cast<int64_t>(r->samples.size() - r->rounds.begin));
    r->rounds.slots.push_back(slot);
    r->rounds.begin = r->samples.size();
    if (!limit) limit = r->stop.limit();
    all_converged &= r->stop.converged();
  }
  const SweepSpec& spec = rs.front().first->ctx->spec;
  const bool settled = rounds_done >= spec.stop.rounds && all_converged && headline_decided(rs);
  if (!limit && !settled) return false;
  for (auto [r, slot] : rs) {
    const StoppingCriterion* own = r->stop.limit();
    const reports::StopReason why = r->stop.converged() ? reports::StopReason::noise
                                    : own               ? own->reason()
                                                        : limit->reason();
    finish(*r, why);
  }
  return true;
}

}  // namespace hb::bench
