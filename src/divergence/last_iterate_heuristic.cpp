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
#include <vector>

#include "hsdp/errors.hpp"
#include "hsdp/numerics/log_normal.hpp"
#include "hsdp/numerics/root.hpp"

namespace hsdp::div {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Mixture {
  std::vector<double> k;      // support (counts)
  std::vector<double> log_w;  // log binomial weights
  double s = 1.0;             // sqrt(T) sigma
};

Mixture binomial_mixture(std::int64_t T, double q, double sigma) {
  Mixture m;
  m.s = std::sqrt(static_cast<double>(T)) * sigma;
  const double Td = static_cast<double>(T);
  auto log_weight = [&](double k) {
    if (q == 1.0) return k == Td ? 0.0 : -kInf;
    return std::lgamma(Td + 1) - std::lgamma(k + 1) - std::lgamma(Td - k + 1) + k * std::log(q) +
           (Td - k) * std::log1p(-q);
  };
  // The mode, then outwards while the weight is within e^-60 of it (the rest is < e^-60 T).
  const double mode = std::clamp(std::floor((Td + 1) * q), 0.0, Td);
  const double peak = log_weight(mode);
  double lo = mode, hi = mode;
  while (lo > 0 && log_weight(lo - 1) > peak - 60) lo -= 1;
  while (hi < Td && log_weight(hi + 1) > peak - 60) hi += 1;
  for (double k = lo; k <= hi; k += 1) {
    m.k.push_back(k);
    m.log_w.push_back(log_weight(k));
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

double heuristic_log_delta(std::int64_t T, double q, double sigma, double epsilon) {
  check(T, q, sigma);
  require_nonnegative("epsilon", epsilon);
  if (std::isinf(epsilon)) return -kInf;
  const Mixture m = binomial_mixture(T, q, sigma);
  return std::max(log_e_pq(m, epsilon), log_e_qp(m, epsilon));
}

double heuristic_epsilon(std::int64_t T, double q, double sigma, double delta) {
  check(T, q, sigma);
  require_open("delta", delta, 0.0, 1.0);
  const Mixture m = binomial_mixture(T, q, sigma);
  const double target = std::log(delta);
  auto f = [&](double e) { return std::max(log_e_pq(m, e), log_e_qp(m, e)) - target; };
  return num::smallest_meeting(f, 0.0, 1.0, 1e4).value_or(kInf);
}

}  // namespace hsdp::div
