// The two Renyi-DP baselines the contraction papers compare against, converted to
// (eps, delta)-DP:
//
//  pabi-feldman  journal (Asoodeh, Diaz, Calmon 2021) Thm 6 = Feldman, Mironov, Talwar,
//                Thakurta 2018 [53, Thm 26]: randomly stopped PNSGD is (alpha, zeta)-RDP,
//                zeta = 4 alpha L^2 log n / (n sigma^2), for sigma >= L sqrt(2 (alpha-1) alpha);
//                converted by journal (22) (Mironov [56, Prop. 3] = Lemma 3, closed-form
//                alpha) and (23) (the conversion of Asoodeh et al. [57, Lemma 2]).
//  balle-mixing  isit (Asoodeh, Diaz, Calmon 2020) Prop. 1, eq. (15), adapted from Balle,
//                Barthe, Gaboardi, Geumlek 2019 [15, Thm 5]: PNSGD is (alpha, kappa alpha)-RDP
//                for its i-th input for every alpha > 1 (proof of Prop. 1), converted to DP.
//
// Both use the paper's sigma = noise_std / eta (journal/isit convention, noise eta sigma Z).
// Conservative decisions (docs/analyses/comparisons.md):
//  * pabi-feldman uses the harmonic number H_n = sum_{k<=n} 1/k in place of the printed
//    log n (H_n > log n). The proof of [53, Thm 26] averages the per-stopping-time bounds
//    2 alpha L^2 / (sigma^2 (T - i + 1)) of [53, Thm 23] over T uniform on [n] and applies the
//    weak convexity [53, Lemma 25] (factor <= 2), which gives 4 alpha L^2 H_{n-i+1}/(n sigma^2);
//    read literally, log n gives zeta = 0 at n = 1, and (23) then reports delta = 0 for a
//    single Gaussian step, which is false. The printed-log-n values are reported as details
//    (*_log_n, for comparison with journal Fig. 2 only; at n = 1, where log n = 0, the
//    second term of (23) is skipped rather than reported as delta = 0).
//  * (22) is only evaluated at alpha_opt > 1; for eps <= rho the printed alpha_opt =
//    1/2 + eps/(2 rho) <= 1 lies outside (1, alpha*] and the formula would report delta < 1
//    for a point where Lemma 3 gives nothing: hsdp reports delta_22 = 1 there.
//  * balle-mixing uses kappa = 2 L^2 M^(n-i) / ((n-i) sigma^2) for i < n: the larger of the
//    two readings of the isit's printed exponent M^(n-i+1) (M <= 1), and never below the
//    shifted-Renyi bound 2 L^2 M^(2(n-i)) / (sigma^2 sum_{k=0}^{n-i} M^(2k)) of [15]'s
//    argument (sum_{k=0}^{m} M^(m-2k) >= m + 1 by AM-GM).
#include <boost/math/tools/minima.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "common.hpp"
#include "hsdp/divergence/rdp.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/numerics/log_normal.hpp"
#include "registry.hpp"

namespace hsdp::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------------------------------
// RDP -> (eps, delta) conversions for one order alpha = 1 + u (u > 0), with RDP value zeta:
// the shared module div/rdp (docs/rdp.md): Mironov [56, Prop. 3] (journal Lemma 3), the
// first term of journal (23) ([57, Lemma 2] = Canonne-Kamath-Steinke 2020 Prop. 12 = Balle et
// al. 2020 Thm 21) and its second term (e^{(alpha-1) zeta} - 1)/(alpha (e^{(alpha-1) eps} - 1)).
// All three are theorems for a single (alpha, zeta)-RDP pair, so the minimum of them at any
// feasible alpha is a valid delta; the infimum over alpha is approached from above by the
// numerical minimiser below (every value it reports was evaluated at a feasible alpha).

double log_delta_mironov(double u, double zeta, double eps) {
  return div::log_delta_at_order(u, zeta, eps, div::RdpConversion::mironov);
}
double eps_mironov(double u, double zeta, double ld) {
  return div::epsilon_at_order(u, zeta, ld, div::RdpConversion::mironov);
}

