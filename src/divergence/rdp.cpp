// Rényi divergences of the (subsampled) Gaussian mechanism and RDP -> (eps, delta)
// conversions (docs/rdp.md).
//
// Units: sigma is the noise std in units of the largest contribution C of one record to
// the released sum (||g(x)|| <= C). Add/remove one record then moves the mean by 1 (in
// these units), replacing one record by up to 2.
//
// Formulas and where they come from:
//  * Poisson, add/remove: Mironov, Talwar, Zhang 2019 ("Rényi DP of the sampled Gaussian
//    mechanism") Sec. 3: A_alpha = E_{z~N(0,s^2)}[((1-q) + q e^{(2z-1)/(2 s^2)})^alpha]
//    and D_alpha((1-q) N(0,s^2) + q N(1,s^2) || N(0,s^2)) = log(A_alpha) / (alpha - 1).
//    Integer alpha: binomial expansion (Sec. 3.3); fractional alpha: the two-series
//    formula (Sec. 3.3, as in dp_accounting's _compute_log_a_frac). The reverse direction
//    D_alpha(N(0) || mixture) is never larger (MTZ 2019 Sec. 3.3, Thm 5; checked by
//    quadrature in tests/test_rdp.cpp, ReverseDirectionIsSmaller), so this is the maximum
//    over both orders of the neighbouring pair (ERRATA 2).
//  * Fixed-size sampling without replacement, replace-one: Wang, Balle, Kasiviswanathan 2019
//    ("Subsampled Rényi DP and analytical moments accountant") Thm 9, the general upper
//    bound for integer alpha >= 2 (the one dp_accounting implements for
//    SampledWithoutReplacementDpEvent under REPLACE_ONE), with eps(j) = j 2^2/(2 s^2) the
//    RDP of the Gaussian mechanism under replace-one (sensitivity 2) and eps(inf) = inf.
//    Fractional alpha: (alpha - 1) D_alpha is convex in alpha (van Erven-Harremoës 2014
//    Cor. 2), so linear interpolation of (alpha - 1) eps between the neighbouring integers
//    is an upper bound; 1 < alpha < 2 uses the value at 2 (D_alpha is non-decreasing).
//  * Fixed-size, add/remove: no amplification claimed (conservative): the coupling that
//    pairs a batch containing the added record with the same batch where that record is
//    replaced by a uniformly chosen other one makes every pair of components differ by one
//    replacement, so by joint convexity of exp((alpha-1) D_alpha) the Gaussian mechanism
//    at sensitivity 2 (2 alpha / s^2) bounds both directions.
//  * Poisson, replace-one: min of (a) the weak triangle inequality of Mironov 2017 Prop. 11
//    (replace = remove then add): D_alpha <= (alpha - 1/2)/(alpha - 1) eps_rem(2 alpha)
//    + eps_rem(2 alpha - 1), and (b) no amplification, Gaussian at sensitivity 2 (joint
//    convexity under the coupling that uses the same coins for both datasets). Valid,
//    not tight.
//  * q = 1: the Gaussian mechanism, alpha Delta^2 / (2 s^2), Delta = 1 (add/remove) or 2
//    (replace).
#include "hsdp/divergence/rdp.hpp"

#include <fmt/format.h>

#include <boost/math/tools/minima.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "hsdp/errors.hpp"
#include "hsdp/numerics/log_normal.hpp"
#include "hsdp/numerics/quadrature.hpp"

