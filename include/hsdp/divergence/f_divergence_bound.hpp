// Output f-divergence bounds through E_gamma contraction (journal = Asoodeh, Diaz, Calmon
// 2021, "Contraction of E_gamma-divergence and its applications to privacy", Sec. III-A).
//
// Every f-divergence with f twice differentiable is an integral of hockey-stick
// divergences (journal eq. (10), [84, Prop. 3]):
//
//   D_f(mu || nu) = int_1^inf f''(g) E_g(mu || nu) + g^{-3} f''(1/g) E_g(nu || mu) dg.
//
// Pushing both measures through a Markov kernel K multiplies each E_g by at most the
// kernel's E_g contraction coefficient eta_g(K) (journal Thm 3), which gives journal
// Prop. 2:
//
//   D_f(mu K || nu K) <= int_1^inf eta_g(K) [f''(g) E_g(mu || nu) + g^{-3} f''(1/g) E_g(nu || mu)] dg,
//
// never worse than the classical bound eta_TV(K) D_f(mu || nu) (journal eq. (12)), because
// eta_g(K) <= eta_1(K) = eta_TV(K). The functions below take the two E_g curves and the
// contraction curve as callables, so the same code serves Gaussian kernels (eta_g =
// theta_g(dia/sigma), journal Prop. 1), binary channels (journal Example 2) or any kernel
// whose curve the caller can evaluate. Upper bounds on the input curves are fine (the
// bound stays an upper bound), e.g. the data-processing bound of journal Example 1.
#pragma once

#include <functional>
#include <string_view>
#include <vector>

namespace hsdp::div {

/// A function of gamma >= 1: an E_gamma curve gamma -> E_gamma(mu || nu) (values in
/// [0, 1]) or a contraction curve gamma -> eta_gamma(K) (values in [0, 1]).
using GammaCurve = std::function<double(double gamma)>;

/// An f-divergence, described by what (10) needs: f''(t) for t > 0 (f convex, f(1) = 0).
struct FDivergence {
  std::string_view name;
  std::function<double(double t)> second_derivative;
};

/// chi^2: f(t) = (t - 1)^2, f'' = 2.
FDivergence chi_square_divergence();
/// Kullback-Leibler: f(t) = t log t, f''(t) = 1/t.
FDivergence kl_divergence();
/// Squared Hellinger: f(t) = (1 - sqrt t)^2, f''(t) = t^{-3/2} / 2.
FDivergence squared_hellinger_divergence();

/// Options of the numerical integration over gamma in [1, inf).
struct GammaIntegration {
  /// Points gamma > 1 where an integrand has a kink or a jump (e.g. gamma = p/q for
  /// discrete laws, the zero of (1 - a - gamma b)^+). The integral is split there, which
  /// keeps the tanh-sinh quadrature accurate. Order and duplicates do not matter; points
  /// <= 1 or non-finite are ignored.
  std::vector<double> breakpoints;
  /// Relative tolerance of each piece. The returned value is inflated by 10 * rel_tol
  /// (rounded up, docs/architecture.md "never under-report").
  double rel_tol = 1e-10;
};

/// D_f(mu || nu) from its two E_gamma curves, journal eq. (10).
/// Throws InvalidArgument when a curve returns NaN, a negative value below -1e-12 or a
/// value above 1 + 1e-9 (tiny negative rounding is clamped to 0). Returns +inf when the
/// integral diverges numerically (the quadrature fails, or its value exceeds 1e100).
double f_divergence_from_e_gamma(const FDivergence& f, const GammaCurve& e_mu_nu,
                                 const GammaCurve& e_nu_mu, const GammaIntegration& options = {});

/// journal Prop. 2: the bound on D_f(mu K || nu K) from E_gamma(mu || nu),
/// E_gamma(nu || mu) and the contraction curve gamma -> eta_gamma(K). Same input rules as
/// f_divergence_from_e_gamma.
double f_divergence_output_bound(const FDivergence& f, const GammaCurve& e_mu_nu,
                                 const GammaCurve& e_nu_mu, const GammaCurve& eta_gamma,
                                 const GammaIntegration& options = {});

/// chi^2(mu || nu) = 2 int_1^inf [E_g(mu || nu) + g^{-3} E_g(nu || mu)] dg (journal (10) with
/// f(t) = (t-1)^2).
double chi_square_from_e_gamma(const GammaCurve& e_mu_nu, const GammaCurve& e_nu_mu,
                               const GammaIntegration& options = {});

/// journal Prop. 2 for chi^2:
/// chi^2(mu K || nu K) <= 2 int_1^inf eta_g(K) [E_g(mu || nu) + g^{-3} E_g(nu || mu)] dg.
double chi_square_output_bound(const GammaCurve& e_mu_nu, const GammaCurve& e_nu_mu,
                               const GammaCurve& eta_gamma, const GammaIntegration& options = {});

/// journal eq. (12): D_f(mu K || nu K) <= eta_TV(K) D_f(mu || nu) (Cohen et al. [83],
/// eta_f <= eta_TV). eta_tv in [0, 1], input_divergence >= 0 (may be +inf).
double tv_contraction_bound(double eta_tv, double input_divergence);

// ---- Binary laws and binary channels (journal Example 2). Bernoulli(p) puts mass p on
// the symbol 1 and 1 - p on the symbol 0.

/// E_gamma(Bernoulli(p) || Bernoulli(q)) = (p - gamma q)^+ + (1 - p - gamma (1 - q))^+,
/// p, q in [0, 1], gamma >= 1.
double bernoulli_e_gamma(double p, double q, double gamma);

/// chi^2(Bernoulli(p) || Bernoulli(q)) = (p - q)^2 / (q (1 - q)) in closed form (+inf when
/// q is 0 or 1 and p != q; 0 when p == q).
double bernoulli_chi_square(double p, double q);

/// The binary channel K^{a,b} = [[1 - a, a], [b, 1 - b]] (row = input symbol 0, 1; column
/// = output symbol 0, 1), a, b in [0, 1].
struct BinaryChannel {
  double a;  ///< P(output 1 | input 0)
  double b;  ///< P(output 0 | input 1)
};

/// P(output = 1) when the input is Bernoulli(p): (1 - p) a + p (1 - b).
double binary_channel_output(const BinaryChannel& k, double p);

/// eta_gamma(K^{a,b}) by journal Thm 3 (sup over input pairs of E_gamma between rows):
/// max{E_gamma(row 0 || row 1), E_gamma(row 1 || row 0)}; for a, b <= 1/2 this is the
/// journal's max{(1 - a - gamma b)^+, (1 - b - gamma a)^+}. gamma >= 1.
double binary_channel_e_gamma_contraction(const BinaryChannel& k, double gamma);

/// eta_TV(K^{a,b}) = |1 - a - b| (Dobrushin; journal Example 2).
double binary_channel_tv_contraction(const BinaryChannel& k);

/// The gamma > 1 where the Bernoulli E_gamma curves of (p, q) (both directions) and the
/// contraction curve of K^{a,b} have kinks: the breakpoints for GammaIntegration.
std::vector<double> binary_breakpoints(double p, double q, const BinaryChannel& k);

}  // namespace hsdp::div
