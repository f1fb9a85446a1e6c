#include "hsdp/divergence/hockey_stick.hpp"

#include <cmath>
#include <numbers>
#include <limits>

#include "hsdp/numerics/log_normal.hpp"

namespace hsdp::div {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// theta_gamma(r) = Q(u) - gamma Q(v), u = eps/r - r/2, v = eps/r + r/2 (journal Thm 1 /
// Def. 3, isit Lemma 2). Since v^2 - u^2 = 2 eps, gamma phi(v) = phi(u), hence
//   theta = phi(u) [M(u) - M(v)],   M = Q / phi the Mills ratio,
// which needs no tail probability that underflows. The bracket is evaluated
//  (a) as the plain difference M(u) - M(v) when M(v) / M(u) is not close to 1, or
//  (b) as integral_u^v g with g = -M' = 1 - x M(x) > 0 (4-point Gauss-Legendre) when
//      it is: there the subtraction would cancel, while [u, v] is short compared with
//      the scale on which g varies (r / u <= 0.02 for large u), so the rule is exact
//      to rounding (the error term is ~ (r/u)^8).
// The switch: log(M(u) / M(v)) = integral_u^v (1/M(x) - x) dx ~ r K(m), m = eps/r the
// midpoint, and Birnbaum's bound M(x) > (sqrt(x^2 + 4) - x) / 2 gives
// K(m) = 1/M(m) - m < 2 / (sqrt(m^2 + 4) + m). Quadrature when r K(m) < 0.02, so that
// in (a) the subtraction loses at most ~2 digits.
// (c) Where theta >= 1/2 (possible only for u < 0), theta = 1 - c with the complement
//     c = Q(-u) + phi(u) M(v) <= 1/2 instead (see complement()).
constexpr double kQuadratureSwitch = 0.02;

// Below this u, M(u) ~ sqrt(2 pi) exp(u^2 / 2) overflows: only the complement form is
// used (see complement()).
constexpr double kSmallU = -37.0;

// Gauss-Legendre, 4 points on [-1, 1] (exact for polynomials of degree 7).
constexpr double kGlNode[2] = {0.33998104358485626480266575910324,
                               0.86113631159405257522394648889281};
constexpr double kGlWeight[2] = {0.65214515486254614262693605077800,
                                 0.34785484513745385737306394922200};

// M(m - h) - M(m + h) > 0 for m >= 0, h > 0, m - h >= kSmallU, as a scaled pair
// (value, log_scale) with the difference = value * exp(log_scale), so that a subnormal
// half-width h (r < 1e-300) loses no digits.
struct MillsDifference {
  double value;
  double log_scale;
};
MillsDifference mills_difference(double m, double h) {
  const double k_bound = 2.0 / (std::sqrt(m * m + 4.0) + m);  // 0 once m^2 overflows
  if (2.0 * h * k_bound < kQuadratureSwitch) {
    double s = 0.0;
    for (int i = 0; i < 2; ++i) {
      const double dx = h * kGlNode[i];
      s += kGlWeight[i] * (num::neg_mills_prime(m - dx) + num::neg_mills_prime(m + dx));
    }
    if (h < 1e-250) return {s, std::log(h)};
    return {h * s, 0.0};
  }
  return {num::mills(m - h) - num::mills(m + h), 0.0};
}

// u = eps/r - r/2 carried as u_hi + u_lo. phi(u) has relative condition number u^2
// (up to ~1400 here), so the rounding of eps/r and of the subtraction alone would cost
// ~1.5e-13 in theta; the low-order part removes it.
struct LowerArgument {
  double m, h, hi, lo;
};
LowerArgument lower_argument(double log_gamma, double r) {
  constexpr double kSplit = 134217729.0;  // 2^27 + 1 (Dekker's split; no FMA assumed)
  const double m = log_gamma / r, h = 0.5 * r;
  const double hi = m - h;
  if (!(std::abs(m) < 1e150) || !(r < 1e150)) return {m, h, hi, 0.0};
  // log_gamma - m r exactly, from Dekker's two-product of m and r.
  const double cm = kSplit * m, m1 = cm - (cm - m), m2 = m - m1;
  const double cr = kSplit * r, r1 = cr - (cr - r), r2 = r - r1;
  const double p = m * r;
  const double p_err = ((m1 * r1 - p) + m1 * r2 + m2 * r1) + m2 * r2;
  const double m_lo = ((log_gamma - p) - p_err) / r;
  // (m - h) - hi exactly (Knuth's two-sum).
  const double hb = hi - m, sub_err = (m - (hi - hb)) + (-h - hb);
  return {m, h, hi, sub_err + m_lo};
}

// log phi(hi + lo) = -(hi + lo)^2 / 2 - log sqrt(2 pi), with hi^2 split exactly.
double log_phi_compensated(double hi, double lo) {
  if (!(std::abs(hi) < 1e150)) return num::log_phi(hi);
  constexpr double kSplit = 134217729.0;
  const double c = kSplit * hi, a1 = c - (c - hi), a2 = hi - a1;
  const double s = hi * hi;
  const double e = ((a1 * a1 - s) + 2.0 * a1 * a2) + a2 * a2;
  return num::log_phi(0.0) - 0.5 * s + (-0.5 * e - hi * lo);
}

// 1 - theta = Q(-u) + gamma Q(v) = Q(-u) + phi(u) M(v) (again gamma phi(v) = phi(u)), for
// u < 0. When theta >= 1/2 this complement is at most 1/2 and theta = 1 - c loses
// nothing, whereas phi(u) [M(u) - M(v)] with phi(u) ~ e^-670 and M(u) ~ e^670 would leave
// an absolute error ~1e-13 on theta ~ 1 (and could exceed 1). For u < -37 (r > 74) it
// is the only form: M(u) overflows, and c < 1e-290.
// The low part u_lo of u enters as Q(-(u + u_lo)) = Q(-u) + phi(u) u_lo.
double complement(double u, double u_lo, double v) {
  const double phi_u = num::phi(u);
  return num::q(-u) + phi_u * (u_lo + (1.0 - u * u_lo) * num::mills(v));
}

bool invalid(double log_gamma, double r) {
  return std::isnan(log_gamma) || std::isnan(r) || log_gamma < 0 || r < 0;
}

}  // namespace

