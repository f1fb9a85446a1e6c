#include "hsdp/numerics/log_normal.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace hsdp::num {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kLogSqrt2Pi = 0.91893853320467274178032973640562;  // log(sqrt(2 pi))
// Beyond this point erfc(x / sqrt 2) is replaced by the Mills-ratio continued fraction;
// erfc itself underflows near x = 38.5 and loses relative accuracy well before.
constexpr double kTailSwitch = 25.0;

// log M(x) for x >= 3 from Laplace's continued fraction
//   M(x) = 1 / (x + 1/(x + 2/(x + 3/(x + ...))))
// evaluated by the modified Lentz method. For x >= 25 it converges in a handful of terms.
double log_mills_cf(double x) {
  // K = 1/(x + 2/(x + 3/(x + ...))) ; M = 1/(x + K).
  constexpr double tiny = 1e-300;
  double f = x;  // b0 = x, then a_k = k (k >= 1), b_k = x
  double c = f, d = 0.0;
  for (int k = 1; k < 5000; ++k) {
    d = x + k * d;
    if (d == 0) d = tiny;
    c = x + k / c;
    if (c == 0) c = tiny;
    d = 1.0 / d;
    const double delta = c * d;
    f *= delta;
    if (std::abs(delta - 1.0) < 1e-16) break;
  }
  return -std::log(f);  // f = 1/M
}

}  // namespace

double log_phi(double x) { return -0.5 * x * x - kLogSqrt2Pi; }

double log_q(double x) {
  if (std::isnan(x)) return x;
  if (x == -kInf) return 0.0;
  if (x == kInf) return -kInf;
  if (x < 0) return std::log1p(-0.5 * std::erfc(-x / std::numbers::sqrt2));
  if (x < kTailSwitch) return std::log(0.5 * std::erfc(x / std::numbers::sqrt2));
  return log_phi(x) + log_mills_cf(x);
}

double q(double x) { return std::exp(log_q(x)); }

double log_mills(double x) {
  if (std::isnan(x)) return x;
  if (x >= kTailSwitch) return log_mills_cf(x);
  if (x == -kInf) return kInf;
  // Q(x) and phi(x) are both normal numbers here (|x| < 38 for Q; phi > 1e-300 for
  // |x| < 37); beyond -37, Q = 1 and M = 1/phi exactly.
  return log_q(x) - log_phi(x);
}

double log1mexp(double a) {
  if (std::isnan(a) || a > 0) return std::numeric_limits<double>::quiet_NaN();
  if (a == 0) return -kInf;
  // Maechler (2012): expm1 near 0, log1p(-exp) in the tail.
  return a > -std::numbers::ln2 ? std::log(-std::expm1(a)) : std::log1p(-std::exp(a));
}

double logaddexp(double a, double b) {
  if (a == -kInf) return b;
  if (b == -kInf) return a;
  const double m = std::max(a, b);
  if (m == kInf) return kInf;
  return m + std::log1p(std::exp(-std::abs(a - b)));
}

double logsubexp(double a, double b) {
  if (std::isnan(a) || std::isnan(b) || a < b) return std::numeric_limits<double>::quiet_NaN();
  if (b == -kInf) return a;
  if (a == b) return -kInf;
  return a + log1mexp(b - a);
}

double logsumexp(std::span<const double> x) {
  if (x.empty()) return -kInf;
  const double m = *std::max_element(x.begin(), x.end());
  if (m == -kInf || m == kInf || std::isnan(m)) return m;
  double s = 0.0;
  for (double v : x) s += std::exp(v - m);
  return m + std::log(s);
}

}  // namespace hsdp::num
