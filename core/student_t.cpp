#include "core/student_t.h"

#include <cmath>

namespace hb {

namespace {

// The continued fraction of the regularized incomplete beta function I_x(a, b), evaluated by
// the modified Lentz method; converges quickly for x < (a + 1) / (a + b + 2).
double beta_continued_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEps = 1e-15;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  auto step = [&](double aa) {  // one term of the fraction; returns the factor it applied
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    return d * c;
  };
  for (int m = 1; m <= 500; ++m) {
    const double m2 = 2.0 * m;
    step(m * (b - m) * x / ((a + m2 - 1) * (a + m2)));  // the even term
    if (std::fabs(step(-(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1))) - 1) < kEps)
      return h;  // the odd term changed nothing: converged
  }
  return h;
}

// I_x(a, b), the regularized incomplete beta function, for 0 <= x <= 1.
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  // The fraction converges on the side of the mean; the symmetry I_x(a,b) = 1 - I_{1-x}(b,a)
  // covers the other.
  if (x < (a + 1) / (a + b + 2)) return front * beta_continued_fraction(a, b, x) / a;
  return 1 - front * beta_continued_fraction(b, a, 1 - x) / b;
}

}  // namespace

double student_t_cdf(double t, int df) {
  if (df < 1 || std::isnan(t)) return NAN;
  const double nu = df;
  const double tail = 0.5 * incomplete_beta(nu / 2, 0.5, nu / (nu + t * t));  // P(T > |t|)
  return t >= 0 ? 1 - tail : tail;
}

double student_t_quantile(double p, int df) {
  if (df < 1 || !(p > 0 && p < 1)) return NAN;
  if (p < 0.5) return -student_t_quantile(1 - p, df);
  double lo = 0, hi = 1;
  while (student_t_cdf(hi, df) < p && hi < 1e12) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-9 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, df) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace hb
