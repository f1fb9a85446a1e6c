// Federated learning with a trusted aggregator (Asoodeh, Chen, Calmon, Ozgur 2021,
// "federated" in papers/): Alg. 1 assigns the n users to batches of m = b users by a
// uniformly random permutation, each round averages the m noisy local gradients, and
// only the last iterate (Thm 2) or the iterate at a uniformly random round (Cor. 3) is
// released.
//
// In hsdp terms, with a_t = theta(psi_t / s_t) (psi_t = 2 eta_t L / b, s_t = noise_std_t)
// and c_j = theta(D_j / s_j) (D_j = dia(Psi_j(W)), psi_diameter()):
//
//   federated             delta = (b/n) sum_{t=1}^{T} a_t prod_{j=t+1}^{T} c_j
//   federated-random-stop delta = (b/n) (1/T) sum_{tau=1}^{T} sum_{t=1}^{tau} a_t prod_{j=t+1}^{tau} c_j
//
// Federated convention: noise_std = eta sigma / sqrt(m), so psi_t / s_t = 2 L / (sqrt(m)
// sigma_t) and, for a ball of radius rho, D_j / s_j = 2 rho sqrt(m) / (eta_j sigma_j):
// exactly the paper's arguments.
//
// Conservative decisions (also in docs/analyses/federated.md):
//  * The weight of batch t is Pr(user i lands in batch t) = b/n, for every t = 1..T. When
//    T b < n some users are never used (their delta is 0) and the weights sum to T b / n
//    < 1; the paper's q = m/n = 1/T is the case T b = n. b/n is the exact probability
//    under the permutation; we do not substitute the paper's 1/T (= q only when T b = n).
//  * In Cor. 3 the paper's 1/T^2 is (1/T for the stopping round) x (1/T for the batch of
//    the user); the second factor is b/n in general, the first stays 1/T.
//  * D_j comes from psi_diameter(): 2 rho only for a convex beta-smooth loss with
//    eta_j <= 2/beta (the paper's assumption), otherwise 2 rho + 2 eta_j L (the paper's
//    remark after Thm 2 "2(rho + eta L)"), or the strongly convex contraction.
//  * The appendix's closed form prints theta(2 L sqrt(m) / sigma) where the theorem and
//    the derivation (23)-(24) give theta(2 L / (sqrt(m) sigma)); we follow the
//    derivation, which is checked: psi_t / s_t = (2 eta_t L / m) / (eta_t sigma_t / sqrt(m)).
//  * Cor. 1 (11): the printed intermediate theta(2 rho sqrt(lambda m j) / sigma) is a typo
//    for theta(2 rho sqrt(m) lambda j / sigma) (eta_j = 1/(lambda j)), and "eta_j <=
//    eta_T" should read eta_j >= eta_T; the bound (11) itself (every contraction factor
//    replaced by the largest one, at eta_T) is correct and is what we report.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <variant>
#include <vector>

#include "common.hpp"
#include "hsdp/divergence/hockey_stick.hpp"
#include "hsdp/numerics/log_normal.hpp"
#include "hsdp/numerics/root.hpp"
#include "registry.hpp"

namespace hsdp::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- shared numerics -------------------------------------------------------------------

// dia(Psi_t(W)); check() has verified that every step has one.
double psi_dia(const Run& run, std::int64_t t) {
  return std::get<PsiDiameter>(psi_diameter(run, t)).value;
}

// log theta_{e^eps}(r) (federated Lemma 1, (6)). theta <= 1, but log_theta can round a few
// ulps above 0 near theta = 1 (r ~ 16); the exact value never exceeds 1, so clamping keeps
// an upper bound and keeps log1mexp finite.
double log_theta_clamped(double eps, double r) { return std::min(0.0, div::log_theta(eps, r)); }

// log a_t = log theta(psi_t / s_t): the E_gamma divergence of the step that sees the
// differing user (federated appendix (21)-(24); journal Thm 4 (31)).
double log_a(const Run& run, double eps, std::int64_t t) {
  return log_theta_clamped(eps, sensitivity(run, t) / run.noise_std.at(t));
}

// log c_j = log theta(D_j / s_j): the E_gamma contraction coefficient of round j
// (federated appendix (16)-(19); journal Prop. 1).
double log_c(const Run& run, double eps, std::int64_t j) {
  return log_theta_clamped(eps, psi_dia(run, j) / run.noise_std.at(j));
}

