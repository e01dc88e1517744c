#include "core/workload.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/rng.h"
#include "core/thread_pool.h"
#include "core/workload_detail.h"

namespace hb {

int64_t Workload::num_prompt_queries() const {
  const int64_t per = static_cast<int64_t>(shape.q_heads) * shape.head_dim;
  return per ? static_cast<int64_t>(prompt_queries.size()) / per : 0;
}

const DecodeStep& Workload::step(int64_t s) const {
  if (s < 0 || s >= static_cast<int64_t>(steps.size()))
    throw Error("decode step " + std::to_string(s) + " is past the workload (" + source + " has " +
                    std::to_string(steps.size()) + " decode steps)",
                "pass --decode-steps " + std::to_string(steps.size()) + " or fewer");
  const DecodeStep& st = steps[static_cast<size_t>(s)];
  const size_t kn = static_cast<size_t>(shape.kv_heads) * shape.head_dim;
  const size_t qn = static_cast<size_t>(shape.q_heads) * shape.head_dim;
  if (st.k.size() != kn || st.v.size() != kn || st.q.size() != qn)
    throw Error("decode step " + std::to_string(s) + " of " + source + " has q/k/v of " +
                    std::to_string(st.q.size()) + "/" + std::to_string(st.k.size()) + "/" +
                    std::to_string(st.v.size()) + " values, not " + std::to_string(qn) + "/" +
                    std::to_string(kn) + "/" + std::to_string(kn) + " (" + shape.to_string() + ")",
                {}, kExitFailure);
  return st;
}

namespace {

using workload_detail::Rotation;

// Latent coordinates: [sink | heavy x H | needle | cos,sin x F | noise ...].
struct Layout {
  int H, F, d;
  int sink() const { return 0; }
  int heavy(int i) const { return 1 + i; }
  int needle() const { return 1 + H; }
  int pos(int j) const { return 2 + H + 2 * j; }
  int noise_begin() const { return 2 + H + 2 * F; }
};

struct HeadModel {
  Rotation rot;
  std::vector<float> freq;      // recency frequencies
  std::vector<float> q_heavy;   // [group][H] query weights on heavy directions
  std::vector<float> needle_v;  // unit needle value direction
};

}  // namespace

namespace workload_detail {

void add_value_mean(DenseKv& all, const WorkloadSpec& spec) {
  const int d = all.head_dim;
  const float scale = spec.value_mean * std::sqrt(static_cast<float>(d));
  for (int h = 0; h < all.kv_heads; ++h) {
    Rng rng(spec.seed, kValueMeanStream, h);  // its own stream: the other draws do not move
    const std::vector<float> mean = random_unit(rng, d);
    for (int64_t t = 0; t < all.tokens; ++t) {
      float* v = all.v.data() + (t * all.kv_heads + h) * d;
      for (int i = 0; i < d; ++i) v[i] += scale * mean[i];
    }
  }
}

Workload blank_workload(const AttentionShape& shape, const WorkloadSpec& spec,
                        const std::string& label) {
  Workload w;
  w.shape = shape;
  w.spec = spec;
  w.source = "synthetic:" + label;
  return w;
}

DenseKv zero_kv(int64_t tokens, int kv_heads, int head_dim) {
  DenseKv kv;
  kv.tokens = tokens;
  kv.kv_heads = kv_heads;
  kv.head_dim = head_dim;
  kv.k.assign(static_cast<size_t>(tokens) * kv_heads * head_dim, 0.0f);
  kv.v.assign(static_cast<size_t>(tokens) * kv_heads * head_dim, 0.0f);
  return kv;
}

void for_each_kv_chunk(int64_t tokens, int kv_heads,
                       const std::function<void(int, int64_t, int64_t, int64_t)>& fill) {
  constexpr int64_t kChunk = 4096;
  const int64_t chunks = (tokens + kChunk - 1) / kChunk;
  ThreadPool::global().parallel_for(chunks * kv_heads, [&](int64_t task, int) {
    const int64_t c = task / kv_heads;
    fill(static_cast<int>(task % kv_heads), c, c * kChunk, std::min(tokens, (c + 1) * kChunk));
  });
}

void finish_kv(DenseKv& all, const WorkloadSpec& spec, DType kv_dtype) {
  if (spec.value_mean != 0) add_value_mean(all, spec);
  round_through(kv_dtype, all.k.data(), all.k.size());
  round_through(kv_dtype, all.v.data(), all.v.size());
}

QueryBuffer query_buffer(const AttentionShape& shape, const WorkloadSpec& spec, int64_t prompt_len,
                         int decode_steps) {
  QueryBuffer b;
  b.n_prompt = std::min<int64_t>(spec.prompt_queries, prompt_len);
  b.n = b.n_prompt + decode_steps;
  b.q.assign(static_cast<size_t>(b.n) * shape.q_heads * shape.head_dim, 0.0f);
  return b;
}

void check_lengths(int64_t prompt_len, int decode_steps) {
  if (prompt_len < 0 || decode_steps < 0)
    throw Error("negative sequence length or decode steps",
                "pass --seq-len >= 0 and --decode-steps >= 0");
}

void assemble(Workload& w, DenseKv&& all, const std::vector<float>& queries, int64_t n_pq,
              int decode_steps) {
  const AttentionShape& shape = w.shape;
  const int d = shape.head_dim;
  const int64_t prompt_len = all.tokens - decode_steps;
  const size_t row = static_cast<size_t>(shape.kv_heads) * d;
  const size_t qrow = static_cast<size_t>(shape.q_heads) * d;
  w.prompt_queries.assign(queries.begin(), queries.begin() + n_pq * qrow);
  w.steps.resize(decode_steps);
  for (int s = 0; s < decode_steps; ++s) {
    const int64_t t = prompt_len + s;
    w.steps[s].k.assign(all.k.begin() + t * row, all.k.begin() + (t + 1) * row);
    w.steps[s].v.assign(all.v.begin() + t * row, all.v.begin() + (t + 1) * row);
    w.steps[s].q.assign(queries.begin() + (n_pq + s) * qrow,
                        queries.begin() + (n_pq + s + 1) * qrow);
  }
  // The prompt is the leading rows: kept where they are, not copied (1 GiB of fp32 at 128k).
  w.prompt.tokens = prompt_len;
  w.prompt.kv_heads = shape.kv_heads;
  w.prompt.head_dim = d;
  w.prompt.k = std::move(all.k);
  w.prompt.v = std::move(all.v);
  w.prompt.k.resize(prompt_len * row);
  w.prompt.v.resize(prompt_len * row);
}

}  // namespace workload_detail

namespace {

// The spec a diffuse-family kind stands for: uniform has no features, needle always a needle.
WorkloadSpec diffuse_spec(const WorkloadSpec& in) {
  WorkloadSpec spec = in;
  if (spec.kind == WorkloadSpec::Kind::uniform) {
    spec.sink_logit = spec.recency_logit = spec.heavy_logit = 0;
    spec.heavy_fraction = 0;
    spec.needle = false;
  }
  if (spec.kind == WorkloadSpec::Kind::needle) spec.needle = true;
  return spec;
}

// The features that fit a head of d dimensions: tiny head dims get fewer of them.
Layout diffuse_layout(const WorkloadSpec& spec, int d) {
  Layout L{std::max(0, spec.heavy_directions), std::max(0, spec.recency_frequencies), d};
  while (L.noise_begin() >= d && L.F > 0) --L.F;  // positional features go first
  while (L.noise_begin() >= d && L.H > 0) --L.H;
  if (L.noise_begin() >= d)
    throw Error("head_dim " + std::to_string(d) + " is too small for the structured workload",
                "use head_dim >= 8 or --workload uniform");
  return L;
}

// The original generator (`diffuse`, Kind::structured/uniform/needle): fixed logits per
// feature, so its sink share and locality fade with the context length (a stress case). One
// method per part, in the order they draw from their RNG streams.
struct DiffuseGenerator {
  const AttentionShape& shape;
  WorkloadSpec spec;
  int d, kvh, G;
  Layout L;
  int n_noise;
  float pos_amp, q_noise_sd;
  std::vector<HeadModel> heads;

