// Privacy loss distributions, part 3 (pld_internal.hpp): what a stored law answers --
// delta(eps) and eps(delta) with the error bounds added (error_bound), the minimum with the
// RDP route -- and the mu-GDP helpers.
#include <algorithm>
#include <boost/math/special_functions/erf.hpp>
#include <cmath>
#include <numbers>

#include "hsdp/divergence/hockey_stick.hpp"
#include "hsdp/divergence/pld.hpp"
#include "hsdp/divergence/rdp.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/numerics/log_normal.hpp"
#include "hsdp/numerics/root.hpp"
#include "pld_internal.hpp"

namespace hsdp::div {

using namespace pld_detail;

// ------------------------------------------------------------------ GDP helpers

double gdp_tradeoff(double alpha, double mu) {
  require_closed("alpha", alpha, 0.0, 1.0);
  if (std::isnan(mu) || mu < 0) fail("mu", mu, ">= 0");
  if (alpha == 0.0) return 1.0;
  if (alpha == 1.0) return 0.0;
  if (std::isinf(mu)) return 0.0;
  // Phi^{-1}(1 - alpha) = Q^{-1}(alpha) = sqrt(2) erfc^{-1}(2 alpha); G = Q(mu - Q^{-1}(alpha)).
  const double z = std::numbers::sqrt2 * boost::math::erfc_inv(2.0 * alpha);
  return num::q(mu - z);
}

double gdp_log_delta(double eps, double mu) {
  if (std::isnan(eps)) fail("epsilon", eps, "a number");
  if (std::isnan(mu) || mu < 0) fail("mu", mu, ">= 0");
  if (std::isinf(mu)) return 0.0;
  if (eps == kInf) return -kInf;
  if (eps >= 0) return log_theta(eps, mu);  // theta_{e^eps}(mu): journal Thm 1 = DRS Cor 2.13
  if (eps == -kInf) return 0.0;
  // eps < 0: H_{e^eps}(P||Q) = 1 - e^eps + e^eps H_{e^-eps}(Q||P) and the Gaussian pair is
  // symmetric.
  return num::logaddexp(num::log1mexp(eps), eps + log_theta(-eps, mu));
}

double gdp_delta(double eps, double mu) { return std::exp(gdp_log_delta(eps, mu)); }

double gdp_epsilon(double delta, double mu) {
  require_open("delta", delta, 0.0, 1.0);
  if (std::isnan(mu) || mu < 0) fail("mu", mu, ">= 0");
  if (std::isinf(mu)) return kInf;
  const double log_target = std::log(delta);
  auto f = [&](double e) { return gdp_log_delta(e, mu) - log_target; };
  if (f(0.0) <= 0) return 0.0;
  // delta(eps) <= Q(eps/mu - mu/2) <= exp(-(eps/mu - mu/2)^2 / 2): a bracket end that holds.
  double hi = mu * (0.5 * mu + std::sqrt(-2.0 * log_target)) + 1.0;
  while (f(hi) > 0) hi *= 2.0;
  return num::monotone_boundary(f, 0.0, hi, num::Holds::above);
}

// ------------------------------------------------------------------ queries

double PrivacyLoss::rdp(double alpha) const {
  if (rdp_.empty()) return kInf;
  double s = 0;
  for (const auto& t : rdp_) s += t.count * t.rho(alpha);
  return std::isnan(s) ? kInf : s;
}

double PrivacyLoss::pmf_delta(double eps) const {
  // sum_{l_j > eps} p_j (1 - e^{eps - l_j}), from the top (small terms first).
  double s = 0;
  for (std::size_t j = pmf_.size(); j-- > 0;) {
    const double l = static_cast<double>(offset_ + static_cast<std::int64_t>(j)) * interval_;
    if (l <= eps) break;
    s += pmf_[j] * -std::expm1(eps - l);
  }
  return s;
}

double PrivacyLoss::rdp_log_delta(double eps) const {
  if (rdp_.empty()) return 0.0;
  RdpCurve curve{[this](double a) { return rdp(a); }};
  return std::min(0.0, best_log_delta(curve, eps).value);
}

double PrivacyLoss::delta(double eps) const { return std::exp(log_delta(eps)); }

double PrivacyLoss::error_bound(double eps) const {
  // slack_ + rel_slack_ T with T <= delta_ideal(eps - shift_ - t) / (1 - e^{-t}) for every
  // t > 0 and delta_ideal <= stored + slack_ + rel_slack_ (T <= 1 anyway); t on a geometric
  // grid from the grid spacing up, stopping past the minimum (about 1/lambda, lambda the
  // decay rate of the profile). One pass from the top of the stored law: with S0 the mass
  // above x and A = sum p_j e^{l_k - l_j} over the same entries (l_k the lowest), the stored
  // profile at x is S0 - e^{x - l_k} A, computed to within 4 eps S0.
  if (!(rel_slack_ > 0)) return slack_;
  if (std::isnan(eps)) return slack_ + rel_slack_;
  const double eh = std::exp(-interval_);
  double best = 1.0, prev = kInf, s0 = 0.0, a = 0.0;
  std::size_t j = pmf_.size();
  auto loss = [&](std::size_t i) { return static_cast<double>(offset_ + static_cast<std::int64_t>(i)) * interval_; };
  for (double t = std::max(interval_, 1e-9); t < 64; t *= 4) {
    const double x = eps - shift_ - t;
    while (j > 0 && loss(j - 1) > x) {
      --j;
      s0 += pmf_[j];
      a = pmf_[j] + eh * a;
    }
    const double stored = j < pmf_.size() ? std::max(0.0, s0 - std::exp(x - loss(j)) * a) + 4 * kEps * s0 : 0.0;
    const double v = (stored + inf_mass_ + slack_ + rel_slack_) / -std::expm1(-t);
    best = std::min(best, v);
    if (v > prev) break;
    prev = v;
  }
  return slack_ + rel_slack_ * best;
}

double PrivacyLoss::log_delta(double eps) const {
  if (std::isnan(eps)) fail("epsilon", eps, "a number");
  const double margin = inf_mass_ + error_bound(eps);
  const double d = std::min(1.0, pmf_delta(eps) + margin);
  double ld = std::log(d);
  // The RDP route where the margins dominate (tiny delta, eps beyond the grid) or the grid
  // is coarse for the answer.
  if (!rdp_.empty() && (margin >= 1e-2 * d || d < 1e-250 || interval_ > 2e-2 * std::max(eps, 1e-3)) &&
      eps >= 0)
    ld = std::min(ld, rdp_log_delta(eps));
  return ld;
}

double PrivacyLoss::pmf_epsilon(double target) const {
  // target applies to pmf_delta alone (margins already subtracted). Returns +inf if no eps.
  if (!(target > 0)) return kInf;
  const std::size_t n = pmf_.size();
  const double h = interval_, eh = std::exp(-h);
  auto loss = [&](std::size_t k) {
    return static_cast<double>(offset_ + static_cast<std::int64_t>(k)) * h;
  };
  // From the top: S0 = sum_{j >= k} p_j, A = sum_{j >= k} p_j e^{l_k - l_j}; for eps in
  // [l_{k-1}, l_k), pmf_delta(eps) = S0 - e^{eps - l_k} A, and pmf_delta(l_{k-1}) =
  // S0 - e^{-h} A. Stop at the first k (from the top) where that exceeds the target.
  double s0 = 0, a = 0;
  std::size_t k = n;
  for (;;) {
    if (k == 0) break;
    --k;
    s0 += pmf_[k];
    a = pmf_[k] + eh * a;
    if (k == 0 || s0 - eh * a > target) break;
  }
  // (k == 0 with the target met at l_0 too: below the lowest loss the same formula holds.)
  const double r = (s0 - target) / a;
  if (!(r > 0)) return loss(k);  // pmf_delta(l_k) <= target with nothing above: l_k or less
  double e = std::min(loss(k), loss(k) + std::log(r));
  if (k > 0) e = std::max(e, loss(k - 1));
  // Conservative end: step up until the stored law meets the target (a few ulps at most),
  // checked with the in-cell form S0 - e^{eps - l_k} A (exact algebra of pmf_delta there).
  auto in_cell = [&](double x) { return s0 - std::exp(x - loss(k)) * a; };
  for (int i = 0; i < 200 && e < loss(k) && in_cell(e) > target; ++i)
    e = std::min(loss(k), e + std::max(4 * kEps * std::abs(e), 1e-300) * std::ldexp(1.0, std::min(i, 60)));
  return e;
}

double PrivacyLoss::epsilon(double delta) const {
  require_open("delta", delta, 0.0, 1.0);
  double margin = inf_mass_ + slack_;
  double e = pmf_epsilon(delta - margin);
  if (e < kInf && rel_slack_ > 0) {
    // The relative part of the bound at e0 = e bounds it at every eps >= e0 (each term of
    // error_bound decreases in eps): solve once more with it, which only moves eps up.
    margin += error_bound(e) - slack_;
    e = pmf_epsilon(delta - margin);
  }
  // The RDP route where the grid's answer is weak: margins dominate, or a grid coarse for
  // the answer.
  if (!rdp_.empty() &&
      (!(e < kInf) || margin >= 1e-2 * delta || interval_ > 2e-2 * std::max(e, 1e-3))) {
    RdpCurve curve{[this](double a) { return rdp(a); }};
    e = std::min(e, best_epsilon(curve, delta).value);
  }
  return std::max(0.0, e);
}

}  // namespace hsdp::div