bool all_equal(const Schedule& s) { return s.is_constant() || s.min() == s.max(); }

// log sum_{k=0}^{T-1} c^k = log[(1 - c^T) / (1 - c)] (the geometric factor of the closed
// forms of federated Thm 2 and Cor. 1 (11)) for c = theta_{e^eps}(r), from log c and
// log(1 - c): near c = 1 only the latter keeps its digits (num::log_geometric_sum).
double log_geometric(double eps, double r, std::int64_t T) {
  return num::log_geometric_sum(log_theta_clamped(eps, r), div::log_one_minus_theta(eps, r), T);
}

// log H_T with H_T = sum_{tau=1}^{T} sum_{k=0}^{tau-1} c^k = sum_{tau=1}^{T} (1 - c^tau)/(1 - c)
// (the double sum of federated Cor. 3 with constant factors, eq. (12)). By doubling in
// O(log T): with G_k = sum_{i<k} c^i,
//   G_{2k} = G_k (1 + c^k),       H_{2k} = H_k (1 + c^k) + k G_k,
//   G_{k+1} = 1 + c G_k,          H_{k+1} = H_k + G_{k+1}.
// Every operation adds positive terms, so the closed form's T - c G_T cancellation (c near
// 1) never occurs.
double log_double_geometric(double lc, std::int64_t T) {
  lc = std::min(lc, 0.0);  // theta <= 1 (see log_geometric)
  double lg = -kInf, lh = -kInf;
  std::int64_t k = 0;
  for (int bit = 62; bit >= 0; --bit) {
    if (k > 0) {
      const double l1p = num::logaddexp(0.0, static_cast<double>(k) * lc);
      lh = num::logaddexp(lh + l1p, std::log(static_cast<double>(k)) + lg);
      lg += l1p;
      k *= 2;
    }
    if ((T >> bit) & 1) {
      lg = num::logaddexp(0.0, lc + lg);
      lh = num::logaddexp(lh, lg);
      k += 1;
    }
  }
  return lh;
}

// The recursion behind both analyses (federated Thm 2 / Cor. 3 sums, Horner form):
// A_1 = a_1, A_tau = a_tau + c_tau A_{tau-1}, so A_tau = sum_{t<=tau} a_t prod_{j=t+1}^{tau} c_j.
// Returns log A_T and, in *log_sum_a, log sum_{tau=1}^{T} A_tau. O(T) theta evaluations.
double log_recursion(const Run& run, double eps, double* log_sum_a) {
  double la = -kInf, ls = -kInf;
  for (std::int64_t t = 1; t <= run.steps; ++t) {
    const double carried = t == 1 ? -kInf : log_c(run, eps, t) + la;
    la = num::logaddexp(log_a(run, eps, t), carried);
    if (log_sum_a) ls = num::logaddexp(ls, la);
  }
  if (log_sum_a) *log_sum_a = ls;
  return la;
}

double log_batch_weight(const Run& run) {
  return std::log(static_cast<double>(run.batch_size)) - std::log(static_cast<double>(run.n));
}

// The paper's sigma_t in the federated convention: noise_std_t = eta_t sigma_t / sqrt(m).
double federated_sigma(const Run& run, std::int64_t t) {
  return run.noise_std.at(t) * std::sqrt(static_cast<double>(run.batch_size)) / run.eta.at(t);
}

// True when v(t) agrees with target(t) to a relative 1e-9 for t = 1..steps.
bool matches(const Run& run, const std::function<double(std::int64_t)>& v,
             const std::function<double(std::int64_t)>& target) {
  for (std::int64_t t = 1; t <= run.steps; ++t) {
    const double x = v(t), y = target(t);
    if (!(std::abs(x - y) <= 1e-9 * std::abs(y))) return false;
  }
  return true;
}

// A detail from a log-delta curve of eps (non-increasing), in the unit of the result (as
// the contraction analyses do): delta at the query's epsilon, or the smallest epsilon
// meeting the query's delta (the conservative end of the root bracket; +inf beyond 1e4 as
// Analysis::epsilon). Rounded up, not capped: a closed form above 1 shows how loose it is.
Detail curve_detail(std::string name, const Query& q,
                    const std::function<double(double)>& log_delta) {
  if (q.epsilon) {
    const double ld = log_delta(*q.epsilon);
    return {std::move(name), round_up(num::exp_upper(ld))};
  }
  const double target = std::log(*q.delta);
  auto eps = num::smallest_meeting([&](double e) { return log_delta(e) - target; }, 0.0, 1.0, 1e4);
  return {std::move(name), eps ? round_up(*eps) : kInf};
}

