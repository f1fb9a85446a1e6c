// Chourasia, Ye, Shokri 2021 ("langevin", papers/chourasia-ye-shokri-2021-langevin-noisy-gd.txt):
// the Rényi privacy loss of the last iterate of noisy full-batch GD (Alg. 1),
//
//     th_{k+1} = P_C(th_k - eta grad L_D(th_k) + sqrt(2 eta) sigma Z_k),
//
//  langevin        Cor. 1 = Thm 2 (16) with Lemma 5's LSI constant c = lambda / (2 sigma^2):
//                  eps(alpha) = alpha S_g^2 / (lambda sigma^2 n^2) (1 - e^{-lambda eta K / 2}),
//                  an RdpAnalysis (eps, delta from the shared RDP -> DP conversion).
//  langevin-lower  Thm 3 (17): on the squared-loss construction the last iterate's Rényi
//                  divergence is >= alpha S_g^2 / (4 sigma^2 n^2) (1 - e^{-eta K}); a lower bound.
//
// OCR damage (ERRATA 3) is repaired by re-deriving Thm 2 from the PDE (15) with gamma = 1/2
// and checking every formula against the exact Gaussian computation on the squared loss
// (tests/test_langevin.cpp, docs/analyses/langevin.md).
//
// Mapping of a Run (docs/analyses/langevin.md): eta = run.eta (constant), the paper's
// sigma = noise_std / sqrt(2 eta) (`--convention chourasia`), K = steps, S_g = 2 L (replace-one,
// paper after Cor. 1: "S_g <= 2L for L-Lipschitz losses"), lambda = strong convexity, beta =
// smoothness. Lemma 4 bounds the drift difference of the tracing diffusions by S_g / n.
#include "hsdp/analysis/langevin.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string>

#include "hsdp/analysis/rdp_analysis.hpp"
#include "hsdp/divergence/hockey_stick.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/numerics/root.hpp"
#include "registry.hpp"

namespace hsdp::langevin {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void check_common(double alpha, double sensitivity, double n, double sigma, double eta,
                  double K) {
  require_open("alpha", alpha, 1.0, kInf);
  require_nonnegative("sensitivity", sensitivity);
  require_positive("n", n);
  require_positive("sigma", sigma);
  require_positive("eta", eta);
  if (std::isnan(K) || K < 0) fail("K", K, ">= 0 (number of steps)");
}

// 1 - e^{-x} for x >= 0 without cancellation; 1 at x = +inf.
double one_minus_exp(double x) { return -std::expm1(-x); }

// a * b where a >= 0 may be +inf and b >= 0 may be 0: 0 when either is 0 (never NaN).
double times(double a, double b) { return (a == 0 || b == 0) ? 0.0 : a * b; }

}  // namespace

// Thm 2 (16), reconstructed. PDE (15) at gamma = 1/2 reads, with S = S_g / n,
//   dR/dt <= alpha S^2 / (2 sigma^2) - c sigma^2 (R/alpha + (alpha - 1) dR/dalpha).
// Q(alpha, t) = alpha g(t), g' = S^2/(2 sigma^2) - c sigma^2 g, g(0) = 0 satisfies it with
// equality; R - Q is non-increasing along the characteristics d alpha/dt = c sigma^2 (alpha - 1)
// (which stay in alpha > 1) and starts at 0, so R <= Q = alpha S^2/(2 c sigma^4)(1 - e^{-c sigma^2 t})
// at t = eta K.
double thm2_rdp(double alpha, double sensitivity, double n, double sigma, double eta, double K,
                double lsi_c) {
  check_common(alpha, sensitivity, n, sigma, eta, K);
  require_positive("lsi_c", lsi_c);
  const double s = sensitivity / n;
  const double s2 = sigma * sigma;
  const double limit = alpha * s * s / (2 * lsi_c * s2 * s2);
  return times(limit, one_minus_exp(lsi_c * s2 * eta * K));
}

