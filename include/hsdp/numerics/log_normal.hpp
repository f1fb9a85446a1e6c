// Log-domain special functions (docs/architecture.md, numerics layer).
//
// Probabilities in privacy accounting routinely fall below 1e-300 (delta at large
// epsilon, products of n contraction coefficients), so everything that can underflow
// is computed as a logarithm. Boost 1.74 has no log-domain normal tail and erfc(x)
// underflows to 0 near x = 27, hence the hand-written log Q below.
//
// Accuracy figures are the worst errors measured by tests/test_numerics.cpp against
// 100-digit Boost.Multiprecision references (see docs/numerics.md).
#pragma once

#include <cstdint>
#include <span>

namespace hsdp::num {

/// log of the standard normal upper tail Q(x) = P(N(0,1) > x).
/// Relative accuracy better than 1e-15 for every x >= -37 (measured on [-38, 1e6]);
/// for x < -37.5, log Q(x) = -Q(-x) is subnormal and accurate to a subnormal ulp.
/// log Q(x) -> 0 for x -> -inf; ~ -x^2/2 for x -> +inf (-inf once x^2 overflows,
/// x > 1.3e154, where the true value is below -DBL_MAX).
double log_q(double x);

/// Q(x) itself, relative accuracy ~1e-15 while Q(x) is a normal number (x < 37.5);
/// subnormal beyond and 0 for x > 38.6 (use log_q there).
double q(double x);

/// Standard normal density phi(x) = exp(-x^2/2) / sqrt(2 pi), with the rounding error
/// of x^2 compensated (relative accuracy ~1e-16 while phi(x) is normal, |x| < 37.5).
double phi(double x);

/// log phi(x) = -x^2/2 - log(sqrt(2 pi)).
double log_phi(double x);

/// Mills ratio M(x) = Q(x) / phi(x), relative accuracy ~1e-15. +inf for x < -37.7
/// (M(x) ~ sqrt(2 pi) exp(x^2/2) overflows; use log_mills there).
double mills(double x);

/// log M(x), computed without forming Q or phi separately, so it is accurate for
/// huge |x| (~1e-15 absolute for x >= 0, relative for x < 0).
double log_mills(double x);

/// -M'(x) = 1 - x M(x) > 0, the integrand of M(u) - M(v) = integral_u^v (-M').
/// Relative accuracy ~1e-13 (the subtraction 1 - x M loses up to log10(x^2 + 2) digits
/// for 0 < x < 14; beyond, an asymptotic series is summed without cancellation).
double neg_mills_prime(double x);

/// log(1 - exp(a)) for a <= 0 (Maechler's switch at -log 2). -inf at a = 0, 0 at
/// a = -inf; NaN for a > 0 or NaN.
double log1mexp(double a);

/// log(exp(a) + exp(b)), exact for -inf arguments; NaN if either is NaN.
double logaddexp(double a, double b);

/// log(exp(a) - exp(b)) for a >= b; -inf when a == b (finite or -inf); NaN when a < b,
/// when a == b == +inf (inf - inf) or when either is NaN.
double logsubexp(double a, double b);

/// log sum_{m=0}^{k-1} c^m = log[(1 - c^k) / (1 - c)] for 0 <= c <= 1 and k >= 1 (-inf for
/// k <= 0), from both log c and log(1 - c). Each carries the digits the other loses: near
/// c = 1, log c = log1p(-(1 - c)) is a subnormal with few significant bits once 1 - c is
/// below ~1e-308, while log(1 - c) (~ -740) is exact; near c = 0 the reverse. The numerator
/// is formed from y = -k log c as log(1 - e^{-y}) with log y = log k + log(-log1p(-(1 - c))),
/// so neither a subnormal nor a cancellation enters: where k(1 - c) underflows the result
/// is log k (the sum is k to within a relative 1e-300, and never above it). Relative error
/// of the sum ~1e-15 everywhere (tests/test_numerics.cpp, against 50-digit references).
double log_geometric_sum(double log_c, double log_one_minus_c, std::int64_t k);

/// exp(x) for reporting an UPPER bound whose log is x: the smallest normal double
/// (DBL_MIN) when x is finite but below log(DBL_MIN) ~ -708.4, where exp() would first
/// lose significant bits (a subnormal) and then underflow to 0, reporting a positive
/// probability as 0 or too small. 0 at x = -inf; NaN stays NaN.
double exp_upper(double x);

/// log(sum_i exp(x_i)); -inf for an empty span; NaN if any x_i is NaN; +inf if any
/// x_i is +inf.
double logsumexp(std::span<const double> x);

}  // namespace hsdp::num