// Checks shared by both analyses: the permutation of Alg. 1 and the one-pass conditions.
std::optional<std::string> check_federated(const Run& run) {
  if (run.sampling != Sampling::shuffle)
    return fmt::format(
        "needs users assigned to rounds by a uniformly random, hidden permutation "
        "({}, federated Alg. 1); with sampling = {} the round of a user is "
        "not uniformly random (for a fixed order use the contraction analyses)",
        report_field("sampling", "shuffle"), to_string(run.sampling));
  if (run.order_known)
    return std::string(
        "needs the permutation of users to rounds hidden (Alg. 1); the batch order is known "
        "(order_known)");
  return check_one_pass(run);
}

// ---- federated (Thm 2) -----------------------------------------------------------------

class Federated final : public Analysis {
 public:
  std::string_view name() const override { return "federated"; }
  // Noise on a grid: a_t and c_j read sensitivity() and psi_diameter(), which add grid_extra
  // (common.hpp); the trainer's federated grid has its own slack (docs/security.md).
  bool charges_grid() const override { return true; }
  std::string_view citation() const override {
    return "Asoodeh, Chen, Calmon, Ozgur 2021 (federated), Thm 2 (Alg. 1; proof in the "
           "appendix, (15)-(24)); closed form for constant parameters and Cor. 1 (11)";
  }

  std::optional<std::string> check(const Run& run) const override {
    if (run.release != Release::last)
      return fmt::format(
          "releases the last iterate only ({}); release = {}{}", report_field("release", "last"),
          to_string(run.release),
          run.release == Release::random_stop ? " is covered by federated-random-stop" : "");
    return check_federated(run);
  }

  // federated Thm 2: log[(b/n) sum_t a_t prod_{j>t} c_j]. O(1) for constant eta and noise
  // (the theorem's closed form (b/n) a (1 - c^T)/(1 - c)), otherwise the O(T) recursion.
  double log_delta(const Run& run, double eps) const override {
    if (all_equal(run.eta) && all_equal(run.noise_std)) return log_closed_form(run, eps);
    return log_batch_weight(run) + log_recursion(run, eps, nullptr);
  }

  std::vector<Detail> details(const Run& run, const Query& q) const override {
    std::vector<Detail> out;
    if (all_equal(run.eta) && all_equal(run.noise_std))
      out.push_back(curve_detail("thm2_closed_form", q,
                                 [&](double e) { return log_closed_form(run, e); }));
    if (run.steps >= 2 && !all_equal(run.eta) && is_cor1_schedule(run))
      out.push_back(curve_detail("cor1_eq_11", q, [&](double e) { return log_cor1(run, e); }));
    return out;
  }

 private:
  // federated Thm 2, closed form for eta_t = eta, sigma_t = sigma:
  // (b/n) theta_a (1 - theta_c^T) / (1 - theta_c), T = steps.
  static double log_closed_form(const Run& run, double eps) {
    const double la = log_a(run, eps, 1);
    if (run.steps == 1) return log_batch_weight(run) + la;
    return log_batch_weight(run) + la +
           log_geometric(eps, psi_dia(run, 1) / run.noise_std.at(1), run.steps);
  }

  // federated Cor. 1: eta_t = 1/(lambda t) (lambda = 1/eta_1 here; the privacy bound needs
  // no relation to the loss's strong convexity) and sigma_t = sigma.
  static bool is_cor1_schedule(const Run& run) {
    const double eta1 = run.eta.at(1);
    const double sigma1 = federated_sigma(run, 1);
    return matches(run, [&](std::int64_t t) { return run.eta.at(t); },
                   [&](std::int64_t t) { return eta1 / static_cast<double>(t); }) &&
           matches(run, [&](std::int64_t t) { return federated_sigma(run, t); },
                   [&](std::int64_t) { return sigma1; });
  }

