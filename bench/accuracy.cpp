#include "bench/accuracy.h"

#include <algorithm>
#include <cmath>

#include "kernels/reference/attention_ref.h"

namespace hb::bench {

ReferenceOracle::ReferenceOracle(const Problem& problem, ThreadPool& pool, bool keep_all)
    : problem_(problem), pool_(pool), keep_all_(keep_all) {
  // Kept steps carry their probabilities from the first computation when those are small: the
  // strategies run one after another then, and a dense one (needing none) usually comes first,
  // so computing without them meant computing every step twice once a sparse one asked.
  const double probs_bytes = static_cast<double>(problem.batch) * problem.shape.q_heads *
                             static_cast<double>(problem.context_at(problem.decode_steps() - 1)) *
                             sizeof(double);
  eager_probs_ = keep_all && probs_bytes <= kEagerProbsBytes;
  const auto& ws = problem.workloads;
  for (const auto& w : ws) {
    DenseKv g;
    g.kv_heads = w.shape.kv_heads;
    g.head_dim = w.shape.head_dim;
    g.tokens = static_cast<int64_t>(w.steps.size());
    for (const auto& st : w.steps) {
      g.k.insert(g.k.end(), st.k.begin(), st.k.end());
      g.v.insert(g.v.end(), st.v.begin(), st.v.end());
    }
    generated_.push_back(std::move(g));
  }
}

namespace {

// One query head's reference from its prompt part (o1, l1, probabilities p1) and its generated
// part (o2, l2, p2), merged in fp64 into row `row` (sequence x query head) of `ref`.
void merge_parts(StepReference& ref, size_t row, int d, int64_t prompt, int s, const double* o1,
                 double l1, const double* p1, const double* o2, double l2, const double* p2) {
  const double a = l1, c = l2;
  const double m = std::max(a, c);
  const double wa = std::isinf(a) ? 0 : std::exp(a - m), wc = std::isinf(c) ? 0 : std::exp(c - m);
  double* out = ref.o.data() + row * d;
  for (int j = 0; j < d; ++j) out[j] = (wa * o1[j] + wc * o2[j]) / (wa + wc);
  const double lse = m + std::log(wa + wc);
  ref.lse[row] = lse;
  if (!p1) return;
  double* p = ref.probs.data() + row * ref.context;
  const double f1 = std::isinf(a) ? 0 : std::exp(a - lse), f2 = std::exp(c - lse);
  for (int64_t t = 0; t < prompt; ++t) p[t] = p1[t] * f1;
  for (int64_t t = 0; t <= s; ++t) p[prompt + t] = p2[t] * f2;
}

}  // namespace

const StepReference& ReferenceOracle::at(int s, bool with_probs) {
  if (!keep_all_ && cur_.step == s && (!with_probs || !cur_.probs.empty())) return cur_;
  if (auto it = kept_.find(s); it != kept_.end() && (!with_probs || !it->second.probs.empty()))
    return it->second;
  const auto& shape = problem_.shape;
  const int B = problem_.batch, H = shape.q_heads, d = shape.head_dim, Hkv = shape.kv_heads;
  with_probs = with_probs || eager_probs_;
  const int64_t prompt = problem_.prompt_len(), ctx = problem_.context_at(s);
  for (const auto& w : problem_.workloads) w.step(s);  // checked here, outside the pool's tasks
  // Computed where it is kept: a kept step is never copied (its probabilities reach 64 MiB).
  StepReference& out = keep_all_ ? kept_[s] : cur_;
  out.step = s;
  out.context = ctx;
  out.o.assign(static_cast<size_t>(B) * H * d, 0.0);
  out.lse.assign(static_cast<size_t>(B) * H, 0.0);
  out.probs.clear();
  if (with_probs) out.probs.resize(static_cast<size_t>(B) * H * ctx);  // merge_parts writes all
  // One task per (sequence, KV head): its query heads read each key and value row once. The
  // prompt part and the generated part are attended separately and merged in fp64 (avoids
  // copying the prompt KV); probabilities come from the same pass.
  pool_.parallel_for(static_cast<int64_t>(B) * Hkv, [&](int64_t task, int) {
    const int b = static_cast<int>(task / Hkv), kh = static_cast<int>(task % Hkv);
    std::vector<int> heads;
    for (int h = 0; h < H; ++h)
      if (shape.kv_head_of(h) == kh) heads.push_back(h);
    const size_t G = heads.size();
    const Workload& w = problem_.workloads[b];
    const float* q = w.steps[s].q.data();
    const DenseKv& g = generated_[b];
    std::vector<double> o1(G * d), o2(G * d), l1(G), l2(G);
    // The prompt part's probabilities are the size of the context: kept per thread, so a long
    // context's are not faulted in afresh for every step.
    thread_local std::vector<double> p1;
    if (with_probs) p1.resize(std::max(p1.size(), G * static_cast<size_t>(prompt)));
    std::vector<double> p2(with_probs ? G * static_cast<size_t>(s + 1) : 0);
    ref::attention_group(shape, heads, q, w.prompt.k.data(), w.prompt.v.data(), prompt, o1.data(),
                         l1.data(), with_probs ? p1.data() : nullptr);
    ref::attention_group(shape, heads, q, g.k.data(), g.v.data(), s + 1, o2.data(), l2.data(),
                         with_probs ? p2.data() : nullptr);
    for (size_t i = 0; i < G; ++i)
      merge_parts(out, static_cast<size_t>(b) * H + heads[i], d, prompt, s, &o1[i * d], l1[i],
                  with_probs ? p1.data() + i * prompt : nullptr, &o2[i * d], l2[i],
                  with_probs ? p2.data() + i * (s + 1) : nullptr);
  });
  return out;
}

namespace {

// Workload::needle_min_mass: the exact attention's share on the needle span at (sequence, head)
// bh, when the reference kept probabilities.
bool needle_relevant(const Workload& w, const StepReference& ref, size_t bh) {
  if (w.needle_min_mass <= 0 || ref.probs.empty()) return true;
  const double* p = ref.probs.data() + bh * ref.context;
  double mass = 0;
  for (int64_t t = w.needle_token; t < w.needle_token + w.needle_tokens && t < ref.context; ++t)
    mass += p[t];
  return mass >= w.needle_min_mass;
}

}  // namespace

void AccuracyAccumulator::add(const StepReference& ref, const StepResult& out) {
  const auto& shape = problem_.shape;
  const int B = problem_.batch, H = shape.q_heads, d = shape.head_dim;
  double err2 = 0, ref2 = 0, dot = 0, out2 = 0, max_abs = 0, recall = 0;
  for (size_t i = 0; i < ref.o.size(); ++i) {
    const double e = out.o[i] - ref.o[i];
    err2 += e * e;
    ref2 += ref.o[i] * ref.o[i];
    dot += out.o[i] * ref.o[i];
    out2 += static_cast<double>(out.o[i]) * out.o[i];
    max_abs = std::max(max_abs, std::fabs(e));
  }
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < H; ++h) {
      const size_t bh = static_cast<size_t>(b) * H + h;
      const bool dense = out.attended.empty() || out.attended[bh].empty();
      const int64_t n_att = dense ? ref.context : static_cast<int64_t>(out.attended[bh].size());
      attended_min_ = attended_n_ ? std::min(attended_min_, n_att) : n_att;
      attended_max_ = attended_n_ ? std::max(attended_max_, n_att) : n_att;
      attended_sum_ += static_cast<double>(n_att);
      ++attended_n_;
      if (dense || ref.probs.empty()) {
        recall += 1.0;
      } else {
        double m = 0;
        const double* p = ref.probs.data() + bh * ref.context;
        for (int64_t t : out.attended[bh])
          if (t >= 0 && t < ref.context) m += p[t];
        recall += std::min(1.0, m);
      }
      const Workload& w = problem_.workloads[b];
      if (w.needle_token >= 0 && needle_relevant(w, ref, bh)) {
        // Retrieved when the output carries at least half of the needle's value that the exact
        // output carries (the exact output itself is dominated by the needle).
        const float* nv = w.needle_value.data() + static_cast<size_t>(shape.kv_head_of(h)) * d;
        double got = 0, want = 0;
        for (int j = 0; j < d; ++j) {
          got += out.o[bh * d + j] * nv[j];
          want += ref.o[bh * d + j] * nv[j];
        }
        if (want > 0) {
          ++needle_trials_;
          if (got >= 0.5 * want) ++needle_hits_;
        }
      }
    }
  }
  // A trace that carries the traced model's own outputs: how far this output is from them.
  double cap_err2 = 0, cap2 = 0;
  bool captured = ref.step >= 0;
  for (int b = 0; b < B && captured; ++b) {
    const auto& steps = problem_.workloads[b].steps;
    captured = static_cast<size_t>(ref.step) < steps.size() &&
               steps[ref.step].captured_o.size() == static_cast<size_t>(H) * d;
    for (size_t i = 0; captured && i < steps[ref.step].captured_o.size(); ++i) {
      const double c = steps[ref.step].captured_o[i];
      const double e = out.o[static_cast<size_t>(b) * H * d + i] - c;
      cap_err2 += e * e;
      cap2 += c * c;
    }
  }
  if (captured) {
    captured_rel_l2_ += cap2 > 0 ? std::sqrt(cap_err2 / cap2) : std::sqrt(cap_err2);
    ++captured_steps_;
  }
  ++steps_;
  rel_l2_ += ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  cosine_ += (ref2 > 0 && out2 > 0) ? dot / std::sqrt(ref2 * out2) : (ref2 == out2 ? 1.0 : 0.0);
  max_abs_ = std::max(max_abs_, max_abs);
  recall_ += recall / (static_cast<double>(B) * H);
  recall_per_step_.push_back({ref.step, recall / (static_cast<double>(B) * H)});
}

std::optional<reports::AttendedTokens> AccuracyAccumulator::attended() const {
  if (attended_n_ == 0) return std::nullopt;
  return reports::AttendedTokens{attended_sum_ / static_cast<double>(attended_n_), attended_min_,
                                 attended_max_};
}

reports::Accuracy AccuracyAccumulator::result() const {
  reports::Accuracy a;
  a.steps_scored = steps_;
  if (steps_ == 0) return a;
  a.rel_l2 = rel_l2_ / steps_;
  a.cosine = cosine_ / steps_;
  a.max_abs_err = max_abs_;
  a.mass_recall = recall_ / steps_;
  a.recall_per_step = recall_per_step_;
  a.needle_success_rate =
      needle_trials_ ? static_cast<double>(needle_hits_) / needle_trials_ : -1.0;
  // Only when every scored step had the traced model's output to compare with.
  if (captured_steps_ == steps_) a.captured_rel_l2 = captured_rel_l2_ / steps_;
  return a;
}

}  // namespace hb::bench
