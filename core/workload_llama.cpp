// The `llama-like` and `needle` families (Kind::llama_like, Kind::retrieval): attention shaped
// like published measurements of real models, at every context length. core/README.md gives
// each number and its source; tests/core/workload_stats_test.cpp measures them.
//
// Coordinates per KV head (keys and queries, in logit units: logit = q~ . k~, q = sqrt(d) * q~):
// [sink | needle | topic x T | cos,sin x F | noise ...]. Unlike diffuse, the features stay on
// coordinate axes: RoPE rotates fixed pairs of channels, and real keys carry their structure in
// a few outlier channels (KIVI, Liu et al. 2024), which is what lets page bounds over channels
// (Quest's min/max) see it.
#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/thread_pool.h"
#include "core/workload_detail.h"

namespace hb::workload_detail {

namespace {

// Locality reaches this far: the lowest frequency's wavelength, beyond any context we run.
constexpr double kLocalityReach = 1 << 20;
// Decode queries the sink and needle shares are calibrated on (their mean log-odds).
constexpr int64_t kCalibrationQueries = 4;

struct Layout {
  int T, F;
  int sink() const { return 0; }
  int needle() const { return 1; }
  int topic(int j) const { return 2 + j; }
  int pos(int j) const { return 2 + T + 2 * j; }
  int noise_begin() const { return 2 + T + 2 * F; }
};

struct HeadModel {
  std::vector<double> freq;     // locality frequencies, geometric from 1/local_window down
  std::vector<float> needle_v;  // unit needle value direction
  std::vector<int8_t> topic;    // [token] topic of a salient token, -1 if none
  std::vector<float> strength;  // [token] its salient logit (before the query's weight)
};

// Salient tokens come in runs (phrases, not isolated tokens): a run starts with probability
// p_start at a non-salient token and lasts a geometric number of tokens of mean cluster_tokens,
// so a fraction `salient_fraction` of the context is salient.
void place_salient_runs(HeadModel& hm, Rng& rng, const WorkloadSpec& spec, int topics,
                        int64_t total) {
  hm.topic.assign(total, -1);
  hm.strength.assign(total, 0.0f);
  const double f = spec.salient_fraction, len = spec.cluster_tokens;
  if (f <= 0 || topics <= 0) return;
  const double p_start = std::min(1.0, f / (len * (1 - std::min(f, 0.99))));
  const double q = len > 1 ? std::log(1 - 1 / len) : 0;  // log P(the run goes on)
  for (int64_t t = std::max<int64_t>(spec.sink_tokens, 0); t < total;) {
    if (rng.uniform() >= p_start) {
      ++t;
      continue;
    }
    const int64_t run =
        1 + (q < 0 ? static_cast<int64_t>(std::log(1 - rng.uniform()) / q) : int64_t{0});
    const int8_t topic = static_cast<int8_t>(rng.below(topics));
    const float run_strength = spec.salient_logit * rng.uniformf(0.75f, 1.25f);
    for (int64_t e = std::min(total, t + run); t < e; ++t) {
      hm.topic[t] = topic;
      hm.strength[t] = run_strength * rng.uniformf(0.8f, 1.2f);
    }
  }
}

void check_knobs(const WorkloadSpec& spec, float needle_mass) {
  if (!(spec.sink_mass >= 0 && needle_mass >= 0 && spec.sink_mass + needle_mass <= 0.95f))
    throw Error("workload " + spec.label() + ": sink_mass + needle_mass must be in 0..0.95",
                "lower sink_mass or needle_mass");
  if (!(spec.local_window >= 1) || !(spec.cluster_tokens >= 1) || spec.topics < 1)
    throw Error("workload " + spec.label() + " has a knob out of range",
                "see run --help for the knobs' ranges");
}

// The features that fit a head of d dimensions: tiny head dims get fewer of them.
Layout llama_layout(const WorkloadSpec& spec, int d) {
  Layout L{std::max(1, spec.topics), std::max(0, spec.local_frequencies)};
  while (L.noise_begin() >= d && L.F > 0) --L.F;  // locality features go first
  while (L.noise_begin() >= d && L.T > 1) --L.T;
  if (L.noise_begin() >= d)
    throw Error(
        "head_dim " + std::to_string(d) + " is too small for the " + spec.name() + " workload",
        "use head_dim >= 8 or --workload uniform");
  return L;
}

// The partition sums of one query over the prompt: the sinks', the needle's, the rest's.
struct PartitionSums {
  double sink = 0, needle = 0, rest = 0;
};

// The llama-like generator: one method per part, in the order they draw from their RNG streams.
struct LlamaGenerator {
  const AttentionShape& shape;
  const WorkloadSpec& spec;
  int64_t prompt_len;
  bool has_needle;
  float needle_mass;
  int d, kvh;
  Layout L;
  int n_noise;
  double log_range;
  float pos_amp, q_noise_sd, sqrt_d;
  std::vector<HeadModel> heads;
  int64_t needle_token = -1, needle_tokens = 0;