  // federated Cor. 1 (11): every contraction factor replaced by the largest,
  // theta(max_{j>=2} D_j / s_j) (= theta(2 rho lambda n / (sqrt(m) sigma)) at eta_T for a
  // smooth loss with D = 2 rho, T = n/m), and every a_t by theta(max_t psi_t / s_t)
  // (= theta(2 L / (sqrt(m) sigma)), constant under Cor. 1):
  // (b/n) a* (1 - c*^T) / (1 - c*) >= the Thm 2 sum.
  static double log_cor1(const Run& run, double eps) {
    double ra = 0.0, rc = 0.0;
    for (std::int64_t t = 1; t <= run.steps; ++t) {
      ra = std::max(ra, sensitivity(run, t) / run.noise_std.at(t));
      if (t >= 2) rc = std::max(rc, psi_dia(run, t) / run.noise_std.at(t));
    }
    return log_batch_weight(run) + log_theta_clamped(eps, ra) + log_geometric(eps, rc, run.steps);
  }
};

// ---- federated-random-stop (Cor. 3) ----------------------------------------------------

class FederatedRandomStop final : public Analysis {
 public:
  std::string_view name() const override { return "federated-random-stop"; }
  // Noise on a grid: a_t and c_j read sensitivity() and psi_diameter(), which add grid_extra
  // (common.hpp); the trainer's federated grid has its own slack (docs/security.md).
  bool charges_grid() const override { return true; }
  std::string_view citation() const override {
    return "Asoodeh, Chen, Calmon, Ozgur 2021 (federated), Cor. 3 (proof in the appendix) "
           "and its closed form (12)";
  }

  std::optional<std::string> check(const Run& run) const override {
    if (run.release != Release::random_stop)
      return fmt::format(
          "releases the iterate at a uniformly random round ({}); release = {}{}",
          report_field("release", "random-stop"), to_string(run.release), run.release == Release::last ? " is covered by federated" : "");
    return check_federated(run);
  }

  // federated Cor. 3: log[(b/n)(1/T) sum_{tau=1}^{T} A_tau] with A_tau the Thm 2 sum up to
  // round tau. The paper's 1/T^2 = (1/T for tau) x (Pr(user in round t) = m/n = 1/T); for
  // T b < n the second factor is b/n. O(log T) for constant parameters (doubling), O(T)
  // otherwise.
  double log_delta(const Run& run, double eps) const override {
    const double lw = log_batch_weight(run) - std::log(static_cast<double>(run.steps));
    if (all_equal(run.eta) && all_equal(run.noise_std)) {
      const double la = log_a(run, eps, 1);
      if (run.steps == 1) return lw + la;
      return lw + la + log_double_geometric(log_c(run, eps, 1), run.steps);
    }
    double ls = -kInf;
    log_recursion(run, eps, &ls);
    return lw + ls;
  }

  std::vector<Detail> details(const Run& run, const Query& q) const override {
    return {curve_detail("cor3_eq_12", q, [&](double e) { return log_bound12(run, e); })};
  }

 private:
  // federated (12): eta* = min eta_t, sigma* = min sigma_t (federated convention),
  // (b/n)(1/T) theta(2L/(sqrt(m) sigma*)) sum_{tau=1}^{T} (1 - c*^tau)/(1 - c*),
  // c* = theta(D_max sqrt(m) / (eta* sigma*)), D_max = max_t dia(Psi_t(W)) (2 rho in the
  // paper). Since eta* sigma* <= eta_j sigma_j and 2L/(sqrt(m) sigma_t) = psi_t / s_t,
  // every factor of the Cor. 3 sum is dominated.
  static double log_bound12(const Run& run, double eps) {
    const double sqrt_b = std::sqrt(static_cast<double>(run.batch_size));
    const bool constant = all_equal(run.eta) && all_equal(run.noise_std);
    double eta_min = kInf, sigma_min = kInf, d_max = 0.0;
    for (std::int64_t t = 1; t <= run.steps; ++t) {
      eta_min = std::min(eta_min, run.eta.at(t));
      sigma_min = std::min(sigma_min, federated_sigma(run, t));
      if (run.steps >= 2) d_max = std::max(d_max, psi_dia(run, t));
      if (constant) break;  // every step is the same
    }
    const double lw = log_batch_weight(run) - std::log(static_cast<double>(run.steps));
    const double la =
        log_theta_clamped(eps, 2.0 * run.loss.lipschitz.value() / (sqrt_b * sigma_min));
    if (run.steps == 1) return lw + la;
    const double lc = log_theta_clamped(eps, d_max * sqrt_b / (eta_min * sigma_min));
    return lw + la + log_double_geometric(lc, run.steps);
  }
};

}  // namespace

AnalysisPtr make_federated() { return std::make_shared<Federated>(); }
AnalysisPtr make_federated_random_stop() { return std::make_shared<FederatedRandomStop>(); }

}  // namespace hsdp::detail
