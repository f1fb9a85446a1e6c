// Chourasia, Ye, Shokri 2021 ("langevin", papers/chourasia-ye-shokri-2021-langevin-noisy-gd.txt):
// the Rényi privacy loss of the last iterate of noisy full-batch GD (Alg. 1),
//
//     th_{k+1} = P_C(th_k - eta grad L_D(th_k) + sqrt(2 eta) sigma Z_k),
//
//  langevin        the smallest applicable of
//                    Thm 1  (any loss)      alpha S_g^2 eta K / (4 sigma^2 n^2),
//                    Cor. 1 (strongly convex, smooth, eta <= 1/beta; Thm 2 (16) with Lemma 5's
//                           c = lambda / (2 sigma^2))
//                           alpha S_g^2 / (lambda sigma^2 n^2) (1 - e^{-lambda eta K / 2}),
//                    Cor. 2 (18) (squared loss, lambda = beta = 1, C = R^d, eta < 2),
//                    Thm 2 (16) with an LSI constant the user asserts (--lsi);
//                  all are alpha times a constant, so the smallest is the same at every
//                  order. An RdpAnalysis (eps, delta from the shared RDP -> DP conversion).
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

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <limits>
#include <string>

#include "hsdp/analysis/rdp_analysis.hpp"
#include "hsdp/divergence/hockey_stick.hpp"
#include "hsdp/divergence/rdp.hpp"
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

double thm4_sigma2_dp(double epsilon, double delta, double sensitivity, double n, double lambda) {
  require_positive("epsilon", epsilon);
  require_open("delta", delta, 0.0, 1.0);
  require_positive("sensitivity", sensitivity);
  require_positive("n", n);
  require_positive("lambda", lambda);
  // eps(delta) of the curve alpha rho increases with rho; find the largest rho that meets
  // the target (lower end of the bracket = more noise).
  auto eps_of = [&](double rho) {
    div::RdpCurve c;
    c.epsilon = [rho](double alpha) { return alpha * rho; };
    return div::best_epsilon(c, delta).value;
  };
  auto over = [&](double log_rho) { return eps_of(std::exp(log_rho)) - epsilon; };
  double lo = std::log(epsilon) - 1, hi = std::log(epsilon) + 1;
  while (over(lo) > 0) lo -= 2;
  while (over(hi) <= 0) hi += 2;
  for (int i = 0; i < 200 && hi - lo > 1e-13; ++i) {
    const double mid = 0.5 * (lo + hi);
    (over(mid) > 0 ? hi : lo) = mid;
  }
  const double rho = std::exp(lo);
  if (!(eps_of(rho) <= epsilon))
    throw std::logic_error("thm4_sigma2_dp: the bracket's lower end misses the target");
  return (sensitivity / n) * (sensitivity / n) / (lambda * rho);
}

// Lemma 6, re-derived: with q = 1 - eta lambda, the gradient map is q-Lipschitz for
// eta <= 2/(lambda + beta) and fixes th* (grad L(th*) = 0 in the interior), projection onto
// C (which contains th*) is 1-Lipschitz, and the noise adds 2 eta sigma^2 d in expectation:
// E||th_{k+1} - th*||^2 <= q^2 E||th_k - th*||^2 + 2 eta sigma^2 d, so
// E||th_K - th*||^2 <= q^{2K} r0 + 2 eta sigma^2 d / (1 - q^2) = q^{2K} r0 + 2 sigma^2 d / (lambda (2 - eta lambda)),
// and beta-smoothness gives L(th) - L(th*) <= (beta/2) ||th - th*||^2.
double lemma6_excess_risk(double K, double eta, double lambda, double beta, double d,
                          double sigma, double r0) {
  if (std::isnan(K) || K < 0) fail("K", K, ">= 0 (number of steps)");
  require_positive("lambda", lambda);
  require_positive("beta", beta);
  if (lambda > beta) fail("lambda", lambda, "<= beta (strong convexity at most smoothness)");
  require_open("eta", eta, 0.0, 2 / (lambda + beta) * (1 + 1e-15));
  require_positive("d", d);
  require_positive("sigma", sigma);
  require_nonnegative("r0", r0);
  const double q2k = std::exp(2 * K * std::log1p(-eta * lambda));
  const double floor = 2 * d * sigma * sigma / (lambda * (2 - eta * lambda));
  return beta / 2 * (times(q2k, r0) + floor);
}

