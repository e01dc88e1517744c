#pragma once
// Small, fast, seedable random numbers for workloads and tests (std::normal_distribution is
// too slow to fill a 128K-token KV cache and differs between standard libraries).
#include <cmath>
#include <cstdint>

namespace hb {

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed ^ 0x9e3779b97f4a7c15ull) { next(); }
  // Independent stream for (seed, a, b): reproducible no matter which thread uses it.
  Rng(uint64_t seed, uint64_t a, uint64_t b)
      : Rng(seed ^ mix(a + 0x632be59bd9b4e019ull) ^ mix(mix(b) + 1)) {}

  uint64_t next() {  // splitmix64
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    return mix(z);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  float uniformf(float lo, float hi) { return lo + static_cast<float>(uniform()) * (hi - lo); }
  int64_t below(int64_t n) { return static_cast<int64_t>(uniform() * static_cast<double>(n)); }
  float normal() {  // Box-Muller, caching the second value
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u1 = uniform(), u2 = uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    const double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = static_cast<float>(r * std::sin(6.283185307179586 * u2));
    has_spare_ = true;
    return static_cast<float>(r * std::cos(6.283185307179586 * u2));
  }

 private:
  static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t s_;
  float spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace hb
