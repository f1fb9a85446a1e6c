// journal (Asoodeh, Diaz, Calmon 2021) Sec. III-A: the f-divergence output bound of
// Prop. 2 through E_gamma contraction, eq. (10), eq. (12), Examples 1 and 2
// (include/hsdp/divergence/f_divergence_bound.hpp, src/divergence/chi_square.cpp).
//
// Reference numbers marked "mpmath" were computed independently with Python mpmath at 30
// digits (closed-form E_gamma curves, adaptive quadrature split at every kink).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "hsdp/divergence/f_divergence_bound.hpp"
#include "hsdp/divergence/hockey_stick.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/numerics/quadrature.hpp"

namespace {

namespace div = hsdp::div;
constexpr double kInf = std::numeric_limits<double>::infinity();

double Phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
double phi(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI); }

// theta_gamma(r) as a GammaCurve (div::theta takes log gamma).
div::GammaCurve theta_curve(double r) {
  return [r](double g) { return div::theta(std::log(g), r); };
}

// ---- journal Example 1: mu, nu = laws of N(0,1), N(2,1) projected onto B = [-1/2, 1/2];
// K = projected Gaussian kernel of (B, B, sigma = 1), so eta_gamma(K) = theta_gamma(1)
// (journal Prop. 1, dia(B) = 1) and eta_TV(K) = theta_1(1).

// The projected law of N(m, 1) on B: atoms at -1/2 and +1/2, density phi(x - m) inside.
struct ProjectedGaussian {
  double m;
  double lo() const { return Phi(-0.5 - m); }
  double hi() const { return 1.0 - Phi(0.5 - m); }
  double density(double x) const { return phi(x - m); }
};
const ProjectedGaussian kMu{0.0}, kNu{2.0};

// Exact E_gamma(mu || nu): atoms, plus the continuous part where phi(x) > gamma phi(x-2),
// i.e. x < c = 1 - log(gamma)/2 (the likelihood ratio exp(2 - 2x) is decreasing).
double exact_e_mu_nu(double g) {
  double s = std::max(0.0, kMu.lo() - g * kNu.lo()) + std::max(0.0, kMu.hi() - g * kNu.hi());
  const double c = std::min(1.0 - std::log(g) / 2.0, 0.5);
  if (c > -0.5) s += (Phi(c) - Phi(-0.5)) - g * (Phi(c - 2.0) - Phi(-2.5));
  return s;
}
// Exact E_gamma(nu || mu): the ratio exp(2x - 2) < 1 on B, so only the atoms count.
double exact_e_nu_mu(double g) {
  return std::max(0.0, kNu.lo() - g * kMu.lo()) + std::max(0.0, kNu.hi() - g * kMu.hi());
}
std::vector<double> exact_breakpoints() {
  return {kMu.lo() / kNu.lo(), kNu.hi() / kMu.hi(), std::exp(1.0), std::exp(3.0)};
}

// E[f(X)] for X ~ projected N(m, 1).
double expect(const ProjectedGaussian& law, const std::function<double(double)>& f) {
  return law.lo() * f(-0.5) + law.hi() * f(0.5) +
         hsdp::num::integrate([&](double x) { return law.density(x) * f(x); }, -0.5, 0.5);
}

// chi^2 of two laws on B given as (atom lo, atom hi, density), computed directly.
double chi_square_on_b(double lo1, double hi1, const std::function<double(double)>& d1, double lo2,
                       double hi2, const std::function<double(double)>& d2) {
  return lo1 * lo1 / lo2 + hi1 * hi1 / hi2 +
         hsdp::num::integrate([&](double y) { return d1(y) * d1(y) / d2(y); }, -0.5, 0.5) - 1.0;
}

// Exact chi^2(mu K || nu K): push each law through y = Pi_B(x + Z) by quadrature.
double exact_output_chi_square() {
  auto lo = [](const ProjectedGaussian& l) { return expect(l, [](double x) { return Phi(-0.5 - x); }); };
  auto hi = [](const ProjectedGaussian& l) { return expect(l, [](double x) { return 1.0 - Phi(0.5 - x); }); };
  auto dens = [](const ProjectedGaussian& l) {
    return [l](double y) { return expect(l, [y](double x) { return phi(y - x); }); };
  };
  return chi_square_on_b(lo(kMu), hi(kMu), dens(kMu), lo(kNu), hi(kNu), dens(kNu));
}