double thm4_steps(double eta, double lambda, double d, double sigma, double r0) {
  require_positive("eta", eta);
  require_positive("lambda", lambda);
  if (!(eta * lambda < 1)) fail("eta", eta, "< 1/lambda");
  require_positive("d", d);
  require_positive("sigma", sigma);
  require_nonnegative("r0", r0);
  const double floor = 2 * d * sigma * sigma / (lambda * (2 - eta * lambda));
  if (r0 <= floor) return 0;
  // q^{2K} r0 <= floor  <=>  K >= log(floor / r0) / (2 log q).
  double k = std::ceil(std::log(floor / r0) / (2 * std::log1p(-eta * lambda)));
  while (k > 0 && std::exp(2 * (k - 1) * std::log1p(-eta * lambda)) * r0 <= floor) k -= 1;
  return k;
}

}  // namespace hsdp::langevin

namespace hsdp::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Built on first use, after the front end has installed its spelling of the field names.
const std::string& citation_text() {
  static const std::string text = fmt::format(
      "Chourasia, Ye, Shokri 2021 (NeurIPS): the smallest applicable of Thm 1 (linear, "
      "alpha S_g^2 eta K/(4 sigma^2 n^2)), Cor. 1 = Thm 2 (16) with Lemma 5 (alpha S_g^2/(lambda "
      "sigma^2 n^2) (1 - e^{{-lambda eta K/2}})), Cor. 2 (18) (squared loss) and Thm 2 (16) with "
      "{}; S_g = 2L",
      report_field("lsi"));
  return text;
}
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
  // S_g = 2L (replace-one, the paper after Cor. 1); with clipping at C the per-record
  // gradient norm is at most min(L, C).
  double bound = run.loss.lipschitz ? *run.loss.lipschitz : kInf;
  if (run.clip) bound = std::min(bound, *run.clip);
  p.sg = 2 * bound;
  p.n = static_cast<double>(run.n);
  p.K = static_cast<double>(run.steps);
  return p;
}

// Checks shared by both analyses: Alg. 1 exactly (full batch every step, Gaussian noise,
// constant eta and sigma, only the last iterate released, D and D' in X^n differing in one
// record) and a known sensitivity (L, or the clipping norm C).
std::optional<std::string> check_alg1(const Run& run) {
  if (run.noise != NoiseKind::gaussian)
    return fmt::format("needs Gaussian noise ({}): Alg. 1 adds sqrt(2 eta) sigma N(0, I)",
                       report_field("noise", "gaussian"));
  if (run.sampling != Sampling::full || run.batch_size != run.n)
    return fmt::format(
        "stated for full-batch noisy GD ({} {}): sampling = {}, batch = {}, n = {}",
        report_field("sampling", "full"), report_field("batch_size", "n"), to_string(run.sampling), run.batch_size, run.n);
  if (run.release != Release::last)
    return fmt::format("bounds the last iterate only ({}), not release = {}",
                       report_field("release", "last"), to_string(run.release));
  if (run.adjacency != Adjacency::replace)
    return std::string(
        "stated for replace-one neighbours (D, D' in X^n differing in one record)");
  if (!run.eta.is_constant() || !run.noise_std.is_constant())
    return std::string("needs a constant step size eta and noise sigma (Alg. 1)");
  if (!run.loss.lipschitz && !run.clip)
    return fmt::format(
        "needs the Lipschitz constant L of the loss ({}) or a clipping norm ({}): "
        "the total gradient sensitivity is S_g = 2L",
        report_field("lipschitz"), report_field("clip"));
  if (!(run.noise_std.at(1) > 0))
    return std::string("needs noise_std > 0");
  return std::nullopt;
}

// Clipping at C < L (or with L unknown) changes the update map: it is no longer the
// gradient step of the loss, so the LSI arguments (Lemma 5, Cor. 2, a user's LSI constant
// for the unclipped process) and Thm 3's construction no longer describe it. At C >= L the
// clip never acts.
bool clip_acts(const Run& run) {
  return run.clip && (!run.loss.lipschitz || *run.clip < *run.loss.lipschitz);
}

// =======================================================================================
// langevin: the smallest of Thm 1, Cor. 1, Cor. 2 and Thm 2 that applies
// =======================================================================================

// Every bound of the paper is alpha times a constant, so the smallest one is the same at
// every order: the per-alpha constants of the candidates (+inf where one does not apply)
// and the reason each does not.
struct Candidates {
  double thm1 = kInf, cor1 = kInf, cor2 = kInf, thm2 = kInf;
  std::string cor1_why, cor2_why, thm2_why;
  double best() const { return std::min({thm1, cor1, cor2, thm2}); }
  std::string_view best_name() const {
    const double b = best();
    if (b == cor2) return "Cor. 2";
    if (b == cor1) return "Cor. 1";
    if (b == thm2) return "Thm 2";
    return "Thm 1";
  }
};