// Which conversions enter the minimum over alpha.
enum class Conversion { mironov, optimal };

div::RdpConversion shared(Conversion c) {
  return c == Conversion::optimal ? div::RdpConversion::optimal : div::RdpConversion::mironov;
}

// Best (smallest) log delta at one alpha for RDP value zeta (optimal = min of the three; the
// CKS term is never above Mironov's since kappa < 1).
double log_delta_at(double u, double zeta, double eps, Conversion c) {
  return div::log_delta_at_order(u, zeta, eps, shared(c));
}

// Best (smallest) eps at one alpha for a target log delta.
double eps_at(double u, double zeta, double ld, Conversion c) {
  return div::epsilon_at_order(u, zeta, ld, shared(c));
}

struct Minimum {
  double value = kInf;
  double u = std::numeric_limits<double>::quiet_NaN();  // alpha - 1 at the minimum
};

// Minimises f(u) over u in [u_lo, u_hi] (0 < u_lo <= u_hi): a log-spaced grid, then Brent's
// method on log u between the neighbours of the best grid point. Returns the smallest value
// actually evaluated, so the result is attained at a feasible u (a valid bound, never below
// the true infimum). NaN values count as +inf.
Minimum minimise_over_u(const std::function<double(double)>& f, double u_lo, double u_hi) {
  Minimum best;
  auto eval = [&](double u) {
    double v = f(u);
    if (std::isnan(v)) v = kInf;
    if (v < best.value) best = {v, u};
    return v;
  };
  if (!(u_hi > u_lo)) {
    eval(u_hi);
    return best;
  }
  constexpr int kGrid = 160;
  const double t_lo = std::log(u_lo), t_hi = std::log(u_hi);
  std::vector<double> ts(kGrid + 1), vs(kGrid + 1);
  int arg = 0;
  for (int k = 0; k <= kGrid; ++k) {
    ts[k] = k == kGrid ? t_hi : t_lo + (t_hi - t_lo) * k / kGrid;
    const double u = k == kGrid ? u_hi : std::exp(ts[k]);
    vs[k] = eval(u);
    if (vs[k] < vs[arg]) arg = k;
  }
  if (std::isinf(vs[arg]) && vs[arg] > 0) return best;
  const double a = ts[std::max(0, arg - 1)], b = ts[std::min(kGrid, arg + 1)];
  if (b > a) {
    std::uintmax_t iterations = 200;
    boost::math::tools::brent_find_minima(
        [&](double t) {
          const double v = eval(std::clamp(std::exp(t), u_lo, u_hi));
          return std::isinf(v) ? std::copysign(1e300, v) : v;
        },
        a, b, 40, iterations);
  }
  return best;
}

// Common checks of both analyses: one pass of batch-1 PNSGD with Gaussian noise, replace
// adjacency, a convex L-Lipschitz beta-smooth loss, constant eta and noise (the papers'
// eta_t = eta, sigma_t = sigma).
std::optional<std::string> check_pnsgd(const Run& run) {
  if (run.noise != NoiseKind::gaussian)
    return fmt::format("needs Gaussian noise ({}): the RDP bounds are for PNSGD with Gaussian noise",
                       report_field("noise", "gaussian"));
  if (run.adjacency != Adjacency::replace)
    return std::string(
        "stated for replace-one neighbours (datasets differing in one position)");
  if (!run.loss.lipschitz) return fmt::format("needs the Lipschitz constant L of the loss ({})", report_field("lipschitz"));
  if (!run.loss.convex) return std::string("needs a convex loss (the shifted-Renyi argument needs a contractive gradient step)");
  if (!run.loss.smoothness)
    return fmt::format("needs the smoothness beta of the loss ({}) to certify that the gradient step is contractive",
                       report_field("smoothness"));
  if (run.batch_size != 1 || run.steps != run.n || !run.single_pass())
    return fmt::format(
        "stated for one pass of batch-1 PNSGD (batch-size 1, steps = n, cyclic or shuffled order): "
        "batch = {}, steps = {}, n = {}, sampling = {}",
        run.batch_size, run.steps, run.n, to_string(run.sampling));
  if (!run.eta.is_constant() || !run.noise_std.is_constant())
    return std::string("needs a constant step size and noise (the papers' eta_t = eta, sigma_t = sigma)");
  return std::nullopt;
}