// Lemma 5: LSI of the stationary law of the recursion 1/c' = (1 - eta lambda)^2 / c + 2 eta sigma^2
// (the gradient map is (1 - eta lambda)-Lipschitz for eta <= 2/(beta + lambda), Gaussian
// convolution adds 2 eta sigma^2, projection is 1-Lipschitz): 1/c = 2 sigma^2 / lambda is
// preserved when eta lambda <= 1, and every start that is c-LSI (a point, or P_C(N(0, 2 sigma^2/lambda I)))
// stays c-LSI.
double lemma5_lsi_constant(double lambda, double sigma) {
  require_positive("lambda", lambda);
  require_positive("sigma", sigma);
  return lambda / (2 * sigma * sigma);
}

// Cor. 1 = Thm 2 at c = lambda / (2 sigma^2) (Fig. 1 caption: alpha S_g^2/(lambda sigma^2 n^2)
// (1 - e^{-lambda eta K/2})). Written directly (not through thm2_rdp) so that sigma^4 cannot
// underflow at small sigma.
double cor1_rdp(double alpha, double sensitivity, double n, double sigma, double eta, double K,
                double lambda) {
  check_common(alpha, sensitivity, n, sigma, eta, K);
  require_positive("lambda", lambda);
  const double limit = alpha * (sensitivity / n) * (sensitivity / n) / (lambda * sigma * sigma);
  return times(limit, one_minus_exp(lambda * eta * K / 2));
}

// Cor. 2 (18), reconstructed: every iterate on the squared loss is Gaussian with per-coordinate
// variance <= 2 eta sigma^2 sum_j (1-eta)^{2j} <= 2 sigma^2 / (2 - eta) (also between the grid
// points of the tracing diffusion), so c = (2 - eta) / (2 sigma^2) in Thm 2.
double cor2_rdp(double alpha, double sensitivity, double n, double sigma, double eta, double K) {
  check_common(alpha, sensitivity, n, sigma, eta, K);
  require_open("eta", eta, 0.0, 2.0);
  const double limit =
      alpha * (sensitivity / n) * (sensitivity / n) / ((2 - eta) * sigma * sigma);
  return times(limit, one_minus_exp((2 - eta) * eta * K / 2));
}

// Thm 3 (17), reconstructed; equals the exact value below weakened by 1 - q^K >= 1 - e^{-eta K}
// and (2 - eta)/(1 + q^K) >= 1 (K >= 1, q = 1 - eta in [0, 1)).
double thm3_lower_rdp(double alpha, double sensitivity, double n, double sigma, double eta,
                      double K) {
  check_common(alpha, sensitivity, n, sigma, eta, K);
  require_open("eta", eta, 0.0, 1.0);
  const double limit = alpha * (sensitivity / n) * (sensitivity / n) / (4 * sigma * sigma);
  return times(limit, one_minus_exp(eta * K));
}

// Sec. 4: th_K ~ N(mu_K, v_K I), mean difference (S_g/n)(1 - q^K), v_K = 2 eta sigma^2 (1 - q^{2K})/(1 - q^2);
// D_alpha = alpha ||dmu||^2 / (2 v_K) = alpha S_g^2 (2 - eta)(1 - q^K) / (4 sigma^2 n^2 (1 + q^K)).
double squared_loss_exact_rdp(double alpha, double sensitivity, double n, double sigma,
                              double eta, double K) {
  check_common(alpha, sensitivity, n, sigma, eta, K);
  require_open("eta", eta, 0.0, 2.0);
  const double q = 1 - eta;
  // 1 - q^K and 1 + q^K with q in (-1, 1), without cancellation for q near 1.
  const double qk = std::pow(q, K);
  const double one_minus_qk =
      q > 0 ? -std::expm1(K * std::log1p(-eta)) : 1 - qk;
  const double limit = alpha * (sensitivity / n) * (sensitivity / n) * (2 - eta) / (4 * sigma * sigma);
  return times(limit, one_minus_qk / (1 + qk));
}