TEST(FDivergenceBound, Eq10ReproducesGaussianChiSquare) {
  // chi^2(N(0,1) || N(2,1)) = e^{r^2} - 1 with r = 2; E_gamma is theta_gamma(2) both ways.
  const double chi = div::chi_square_from_e_gamma(theta_curve(2.0), theta_curve(2.0));
  EXPECT_NEAR(chi, std::expm1(4.0), 1e-8 * std::expm1(4.0));
  EXPECT_GE(chi, std::expm1(4.0));  // rounded up
  // KL(N(r,1) || N(0,1)) = r^2 / 2, squared Hellinger = 2 (1 - exp(-r^2/8)).
  EXPECT_NEAR(div::f_divergence_from_e_gamma(div::kl_divergence(), theta_curve(2.0), theta_curve(2.0)),
              2.0, 1e-8);
  EXPECT_NEAR(div::f_divergence_from_e_gamma(div::squared_hellinger_divergence(), theta_curve(2.0),
                                             theta_curve(2.0)),
              2.0 * (1.0 - std::exp(-0.5)), 1e-8);
}

TEST(FDivergenceBound, Example1AsPrintedInTheJournal) {
  // The journal's chain for sigma = 1 replaces E_gamma(mu || nu) by its data-processing
  // bound theta_gamma(2) in both (12) and Prop. 2:
  //   (12):    2 theta_1(1) int (1 + g^-3) theta_g(2) dg = theta_1(1) (e^4 - 1)
  //   Prop. 2: 2 int theta_g(1) (1 + g^-3) theta_g(2) dg
  // The journal prints 0.49 and 0.26. Evaluated as printed these are 20.524 and 0.8874
  // (mpmath); we could not find a reading of Example 1 that gives 0.49 / 0.26 (see
  // docs/analyses/comparisons.md). What the example is about holds: Prop. 2 is far below
  // (12), and both are above the exact output chi^2.
  const double eta_tv = div::theta(0.0, 1.0);
  const double input = div::chi_square_from_e_gamma(theta_curve(2.0), theta_curve(2.0));
  const double classic = div::tv_contraction_bound(eta_tv, input);
  const double prop2 = div::chi_square_output_bound(theta_curve(2.0), theta_curve(2.0), theta_curve(1.0));
  EXPECT_NEAR(classic, 20.5240674501592460, 1e-7 * 20.52);  // mpmath
  EXPECT_NEAR(prop2, 0.887410148167786418, 1e-7);            // mpmath
  EXPECT_LT(prop2, classic);
  const double exact = exact_output_chi_square();
  EXPECT_NEAR(exact, 0.21017717961150232634, 1e-7);  // mpmath, nested quadrature
  EXPECT_LT(exact, prop2);
  EXPECT_LT(exact, classic);
  // The journal's own numbers are bounds too (0.21 < 0.26 < 0.49), whatever they computed.
  EXPECT_LT(exact, 0.26);
}

TEST(FDivergenceBound, Example1WithTheExactInputCurves) {
  div::GammaIntegration opt;
  opt.breakpoints = exact_breakpoints();
  // (10) with the exact E_gamma curves of the projected laws = the direct chi^2.
  const double chi_in = div::chi_square_from_e_gamma(exact_e_mu_nu, exact_e_nu_mu, opt);
  const double direct = chi_square_on_b(kMu.lo(), kMu.hi(), [](double x) { return kMu.density(x); },
                                        kNu.lo(), kNu.hi(), [](double x) { return kNu.density(x); });
  EXPECT_NEAR(direct, 17.7407240338246687, 1e-8 * 17.74);  // mpmath
  EXPECT_NEAR(chi_in, direct, 1e-8 * direct);
  // Prop. 2 with the exact curves: tighter than with the data-processing bound.
  const double prop2 = div::chi_square_output_bound(exact_e_mu_nu, exact_e_nu_mu, theta_curve(1.0), opt);
  EXPECT_NEAR(prop2, 0.835513677523645106, 1e-7);  // mpmath
  const double classic = div::tv_contraction_bound(div::theta(0.0, 1.0), chi_in);
  EXPECT_NEAR(classic, 6.79336537659821835, 1e-7 * 6.79);  // mpmath
  const double exact = exact_output_chi_square();
  EXPECT_LT(exact, prop2);
  EXPECT_LT(prop2, classic);
}