// The paper's sigma (journal/isit convention: noise std eta * sigma).
double paper_sigma(const Run& run) { return run.noise_std.at(1) / run.eta.at(1); }

// H_n = sum_{k=1}^n 1/k: exact sum for small n, else the asymptotic series
// log n + gamma_E + 1/(2n) - 1/(12 n^2) + 1/(120 n^4), whose error is below 1/(252 n^6);
// rounded up by 1e-12 relative.
double harmonic(std::int64_t n) {
  double h = 0;
  if (n <= 10000) {
    for (std::int64_t k = n; k >= 1; --k) h += 1.0 / static_cast<double>(k);
  } else {
    const double x = static_cast<double>(n);
    h = std::log(x) + 0.57721566490153286 + 1 / (2 * x) - 1 / (12 * x * x) + 1 / (120 * x * x * x * x);
  }
  return h * (1 + 1e-12);
}

// =======================================================================================
// pabi-feldman
// =======================================================================================

struct PabiParams {
  double sigma;       // the journal's sigma = noise_std / eta
  double rho;         // zeta / alpha = 4 L^2 H_n / (n sigma^2)   (hsdp, conservative)
  double rho_log_n;   // 4 L^2 log n / (n sigma^2)                (as printed)
  double u_star;      // alpha* - 1
  double bound_ratio; // 2 sigma^2 / L^2 (for the (22) case split)
};

PabiParams pabi_params(const Run& run) {
  const double L = *run.loss.lipschitz;
  const double sigma = paper_sigma(run);
  const double n = static_cast<double>(run.n);
  PabiParams p{};
  p.sigma = sigma;
  p.rho = 4 * L * L * harmonic(run.n) / (n * sigma * sigma);
  p.rho_log_n = 4 * L * L * std::log(n) / (n * sigma * sigma);
  p.bound_ratio = 2 * sigma * sigma / (L * L);
  // alpha* = (1 + sqrt(1 + 2 sigma^2/L^2)) / 2, the largest alpha with
  // sigma >= L sqrt(2 (alpha - 1) alpha) (journal (21)); u* = alpha* - 1 written without
  // cancellation, then nudged down until the constraint verifiably holds in floating point.
  double u = (sigma * sigma / (L * L)) / (std::sqrt(1 + p.bound_ratio) + 1);
  while (u > 0 && 2 * u * (1 + u) * L * L > sigma * sigma) u = std::nextafter(u, 0.0);
  p.u_star = u;
  return p;
}

// journal (22): the closed-form minimiser of (21) over alpha in (1, alpha*].
// Returns {log delta_22, alpha_opt}; log delta = 0 (delta = 1) when alpha_opt <= 1.
std::pair<double, double> pabi_log_delta_22(const PabiParams& p, double rho, double eps) {
  const double alpha_star = 1 + p.u_star;
  const double alpha_opt =
      eps * eps >= rho * rho * (1 + p.bound_ratio) ? alpha_star : 0.5 + eps / (2 * rho);
  if (!(alpha_opt > 1)) return {0.0, alpha_opt};
  const double u = std::min(alpha_opt, alpha_star) - 1;
  return {std::min(0.0, log_delta_mironov(u, rho * (1 + u), eps)), alpha_opt};
}

// journal (23): inf over alpha in (1, alpha*] of the two conversions of [57, Lemma 2].
Minimum pabi_log_delta_23(const PabiParams& p, double rho, double eps) {
  return minimise_over_u(
      [&](double u) { return log_delta_at(u, rho * (1 + u), eps, Conversion::optimal); },
      p.u_star * 1e-9, p.u_star);
}

// (22) inverted: eps = min over alpha in (1, alpha*] of rho alpha + log(1/delta)/(alpha - 1),
// minimised at alpha - 1 = sqrt(log(1/delta)/rho), clamped to alpha*.
std::pair<double, double> pabi_eps_22(const PabiParams& p, double rho, double ld) {
  const double u = std::min(p.u_star, std::sqrt(-ld / rho));
  return {eps_mironov(u, rho * (1 + u), ld), 1 + u};
}