// Fig. 1 caption / App. E: K Gaussian mechanisms with mean shift eta S_g / n and std
// sqrt(2 eta) sigma, each alpha (eta S_g/n)^2 / (2 * 2 eta sigma^2).
double composition_rdp(double alpha, double sensitivity, double n, double sigma, double eta,
                       double K) {
  check_common(alpha, sensitivity, n, sigma, eta, K);
  const double per_step = alpha * (sensitivity / n) * (sensitivity / n) / (4 * sigma * sigma);
  return times(per_step, eta * K);
}

double thm4_sigma2(double alpha, double eps_rdp, double sensitivity, double n, double lambda) {
  require_open("alpha", alpha, 1.0, kInf);
  require_positive("eps_rdp", eps_rdp);
  require_nonnegative("sensitivity", sensitivity);
  require_positive("n", n);
  require_positive("lambda", lambda);
  // Rounded up by one part in 1e12 so that cor1_rdp at this sigma never exceeds eps_rdp by
  // floating-point error.
  return alpha * (sensitivity / n) * (sensitivity / n) / (lambda * eps_rdp) * (1 + 1e-12);
}

double cor1_max_steps(double alpha, double eps_rdp, double sensitivity, double n, double sigma,
                      double eta, double lambda) {
  check_common(alpha, sensitivity, n, sigma, eta, 0.0);
  require_positive("eps_rdp", eps_rdp);
  require_positive("lambda", lambda);
  const double limit = alpha * (sensitivity / n) * (sensitivity / n) / (lambda * sigma * sigma);
  if (limit <= eps_rdp) return kInf;
  // A (1 - e^{-b K}) <= eps  <=>  K <= -log(1 - eps/A) / b.
  double k = std::floor(-std::log1p(-eps_rdp / limit) / (lambda * eta / 2));
  while (k > 0 && cor1_rdp(alpha, sensitivity, n, sigma, eta, k, lambda) > eps_rdp) k -= 1;
  return k;
}

}  // namespace hsdp::langevin

namespace hsdp::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

constexpr const char* kCitation =
    "Chourasia, Ye, Shokri 2021 (NeurIPS), Cor. 1 = Thm 2 (16) with Lemma 5: "
    "eps = alpha S_g^2/(lambda sigma^2 n^2) (1 - e^{-lambda eta K/2}), S_g = 2L";
constexpr const char* kLowerCitation =
    "Chourasia, Ye, Shokri 2021 (NeurIPS), Thm 3 (17): squared-loss construction, "
    "R_alpha >= alpha S_g^2/(4 sigma^2 n^2) (1 - e^{-eta K}), S_g = 2L";

// The run's parameters in the paper's terms.
struct Params {
  double eta;
  double sigma;  // the paper's sigma = noise_std / sqrt(2 eta)
  double sg;     // S_g = 2 L
  double n;
  double K;
};

Params params(const Run& run) {
  Params p{};
  p.eta = run.eta.at(1);
  p.sigma = run.noise_std.at(1) / std::sqrt(2 * p.eta);
  p.sg = 2 * *run.loss.lipschitz;
  p.n = static_cast<double>(run.n);
  p.K = static_cast<double>(run.steps);
  return p;
}