Candidates candidates(const Run& run) {
  Candidates c;
  const Params p = params(run);
  const auto& loss = run.loss;
  const bool clipped = clip_acts(run);
  // Thm 1 (linear bound): any loss; the tracing diffusions' drifts differ by <= S_g/n
  // (Def. B.10). Equal to K Gaussian mechanisms (App. E), so it holds for noisy GD exactly.
  // Noise on a grid (docs/security.md, "langevin on the grid"): each of the K mechanisms is the
  // Gaussian one on the rounded pre-noise point, whose sensitivity grows by one rounding, at most
  // slack s: eta S_g / n -> eta S_g / n + slack s, i.e. S_g -> S_g + slack s n / eta.
  const double sg = run.grid ? p.sg + run.grid->slack * run.noise_std.at(1) * p.n / p.eta : p.sg;
  c.thm1 = langevin::composition_rdp(2.0, sg, p.n, p.sigma, p.eta, p.K) / 2;
  // Cor. 1, Cor. 2 and Thm 2 need the iterates' laws to satisfy a log-Sobolev inequality
  // (Lemma 5: preserved by Lipschitz maps and Gaussian convolution). A law rounded to the grid
  // is discrete and satisfies none, and the rounding is not Lipschitz: not derived on a grid.
  const std::string grid_why =
      "the noise was drawn on a grid: the iterates' laws are rounded (discrete), which satisfy no "
      "log-Sobolev inequality (Lemma 5 needs Lipschitz maps), so the LSI bounds are not derived for the run "
      "(docs/security.md)";
  if (run.grid) {
    c.cor1_why = c.cor2_why = c.thm2_why = grid_why;
    return c;
  }

  // Cor. 1: lambda-strongly convex, beta-smooth, eta <= 1/beta (Lemma 5).
  if (clipped) {
    c.cor1_why = "gradient clipping acts (C < L): Lemma 5 needs the gradient step of the loss";
  } else if (!loss.convex || !(loss.strong_convexity > 0)) {
    c.cor1_why = fmt::format("needs a strongly convex loss, lambda > 0 ({})",
                             report_field("strong_convexity"));
  } else if (!loss.smoothness) {
    c.cor1_why = fmt::format("needs the smoothness beta ({}): Lemma 5 needs eta <= 1/beta",
                             report_field("smoothness"));
  } else if (loss.strong_convexity > *loss.smoothness) {
    c.cor1_why = fmt::format("inconsistent loss constants: lambda = {} exceeds beta = {}",
                             show(loss.strong_convexity), show(*loss.smoothness));
  } else if (p.eta * *loss.smoothness > 1) {
    c.cor1_why = fmt::format("eta = {} exceeds 1/beta = {} (Lemma 5)", show(p.eta),
                             show(1 / *loss.smoothness));
  } else {
    c.cor1 = langevin::cor1_rdp(2.0, p.sg, p.n, p.sigma, p.eta, p.K, loss.strong_convexity) / 2;
  }

  // Cor. 2: the squared loss ||th - x||^2/2 on C = R^d, 0 < eta < 2. A convex loss that is
  // both 1-strongly convex and 1-smooth is exactly this loss up to a constant
  // (l - ||th||^2/2 is convex and concave, hence affine), so lambda = beta = 1 identifies it.
  if (clipped) {
    c.cor2_why = "gradient clipping acts (C < L)";
  } else if (!loss.convex || loss.strong_convexity != 1.0 || !loss.smoothness ||
             *loss.smoothness != 1.0) {
    c.cor2_why = "stated for the squared loss ||th - x||^2/2 (lambda = beta = 1)";
  } else if (std::isfinite(run.diameter)) {
    c.cor2_why = "stated on C = R^d (no projection)";
  } else if (!(p.eta < 2)) {
    c.cor2_why = "needs eta < 2";
  } else {
    c.cor2 = langevin::cor2_rdp(2.0, p.sg, p.n, p.sigma, p.eta, p.K) / 2;
  }

  // Thm 2 with an LSI constant the user asserts for the run (--lsi).
  if (!run.lsi_constant) {
    c.thm2_why = fmt::format("no LSI constant given ({})", report_field("lsi"));
  } else if (clipped) {
    c.thm2_why = "gradient clipping acts (C < L)";
  } else {
    c.thm2 = langevin::thm2_rdp(2.0, p.sg, p.n, p.sigma, p.eta, p.K, *run.lsi_constant) / 2;
  }
  return c;
}