Minimum pabi_eps_23(const PabiParams& p, double rho, double ld) {
  return minimise_over_u(
      [&](double u) { return eps_at(u, rho * (1 + u), ld, Conversion::optimal); },
      p.u_star * 1e-9, p.u_star);
}

class PabiFeldman final : public Analysis {
 public:
  std::string_view name() const override { return "pabi-feldman"; }
  // On a grid check() says which step is not derived (a specific reason).
  bool charges_grid() const override { return true; }
  std::string_view citation() const override {
    return "journal Thm 6 (Feldman et al. 2018 [53, Thm 26]) converted by journal (22) and (23)";
  }

  std::optional<std::string> check(const Run& run) const override {
    if (run.release != Release::random_stop)
      return fmt::format(
          "bounds the randomly stopped PNSGD (journal Alg. 2, Feldman et al. Thm 26): use {}",
          report_field("release", "random-stop"));
    if (auto why = check_pnsgd(run)) return why;
    if (run.grid)
      return std::string(
          "the noise was drawn on a grid: the per-stopping-time bounds of Feldman et al.'s Thm 23 gain the "
          "roundings' shifts (derivable), but the weak convexity of their Lemma 25, which sets sigma >= "
          "L sqrt(2 (alpha-1) alpha) and the factor 2 of Thm 26, is stated for the continuous bounds and "
          "its statement is not in papers/ to re-check (docs/security.md)");
    const double beta = *run.loss.smoothness, eta = run.eta.at(1);
    if (eta > 2.0 / beta)
      return fmt::format("needs eta <= 2/beta (journal Thm 6): eta = {} > 2/beta = {}", show(eta),
                         show(2.0 / beta));
    return std::nullopt;
  }

  // journal Thm 6: (alpha, rho alpha)-RDP for alpha in (1, alpha*]; no statement beyond.
  std::optional<double> rdp_at(const Run& run, double alpha) const override {
    const auto p = pabi_params(run);
    if (alpha - 1 > p.u_star) return kInf;
    return p.rho * alpha;
  }

  double log_delta(const Run& run, double eps) const override {
    const auto p = pabi_params(run);
    const double d22 = pabi_log_delta_22(p, p.rho, eps).first;
    const double d23 = pabi_log_delta_23(p, p.rho, eps).value;
    return std::min({0.0, d22, d23});
  }

  double epsilon(const Run& run, double delta) const override {
    const auto p = pabi_params(run);
    const double ld = std::log(delta);
    const double e = std::min(pabi_eps_22(p, p.rho, ld).first, pabi_eps_23(p, p.rho, ld).value);
    return std::isnan(e) ? kInf : std::max(0.0, e);
  }

  std::vector<Detail> details(const Run& run, const Query& q) const override {
    const auto p = pabi_params(run);
    std::vector<Detail> out{{"sigma", p.sigma}, {"alpha_star", 1 + p.u_star},
                            {"zeta_over_alpha", p.rho}};
    if (q.epsilon) {
      const double eps = *q.epsilon;
      const auto [ld22, alpha_opt] = pabi_log_delta_22(p, p.rho, eps);
      const auto m23 = pabi_log_delta_23(p, p.rho, eps);
      out.push_back({"delta_22", num::exp_upper(ld22)});
      out.push_back({"alpha_opt", alpha_opt});
      out.push_back({"delta_23", num::exp_upper(std::min(0.0, m23.value))});
      out.push_back({"alpha_23", 1 + m23.u});
      out.push_back({"delta_22_log_n",
                     num::exp_upper(pabi_log_delta_22(p, p.rho_log_n, eps).first)});
      out.push_back({"delta_23_log_n",
                     num::exp_upper(std::min(0.0, pabi_log_delta_23(p, p.rho_log_n, eps).value))});
    } else {
      const double ld = std::log(*q.delta);
      const auto [e22, alpha_opt] = pabi_eps_22(p, p.rho, ld);
      const auto m23 = pabi_eps_23(p, p.rho, ld);
      out.push_back({"eps_22", std::max(0.0, e22)});
      out.push_back({"alpha_opt", alpha_opt});
      out.push_back({"eps_23", std::max(0.0, m23.value)});
      out.push_back({"alpha_23", 1 + m23.u});
      out.push_back({"eps_22_log_n", std::max(0.0, pabi_eps_22(p, p.rho_log_n, ld).first)});
      out.push_back({"eps_23_log_n", std::max(0.0, pabi_eps_23(p, p.rho_log_n, ld).value)});
    }
    return out;
  }
};

