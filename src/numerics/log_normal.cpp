#include "hsdp/numerics/log_normal.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace hsdp::num {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kLogSqrt2Pi = 0.91893853320467274178032973640562;  // log(sqrt(2 pi))
constexpr double kInvSqrt2Pi = 0.39894228040143267793994605993438;  // 1 / sqrt(2 pi)
constexpr double kSqrt2Pi = 2.5066282746310005024157652848110;      // sqrt(2 pi)
constexpr double kSqrtHalfPi = 1.2533141373155002512078826424055;   // sqrt(pi / 2)
constexpr double kInvSqrt2 = 0.70710678118654752440084436210485;    // 1 / sqrt 2

// From this point on, the Mills ratio is summed from its asymptotic series (15 terms
// reach 1e-17 at x = 14). Below it, M is formed from erfc, and 1 - x M loses
// log10(x^2 + 2) < 2.3 digits to cancellation.
constexpr double kAsymptotic = 14.0;
// Past this point phi(x) and Q(x) are 0 in double (Q(38.5) ~ 1e-324).
constexpr double kUnderflow = 40.0;
// exp(x^2 / 2) overflows for |x| > 37.7; M(x) and 1 - x M(x) are +inf below this.
constexpr double kMillsOverflow = -37.7;

// x^2 = s + e exactly (Dekker's product; no FMA instruction is assumed, and std::fma
// would be a library call). Valid for |x| < 1e150.
struct TwoSquare {
  double s, e;
};
TwoSquare two_square(double x) {
  constexpr double kSplit = 134217729.0;  // 2^27 + 1
  const double c = kSplit * x;
  const double hi = c - (c - x);
  const double lo = x - hi;
  const double s = x * x;
  return {s, ((hi * hi - s) + 2.0 * hi * lo) + lo * lo};
}

// exp(-x^2 / 2) with the rounding error of x^2 compensated: a plain exp(-0.5 * x * x)
// has a relative error up to x^2 2^-53 (~1e-13 at x = 37). Needs |x| < kUnderflow.
double exp_neg_half_square(double x) {
  const auto [s, e] = two_square(x);
  return std::exp(-0.5 * s) * (1.0 - 0.5 * e);
}

// exp(t^2) likewise, for |t| < 26.6.
double exp_square(double t) {
  const auto [s, e] = two_square(t);
  return std::exp(s) * (1.0 + e);
}

// 1 - x M(x) = sum_{k>=1} (-1)^(k+1) (2k-1)!! / x^(2k), the asymptotic expansion of the
// Mills ratio (Abramowitz & Stegun 26.2.12 rearranged). The series is enveloping, so the
// truncation error is below the first omitted term; N terms give relative 1.5e-17 for
// x >= 14 (N = 15), 30 (9), 200 (5), 1e4 (3), 1e5 (2). Alternating terms that shrink by
// (2k+1)/x^2 < 0.16: no cancellation.
constexpr double kAsymptoticCoefficients[15] = {
    1.0,           -3.0,           15.0,           -105.0,          945.0,
    -10395.0,      135135.0,       -2027025.0,     34459425.0,      -654729075.0,
    13749310575.0, -316234143225.0, 7905853580625.0, -213458046676875.0,
    6190283353629375.0};

template <int N>
double asymptotic_sum(double y) {
  double s = kAsymptoticCoefficients[N - 1];
  for (int k = N - 2; k >= 0; --k) s = s * y + kAsymptoticCoefficients[k];
  return y * s;
}

// 1 - x M(x) for x >= kAsymptotic.
double g_asymptotic(double x) {
  const double y = 1.0 / (x * x);  // 0 once x^2 overflows: then g = 0 to double precision
  if (x >= 1e5) return asymptotic_sum<2>(y);
  if (x >= 1e4) return asymptotic_sum<3>(y);
  if (x >= 200.0) return asymptotic_sum<5>(y);
  if (x >= 30.0) return asymptotic_sum<9>(y);
  return asymptotic_sum<15>(y);
}