// Checks shared by both analyses: Alg. 1 exactly (full batch every step, Gaussian noise,
// constant eta and sigma, only the last iterate released, D and D' in X^n differing in one
// record) and a known sensitivity.
std::optional<std::string> check_alg1(const Run& run) {
  if (run.noise != NoiseKind::gaussian)
    return std::string("needs Gaussian noise (--noise gaussian): Alg. 1 adds sqrt(2 eta) sigma N(0, I)");
  if (run.sampling != Sampling::full || run.batch_size != run.n)
    return fmt::format(
        "stated for full-batch noisy GD (--sampling full --batch-size n): sampling = {}, batch = {}, n = {}",
        to_string(run.sampling), run.batch_size, run.n);
  if (run.release != Release::last)
    return fmt::format("bounds the last iterate only (--release last), not release = {}",
                       to_string(run.release));
  if (run.adjacency != Adjacency::replace)
    return std::string(
        "stated for replace-one neighbours (D, D' in X^n differing in one record)");
  if (!run.eta.is_constant() || !run.noise_std.is_constant())
    return std::string("needs a constant step size eta and noise sigma (Alg. 1)");
  if (!run.loss.lipschitz)
    return std::string(
        "needs the Lipschitz constant L of the loss (--lipschitz): the total gradient sensitivity is S_g = 2L");
  // Clipping at C < L changes the update map (no longer the gradient step of a strongly
  // convex smooth loss, which Lemma 5 and Thm 3's construction need); at C >= L it never acts.
  if (run.clip && *run.clip < *run.loss.lipschitz)
    return fmt::format(
        "gradient clipping at C = {} < L = {} changes the gradient step that Lemma 5 (LSI) and "
        "Thm 3 analyse; the analysis needs unclipped gradients (or C >= L)",
        show(*run.clip), show(*run.loss.lipschitz));
  if (!(run.noise_std.at(1) > 0))
    return std::string("needs noise_std > 0");
  return std::nullopt;
}

// =======================================================================================
// langevin: Cor. 1
// =======================================================================================

class Langevin final : public RdpAnalysis {
 public:
  std::string_view name() const override { return "langevin"; }
  std::string_view citation() const override { return kCitation; }

  std::optional<std::string> check(const Run& run) const override {
    if (auto why = check_alg1(run)) return why;
    if (!run.loss.convex) return std::string("needs a (strongly) convex loss (Lemma 5)");
    if (!(run.loss.strong_convexity > 0))
      return std::string(
          "needs a strongly convex loss, lambda > 0 (--strong-convexity): the LSI constant of Lemma 5 is lambda/(2 sigma^2)");
    if (!run.loss.smoothness)
      return std::string(
          "needs the smoothness beta of the loss (--smoothness): Lemma 5 needs eta <= 1/beta");
    const double beta = *run.loss.smoothness;
    const double lambda = run.loss.strong_convexity;
    if (lambda > beta)
      return fmt::format(
          "inconsistent loss constants: strong convexity lambda = {} exceeds smoothness beta = {}",
          show(lambda), show(beta));
    const double eta = run.eta.at(1);
    // Lemma 5 / Cor. 1: step size below 1/beta (then the gradient map is (1 - eta lambda)-
    // Lipschitz and eta lambda <= 1, which is what the LSI recursion uses).
    if (eta * beta > 1)
      return fmt::format(
          "step size eta = {} exceeds 1/beta = {}: Lemma 5 (LSI for noisy GD) and Cor. 1 need eta <= 1/beta",
          show(eta), show(1 / beta));
    return std::nullopt;
  }

  double rdp(const Run& run, double alpha) const override {
    const Params p = params(run);
    return langevin::cor1_rdp(alpha, p.sg, p.n, p.sigma, p.eta, p.K, run.loss.strong_convexity);
  }

  std::vector<Detail> details(const Run& run, const Query& query) const override {
    const Params p = params(run);
    const double lambda = run.loss.strong_convexity;
    // Per-alpha values: every bound here is alpha times a constant (eps / alpha).
    const double per_alpha = langevin::cor1_rdp(2.0, p.sg, p.n, p.sigma, p.eta, p.K, lambda) / 2;
    const double limit = (p.sg / p.n) * (p.sg / p.n) / (lambda * p.sigma * p.sigma);
    const double comp = langevin::composition_rdp(2.0, p.sg, p.n, p.sigma, p.eta, p.K) / 2;
    std::vector<Detail> d{
        {"sigma", p.sigma},
        {"lsi_constant", langevin::lemma5_lsi_constant(lambda, p.sigma)},
        {"rdp_per_alpha", per_alpha},
        {"rdp_limit_per_alpha", limit},
        {"composition_rdp_per_alpha", comp},
    };
    for (double a : query.alphas) {
      if (!(a > 1)) continue;  // the shared code rejects alpha <= 1
      d.push_back({fmt::format("composition_rdp(alpha={})", show(a)),
                   langevin::composition_rdp(a, p.sg, p.n, p.sigma, p.eta, p.K)});
    }
    return d;
  }
};

