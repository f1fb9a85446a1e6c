// Log-domain special functions (DESIGN.md, numerics layer).
//
// Probabilities in privacy accounting routinely fall below 1e-300 (delta at large
// epsilon, products of n contraction coefficients), so everything that can underflow
// is computed as a logarithm. Boost 1.74 has no log-domain normal tail and erfc(x)
// underflows to 0 near x = 27, hence the hand-written log Q below.
#pragma once

#include <span>

namespace hsdp::num {

/// log of the standard normal upper tail Q(x) = P(N(0,1) > x).
/// Relative accuracy ~1e-14 for x in [-38, 1e6]; finite for every finite x
/// (log Q(x) -> 0 for x -> -inf, ~ -x^2/2 for x -> +inf).
double log_q(double x);

/// Q(x) itself (underflows to 0 for x > ~38.5; use log_q there).
double q(double x);

/// log of the Mills ratio M(x) = Q(x) / phi(x), phi the standard normal density.
/// Computed without forming Q or phi separately, so it is accurate for huge |x|.
double log_mills(double x);

/// log phi(x) = -x^2/2 - log(sqrt(2 pi)).
double log_phi(double x);

/// log(1 - exp(a)) for a <= 0 (Maechler's switch at -log 2). -inf at a = 0; NaN for a > 0.
double log1mexp(double a);

/// log(exp(a) + exp(b)), exact for -inf arguments.
double logaddexp(double a, double b);

/// log(exp(a) - exp(b)) for a >= b; -inf when a == b; NaN when a < b.
double logsubexp(double a, double b);

/// log(sum_i exp(x_i)); -inf for an empty span.
double logsumexp(std::span<const double> x);

}  // namespace hsdp::num