  DiffuseGenerator(const AttentionShape& s, const WorkloadSpec& in)
      : shape(s),
        spec(diffuse_spec(in)),
        d(s.head_dim),
        kvh(s.kv_heads),
        G(s.group_size()),
        L(diffuse_layout(spec, d)),
        n_noise(d - L.noise_begin()),
        pos_amp(L.F ? std::sqrt(spec.recency_logit / L.F) : 0.0f),
        q_noise_sd(spec.noise_logit / std::sqrt(static_cast<float>(n_noise))) {}

  void make_heads();
  void plant_needle(Workload& w, int64_t prompt_len) const;
  DenseKv keys_and_values(int64_t total, int64_t needle_token) const;
  void query(int qh, std::vector<float>& queries, int64_t prompt_len, int64_t n_pq,
             int64_t n_q) const;
};

void DiffuseGenerator::make_heads() {
  heads.resize(kvh);
  for (int h = 0; h < kvh; ++h) {
    Rng rng(spec.seed, 1, h);
    heads[h].rot.init(rng, d);
    for (int j = 0; j < L.F; ++j)
      heads[h].freq.push_back(static_cast<float>(rng.uniform() * M_PI / spec.recency_scale));
    for (int g = 0; g < G * L.H; ++g) heads[h].q_heavy.push_back(rng.uniformf(0.5f, 1.0f));
    heads[h].needle_v = workload_detail::random_unit(rng, d);
  }
}

void DiffuseGenerator::plant_needle(Workload& w, int64_t prompt_len) const {
  if (!spec.needle || prompt_len <= 0) return;
  w.needle_token = std::clamp<int64_t>(static_cast<int64_t>(spec.needle_position * prompt_len), 0,
                                       prompt_len - 1);
  w.needle_tokens = 1;
  w.needle_value.resize(static_cast<size_t>(kvh) * d);
  for (int h = 0; h < kvh; ++h)
    std::copy(heads[h].needle_v.begin(), heads[h].needle_v.end(), w.needle_value.begin() + h * d);
}

// Keys and values of every position (prompt and generated), filled in parallel chunks with
// one RNG stream per (head, chunk) so the result does not depend on the thread count.
DenseKv DiffuseGenerator::keys_and_values(int64_t total, int64_t needle_token) const {
  DenseKv all = workload_detail::zero_kv(total, kvh, d);
  workload_detail::for_each_kv_chunk(
      total, kvh, [&](int h, int64_t c, int64_t first, int64_t last) {
        Rng rng(spec.seed, 2 + h, c);
        const HeadModel& hm = heads[h];
        std::vector<float> lat(d);
        for (int64_t t = first; t < last; ++t) {
          std::fill(lat.begin(), lat.end(), 0.0f);
          if (t < spec.sink_tokens) lat[L.sink()] = spec.sink_logit;
          // Sinks are excluded from heavy hitters; generated tokens may be heavy too.
          if (L.H > 0 && t >= spec.sink_tokens && rng.uniform() < spec.heavy_fraction)
            lat[L.heavy(static_cast<int>(rng.below(L.H)))] =
                spec.heavy_logit * rng.uniformf(0.75f, 1.25f);
          if (t == needle_token) lat[L.needle()] = spec.needle_logit;
          for (int j = 0; j < L.F; ++j) {
            lat[L.pos(j)] = pos_amp * std::cos(hm.freq[j] * t);
            lat[L.pos(j) + 1] = pos_amp * std::sin(hm.freq[j] * t);
          }
          for (int i = L.noise_begin(); i < d; ++i) lat[i] = rng.normal();
          hm.rot.apply(lat.data(), d);
          float* k = all.k.data() + (t * kvh + h) * d;
          std::copy(lat.begin(), lat.end(), k);
          float* v = all.v.data() + (t * kvh + h) * d;
          if (t == needle_token) {
            for (int i = 0; i < d; ++i)
              v[i] = spec.needle_value_scale * hm.needle_v[i] + 0.1f * rng.normal();
          } else {
            for (int i = 0; i < d; ++i) v[i] = rng.normal();
          }
        }
      });
  workload_detail::finish_kv(all, spec, shape.kv_dtype);
  return all;
}

// Query head qh's queries: structured coefficients, with noise that drifts step to step.
void DiffuseGenerator::query(int qh, std::vector<float>& queries, int64_t prompt_len, int64_t n_pq,
                             int64_t n_q) const {
  const float sqrt_d = std::sqrt(static_cast<float>(d));
  const float drift = std::clamp(spec.query_drift, 0.0f, 1.0f);
  const int h = shape.kv_head_of(qh), g = qh % G;
  const HeadModel& hm = heads[h];
  Rng rng(spec.seed, 1000 + qh, 0);
  std::vector<float> noise(n_noise), lat(d);
  for (auto& x : noise) x = rng.normal();
  float heavy_jitter = 1.0f;
  for (int64_t i = 0; i < n_q; ++i) {
    const int64_t pos = prompt_len - n_pq + i;  // absolute position of this query's token
    if (i > 0) {
      for (auto& x : noise) x = std::sqrt(1 - drift * drift) * x + drift * rng.normal();
      heavy_jitter = std::clamp(heavy_jitter + drift * 0.3f * rng.normal(), 0.5f, 1.5f);
    }
    std::fill(lat.begin(), lat.end(), 0.0f);
    lat[L.sink()] = 1.0f;
    for (int j = 0; j < L.H; ++j) lat[L.heavy(j)] = hm.q_heavy[g * L.H + j] * heavy_jitter;
    lat[L.needle()] = spec.needle ? 1.0f : 0.0f;
    for (int j = 0; j < L.F; ++j) {
      lat[L.pos(j)] = pos_amp * std::cos(hm.freq[j] * pos);
      lat[L.pos(j) + 1] = pos_amp * std::sin(hm.freq[j] * pos);
    }
    for (int j = 0; j < n_noise; ++j) lat[L.noise_begin() + j] = q_noise_sd * noise[j];
    hm.rot.apply(lat.data(), d);
    float* q = queries.data() + (i * shape.q_heads + qh) * d;
    for (int j = 0; j < d; ++j) q[j] = sqrt_d * lat[j];
  }
}

Workload make_diffuse(const AttentionShape& shape, int64_t prompt_len, int decode_steps,
                      const WorkloadSpec& in) {
  DiffuseGenerator gen(shape, in);
  Workload w = workload_detail::blank_workload(shape, gen.spec, in.label());
  gen.make_heads();
  gen.plant_needle(w, prompt_len);
  DenseKv all = gen.keys_and_values(prompt_len + decode_steps, w.needle_token);
  auto qb = workload_detail::query_buffer(shape, gen.spec, prompt_len, decode_steps);
  for (int qh = 0; qh < shape.q_heads; ++qh) gen.query(qh, qb.q, prompt_len, qb.n_prompt, qb.n);
  workload_detail::assemble(w, std::move(all), qb.q, qb.n_prompt, decode_steps);
  return w;
}

}  // namespace

Workload make_workload(const AttentionShape& shape, int64_t prompt_len, int decode_steps,
                       const WorkloadSpec& spec) {
  shape.validate();
  workload_detail::check_lengths(prompt_len, decode_steps);
  if (spec.kind == WorkloadSpec::Kind::llama_like || spec.kind == WorkloadSpec::Kind::retrieval)
    return workload_detail::make_llama_like(shape, prompt_len, decode_steps, spec);
  return make_diffuse(shape, prompt_len, decode_steps, spec);
}

}  // namespace hb