// =======================================================================================
// balle-mixing
// =======================================================================================

struct BalleParams {
  double sigma;          // isit's sigma = noise_std / eta
  double M;              // isit (14); 1 without (usable) strong convexity
  std::int64_t index;    // the position i the guarantee refers to
  double kappa;          // RDP slope used by hsdp: (alpha, kappa alpha)-RDP
  double kappa_printed;  // the isit's printed kappa (exponent n - i + 1)
};

// isit (14), Lemma 4: the gradient step is M-Lipschitz with M = sqrt(1 - 2 eta beta rho /
// (beta + rho)) when rho > 0 and eta < 2/(beta + rho); M = 1 when only eta <= 2/beta
// (journal App. H). 0 when neither holds (not applicable).
double contraction_m(const Run& run) {
  const double beta = *run.loss.smoothness, rho = run.loss.strong_convexity, eta = run.eta.at(1);
  if (rho > 0 && eta < 2.0 / (beta + rho))
    return std::sqrt(std::max(0.0, 1.0 - 2.0 * eta * beta * rho / (beta + rho)));
  if (eta <= 2.0 / beta) return 1.0;
  return 0.0;
}

BalleParams balle_params(const Run& run) {
  BalleParams p{};
  p.sigma = paper_sigma(run);
  p.M = contraction_m(run);
  // kappa(i) for i < n is 2L^2 M^(n-i) / ((n-i) sigma^2) <= 2 L^2 / sigma^2 = kappa(n), and
  // delta is increasing in kappa, so the worst position is the last one, i = n. With a
  // shuffled order a record's position is random: report the worst position.
  p.index = run.index && run.sampling != Sampling::shuffle ? *run.index : run.n;
  const double L = *run.loss.lipschitz;
  const double base = 2 * L * L / (p.sigma * p.sigma);
  const std::int64_t m = run.n - p.index;
  if (m == 0) {
    p.kappa = p.kappa_printed = base;
  } else {
    const double md = static_cast<double>(m);
    p.kappa = base * std::pow(p.M, md) / md;
    p.kappa_printed = base * std::pow(p.M, md + 1) / md;
  }
  if (run.grid) {
    // Noise on a grid (docs/security.md, "balle-mixing on the grid"): kappa bounds the shifted-
    // Renyi value (alpha/2) sum a_t^2 / s^2 of [15]'s argument over the n - i + 1 noisy steps
    // from the record's; each step adds a shift slack s, absorbed where it arises, so by
    // Minkowski sqrt(2 kappa) grows by slack sqrt(n - i + 1). The worst position (no index, or a
    // shuffled order) takes kappa(n) >= kappa(i) with the most steps, n.
    const bool worst = !(run.index && run.sampling != Sampling::shuffle);
    const double steps = static_cast<double>(worst ? run.n : run.n - p.index + 1);
    const double r = std::sqrt(p.kappa) + run.grid->slack * std::sqrt(steps / 2.0);
    p.kappa = r * r;
  }
  return p;
}

// isit (15) = (27): inf over alpha > 1 of Mironov's bound for (alpha, kappa alpha)-RDP,
// log delta = -(eps - kappa)^2 / (4 kappa) for eps > kappa, no bound (0) otherwise.
double log_delta_15(double kappa, double eps) {
  if (!(eps > kappa)) return 0.0;
  return -(eps - kappa) * (eps - kappa) / (4 * kappa);
}

// (15) inverted: eps = kappa + 2 sqrt(kappa log(1/delta)).
double eps_15(double kappa, double ld) { return kappa + 2 * std::sqrt(-kappa * ld); }

