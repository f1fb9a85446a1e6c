// journal (Asoodeh, Diaz, Calmon 2021) Sec. III-A: f-divergence output bounds through
// E_gamma contraction, eq. (10), Prop. 2, eq. (12), Examples 1 and 2.
// See include/hsdp/divergence/f_divergence_bound.hpp for the mathematics.
#include "hsdp/divergence/f_divergence_bound.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>

#include "hsdp/errors.hpp"
#include "hsdp/numerics/quadrature.hpp"

namespace hsdp::div {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A curve value must be a probability-like quantity in [0, 1] (E_gamma and eta_gamma
// both are). Rounding below 0 is clamped up to 0, which can only enlarge the bound.
double checked(std::string_view which, double gamma, double value) {
  if (std::isnan(value) || value < -1e-12 || value > 1.0 + 1e-9)
    fail(fmt::format("{} at gamma = {}", which, show(gamma)), value, "a number in [0, 1]");
  return std::max(0.0, value);
}

// int_1^inf h(g) dg, split at the breakpoints; +inf when the quadrature cannot produce a
// finite value (a divergent integral). Rounded up by 10 rel_tol.
double integrate_gamma(const std::function<double(double)>& h, const GammaIntegration& options) {
  require_open("rel_tol", options.rel_tol, 0.0, 1e-2);
  std::vector<double> cuts{1.0};
  for (double b : options.breakpoints)
    if (std::isfinite(b) && b > 1.0) cuts.push_back(b);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  cuts.push_back(kInf);
  double total = 0.0;
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
    double piece = 0.0;
    try {
      piece = num::integrate(h, cuts[k], cuts[k + 1], options.rel_tol);
    } catch (const InvalidArgument&) {
      throw;  // a curve returned an invalid value: the caller's error, report it
    } catch (const std::exception&) {
      return kInf;  // Boost gave up (typically a non-integrable tail)
    }
    if (!std::isfinite(piece)) return kInf;
    total += std::max(0.0, piece);
  }
  // exp-sinh on a non-integrable tail returns astronomically large finite sums rather than
  // failing; anything above 1e100 is reported as +inf (an upper bound, so conservative).
  if (total > 1e100) return kInf;
  return total * (1.0 + 10.0 * options.rel_tol);
}

// The integrand of (10) / Prop. 2 at gamma: eta(g) [f''(g) E(mu||nu) + g^-3 f''(1/g) E(nu||mu)].
// Terms whose E_gamma is 0 are skipped, so f'' is never evaluated where it does not matter.
double integrand(const FDivergence& f, const GammaCurve& e_mu_nu, const GammaCurve& e_nu_mu,
                 const GammaCurve* eta, double g) {
  double contraction = 1.0;
  if (eta) {
    contraction = checked("eta_gamma(K)", g, (*eta)(g));
    if (contraction == 0.0) return 0.0;
  }
  const double forward = checked("E_gamma(mu || nu)", g, e_mu_nu(g));
  const double backward = checked("E_gamma(nu || mu)", g, e_nu_mu(g));
  double value = 0.0;
  if (forward > 0) value += f.second_derivative(g) * forward;
  if (backward > 0) value += f.second_derivative(1.0 / g) * backward / (g * g * g);
  if (std::isnan(value)) fail(fmt::format("f'' of {}", f.name), value, "finite and >= 0");
  return contraction * value;
}

double f_divergence_integral(const FDivergence& f, const GammaCurve& e_mu_nu,
                             const GammaCurve& e_nu_mu, const GammaCurve* eta,
                             const GammaIntegration& options) {
  if (!f.second_derivative || !e_mu_nu || !e_nu_mu || (eta && !*eta))
    throw InvalidArgument("f-divergence bound: every curve must be a callable function");
  return integrate_gamma(
      [&](double g) { return integrand(f, e_mu_nu, e_nu_mu, eta, g); }, options);
}

void require_gamma(double gamma) {
  if (!(gamma >= 1.0)) fail("gamma", gamma, ">= 1");
}

void require_channel(const BinaryChannel& k) {
  require_closed("a", k.a, 0.0, 1.0);
  require_closed("b", k.b, 0.0, 1.0);
}

}  // namespace

FDivergence chi_square_divergence() {
  return {"chi^2", [](double) { return 2.0; }};
}

FDivergence kl_divergence() {
  return {"KL", [](double t) { return 1.0 / t; }};
}

