// The last-iterate heuristic (include/hsdp/divergence/last_iterate_heuristic.hpp).
//
// With v = T sigma^2 and weights w_k = Pr[Binomial(T, q) = k], the likelihood ratio
//   L(x) = p(x)/q(x) = sum_k w_k exp((k x - k^2/2) / v)
// is increasing in x (every k >= 0), so each hockey-stick divergence is a tail comparison:
//   E_g(P || Q) = sum_k w_k Q((x1 - k)/s) - g Q(x1/s),        L(x1) = g,
//   E_g(Q || P) = Phi(x2/s) - g sum_k w_k Phi((x2 - k)/s),     L(x2) = 1/g,
// with s = sqrt(v). x1, x2 by safeguarded Newton on log L (convex in x: a log-sum-exp of
// affine functions). The differences are formed in the log domain from log Q (numerics).
#include "hsdp/divergence/last_iterate_heuristic.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "hsdp/errors.hpp"
#include "hsdp/numerics/log_normal.hpp"
#include "hsdp/numerics/root.hpp"

namespace hsdp::div {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Mixture {
  std::vector<double> k;      // support (counts)
  std::vector<double> log_w;  // log binomial weights (times the summation step h)
  double s = 1.0;             // sqrt(T) sigma
};

// log(n!) - log(sqrt(2 pi n) (n/e)^n) (Stirling's error; Loader 2000, as R's stirlerr).
double stirling_error(double n) {
  if (n <= 15) return std::lgamma(n + 1) - (n + 0.5) * std::log(n) + n - 0.5 * std::log(2 * std::numbers::pi);
  const double nn = n * n;
  return (1.0 / 12 - (1.0 / 360 - (1.0 / 1260 - (1.0 / 1680 - (1.0 / 1188) / nn) / nn) / nn) / nn) / n;
}

// x log(x / m) + m - x without cancellation (Loader 2000, as R's bd0).
double deviance(double x, double m) {
  if (std::abs(x - m) < 0.1 * (x + m)) {
    double v = (x - m) / (x + m), s = (x - m) * v, ej = 2 * x * v;
    v *= v;
    for (int j = 1; j < 1000; ++j) {
      ej *= v;
      const double next = s + ej / (2 * j + 1);
      if (next == s) return next;
      s = next;
    }
    return s;
  }
  return x * std::log(x / m) + m - x;
}

// log Pr[Binomial(T, q) = k]. Up to T = 2^20 as the lgamma differences (exact to ~1e-9 there);
// beyond, lgamma(T) ~ T log T leaves too few digits for the difference, and Loader's saddle
// point form (the error of Stirling's series and the deviances, each small) is used.
double log_binomial(double T, double k, double q) {
  if (q == 1.0) return k == T ? 0.0 : -kInf;
  if (T <= 1048576)
    return std::lgamma(T + 1) - std::lgamma(k + 1) - std::lgamma(T - k + 1) + k * std::log(q) + (T - k) * std::log1p(-q);
  if (k == 0) return T * std::log1p(-q);
  if (k == T) return T * std::log(q);
  const double lc = stirling_error(T) - stirling_error(k) - stirling_error(T - k) - deviance(k, T * q) -
                    deviance(T - k, T * (1 - q));
  return lc - 0.5 * (std::log(2 * std::numbers::pi) + std::log(k) + std::log1p(-k / T));
}

Mixture binomial_mixture(std::int64_t T, double q, double sigma, std::int64_t max_terms) {
  Mixture m;
  m.s = std::sqrt(static_cast<double>(T)) * sigma;
  const double Td = static_cast<double>(T);
  auto log_weight = [&](double k) { return log_binomial(Td, k, q); };
  // The mode, then the counts whose weight is within e^-60 of it (the rest is < e^-60 T): the
  // log weight is concave, so each end is found by bisection.
  const double mode = std::clamp(std::floor((Td + 1) * q), 0.0, Td);
  const double floor_weight = log_weight(mode) - 60;
  double lo = mode, hi = mode;
  if (log_weight(0) > floor_weight) {
    lo = 0;
  } else {  // log_weight(a) <= floor_weight < log_weight(lo)
    double a = 0;
    while (lo - a > 1) {
      const double mid = std::floor(0.5 * (a + lo));
      (log_weight(mid) > floor_weight ? lo : a) = mid;
    }
  }
  if (log_weight(Td) > floor_weight) {
    hi = Td;
  } else {  // log_weight(hi) > floor_weight >= log_weight(b)
    double b = Td;
    while (b - hi > 1) {
      const double mid = std::floor(0.5 * (hi + b));
      (log_weight(mid) > floor_weight ? hi : b) = mid;
    }
  }
  // Every count, or every h-th one with weight h: the summands are smooth in k on the scale of
  // the binomial spread, ~(hi - lo) / 22, and of the Gaussian's s, and h is at most ~1/40 of
  // both (up to 16 max_terms counts; beyond that s < spread / 700 and the two laws are
  // thousands of sigmas apart: epsilon is far beyond the 1e4 the root finder searches).
  const double count = hi - lo + 1;
  const double terms = static_cast<double>(max_terms);
  double h = count <= terms ? 1.0 : std::ceil(count / terms);
  if (h > 1 && h > m.s / 40) h = std::max({1.0, std::floor(m.s / 40), std::ceil(count / (16 * terms))});
  const double log_h = std::log(h);
  for (double k = lo; k <= hi; k += h) {
    m.k.push_back(k);
    m.log_w.push_back(log_weight(k) + log_h);
  }
  return m;
}

/// log L(x) and its derivative.
std::pair<double, double> log_ratio(const Mixture& m, double x) {
  const double v = m.s * m.s;
  double mx = -kInf;
  std::vector<double> t(m.k.size());
  for (std::size_t i = 0; i < m.k.size(); ++i) {
    t[i] = m.log_w[i] + (m.k[i] * x - 0.5 * m.k[i] * m.k[i]) / v;
    mx = std::max(mx, t[i]);
  }
  double sum = 0, dsum = 0;
  for (std::size_t i = 0; i < m.k.size(); ++i) {
    const double e = std::exp(t[i] - mx);
    sum += e;
    dsum += e * m.k[i] / v;
  }
  return {mx + std::log(sum), dsum / sum};
}

/// x with log L(x) = target (log L is increasing and convex).
double solve(const Mixture& m, double target) {
  double lo = -1.0, hi = 1.0;
  while (log_ratio(m, lo).first > target) lo = 2 * lo - 1;
  while (log_ratio(m, hi).first < target) hi = 2 * hi + 1;
  double x = 0.5 * (lo + hi);
  for (int it = 0; it < 200 && hi - lo > 1e-13 * (1 + std::abs(x)); ++it) {
    const auto [f, df] = log_ratio(m, x);
    if (f < target) lo = x; else hi = x;
    double next = df > 0 ? x - (f - target) / df : 0.5 * (lo + hi);
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    x = next;
  }
  return x;
}

double log_e_pq(const Mixture& m, double eps) {
  const double x = solve(m, eps);
  std::vector<double> terms;
  for (std::size_t i = 0; i < m.k.size(); ++i)
    terms.push_back(m.log_w[i] + num::log_q((x - m.k[i]) / m.s));
  const double a = num::logsumexp(terms), b = eps + num::log_q(x / m.s);
  return a > b ? num::logsubexp(a, b) : -kInf;
}

double log_e_qp(const Mixture& m, double eps) {
  const double x = solve(m, -eps);
  std::vector<double> terms;
  for (std::size_t i = 0; i < m.k.size(); ++i)
    terms.push_back(m.log_w[i] + num::log_q((m.k[i] - x) / m.s));  // Phi((x - k)/s)
  const double a = num::log_q(-x / m.s), b = eps + num::logsumexp(terms);
  return a > b ? num::logsubexp(a, b) : -kInf;
}

void check(std::int64_t T, double q, double sigma) {
  if (T < 1) fail("steps", static_cast<double>(T), ">= 1");
  if (std::isnan(q) || !(q > 0.0) || q > 1.0) fail("q", q, "in (0, 1] (sampling rate)");
  require_positive("sigma", sigma);
}

}  // namespace

double heuristic_log_delta(std::int64_t T, double q, double sigma, double epsilon, std::int64_t max_terms) {
  check(T, q, sigma);
  require_nonnegative("epsilon", epsilon);
  require_range("max_terms", max_terms, 64, std::int64_t{1} << 24);
  if (std::isinf(epsilon)) return -kInf;
  const Mixture m = binomial_mixture(T, q, sigma, max_terms);
  return std::max(log_e_pq(m, epsilon), log_e_qp(m, epsilon));
}

double heuristic_epsilon(std::int64_t T, double q, double sigma, double delta, std::int64_t max_terms) {
  check(T, q, sigma);
  require_open("delta", delta, 0.0, 1.0);
  require_range("max_terms", max_terms, 64, std::int64_t{1} << 24);
  const Mixture m = binomial_mixture(T, q, sigma, max_terms);
  const double target = std::log(delta);
  auto f = [&](double e) { return std::max(log_e_pq(m, e), log_e_qp(m, e)) - target; };
  return num::smallest_meeting(f, 0.0, 1.0, 1e4).value_or(kInf);
}

}  // namespace hsdp::div