// ---- journal Example 2: K^{a,b} with a = 0.1, b = 0.4; mu = Bernoulli(0.1), nu = Bernoulli(0.4).

TEST(FDivergenceBound, BinaryChannelContractionMatchesTheJournal) {
  const div::BinaryChannel k{0.1, 0.4};
  for (double g : {1.0, 1.5, 2.25, 3.0, 5.9, 6.0, 10.0}) {
    // journal Example 2: eta_gamma(K^{a,b}) = max{(1 - a - gamma b)^+, (1 - b - gamma a)^+}.
    const double printed = std::max({0.0, 0.9 - g * 0.4, 0.6 - g * 0.1});
    EXPECT_NEAR(div::binary_channel_e_gamma_contraction(k, g), printed, 1e-15) << "gamma " << g;
  }
  EXPECT_DOUBLE_EQ(div::binary_channel_tv_contraction(k), 0.5);
  EXPECT_NEAR(div::binary_channel_e_gamma_contraction(k, 1.0), div::binary_channel_tv_contraction(k), 1e-15);
  EXPECT_DOUBLE_EQ(div::binary_channel_output(k, 0.1), 0.9 * 0.1 + 0.1 * 0.6);
}

TEST(FDivergenceBound, Example2) {
  const double p = 0.1, q = 0.4;
  const div::BinaryChannel k{0.1, 0.4};
  div::GammaIntegration opt;
  opt.breakpoints = div::binary_breakpoints(p, q, k);
  auto fwd = [&](double g) { return div::bernoulli_e_gamma(p, q, g); };
  auto bwd = [&](double g) { return div::bernoulli_e_gamma(q, p, g); };
  auto eta = [&](double g) { return div::binary_channel_e_gamma_contraction(k, g); };

  const double chi_in = div::chi_square_from_e_gamma(fwd, bwd, opt);
  EXPECT_NEAR(chi_in, div::bernoulli_chi_square(p, q), 1e-8);  // inflated by 10 rel_tol
  EXPECT_DOUBLE_EQ(div::bernoulli_chi_square(p, q), 0.375);

  // (12)/(13): (1 - a - b) chi^2(mu || nu) = 0.1875; the journal prints 0.19.
  const double classic = div::tv_contraction_bound(div::binary_channel_tv_contraction(k), chi_in);
  EXPECT_NEAR(classic, 0.1875, 1e-9);
  EXPECT_NEAR(classic, 0.19, 0.006);
  // Prop. 2: 0.1752258872 (mpmath); the journal prints 0.17 (truncated, where 0.1875 was
  // rounded to 0.19).
  const double prop2 = div::chi_square_output_bound(fwd, bwd, eta, opt);
  EXPECT_NEAR(prop2, 0.17522588722239781238, 1e-9);
  EXPECT_NEAR(prop2, 0.17, 0.006);
  EXPECT_LT(prop2, classic);

  // The exact output chi^2: Bernoulli(0.15) vs Bernoulli(0.30), 0.1071 < both bounds.
  const double exact = div::bernoulli_chi_square(div::binary_channel_output(k, p), div::binary_channel_output(k, q));
  EXPECT_NEAR(exact, 0.0225 / 0.21, 1e-12);
  EXPECT_LT(exact, prop2);
}

