#pragma once
// Student's t distribution: what an interval over a handful of independent repetitions needs
// (core/paired_ratio.h's repeated_ratio). Three repetitions leave two degrees of freedom, where
// the normal quantile (1.96) would claim an interval less than half as wide as it is (4.30).

namespace hb {

// P(T <= t) for T ~ Student's t with `df` >= 1 degrees of freedom.
double student_t_cdf(double t, int df);

// The t with P(T <= t) = p, for 0 < p < 1 and df >= 1 (bisection on student_t_cdf, to 1e-9
// relative); e.g. student_t_quantile(0.975, 2) = 4.303.
double student_t_quantile(double p, int df);

}  // namespace hb