double log_theta(double log_gamma, double r) {
  if (invalid(log_gamma, r)) return kNaN;
  if (log_gamma == kInf || r == 0) return -kInf;
  if (r == kInf) return 0.0;
  const auto [m, h, u, u_lo] = lower_argument(log_gamma, r);
  // eps / r overflows only for subnormal r: theta < Q(m - h) ~ exp(-m^2 / 2).
  if (m == kInf) return -kInf;
  if (u < 0) {
    const double c = complement(u, u_lo, m + h);
    if (c <= 0.5 || u < kSmallU) return std::log1p(-c);
  }
  const auto d = mills_difference(m, h);
  return log_phi_compensated(u, u_lo) + (std::log(d.value) + d.log_scale);
}

double log_one_minus_theta(double log_gamma, double r) {
  if (invalid(log_gamma, r)) return kNaN;
  if (log_gamma == kInf || r == 0) return 0.0;
  if (r == kInf) return -kInf;
  const double log_t = log_theta(log_gamma, r);
  if (log_t < -std::numbers::ln2) return num::log1mexp(log_t);
  // theta > 1/2: 1 - theta = Q(-u) + gamma Q(v) (journal Thm 1), in logs so that a
  // complement below 1e-308 keeps its value.
  const double u = log_gamma / r - 0.5 * r, v = log_gamma / r + 0.5 * r;
  return num::logaddexp(num::log_q(-u), log_gamma + num::log_q(v));
}

double theta(double log_gamma, double r) {
  if (invalid(log_gamma, r)) return kNaN;
  if (log_gamma == kInf || r == 0) return 0.0;
  if (r == kInf) return 1.0;
  const auto [m, h, u, u_lo] = lower_argument(log_gamma, r);
  if (u < 0) {
    const double c = complement(u, u_lo, m + h);
    if (c <= 0.5 || u < kSmallU) return 1.0 - c;
  }
  // Where phi(u) is a normal number, form phi(u) [M(u) - M(v)] directly (relative error
  // ~1e-15, against ~|log theta| 1e-16 for exp(log_theta)).
  // phi(u + u_lo) = phi(u) exp(-u u_lo) to first order.
  if (u <= -kSmallU) {
    const auto d = mills_difference(m, h);
    if (d.log_scale == 0.0) return num::phi(u) * (1.0 - u * u_lo) * d.value;
  }
  return std::exp(log_theta(log_gamma, r));
}

double log_laplace_e_gamma(double log_gamma, double shift_over_scale) {
  if (std::isnan(log_gamma) || std::isnan(shift_over_scale) || log_gamma < 0 ||
      shift_over_scale < 0)
    return kNaN;
  if (log_gamma >= shift_over_scale) return -kInf;
  // isit Lemma 1 (9): [1 - exp((log gamma - |m1 - m2| / b) / 2)]^+
  return num::log1mexp(0.5 * (log_gamma - shift_over_scale));
}

double laplace_e_gamma(double log_gamma, double shift_over_scale) {
  if (std::isnan(log_gamma) || std::isnan(shift_over_scale) || log_gamma < 0 ||
      shift_over_scale < 0)
    return kNaN;
  if (log_gamma >= shift_over_scale) return 0.0;
  // isit Lemma 1 (9), with expm1 so that a small exponent keeps its digits.
  return -std::expm1(0.5 * (log_gamma - shift_over_scale));
}

}  // namespace hsdp::div