// The optimal conversion over all alpha > 1 (the RDP bound holds for every alpha, proof of
// isit Prop. 1). The search range of alpha - 1 extends well past the Mironov optimum.
double balle_log_delta(double kappa, double eps) {
  const double u_hi = std::clamp(20 * (eps + kappa) / (2 * kappa), 100.0, 1e250);
  const auto m = minimise_over_u(
      [&](double u) { return log_delta_at(u, kappa * (1 + u), eps, Conversion::optimal); }, 1e-9,
      u_hi);
  return std::min({0.0, log_delta_15(kappa, eps), m.value});
}

double balle_eps(double kappa, double ld) {
  const double u_hi = std::clamp(20 * (1 + std::sqrt(-ld / kappa)), 100.0, 1e250);
  const auto m = minimise_over_u(
      [&](double u) { return eps_at(u, kappa * (1 + u), ld, Conversion::optimal); }, 1e-9, u_hi);
  const double e = std::min(eps_15(kappa, ld), m.value);
  return std::isnan(e) ? kInf : std::max(0.0, e);
}

class BalleMixing final : public Analysis {
 public:
  std::string_view name() const override { return "balle-mixing"; }
  // Noise on a grid: kappa with the steps' slack (balle_params).
  bool charges_grid() const override { return true; }
  std::string_view citation() const override {
    return "isit Prop. 1 eq. (15) (Balle et al. 2019 [15, Thm 5]), optimal RDP conversion of journal (23)";
  }

  std::optional<std::string> check(const Run& run) const override {
    if (run.release != Release::last)
      return fmt::format("a per-index guarantee for the last iterate (isit Prop. 1): use {}",
                         report_field("release", "last"));
    if (auto why = check_pnsgd(run)) return why;
    if (contraction_m(run) == 0.0) {
      const double beta = *run.loss.smoothness, rho = run.loss.strong_convexity;
      return rho > 0
                 ? fmt::format(
                       "needs eta <= 2/beta = {} (convex) or eta < 2/(beta+rho) = {} (strongly "
                       "convex, isit Lemma 4): eta = {}",
                       show(2.0 / beta), show(2.0 / (beta + rho)), show(run.eta.at(1)))
                 : fmt::format("needs eta <= 2/beta (isit Prop. 1 with M = 1): eta = {} > 2/beta = {}",
                               show(run.eta.at(1)), show(2.0 / beta));
    }
    return std::nullopt;
  }

  std::optional<std::int64_t> index(const Run& run) const override {
    return balle_params(run).index;
  }

  // isit Prop. 1 (proof): (alpha, kappa alpha)-RDP for every alpha > 1.
  std::optional<double> rdp_at(const Run& run, double alpha) const override {
    return balle_params(run).kappa * alpha;
  }

  double log_delta(const Run& run, double eps) const override {
    return balle_log_delta(balle_params(run).kappa, eps);
  }

  double epsilon(const Run& run, double delta) const override {
    return balle_eps(balle_params(run).kappa, std::log(delta));
  }

  std::vector<Detail> details(const Run& run, const Query& q) const override {
    const auto p = balle_params(run);
    std::vector<Detail> out{{"sigma", p.sigma}, {"M", p.M}, {"kappa", p.kappa},
                            {"kappa_printed", p.kappa_printed}};
    if (q.epsilon) {
      out.push_back({"delta_15", num::exp_upper(log_delta_15(p.kappa, *q.epsilon))});
      out.push_back({"delta_15_printed_kappa",
                     num::exp_upper(log_delta_15(p.kappa_printed, *q.epsilon))});
    } else {
      const double ld = std::log(*q.delta);
      out.push_back({"eps_15", eps_15(p.kappa, ld)});
      out.push_back({"eps_15_printed_kappa", eps_15(p.kappa_printed, ld)});
    }
    return out;
  }
};

}  // namespace

AnalysisPtr make_pabi_feldman() { return std::make_shared<PabiFeldman>(); }
AnalysisPtr make_balle_mixing() { return std::make_shared<BalleMixing>(); }

}  // namespace hsdp::detail