// M(x) for 0 <= x < kAsymptotic: sqrt(pi/2) erfc(t) exp(t^2) with t = fl(x / sqrt 2).
// The rounding of t does not matter: erfc(t) exp(t^2) = erfcx(t) varies slowly, and
// the error of erfc(t) from the rounded t cancels with the one of exp(t^2) since both
// use the same t.
double mills_moderate(double x) {
  const double t = x * kInvSqrt2;
  return kSqrtHalfPi * std::erfc(t) * exp_square(t);
}

// Q(y) for y >= 0, relative accuracy ~1e-15 while Q(y) is normal.
double q_nonnegative(double y) {
  if (y < kAsymptotic) {
    // Q(y) = erfc(y / sqrt 2) / 2, but y / sqrt 2 is rounded, which alone would cost a
    // relative error up to y^2 2^-53. With t = fl(y / sqrt 2):
    // Q(y) = erfc(t) / 2 * exp(t^2 - y^2/2) (to first order), and t^2 - y^2/2 is
    // obtained exactly from the two exact squares (Sterbenz subtraction).
    const double t = y * kInvSqrt2;
    const auto [s1, e1] = two_square(t);
    const auto [s2, e2] = two_square(y);
    const double d = (s1 - 0.5 * s2) + (e1 - 0.5 * e2);
    return 0.5 * std::erfc(t) * (1.0 + d);
  }
  if (y >= kUnderflow) return 0.0;
  // Q = phi M = exp(-y^2/2) * [(1 - g) / (sqrt(2 pi) y)]: the bracket is < 1, so when
  // exp underflows to a subnormal the product is still within one subnormal ulp.
  return exp_neg_half_square(y) * (kInvSqrt2Pi * (1.0 - g_asymptotic(y)) / y);
}

}  // namespace

double log_phi(double x) { return -0.5 * x * x - kLogSqrt2Pi; }

double phi(double x) {
  if (std::isnan(x)) return x;
  const double ax = std::abs(x);
  if (!(ax < kUnderflow)) return 0.0;
  return kInvSqrt2Pi * exp_neg_half_square(ax);
}

double mills(double x) {
  if (std::isnan(x)) return x;
  if (x >= kAsymptotic) {
    if (x == kInf) return 0.0;
    return (1.0 - g_asymptotic(x)) / x;
  }
  if (x >= 0) return mills_moderate(x);
  if (x < kMillsOverflow) return kInf;
  // Q(x) = 1 - Q(-x): M(x) = sqrt(2 pi) exp(x^2/2) - M(-x); the first term is at
  // least twice the second, so at most one bit is lost.
  const auto [s, e] = two_square(x);
  return kSqrt2Pi * std::exp(0.5 * s) * (1.0 + 0.5 * e) - mills(-x);
}

double neg_mills_prime(double x) {
  if (std::isnan(x)) return x;
  if (x >= kAsymptotic) return g_asymptotic(x);  // 0 at +inf
  if (x < kMillsOverflow) return kInf;
  return 1.0 - x * mills(x);
}

double log_mills(double x) {
  if (std::isnan(x)) return x;
  if (x >= kAsymptotic) return std::log1p(-g_asymptotic(x)) - std::log(x);  // -inf at +inf
  if (x >= -37.0) return std::log(mills(x));
  // M overflows: log M = log Q - log phi, with log Q = log1p(-Q(-x)) ~ 0 and
  // -log phi(x) > 685, so the sum is accurate to its last bit.
  return log_q(x) - log_phi(x);
}

double log_q(double x) {
  if (std::isnan(x)) return x;
  if (x >= kAsymptotic) {
    // log Q = log phi + log M with log M = log(1 - g) - log x: no cancellation, as
    // |log phi| >> |log M|. -inf at +inf or once x^2 overflows.
    return log_phi(x) + (std::log1p(-g_asymptotic(x)) - std::log(x));
  }
  if (x >= 0) {
    // Same argument-rounding correction as in q_nonnegative, in the log domain.
    const double t = x * kInvSqrt2;
    const auto [s1, e1] = two_square(t);
    const auto [s2, e2] = two_square(x);
    const double d = (s1 - 0.5 * s2) + (e1 - 0.5 * e2);
    return std::log(0.5 * std::erfc(t)) + d;
  }
  // Q(x) = 1 - Q(-x), with Q(-x) <= 1/2 computed to full relative accuracy (Q(-x) is
  // subnormal for x < -37.5, and then log Q(x) = -Q(-x) is exact to a subnormal ulp).
  return std::log1p(-q_nonnegative(-x));
}