// =======================================================================================
// langevin-lower: Thm 3
// =======================================================================================

class LangevinLower final : public Analysis {
 public:
  std::string_view name() const override { return "langevin-lower"; }
  std::string_view citation() const override { return kLowerCitation; }
  BoundKind kind() const override { return BoundKind::lower; }

  // The construction: l(th; x) = ||th - x||^2 / 2 on C = R^d (1-strongly convex, 1-smooth),
  // start th_0 = 0, records with ||x_i - x'_i|| = S_g = 2L, 0 < eta < 1. It is a lower bound for
  // the run's loss class when that class contains this loss.
  std::optional<std::string> check(const Run& run) const override {
    if (auto why = check_alg1(run)) return why;
    if (std::isfinite(run.diameter))
      return fmt::format(
          "Thm 3's construction is unconstrained (C = R^d), but the run projects onto a set of diameter {}",
          show(run.diameter));
    if (run.loss.strong_convexity > 1)
      return fmt::format(
          "Thm 3's squared loss ||th - x||^2/2 is 1-strongly convex, outside the class lambda = {} > 1",
          show(run.loss.strong_convexity));
    if (run.loss.smoothness && *run.loss.smoothness < 1)
      return fmt::format(
          "Thm 3's squared loss ||th - x||^2/2 is 1-smooth, outside the class beta = {} < 1",
          show(*run.loss.smoothness));
    const double eta = run.eta.at(1);
    if (!(eta < 1))
      return fmt::format("Thm 3 holds for step sizes eta < 1, not eta = {}", show(eta));
    return std::nullopt;
  }

  // Thm 3's value equals a Gaussian pair with (mean shift / std)^2 = m^2 = 2 R_alpha / alpha.
  static double shift(const Run& run) {
    const Params p = params(run);
    return (p.sg / p.n) * std::sqrt(one_minus(p.eta * p.K) / 2) / p.sigma;
  }

  // Exact hockey-stick divergence of that Gaussian pair: a privacy profile that a mechanism
  // on the construction attains at least (the exact pair has a larger shift, Thm 3 proof).
  double log_delta(const Run& run, double epsilon) const override {
    return div::log_theta(epsilon, shift(run));
  }

  // Largest eps (lower end of the final bracket) with delta(eps) >= target: a lower bound
  // must not be rounded up.
  double epsilon(const Run& run, double delta) const override {
    const double target = std::log(delta);
    const double m = shift(run);
    if (div::log_theta(0.0, m) <= target) return 0.0;
    auto f = [&](double eps) { return target - div::log_theta(eps, m); };  // non-decreasing
    double hi = 1.0;
    while (f(hi) <= 0 && hi < 1e4) hi *= 2;
    if (f(hi) <= 0) return hi;
    return num::monotone_boundary(f, 0.0, hi, num::Holds::below);
  }

  std::optional<double> rdp_at(const Run& run, double alpha) const override {
    const Params p = params(run);
    return langevin::thm3_lower_rdp(alpha, p.sg, p.n, p.sigma, p.eta, p.K);
  }

  std::vector<Detail> details(const Run& run, const Query&) const override {
    const Params p = params(run);
    return {
        {"sigma", p.sigma},
        {"thm3_rdp_per_alpha", langevin::thm3_lower_rdp(2.0, p.sg, p.n, p.sigma, p.eta, p.K) / 2},
        {"exact_rdp_per_alpha",
         langevin::squared_loss_exact_rdp(2.0, p.sg, p.n, p.sigma, p.eta, p.K) / 2},
    };
  }

 private:
  static double one_minus(double x) { return -std::expm1(-x); }
};

}  // namespace

AnalysisPtr make_langevin() { return std::make_shared<Langevin>(); }
AnalysisPtr make_langevin_lower() { return std::make_shared<LangevinLower>(); }

}  // namespace hsdp::detail