FDivergence squared_hellinger_divergence() {
  return {"squared Hellinger", [](double t) { return 0.5 / (t * std::sqrt(t)); }};
}

double f_divergence_from_e_gamma(const FDivergence& f, const GammaCurve& e_mu_nu,
                                 const GammaCurve& e_nu_mu, const GammaIntegration& options) {
  return f_divergence_integral(f, e_mu_nu, e_nu_mu, nullptr, options);
}

double f_divergence_output_bound(const FDivergence& f, const GammaCurve& e_mu_nu,
                                 const GammaCurve& e_nu_mu, const GammaCurve& eta_gamma,
                                 const GammaIntegration& options) {
  return f_divergence_integral(f, e_mu_nu, e_nu_mu, &eta_gamma, options);
}

double chi_square_from_e_gamma(const GammaCurve& e_mu_nu, const GammaCurve& e_nu_mu,
                               const GammaIntegration& options) {
  return f_divergence_from_e_gamma(chi_square_divergence(), e_mu_nu, e_nu_mu, options);
}

double chi_square_output_bound(const GammaCurve& e_mu_nu, const GammaCurve& e_nu_mu,
                               const GammaCurve& eta_gamma, const GammaIntegration& options) {
  return f_divergence_output_bound(chi_square_divergence(), e_mu_nu, e_nu_mu, eta_gamma, options);
}

double tv_contraction_bound(double eta_tv, double input_divergence) {
  require_closed("eta_tv", eta_tv, 0.0, 1.0);
  if (std::isnan(input_divergence) || input_divergence < 0)
    fail("input divergence", input_divergence, ">= 0 (may be +inf)");
  if (std::isinf(input_divergence)) return eta_tv == 0.0 ? 0.0 : kInf;
  return eta_tv * input_divergence;
}

double bernoulli_e_gamma(double p, double q, double gamma) {
  require_closed("p", p, 0.0, 1.0);
  require_closed("q", q, 0.0, 1.0);
  require_gamma(gamma);
  // E_gamma = sum over outcomes of (P(x) - gamma Q(x))^+.
  return std::max(0.0, p - gamma * q) + std::max(0.0, (1.0 - p) - gamma * (1.0 - q));
}

double bernoulli_chi_square(double p, double q) {
  require_closed("p", p, 0.0, 1.0);
  require_closed("q", q, 0.0, 1.0);
  if (p == q) return 0.0;
  if (q == 0.0 || q == 1.0) return kInf;
  return (p - q) * (p - q) / (q * (1.0 - q));
}

double binary_channel_output(const BinaryChannel& k, double p) {
  require_channel(k);
  require_closed("p", p, 0.0, 1.0);
  return (1.0 - p) * k.a + p * (1.0 - k.b);
}

double binary_channel_e_gamma_contraction(const BinaryChannel& k, double gamma) {
  require_channel(k);
  require_gamma(gamma);
  // journal Thm 3: eta_gamma(K) = sup_{w1, w2} E_gamma(K(w1) || K(w2)); with two inputs
  // the sup is over the two ordered pairs of rows. Row 0 = Bernoulli(a), row 1 =
  // Bernoulli(1 - b) (mass on output symbol 1).
  return std::max(bernoulli_e_gamma(k.a, 1.0 - k.b, gamma),
                  bernoulli_e_gamma(1.0 - k.b, k.a, gamma));
}

double binary_channel_tv_contraction(const BinaryChannel& k) {
  require_channel(k);
  return std::abs(1.0 - k.a - k.b);
}

std::vector<double> binary_breakpoints(double p, double q, const BinaryChannel& k) {
  require_closed("p", p, 0.0, 1.0);
  require_closed("q", q, 0.0, 1.0);
  require_channel(k);
  std::vector<double> out;
  auto ratio = [&](double num, double den) {
    if (den > 0 && num / den > 1.0 && std::isfinite(num / den)) out.push_back(num / den);
  };
  // E_gamma(Ber(p) || Ber(q)) and the reverse: kinks where P(x) = gamma Q(x).
  ratio(p, q);
  ratio(1 - p, 1 - q);
  ratio(q, p);
  ratio(1 - q, 1 - p);
  // The rows of K: Bernoulli(a) and Bernoulli(1 - b).
  const double r0 = k.a, r1 = 1.0 - k.b;
  ratio(r0, r1);
  ratio(1 - r0, 1 - r1);
  ratio(r1, r0);
  ratio(1 - r1, 1 - r0);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace hsdp::div