double q(double x) {
  if (std::isnan(x)) return x;
  if (x >= 0) return q_nonnegative(x);
  return 1.0 - q_nonnegative(-x);
}

double log1mexp(double a) {
  if (std::isnan(a) || a > 0) return kNaN;
  if (a == 0) return -kInf;
  // Maechler (2012): expm1 near 0, log1p(-exp) in the tail (exact 0 at a = -inf).
  return a > -std::numbers::ln2 ? std::log(-std::expm1(a)) : std::log1p(-std::exp(a));
}

double log_geometric_sum(double log_c, double log_one_minus_c, std::int64_t k) {
  if (std::isnan(log_c) || std::isnan(log_one_minus_c)) return kNaN;
  if (k <= 0) return -kInf;
  if (k == 1 || log_c == -kInf) return 0.0;  // only the m = 0 term
  const double log_k = std::log(static_cast<double>(k));
  if (log_one_minus_c == -kInf) return log_k;  // c = 1: k terms of 1
  if (log_one_minus_c >= -std::numbers::ln2) {
    // c <= 1/2: log c carries the digits; k log c <= -0.69 k is far from subnormal.
    if (log_c >= 0.0) return log_k;  // inconsistent inputs: the conservative end
    return log1mexp(static_cast<double>(k) * log_c) - log_one_minus_c;
  }
  // c > 1/2, u = 1 - c < 1/2 known as lu = log u. The sum is k (-log c / u) ((1 - e^{-y}) / y)
  // with y = -k log c, and each factor is formed as a log near 0, so that lu (which can be
  // -1e5) never meets log k in a sum whose digits would cancel.
  const double lu = log_one_minus_c;
  // d1 = log(-log1p(-u) / u) = log(1 + u/2 + u^2/3 + ...): u/2 below u = 1e-16, where u
  // itself may underflow.
  const double d1 = lu < -36.8 ? 0.5 * std::exp(lu) : std::log(-std::log1p(-std::exp(lu))) - lu;
  const double ly = log_k + lu + d1;  // log y
  // d2 = log((1 - e^{-y}) / y) = log(1 - y/2 + ...): -y/2 below y = 1e-16; otherwise y is a
  // normal number and log1mexp(-y) = log(-expm1(-y)) keeps every digit. Here ly >= -36.8
  // means lu >= -58 - d1, so ly and log k are of moderate size.
  const double d2 = ly < -36.8 ? -0.5 * std::exp(ly) : log1mexp(-std::exp(ly)) - ly;
  return log_k + d1 + d2;
}

double exp_upper(double x) {
  if (std::isnan(x) || x == -kInf) return std::isnan(x) ? kNaN : 0.0;
  constexpr double kMinNormal = std::numeric_limits<double>::min();
  static const double log_min_normal = std::log(kMinNormal);
  return x < log_min_normal ? kMinNormal : std::exp(x);
}

double logaddexp(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a == -kInf) return b;
  if (b == -kInf) return a;
  const double m = std::max(a, b);
  if (m == kInf) return kInf;  // avoids inf - inf below
  return m + std::log1p(std::exp(-std::abs(a - b)));
}

double logsubexp(double a, double b) {
  if (std::isnan(a) || std::isnan(b) || a < b) return kNaN;
  if (b == -kInf) return a;
  if (a == kInf) return b == kInf ? kNaN : kInf;  // inf - inf is undefined
  if (a == b) return -kInf;
  return a + log1mexp(b - a);
}

double logsumexp(std::span<const double> x) {
  if (x.empty()) return -kInf;
  std::size_t arg_max = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) return kNaN;
    if (x[i] > x[arg_max]) arg_max = i;
  }
  const double m = x[arg_max];
  if (m == -kInf || m == kInf) return m;
  // m + log1p(sum of the others): keeps terms far below the maximum (log(1 + 1e-20)).
  double rest = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (i != arg_max) rest += std::exp(x[i] - m);
  return m + std::log1p(rest);
}

}  // namespace hsdp::num