class Langevin final : public RdpAnalysis {
 public:
  std::string_view name() const override { return "langevin"; }
  std::string_view citation() const override { return citation_text(); }
  // Noise on a grid: Thm 1 with the rounding in the sensitivity; the LSI bounds say why not.
  bool charges_grid() const override { return true; }

  // Thm 1 holds for any loss with a finite sensitivity, so Alg. 1 itself is the only
  // requirement; the tighter bounds are used when their assumptions hold (note, details).
  std::optional<std::string> check(const Run& run) const override { return check_alg1(run); }

  double rdp(const Run& run, double alpha) const override {
    require_open("alpha", alpha, 1.0, kInf);
    const double per_alpha = candidates(run).best();
    return times(alpha, per_alpha);
  }

  std::string note(const Run& run) const override {
    const Candidates c = candidates(run);
    std::string out = fmt::format("{} (smallest applicable)", c.best_name());
    if (run.grid) return out + "; Cor. 1, Cor. 2, Thm 2 not applicable: " + c.cor1_why;
    if (!c.cor1_why.empty()) out += "; Cor. 1 not applicable: " + c.cor1_why;
    if (!c.cor2_why.empty() && run.loss.strong_convexity == 1.0)
      out += "; Cor. 2 not applicable: " + c.cor2_why;
    if (run.lsi_constant && !c.thm2_why.empty()) out += "; Thm 2 not applicable: " + c.thm2_why;
    return out;
  }

  std::vector<Detail> details(const Run& run, const Query& query) const override {
    const Params p = params(run);
    const Candidates c = candidates(run);
    std::vector<Detail> d{{"sigma", p.sigma}, {"sensitivity_S_g", p.sg}, {"rdp_per_alpha", c.best()}};
    d.push_back({"thm1_rdp_per_alpha", c.thm1});
    if (std::isfinite(c.cor1)) {
      const double lambda = run.loss.strong_convexity;
      d.push_back({"cor1_rdp_per_alpha", c.cor1});
      d.push_back({"lsi_constant", langevin::lemma5_lsi_constant(lambda, p.sigma)});
      d.push_back({"rdp_limit_per_alpha", (p.sg / p.n) * (p.sg / p.n) / (lambda * p.sigma * p.sigma)});
    }
    if (std::isfinite(c.cor2)) d.push_back({"cor2_rdp_per_alpha", c.cor2});
    if (std::isfinite(c.thm2)) d.push_back({"thm2_rdp_per_alpha", c.thm2});
    // The paper's composition baseline (Fig. 1 caption, App. E) = Thm 1 here.
    d.push_back({"composition_rdp_per_alpha", c.thm1});
    for (double a : query.alphas) {
      if (!(a > 1)) continue;  // the shared code rejects alpha <= 1
      d.push_back({fmt::format("composition_rdp(alpha={})", show(a)),
                   langevin::composition_rdp(a, p.sg, p.n, p.sigma, p.eta, p.K)});
    }
    return d;
  }

 private:
  static double times(double a, double b) { return (a == 0 || b == 0) ? 0.0 : a * b; }
};

// =======================================================================================
// langevin-lower: Thm 3
// =======================================================================================

class LangevinLower final : public Analysis {
 public:
  std::string_view name() const override { return "langevin-lower"; }
  std::string_view citation() const override { return kLowerCitation; }
  BoundKind kind() const override { return BoundKind::lower; }
  // On a grid check() says why not (a specific reason rather than the generic one).
  bool charges_grid() const override { return true; }

  // The construction: l(th; x) = ||th - x||^2 / 2 on C = R^d (1-strongly convex, 1-smooth),
  // start th_0 = 0, records with ||x_i - x'_i|| = S_g = 2L, 0 < eta < 1. It is a lower bound for
  // the run's loss class when that class contains this loss.
  std::optional<std::string> check(const Run& run) const override {
    if (auto why = check_alg1(run)) return why;
    if (!run.loss.lipschitz)
      return fmt::format("needs the Lipschitz constant L of the loss ({}): S_g = 2L",
                         report_field("lipschitz"));
    if (clip_acts(run))
      return fmt::format("gradient clipping at C = {} < L = {} is not part of Thm 3's construction",
                         show(*run.clip), show(*run.loss.lipschitz));
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
    // Last, so that a run outside the construction says so first.
    if (run.grid)
      return std::string(
          "the noise was drawn on a grid: Thm 3 bounds the continuous construction from below, and the "
          "roundings are bounded here only from above (they could hide part of the loss), so no lower "
          "bound is derived for the run (docs/security.md)");
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