namespace hsdp::div {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void check_alpha(double alpha) {
  if (std::isnan(alpha) || !(alpha > 1.0)) fail("alpha", alpha, "> 1");
}

void check_q(double q) {
  if (!std::isfinite(q) || !(q > 0.0) || !(q <= 1.0)) fail("q", q, "in (0, 1]");
}

void check_sigma(double sigma) { require_positive("sigma", sigma); }

// log(e^x - 1) for x > 0 without overflow (-inf at x = 0). For x > 40 the result is x
// itself rounded UP (the true value is x - e^{-x}(1 + ...), below x by < 5e-18 relative).
double log_expm1(double x) {
  if (!(x > 0)) return -kInf;
  if (x > 40) return x;
  return std::log(std::expm1(x));
}

// log(A_alpha - 1) for integer alpha >= 2 (MTZ 2019 Sec. 3.3). Subtracting the binomial
// identity sum_k C(alpha,k) (1-q)^(alpha-k) q^k = 1 termwise leaves only positive terms,
// C(alpha,k) (1-q)^(alpha-k) q^k (e^{(k^2-k)/(2 s^2)} - 1), k >= 2: no cancellation, so
// log A = log1p(A - 1) keeps full relative accuracy even when A - 1 ~ 1e-15.
double log_a_minus_1_int(std::int64_t alpha, double q, double sigma) {
  const double lq = std::log(q), l1q = std::log1p(-q);
  const double a = static_cast<double>(alpha);
  const double inv2s2 = 1.0 / (2.0 * sigma * sigma);
  // A noise so large that every exponent (k^2 - k) / (2 sigma^2) is at most
  // x = (alpha^2 - alpha) / (2 sigma^2) <= 1e-6: e^y - 1 <= y e^x for y <= x, so
  // A - 1 <= e^x E[K (K - 1)] / (2 sigma^2) = e^x q^2 x (K ~ Binomial(alpha, q)), an upper
  // bound within a factor 1 + 2e-6 in O(1) instead of a sum over alpha terms.
  const double x = (a * a - a) * inv2s2;
  if (q < 1.0 && x <= 1e-6) return x + std::log(x) + 2.0 * std::log(q);
  double log_binom = std::log(a * (a - 1.0) / 2.0);  // C(alpha, 2)
  double m = -kInf;
  std::vector<double> terms;
  terms.reserve(static_cast<std::size_t>(alpha));
  for (std::int64_t k = 2; k <= alpha; ++k) {
    const double kd = static_cast<double>(k);
    if (k > 2) log_binom += std::log((a - kd + 1.0) / kd);
    const double t = log_binom + kd * lq + (a - kd) * (q == 1.0 ? 0.0 : l1q) +
                     log_expm1((kd * kd - kd) * inv2s2);
    terms.push_back(t);
    m = std::max(m, t);
  }
  if (q == 1.0) {
    // only k = alpha survives ((1-q)^(alpha-k) = 0 otherwise)
    return log_expm1((a * a - a) * inv2s2);
  }
  return num::logsumexp(terms);
}

// log(1 + e^x), NaN-preserving.
double log1p_exp(double x) {
  if (std::isnan(x)) return x;
  return x > 30 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

// phi(u) = (1+u)^alpha - 1 - alpha u >= 0, accurately for small |u| (series).
double phi(double alpha, double u) {
  if (std::fabs(u) < 0.05) {
    double term = alpha * (alpha - 1.0) / 2.0 * u * u, sum = 0;
    for (int k = 2; k < 200; ++k) {
      sum += term;
      if (std::fabs(term) <= 1e-18 * std::fabs(sum)) break;
      term *= (alpha - k) / (k + 1.0) * u;
    }
    return sum;
  }
  return std::expm1(alpha * std::log1p(u)) - alpha * u;
}

// Gauss-Hermite rule with n nodes for E_{z~N(0,1)}[g(z)] = sum_i w_i g(z_i): nodes of the
// physicists' H_n by Newton's method on the three-term recurrence (Golub-Welsch would need
// an eigen-solver), rescaled to the standard normal (z = sqrt(2) x, w / sqrt(pi)).
struct HermiteRule {
  std::vector<double> z, w;
  explicit HermiteRule(int n) : z(static_cast<std::size_t>(n)), w(static_cast<std::size_t>(n)) {
    const double pim4 = 0.7511255444649425;  // pi^{-1/4}
    double x = 0;
    const int m = (n + 1) / 2;
    for (int i = 0; i < m; ++i) {  // the largest root first; initial guesses of Stroud-Secrest
      if (i == 0) x = std::sqrt(2.0 * n + 1) - 1.85575 * std::pow(2.0 * n + 1, -1.0 / 6);
      else if (i == 1) x -= 1.14 * std::pow(static_cast<double>(n), 0.426) / x;
      else if (i == 2) x = 1.86 * x - 0.86 * z[0];
      else if (i == 3) x = 1.91 * x - 0.91 * z[1];
      else x = 2.0 * x - z[static_cast<std::size_t>(i - 2)];
      double pp = 0;
      for (int it = 0; it < 100; ++it) {
        double p1 = pim4, p2 = 0;  // orthonormal Hermite recurrence
        for (int j = 1; j <= n; ++j) {
          const double p3 = p2;
          p2 = p1;
          p1 = x * std::sqrt(2.0 / j) * p2 - std::sqrt((j - 1.0) / j) * p3;
        }
        pp = std::sqrt(2.0 * n) * p2;
        const double dx = p1 / pp;
        x -= dx;
        if (std::fabs(dx) <= 1e-15 * std::max(1.0, std::fabs(x))) break;
      }
      z[static_cast<std::size_t>(i)] = x;  // temporarily the physicists' root
      w[static_cast<std::size_t>(i)] = 2.0 / (pp * pp);
    }
    std::vector<double> zz(static_cast<std::size_t>(n)), ww(static_cast<std::size_t>(n));
    const double sqrt_pi = std::sqrt(std::acos(-1.0));
    for (int i = 0; i < m; ++i) {
      const auto k = static_cast<std::size_t>(i), k2 = static_cast<std::size_t>(n - 1 - i);
      zz[k] = -std::sqrt(2.0) * z[k];
      zz[k2] = std::sqrt(2.0) * z[k];
      ww[k] = ww[k2] = w[k] / sqrt_pi;
    }
    z = std::move(zz);
    w = std::move(ww);
  }
};

// log of phi(q (r(z) - 1)) e^{-shift} without the normal density (shared by both
// quadratures).
double a_minus_1_integrand(double alpha, double q, double sigma, double shift, double z) {
  const double x = (2.0 * sigma * z - 1.0) / (2.0 * sigma * sigma);  // log r
  // u = q (r - 1) in the log domain where r > 1: at small sigma the far bump z ~ alpha/sigma
  // has x ~ alpha/sigma^2 (> 709 at sigma = 0.03), where e^x overflows. Evaluating r - 1
  // directly there dropped the bump (an integral below the true one).
  const double log_u = x > 0 ? std::log(q) + log_expm1(x) : -kInf;
  double log_phi;
  if (!(log_u >= std::log(0.5))) {  // bounded: (1+u)^alpha <= 1.5^alpha stays moderate
    const double p = phi(alpha, q * std::expm1(x));
    log_phi = p > 0 ? std::log(p) : -kInf;
  } else {
    // (1+u)^alpha - 1 - alpha u = (1+u)^alpha (1 - (1 + alpha u) (1+u)^-alpha)
    const double a = alpha * log1p_exp(log_u);                       // alpha log(1 + u)
    const double rest = log1p_exp(std::log(alpha) + log_u) - a;      // log((1 + alpha u)/(1+u)^alpha) < 0
    log_phi = rest < 0 ? a + num::log1mexp(rest) : -kInf;
  }
  return log_phi - shift;
}

// The shift that keeps the integrand of A - 1 from overflowing: about the log of the largest
// contribution q^alpha e^{(alpha^2 - alpha)/(2 s^2)}.
double a_minus_1_shift(double alpha, double q, double sigma) {
  return std::max(0.0, alpha * std::log(q) + (alpha * alpha - alpha) / (2 * sigma * sigma));
}

// log(A_alpha - 1) by Gauss-Hermite rules of 64 and 96 nodes. The integrand is smooth, with
// its mass near z = 0 and z = alpha/sigma; the value is accepted when the two rules agree to
// 1e-11 relative (the larger is returned; reported values are rounded up by 1e-9), NaN
// otherwise or where the rule is not reliable (below). About 50x cheaper than the series
// or the adaptive quadrature.
double log_a_minus_1_hermite(double alpha, double q, double sigma) {
  // The outermost nodes are at |z| ~ 15 (64 nodes) and ~ 19 (96); the q r^alpha part peaks
  // near z = alpha/sigma (width ~1) and r = 1 at z = 1/(2 sigma). A bump beyond the nodes
  // would be missed by both rules alike, so agreement would prove nothing: only used while
  // both points are at most 10.
  if (alpha / sigma > 10.0 || 0.5 / sigma > 10.0) return std::numeric_limits<double>::quiet_NaN();
  static const HermiteRule r64(64), r96(96);
  const double shift = a_minus_1_shift(alpha, q, sigma);
  auto sum = [&](const HermiteRule& r) {
    double acc = 0;
    for (std::size_t i = 0; i < r.z.size(); ++i) {
      const double v = std::exp(a_minus_1_integrand(alpha, q, sigma, shift, r.z[i]));
      if (!std::isfinite(v)) return std::numeric_limits<double>::quiet_NaN();
      acc += r.w[i] * v;
    }
    return acc;
  };
  const double a = sum(r64), b = sum(r96);
  if (!(a > 0) || !(b > 0) || std::fabs(a - b) > 1e-11 * b)
    return std::numeric_limits<double>::quiet_NaN();
  return std::log(std::max(a, b)) + shift;
}

// A_alpha - 1 = E_{z~N(0,1)}[phi(q (r - 1))], r = e^{(2 s z - 1)/(2 s^2)} (E[r] = 1), by
// quadrature; used for fractional alpha when A - 1 is too small for the series to give
// log A to full relative accuracy.
double log_a_minus_1_quad(double alpha, double q, double sigma) {
  // Integrand scaled by e^{-shift}, shift ~ the log of the largest contribution
  // q^alpha e^{(alpha^2 - alpha)/(2 s^2)}, so that nothing overflows when A is huge.
  const double shift = a_minus_1_shift(alpha, q, sigma);
  auto f = [&](double z) {
    const double v = std::exp(num::log_phi(z) + a_minus_1_integrand(alpha, q, sigma, shift, z));
    return std::isfinite(v) ? v : 0.0;
  };
  const double z0 = 0.5 / sigma;  // r = 1 there
  // The q r^alpha part peaks near z = alpha / sigma (standard-normal units) with width ~1:
  // split there so the quadrature cannot miss a narrow far-out bump.
  const double zp = std::max(z0, alpha / sigma);
  double v = num::integrate(f, -kInf, z0, 1e-13);
  if (zp > z0 + 1.0) {
    v += num::integrate(f, z0, zp - 1.0, 1e-13) + num::integrate(f, zp - 1.0, zp + 1.0, 1e-13) +
         num::integrate(f, zp + 1.0, kInf, 1e-13);
  } else {
    v += num::integrate(f, z0, kInf, 1e-13);
  }
  return v > 0 && std::isfinite(v) ? std::log(v) + shift : std::numeric_limits<double>::quiet_NaN();
}

// log A_alpha for fractional alpha: MTZ 2019 Sec. 3.3 two-series formula, split at
// z0 = s^2 log(1/q - 1) + 1/2 where q r = 1 - q, each side a convergent binomial series.
double log_a_frac(double alpha, double q, double sigma, double* log_max_term,
                  double max_terms = 100000.0) {
  double log_a0 = -kInf, log_a1 = -kInf;  // positive parts
  double neg0 = -kInf, neg1 = -kInf;      // negative parts
  const double z0 = sigma * sigma * (std::log(1.0 / q - 1.0)) + 0.5;
  const double lq = std::log(q), l1q = std::log1p(-q);
  const double inv2s2 = 1.0 / (2.0 * sigma * sigma);
  double log_coef = 0.0;  // log |C(alpha, i)|
  double sign = 1.0;
  bool converged = false;
  // Past i ~ alpha the terms fall like (1-q)^i |C(alpha, i)| (the log Q factor cancels the
  // e^{i^2/(2 s^2)}): reaching 60 nats below the sum can take 60/(-log(1-q)) terms or more
  // (10-20 ms). The callers try the Gauss-Hermite rule first and come here only where it is
  // not reliable (alpha/sigma > 10), where the adaptive quadrature alone is not accurate
  // enough.
  const double i_max = alpha + max_terms;
  for (int i = 0; i < i_max; ++i) {
    if (i > 0) {
      const double f = (alpha - (i - 1)) / i;
      log_coef += std::log(std::fabs(f));
      if (f < 0) sign = -sign;
    }
    const double id = i, j = alpha - i;
    const double log_t0 = log_coef + id * lq + j * l1q;
    const double log_t1 = log_coef + j * lq + id * l1q;
    const double log_e0 = num::log_q((id - z0) / sigma);
    const double log_e1 = num::log_q((z0 - j) / sigma);
    const double log_s0 = log_t0 + (id * id - id) * inv2s2 + log_e0;
    const double log_s1 = log_t1 + (j * j - j) * inv2s2 + log_e1;
    if (sign > 0) {
      log_a0 = num::logaddexp(log_a0, log_s0);
      log_a1 = num::logaddexp(log_a1, log_s1);
    } else {
      neg0 = num::logaddexp(neg0, log_s0);
      neg1 = num::logaddexp(neg1, log_s1);
    }
    *log_max_term = std::max({*log_max_term, log_s0, log_s1});
    const double cur = num::logaddexp(log_a0, log_a1);
    if (i > alpha + 1 && std::max(log_s0, log_s1) < cur - 60.0) {
      converged = true;
      break;
    }
  }
  if (!converged) return std::numeric_limits<double>::quiet_NaN();  // caller bounds it
  const double pos = num::logaddexp(log_a0, log_a1), neg = num::logaddexp(neg0, neg1);
  if (!(pos >= neg)) return std::numeric_limits<double>::quiet_NaN();
  return num::logsubexp(pos, neg);
}

// D_alpha((1-q) N(0,s^2) + q N(1,s^2) || N(0,s^2)), Poisson add/remove (MTZ 2019).
double poisson_remove(double alpha, double q, double sigma) {
  if (std::isinf(alpha)) return kInf;
  const double gauss = alpha / (2.0 * sigma * sigma);
  if (q == 1.0) return gauss;
  // Past 1e6 the O(alpha) sums are not evaluated: the non-subsampled Gaussian value is a
  // valid upper bound (joint convexity: the mixture pairs N(0)||N(0) and N(1)||N(0)).
  if (alpha > 1e6) return gauss;
  const double u = alpha - 1.0;
  const double ai = std::round(alpha);
  if (alpha == ai) {
    const double lam1 = log_a_minus_1_int(static_cast<std::int64_t>(ai), q, sigma);
    // log A = log1p(e^{lam1})
    const double log_a = lam1 > 30 ? lam1 + std::log1p(std::exp(-lam1)) : std::log1p(std::exp(lam1));
    return std::min(gauss, log_a / u);
  }
  // Gauss-Hermite first where it is reliable (verified by two rules), else the MTZ series,
  // else adaptive quadrature. Up to alpha = 10 the series is given 200 terms only: where it
  // needs more (alpha < ~4 with sigma ~ 0.1-1: up to 1e5 terms, 1-10 ms) the quadrature
  // takes 0.1-0.3 ms and matches 50-digit quadrature to 1e-12 there (measured on q in
  // [1e-6, 0.99], sigma in [0.01, 1]; tests/test_rdp.cpp, FractionalBelowTwoMatchesQuadrature,
  // SmallSigmaFractionalMatchesQuadrature); where it converges it takes a few microseconds.
  const double gh = log_a_minus_1_hermite(alpha, q, sigma);
  double log_max_term = -kInf;
  double log_a = std::isnan(gh) ? log_a_frac(alpha, q, sigma, &log_max_term,
                                             alpha <= 10.0 ? 200.0 : 100000.0)
                                : log1p_exp(gh);
  // The series is alternating: when the result is far below its largest term (cancellation
  // of more than e^12 ~ 1.6e5, i.e. > 5 of the 16 digits lost), when it is tiny (A ~ 1 + tiny:
  // below 1e-6 the absolute rounding costs more than ~1e-10 relative in log A), or when it
  // failed (NaN), integrate A - 1 = E[(1+u)^alpha - 1 - alpha u] instead (no cancellation).
  const bool cancelled = std::isnan(log_a) || log_max_term - log_a > 12.0;
  if (std::isnan(gh) && (cancelled || !(log_a > 1e-6)))
    log_a = log1p_exp(log_a_minus_1_quad(alpha, q, sigma));
  // Safety net (never under-report): D_alpha is non-decreasing in alpha, so the exact value
  // lies between the (exact) integer orders around alpha. Outside that bracket, or NaN, the
  // value at the integer order above is used (a valid upper bound).
  const double hi = poisson_remove(std::ceil(alpha), q, sigma);
  const double v = std::max(0.0, log_a) / u;
  if (std::isnan(v) || v > hi) return hi;
  if (alpha > 2.0 && v < poisson_remove(std::floor(alpha), q, sigma)) return hi;
  return std::min(gauss, v);
}

// Wang-Balle-Kasiviswanathan 2019 Thm 9 for integer alpha >= 2, Gaussian base mechanism
// with replace-one RDP eps(j) = 2 j / s^2 (sensitivity 2), eps(inf) = inf: returns
// (alpha - 1) * bound, i.e. log(1 + gamma^2 C(a,2) min{4(e^{eps(2)}-1), 2 e^{eps(2)}}
//   + sum_{j=3}^{a} 2 gamma^j C(a,j) e^{(j-1) eps(j)}).
double wbk_cgf_int(std::int64_t alpha, double gamma, double sigma) {
  const double a = static_cast<double>(alpha);
  const double lg = std::log(gamma);
  auto eps = [&](double j) { return 2.0 * j / (sigma * sigma); };
  std::vector<double> terms;
  terms.reserve(static_cast<std::size_t>(alpha));
  terms.push_back(0.0);  // the 1
  double log_binom = std::log(a * (a - 1.0) / 2.0);
  const double e2 = eps(2.0);
  terms.push_back(2.0 * lg + log_binom +
                  std::min(std::log(4.0) + log_expm1(e2), std::log(2.0) + e2));
  for (std::int64_t k = 3; k <= alpha; ++k) {
    const double kd = static_cast<double>(k);
    log_binom += std::log((a - kd + 1.0) / kd);
    terms.push_back(std::log(2.0) + kd * lg + log_binom + (kd - 1.0) * eps(kd));
  }
  return num::logsumexp(terms);
}

double fixed_replace(double alpha, double gamma, double sigma) {
  const double no_amp = 2.0 * alpha / (sigma * sigma);
  if (gamma == 1.0 || std::isinf(alpha)) return no_amp;
  if (alpha > 1e6) return no_amp;  // the O(alpha) sum is not evaluated past 1e6
  double bound;
  if (alpha <= 2.0) {
    bound = wbk_cgf_int(2, gamma, sigma);  // D_alpha <= D_2 (monotone in alpha)
  } else {
    const double lo = std::floor(alpha), hi = std::ceil(alpha);
    const double clo = wbk_cgf_int(static_cast<std::int64_t>(lo), gamma, sigma);
    if (lo == hi) {
      bound = clo / (alpha - 1.0);
    } else {
      const double chi = wbk_cgf_int(static_cast<std::int64_t>(hi), gamma, sigma);
      const double w = alpha - lo;
      bound = ((1.0 - w) * clo + w * chi) / (alpha - 1.0);  // convexity of (alpha-1) D_alpha
    }
  }
  return std::min(no_amp, bound);
}

double poisson_replace(double alpha, double q, double sigma) {
  const double no_amp = 2.0 * alpha / (sigma * sigma);
  if (q == 1.0 || std::isinf(alpha)) return no_amp;
  // Mironov 2017 Prop. 11 (weak triangle), remove then add; eps_rem is symmetric in the
  // two directions (max of both, see above).
  const double tri = (alpha - 0.5) / (alpha - 1.0) * poisson_remove(2.0 * alpha, q, sigma) +
                     poisson_remove(2.0 * alpha - 1.0, q, sigma);
  return std::min(no_amp, tri);
}

}  // namespace

double gaussian_rdp(double alpha, double sensitivity_over_std) {
  check_alpha(alpha);
  require_nonnegative("sensitivity_over_std", sensitivity_over_std);
  if (std::isinf(alpha)) return sensitivity_over_std > 0 ? kInf : 0.0;
  return alpha * sensitivity_over_std * sensitivity_over_std / 2.0;
}

double sampled_gaussian_rdp(double alpha, double q, double sigma, Subsampling scheme,
                            Neighbours neighbours) {
  check_alpha(alpha);
  check_q(q);
  check_sigma(sigma);
  double v;
  if (scheme == Subsampling::poisson)
    v = neighbours == Neighbours::remove ? poisson_remove(alpha, q, sigma)
                                         : poisson_replace(alpha, q, sigma);
  else
    v = neighbours == Neighbours::remove ? 2.0 * alpha / (sigma * sigma)
                                         : fixed_replace(alpha, q, sigma);
  if (std::isnan(v)) return kInf;  // never NaN: "no bound" rather than a wrong number
  return v;
}

double s_alpha(double alpha, double q, double sigma) {
  return sampled_gaussian_rdp(alpha, q, sigma, Subsampling::poisson, Neighbours::remove);
}

std::string_view to_string(RdpConversion c) {
  switch (c) {
    case RdpConversion::mironov: return "mironov";
    case RdpConversion::cks: return "cks";
    case RdpConversion::optimal: return "optimal";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------
// Conversions at one order alpha = 1 + u.

namespace {

// log kappa(alpha), kappa = (1/alpha)(1 - 1/alpha)^(alpha-1) (journal (23); CKS 2020
// Prop. 12; Balle et al. 2020 Thm 21), written in u = alpha - 1 for precision near 1.
double log_kappa(double u) { return -std::log1p(u) + u * (std::log(u) - std::log1p(u)); }

double ld_mironov(double u, double rho, double eps) { return -u * (eps - rho); }
double ld_cks(double u, double rho, double eps) { return log_kappa(u) - u * (eps - rho); }
// Second term of journal (23): (e^{u rho} - 1) / (alpha (e^{u eps} - 1)).
// Checked independently: with L = dP/dQ, gamma = e^eps and a = 1/(alpha (gamma^{alpha-1} - 1)),
// (L - gamma)^+ <= a (L^alpha - 1 - alpha (L - 1)) pointwise (the right side is convex in L,
// vanishes with its derivative at L = 1, and touches L - gamma at L = gamma), and
// E_Q[L^alpha] = e^{(alpha-1) D_alpha} <= e^{(alpha-1) rho}, E_Q[L] = 1.
double ld_markov(double u, double rho, double eps) {
  if (eps <= 0 || !(u * rho > 0)) return kInf;  // u rho == 0 only by underflow: no bound
  return log_expm1(u * rho) - std::log1p(u) - log_expm1(u * eps);
}

double e_mironov(double u, double rho, double ld) { return rho - ld / u; }
double e_cks(double u, double rho, double ld) { return rho + (log_kappa(u) - ld) / u; }
double e_markov(double u, double rho, double ld) {
  if (!(u * rho > 0)) return kInf;
  return num::logaddexp(0.0, log_expm1(u * rho) - std::log1p(u) - ld) / u;
}

void check_rho(double rho) {
  if (std::isnan(rho) || rho < 0) fail("rho", rho, ">= 0 (an RDP value)");
}

}  // namespace

double log_delta_at_order(double u, double rho, double eps, RdpConversion conversion) {
  switch (conversion) {
    case RdpConversion::mironov: return ld_mironov(u, rho, eps);
    case RdpConversion::cks: return ld_cks(u, rho, eps);
    default: return std::min(ld_cks(u, rho, eps), ld_markov(u, rho, eps));  // cks <= mironov
  }
}

double epsilon_at_order(double u, double rho, double ld, RdpConversion conversion) {
  switch (conversion) {
    case RdpConversion::mironov: return e_mironov(u, rho, ld);
    case RdpConversion::cks: return e_cks(u, rho, ld);
    default: return std::min(e_cks(u, rho, ld), e_markov(u, rho, ld));  // cks <= mironov
  }
}

double log_delta_from_rdp(double alpha, double rho, double epsilon, RdpConversion conversion) {
  check_alpha(alpha);
  check_rho(rho);
  require_nonnegative("epsilon", epsilon);
  if (std::isinf(rho)) return 0.0;
  if (std::isinf(alpha)) return epsilon >= rho ? -kInf : 0.0;  // pure DP
  const double v = log_delta_at_order(alpha - 1.0, rho, epsilon, conversion);
  if (std::isnan(v)) return 0.0;
  return std::min(0.0, v);
}

double epsilon_from_rdp(double alpha, double rho, double delta, RdpConversion conversion) {
  check_alpha(alpha);
  check_rho(rho);
  require_open("delta", delta, 0.0, 1.0);
  if (std::isinf(rho)) return kInf;
  if (std::isinf(alpha)) return rho;
  const double v = epsilon_at_order(alpha - 1.0, rho, std::log(delta), conversion);
  if (std::isnan(v)) return kInf;
  return std::max(0.0, v);
}

// ---------------------------------------------------------------------------------------
// Minimisation over alpha.

namespace {

struct Best {
  double value = kInf;
  double alpha = std::numeric_limits<double>::quiet_NaN();
  RdpConversion conversion = RdpConversion::optimal;
};

// value_at(alpha, rho) minimised over alpha in (1, alpha_max]. Keeps the smallest value
// evaluated; the value is attained at the returned alpha, so it is a valid bound (never below
// the true minimum) however the search goes: stopping early or missing the minimum can only
// cost tightness, never validity.
//
// Speed (composition-rdp's eps(delta) at T = 10^4 in <= 0.25 ms): a fractional order costs
// ~10 us (the sampled Gaussian's Gauss-Hermite route), an integer order ~0.1-1 us (a
// binomial sum). So the search first walks a ladder of INTEGER orders 2, 3, ..., 10, then
// ratio ~1.15 (stopping 8 points past the best once they keep rising); only when the best
// is at 2 (the minimum may lie in (1, 2)) does it walk alpha - 1 = 0.7^j down to 1e-3 in
// the same way. Then Brent's method (Boost) refines x = log(alpha - 1) between the
// neighbours of the best point: ~10 fractional evaluations to a relative 6e-8 in
// alpha - 1, where eps(alpha) is flat to second order (its change is below 1e-12 relative).
template <typename F>
Best minimise(const RdpCurve& curve, F&& value_at) {
  Best best;
  const double a_max = std::min(curve.alpha_max, 1e5);
  auto eval = [&](double alpha) {
    if (!(alpha > 1.0) || alpha > a_max) return kInf;
    const double rho = curve.epsilon(alpha);
    if (std::isnan(rho) || rho < 0) return kInf;
    double v = value_at(alpha, rho);
    if (std::isnan(v)) v = kInf;
    if (std::isnan(best.alpha) || v < best.value) best = {v, alpha, RdpConversion::optimal};
    return v;
  };
  const double u_top = a_max - 1.0;
  if (!(u_top > 0)) return best;
  struct Point {
    double x, v;  // x = log(alpha - 1)
  };
  std::vector<Point> points;
  // Walks `next` from `start` while the values have not risen `patience` times in a row
  // past the best one.
  auto walk = [&](double alpha, const auto& next, int patience) {
    double best_v = kInf, previous = kInf;
    int rising = 0;
    while (alpha > 1.0 && alpha <= a_max) {
      const double v = eval(alpha);
      points.push_back({std::log(alpha - 1.0), v});
      rising = (v > best_v && v >= previous) ? rising + 1 : 0;
      best_v = std::min(best_v, v);
      previous = v;
      if (rising >= patience && std::isfinite(best_v)) break;
      const double n = next(alpha);
      if (!(n > alpha || n < alpha) || !(n > 1.0)) break;
      alpha = n;
    }
  };
  if (a_max >= 2.0) {
    walk(2.0, [&](double a) {
      if (a >= a_max) return a;  // stop
      const double n = a < 10 ? a + 1 : std::max(a + 1, std::floor(a * 1.15));
      return std::min(n, a_max);
    }, 8);
  }
  const bool low = points.empty() || std::isnan(best.alpha) || best.alpha <= 2.0;
  if (low) {
    const double top = std::min(1.0, u_top);
    walk(1.0 + (a_max >= 2.0 ? 0.7 * top : top), [&](double a) {
      const double u = (a - 1.0) * 0.7;
      return u >= 1e-3 ? 1.0 + u : a;  // stop below alpha - 1 = 1e-3
    }, 8);
  }
  std::sort(points.begin(), points.end(), [](const Point& p, const Point& q) { return p.x < q.x; });
  std::size_t arg = 0;
  for (std::size_t k = 1; k < points.size(); ++k)
    if (points[k].v < points[arg].v) arg = k;
  if (points.empty() || std::isinf(points[arg].v)) return best;
  const double lo = points[arg > 0 ? arg - 1 : 0].x;
  const double hi = points[std::min(points.size() - 1, arg + 1)].x;
  if (hi > lo) {
    auto g = [&](double x) { return eval(std::min(a_max, 1.0 + std::exp(x))); };
    std::uintmax_t iterations = 40;
    boost::math::tools::brent_find_minima(g, lo, hi, 24, iterations);
  }
  return best;
}

}  // namespace

ConvertedDp best_epsilon(const RdpCurve& curve, double delta) {
  require_open("delta", delta, 0.0, 1.0);
  const double ld = std::log(delta);
  RdpConversion used = RdpConversion::optimal;
  auto value = [&](double alpha, double rho) {
    if (std::isinf(rho)) return kInf;
    return epsilon_at_order(alpha - 1.0, rho, ld, RdpConversion::optimal);
  };
  Best b = minimise(curve, value);
  if (std::isnan(b.alpha)) return {kInf, std::numeric_limits<double>::quiet_NaN(), used};
  // Which conversion attains it (for reporting); mironov is never smaller than cks.
  const double rho = curve.epsilon(b.alpha), u = b.alpha - 1.0;
  used = e_cks(u, rho, ld) <= e_markov(u, rho, ld) ? RdpConversion::cks : RdpConversion::optimal;
  return {std::max(0.0, b.value), b.alpha, used};
}

ConvertedDp best_delta(const RdpCurve& curve, double epsilon) {
  ConvertedDp r = best_log_delta(curve, epsilon);
  // exp_upper: a delta below the smallest normal double is reported as DBL_MIN, never as a
  // subnormal with lost bits or 0.
  r.value = r.value >= 0 ? 1.0 : num::exp_upper(r.value);
  return r;
}

ConvertedDp best_log_delta(const RdpCurve& curve, double epsilon) {
  require_nonnegative("epsilon", epsilon);
  RdpConversion used = RdpConversion::optimal;
  auto value = [&](double alpha, double rho) {
    if (std::isinf(rho)) return kInf;
    return log_delta_at_order(alpha - 1.0, rho, epsilon, RdpConversion::optimal);
  };
  Best b = minimise(curve, value);
  if (std::isnan(b.alpha) || std::isinf(b.value))
    return {0.0, std::numeric_limits<double>::quiet_NaN(), used};
  const double rho = curve.epsilon(b.alpha), u = b.alpha - 1.0;
  used = ld_cks(u, rho, epsilon) <= ld_markov(u, rho, epsilon) ? RdpConversion::cks
                                                                 : RdpConversion::optimal;
  return {std::min(0.0, b.value), b.alpha, used};
}

}  // namespace hsdp::div
