#include "hsdp/divergence/hockey_stick.hpp"

#include <cmath>
#include <limits>
#include <numbers>

#include "hsdp/numerics/log_normal.hpp"

namespace hsdp::div {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Below this |log R| the difference M(u) - M(v) is integrated instead of subtracted.
constexpr double kSubtractionLimit = 1e-2;

// K(x) = 1/M(x) - x = 1/(x + 2/(x + 3/(x + ...))) for x >= 3, by modified Lentz,
// so that g(x) = 1 - x M(x) = K / (x + K) is formed without cancellation.
double mills_tail_k(double x) {
  constexpr double tiny = 1e-300;
  double f = x;  // b0 = x, a_k = k + 1, b_k = x
  double c = f, d = 0.0;
  for (int k = 1; k < 10000; ++k) {
    const double a = k + 1.0;
    d = x + a * d;
    if (d == 0) d = tiny;
    c = x + a / c;
    if (c == 0) c = tiny;
    d = 1.0 / d;
    const double delta = c * d;
    f *= delta;
    if (std::abs(delta - 1.0) < 1e-16) break;
  }
  return 1.0 / f;
}

// g(x) = 1 - x M(x) = -M'(x) > 0, the integrand of M(u) - M(v) = int_u^v g.
double g(double x) {
  if (x <= 0) return 1.0 - x * std::exp(num::log_mills(x));
  if (x < 3) return 1.0 - x * std::exp(num::log_mills(x));  // cancellation <= 12x
  const double k = mills_tail_k(x);
  return k / (x + k);
}

// log(M(u) - M(v)) for v = u + r by 16-point Gauss-Legendre over [u, v]. Used only when
// M(v)/M(u) > exp(-0.01): then g varies by less than ~2% over the interval and the
// rule is exact to rounding.
double log_mills_difference_quadrature(double u, double r) {
  static constexpr double x[8] = {0.0950125098376374401853193, 0.2816035507792589132304605,
                                  0.4580167776572273863424194, 0.6178762444026437484466718,
                                  0.7554044083550030338951012, 0.8656312023878317438804679,
                                  0.9445750230732325760779884, 0.9894009349916499325961542};
  static constexpr double w[8] = {0.1894506104550684962853967, 0.1826034150449235888667637,
                                  0.1691565193950025381893121, 0.1495959888165767320815017,
                                  0.1246289712555338720524763, 0.0951585116824927848099251,
                                  0.0622535239386478928628438, 0.0271524594117540948517806};
  const double half = 0.5 * r, mid = u + half;
  double s = 0.0;
  for (int i = 0; i < 8; ++i) s += w[i] * (g(mid - half * x[i]) + g(mid + half * x[i]));
  return std::log(half * s);
}

}  // namespace

double log_theta(double log_gamma, double r) {
  if (std::isnan(log_gamma) || std::isnan(r) || log_gamma < 0 || r < 0) return kNaN;
  if (r == 0) return -kInf;
  if (log_gamma == kInf) return -kInf;
  if (r == kInf) return 0.0;
  const double u = log_gamma / r - 0.5 * r;
  const double v = u + r;  // = log_gamma / r + r / 2
  // gamma phi(v) = phi(u), hence theta = Q(u) - gamma Q(v) = phi(u) [M(u) - M(v)] and
  // gamma Q(v) / Q(u) = M(v) / M(u) =: R.
  const double log_r = num::log_mills(v) - num::log_mills(u);
  if (log_r < -kSubtractionLimit) return num::log_q(u) + num::log1mexp(log_r);
  return num::log_phi(u) + log_mills_difference_quadrature(u, r);
}

double theta(double log_gamma, double r) { return std::exp(log_theta(log_gamma, r)); }

double log_laplace_e_gamma(double log_gamma, double shift_over_scale) {
  if (std::isnan(log_gamma) || std::isnan(shift_over_scale) || log_gamma < 0 ||
      shift_over_scale < 0)
    return kNaN;
  if (log_gamma >= shift_over_scale) return -kInf;
  // isit Lemma 1 (9): [1 - exp((log gamma - |m1 - m2| / b) / 2)]^+
  return num::log1mexp(0.5 * (log_gamma - shift_over_scale));
}

double laplace_e_gamma(double log_gamma, double shift_over_scale) {
  return std::exp(log_laplace_e_gamma(log_gamma, shift_over_scale));
}

}  // namespace hsdp::div