TEST(FDivergenceBound, OtherFDivergencesOnBinaryLaws) {
  // The same machinery for KL and squared Hellinger, against closed forms.
  auto kl = [](double p, double q) {
    return p * std::log(p / q) + (1 - p) * std::log((1 - p) / (1 - q));
  };
  auto h2 = [](double p, double q) {
    return std::pow(std::sqrt(p) - std::sqrt(q), 2) + std::pow(std::sqrt(1 - p) - std::sqrt(1 - q), 2);
  };
  for (auto [p, q, a, b] : std::vector<std::array<double, 4>>{{0.1, 0.4, 0.1, 0.4},
                                                               {0.7, 0.2, 0.05, 0.3},
                                                               {0.5, 0.45, 0.2, 0.2}}) {
    const div::BinaryChannel k{a, b};
    div::GammaIntegration opt;
    opt.breakpoints = div::binary_breakpoints(p, q, k);
    auto fwd = [&](double g) { return div::bernoulli_e_gamma(p, q, g); };
    auto bwd = [&](double g) { return div::bernoulli_e_gamma(q, p, g); };
    auto eta = [&](double g) { return div::binary_channel_e_gamma_contraction(k, g); };
    const double po = div::binary_channel_output(k, p), qo = div::binary_channel_output(k, q);
    EXPECT_NEAR(div::f_divergence_from_e_gamma(div::kl_divergence(), fwd, bwd, opt), kl(p, q), 1e-9);
    EXPECT_NEAR(div::f_divergence_from_e_gamma(div::squared_hellinger_divergence(), fwd, bwd, opt),
                h2(p, q), 1e-9);
    const double kl_bound = div::f_divergence_output_bound(div::kl_divergence(), fwd, bwd, eta, opt);
    const double h2_bound =
        div::f_divergence_output_bound(div::squared_hellinger_divergence(), fwd, bwd, eta, opt);
    const double chi_bound = div::chi_square_output_bound(fwd, bwd, eta, opt);
    EXPECT_GE(kl_bound, kl(po, qo));
    EXPECT_GE(h2_bound, h2(po, qo));
    EXPECT_GE(chi_bound, div::bernoulli_chi_square(po, qo));
    // Prop. 2 is never worse than (12) (eta_gamma <= eta_TV).
    const double tv = div::binary_channel_tv_contraction(k);
    EXPECT_LE(kl_bound, div::tv_contraction_bound(tv, kl(p, q)) * (1 + 1e-8));
    EXPECT_LE(chi_bound, div::tv_contraction_bound(tv, div::bernoulli_chi_square(p, q)) * (1 + 1e-8));
  }
}

TEST(FDivergenceBound, DivergentIntegralIsInfinite) {
  // nu = Bernoulli(0) while mu puts mass on 1: chi^2 = +inf. E_gamma(mu || nu) = p for
  // every gamma, so (10) diverges; the result must be +inf, never a finite number or NaN.
  auto fwd = [](double g) { return div::bernoulli_e_gamma(0.3, 0.0, g); };
  auto bwd = [](double g) { return div::bernoulli_e_gamma(0.0, 0.3, g); };
  EXPECT_EQ(div::bernoulli_chi_square(0.3, 0.0), kInf);
  const double chi = div::chi_square_from_e_gamma(fwd, bwd);
  EXPECT_FALSE(std::isnan(chi));
  EXPECT_EQ(chi, kInf);
  EXPECT_EQ(div::tv_contraction_bound(0.5, kInf), kInf);
  EXPECT_EQ(div::tv_contraction_bound(0.0, kInf), 0.0);
}

TEST(FDivergenceBound, RejectsBadInput) {
  EXPECT_THROW(div::bernoulli_e_gamma(1.5, 0.2, 2.0), hsdp::InvalidArgument);
  EXPECT_THROW(div::bernoulli_e_gamma(0.5, 0.2, 0.5), hsdp::InvalidArgument);
  EXPECT_THROW(div::bernoulli_e_gamma(0.5, 0.2, std::nan("")), hsdp::InvalidArgument);
  EXPECT_THROW(div::binary_channel_e_gamma_contraction({-0.1, 0.2}, 2.0), hsdp::InvalidArgument);
  EXPECT_THROW(div::tv_contraction_bound(1.5, 1.0), hsdp::InvalidArgument);
  EXPECT_THROW(div::tv_contraction_bound(0.5, -1.0), hsdp::InvalidArgument);
  auto nan_curve = [](double) { return std::nan(""); };
  auto big_curve = [](double) { return 2.0; };
  auto ok = theta_curve(1.0);
  EXPECT_THROW(div::chi_square_from_e_gamma(nan_curve, ok), hsdp::InvalidArgument);
  EXPECT_THROW(div::chi_square_output_bound(ok, ok, big_curve), hsdp::InvalidArgument);
  EXPECT_THROW(div::chi_square_output_bound(ok, ok, div::GammaCurve{}), hsdp::InvalidArgument);
  // Rounding just below 0 is tolerated (clamped up, which only enlarges the bound).
  auto tiny_negative = [](double g) { return g < 2 ? 0.1 : -1e-15; };
  EXPECT_NO_THROW(div::chi_square_from_e_gamma(tiny_negative, tiny_negative, {{2.0}, 1e-10}));
}

}  // namespace