  LlamaGenerator(const AttentionShape& s, int64_t prompt, const WorkloadSpec& sp)
      : shape(s),
        spec(sp),
        prompt_len(prompt),
        has_needle(sp.needle && prompt > 0),
        needle_mass(has_needle ? sp.needle_mass : 0.0f),
        d(s.head_dim),
        kvh(s.kv_heads),
        L((check_knobs(sp, needle_mass), llama_layout(sp, d))),
        n_noise(d - L.noise_begin()),
        // Geometric frequencies from 1/local_window down to 1/kLocalityReach (RoPE's spectrum):
        // their mean cosine falls like -ln(distance)/ln(reach/window) between the two, so
        // amplitude^2 * F = decay * ln(reach/window) makes the logit fall by `decay` per e-fold
        // of distance.
        log_range(std::log(kLocalityReach / sp.local_window)),
        pos_amp(L.F && log_range > 0 ? static_cast<float>(std::sqrt(sp.decay * log_range / L.F))
                                     : 0.0f),
        q_noise_sd(sp.noise_logit / std::sqrt(static_cast<float>(n_noise))),
        sqrt_d(std::sqrt(static_cast<float>(d))) {}

  bool in_needle(int64_t t) const {
    return has_needle && t >= needle_token && t < needle_token + needle_tokens;
  }
  void make_heads(int64_t total);
  void plant_needle(Workload& w);
  DenseKv keys_and_values(int64_t total) const;
  float drifting_queries(int qh, std::vector<float>& queries, int64_t n_pq, int64_t n_q) const;
  PartitionSums partition_sums(const DenseKv& kv, const float* q, int h) const;
  void calibrate(int qh, std::vector<float>& queries, const DenseKv& all, int64_t n_pq, int64_t n_q,
                 float sink_target) const;
};

void LlamaGenerator::make_heads(int64_t total) {
  heads.resize(kvh);
  ThreadPool::global().parallel_for(kvh, [&](int64_t h, int) {
    Rng rng(spec.seed, kLlamaStream, static_cast<uint64_t>(h));
    HeadModel& hm = heads[h];
    for (int j = 0; j < L.F; ++j)  // one frequency per equal slice of log-frequency, jittered
      hm.freq.push_back(
          std::exp(-std::log(spec.local_window) - (j + rng.uniform()) * log_range / L.F));
    hm.needle_v = random_unit(rng, d);
    place_salient_runs(hm, rng, spec, L.T, total);
  });
}

void LlamaGenerator::plant_needle(Workload& w) {
  if (!has_needle) return;
  w.needle_tokens = std::min<int64_t>(spec.needle_tokens, prompt_len);
  w.needle_token = std::clamp<int64_t>(static_cast<int64_t>(spec.needle_position * prompt_len), 0,
                                       prompt_len - w.needle_tokens);
  w.needle_value.resize(static_cast<size_t>(kvh) * d);
  for (int h = 0; h < kvh; ++h)
    std::copy(heads[h].needle_v.begin(), heads[h].needle_v.end(), w.needle_value.begin() + h * d);
  needle_token = w.needle_token;
  needle_tokens = w.needle_tokens;
}

// Keys and values of every position, in parallel chunks with one RNG stream per (head, chunk)
// so the result does not depend on the thread count. Sinks and the needle carry a unit
// coefficient: the queries' coefficients on them are calibrated below.
DenseKv LlamaGenerator::keys_and_values(int64_t total) const {
  DenseKv kv = zero_kv(total, kvh, d);
  for_each_kv_chunk(total, kvh, [&](int h, int64_t c, int64_t first, int64_t last) {
    Rng rng(spec.seed, kLlamaStream + 1 + h, c);
    const HeadModel& hm = heads[h];
    std::vector<float> lat(d);
    for (int64_t t = first; t < last; ++t) {
      std::fill(lat.begin(), lat.end(), 0.0f);
      if (t < spec.sink_tokens) lat[L.sink()] = 1.0f;
      if (in_needle(t)) lat[L.needle()] = 1.0f;
      if (hm.topic[t] >= 0) lat[L.topic(hm.topic[t])] = hm.strength[t];
      for (int j = 0; j < L.F; ++j) {
        lat[L.pos(j)] = pos_amp * static_cast<float>(std::cos(hm.freq[j] * t));
        lat[L.pos(j) + 1] = pos_amp * static_cast<float>(std::sin(hm.freq[j] * t));
      }
      for (int i = L.noise_begin(); i < d; ++i) lat[i] = rng.normal();
      std::copy(lat.begin(), lat.end(), kv.k.data() + (t * kvh + h) * d);
      float* v = kv.v.data() + (t * kvh + h) * d;
      const bool needle = in_needle(t);
      for (int i = 0; i < d; ++i)
        v[i] =
            needle ? spec.needle_value_scale * hm.needle_v[i] + 0.1f * rng.normal() : rng.normal();
    }
  });
  finish_kv(kv, spec, shape.kv_dtype);
  return kv;
}

// Query head qh's queries: topic weights (what this head looks for) and noise both drift step
// to step. Returns this head's sink share to calibrate for.
float LlamaGenerator::drifting_queries(int qh, std::vector<float>& queries, int64_t n_pq,
                                       int64_t n_q) const {
  const float drift = std::clamp(spec.query_drift, 0.0f, 1.0f);
  const float keep = std::sqrt(1 - drift * drift);
  const HeadModel& hm = heads[shape.kv_head_of(qh)];
  Rng rng(spec.seed, kLlamaStream + (1 << 20) + qh, 0);
  std::vector<float> noise(n_noise), lat(d), want(L.T), wobble(L.T, 0.0f);
  for (auto& x : noise) x = rng.normal();
  for (auto& x : want) x = static_cast<float>(rng.uniform());
  // This head's sink share: the mean over heads is sink_mass, heads differ by +-50%.
  const float sink_target =
      std::min(spec.sink_mass * rng.uniformf(0.5f, 1.5f), 0.95f - needle_mass);
  for (int64_t i = 0; i < n_q; ++i) {
    const int64_t pos = prompt_len - n_pq + i;  // absolute position of this query's token
    if (i > 0) {
      for (auto& x : noise) x = keep * x + drift * rng.normal();
      for (auto& x : wobble) x = keep * x + drift * 0.3f * rng.normal();
    }
    std::fill(lat.begin(), lat.end(), 0.0f);
    for (int j = 0; j < L.T; ++j) lat[L.topic(j)] = std::max(0.0f, want[j] + wobble[j]);
    for (int j = 0; j < L.F; ++j) {
      lat[L.pos(j)] = pos_amp * static_cast<float>(std::cos(hm.freq[j] * pos));
      lat[L.pos(j) + 1] = pos_amp * static_cast<float>(std::sin(hm.freq[j] * pos));
    }
    for (int j = 0; j < n_noise; ++j) lat[L.noise_begin() + j] = q_noise_sd * noise[j];
    float* q = queries.data() + (i * shape.q_heads + qh) * d;
    for (int j = 0; j < d; ++j) q[j] = sqrt_d * lat[j];
  }
  return sink_target;
}

PartitionSums LlamaGenerator::partition_sums(const DenseKv& kv, const float* qc, int h) const {
  PartitionSums sums;
  auto add = [&](int64_t t, double dot) {
    const double e = std::exp(std::clamp(dot / sqrt_d, -700.0, 700.0));
    (t < spec.sink_tokens ? sums.sink : in_needle(t) ? sums.needle : sums.rest) += e;
  };
  // Eight tokens' dot products side by side, each summed in dimension order and added in token
  // order: the same figures to the bit as one at a time, without one long chain of dependent
  // adds per token (this loop was a tenth of `run --mode model` at 128k).
  constexpr int64_t kChains = 8;
  const int64_t stride = static_cast<int64_t>(kvh) * d;
  for (int64_t t = 0; t < prompt_len; t += kChains) {
    const int64_t n = std::min(kChains, prompt_len - t);
    double dot[kChains] = {};
    const float* k0 = kv.k.data() + (t * kvh + h) * d;
    for (int j = 0; j < d; ++j) {
      const double qj = qc[j];
      for (int64_t c = 0; c < n; ++c) dot[c] += qj * k0[c * stride + j];
    }
    for (int64_t c = 0; c < n; ++c) add(t + c, dot[c]);
  }
  return sums;
}

// The sink and needle coefficients of query head qh, solved for so that the first decode
// queries give them their target shares: the log ratios of the rest's partition sum over the
// prompt to the sinks' and the needle's, averaged over the first kCalibrationQueries decode
// queries (the last prompt query without any); the coefficients then put each share at its
// target for that mean.
void LlamaGenerator::calibrate(int qh, std::vector<float>& queries, const DenseKv& kv, int64_t n_pq,
                               int64_t n_q, float sink_target) const {
  const int h = shape.kv_head_of(qh);
  const int64_t first = std::min(n_pq, n_q - 1);
  const int64_t n_cal = std::min<int64_t>(kCalibrationQueries, n_q - first);
  double log_rest_sink = 0, log_rest_needle = 0;
  for (int64_t i = first; i < first + n_cal; ++i) {
    const PartitionSums z = partition_sums(kv, queries.data() + (i * shape.q_heads + qh) * d, h);
    if (!(z.rest > 0)) return;  // a prompt of sinks only: nothing to calibrate against
    log_rest_sink += z.sink > 0 ? std::log(z.rest / z.sink) : 0.0;
    log_rest_needle += z.needle > 0 ? std::log(z.rest / z.needle) : 0.0;
  }
  // share_x / share_rest = e^c_x * X / R, so c_x = ln(target_x / rest_share) + ln(R / X).
  const double rest_share = 1.0 - sink_target - needle_mass;
  const float c_sink =
      sink_target > 0 && spec.sink_tokens > 0
          ? static_cast<float>(std::log(sink_target / rest_share) + log_rest_sink / n_cal)
          : 0.0f;
  const float c_needle =
      needle_mass > 0 && has_needle
          ? static_cast<float>(std::log(needle_mass / rest_share) + log_rest_needle / n_cal)
          : 0.0f;
  for (int64_t i = 0; i < n_q; ++i) {
    float* q = queries.data() + (i * shape.q_heads + qh) * d;
    q[L.sink()] += sqrt_d * c_sink;
    q[L.needle()] += sqrt_d * c_needle;
  }
}

}  // namespace

Workload make_llama_like(const AttentionShape& shape, int64_t prompt_len, int decode_steps,
                         const WorkloadSpec& spec) {
  LlamaGenerator gen(shape, prompt_len, spec);
  Workload w = blank_workload(shape, spec, spec.label());
  const int64_t total = prompt_len + decode_steps;
  gen.make_heads(total);
  gen.plant_needle(w);
  DenseKv all = gen.keys_and_values(total);
  // Queries, one task per query head; then the sink and needle coefficients are calibrated.
  QueryBuffer qb = query_buffer(shape, spec, prompt_len, decode_steps);
  ThreadPool::global().parallel_for(shape.q_heads, [&](int64_t task, int) {
    const int qh = static_cast<int>(task);
    const float sink_target = gen.drifting_queries(qh, qb.q, qb.n_prompt, qb.n);
    if (qb.n == 0 || prompt_len == 0) return;
    gen.calibrate(qh, qb.q, all, qb.n_prompt, qb.n, sink_target);
  });
  assemble(w, std::move(all), qb.q, qb.n_prompt, decode_steps);
  return w;
}

}  // namespace hb::workload_detail
