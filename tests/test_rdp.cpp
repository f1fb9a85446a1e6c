// Rényi divergences of the (subsampled) Gaussian mechanism and the RDP -> DP conversions
// (src/divergence/rdp.cpp, docs/rdp.md): against 50-digit quadrature, closed forms and the
// values dp_accounting and Opacus publish in their own tests.
#include <gtest/gtest.h>

#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <boost/multiprecision/cpp_bin_float.hpp>

#include <cmath>
#include <cstddef>
#include <iterator>
#include <limits>
#include <vector>

#include "hsdp/divergence/rdp.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/numerics/quadrature.hpp"
#include "fixtures.hpp"

namespace {

using hsdp::div::Neighbours;
using hsdp::div::RdpConversion;
using hsdp::div::Subsampling;
using mp = boost::multiprecision::cpp_bin_float_50;

// (1/(alpha-1)) log E_{z ~ N(0, s^2)}[((1-q) + q e^{(2z-1)/(2 s^2)})^(power)] in 50 digits:
// power = alpha gives D_alpha(mixture || N(0)) (the MTZ direction); power = -(alpha-1) gives
// D_alpha(N(0) || mixture) (the reverse one). Fixed 61-point Gauss-Kronrod on pieces of
// width sigma over [-45 s, alpha + 45 s], which holds both bumps of the integrand (near 0
// and near z = alpha); the tails beyond are below e^-1000.
double reference(double alpha, double q, double sigma, double power) {
  const mp s = sigma, qq = q, a = power;
  auto f = [&](mp z) {
    const mp r = exp((2 * z - 1) / (2 * s * s));
    const mp base = (1 - qq) + qq * r;
    return exp(-z * z / (2 * s * s)) / (s * sqrt(2 * boost::math::constants::pi<mp>())) *
           pow(base, a);
  };
  const double lo = -45 * sigma, hi = std::max(alpha, 1.0) + 45 * sigma;
  const double width = sigma;
  mp total = 0;
  for (double x = lo; x < hi; x += width)
    total += boost::math::quadrature::gauss_kronrod<mp, 61>::integrate(f, mp(x), mp(x + width), 0, 0);
  return static_cast<double>(log(total) / (alpha - 1));
}

const double kAlphas[] = {1.5, 2, 3.7, 10, 64, 256};
const double kQs[] = {1e-4, 0.01, 0.2, 1};
const double kSigmas[] = {0.5, 1, 4, 20};

// The grids below under the sanitizers (hsdp::testing::keep_cell): a stratified subset, each
// sigma regime, each q, integer and fractional orders kept, only repetitions inside a regime
// dropped. The sanitizers check memory and undefined behaviour on these paths (the 50-digit
// quadrature costs ~5 ms a piece there); the Release build checks the values on the full grid.
using hsdp::testing::keep_cell;

TEST(SampledGaussian, MatchesQuadratureTo1e9) {
  for (std::size_t is = 0; is < std::size(kSigmas); ++is)
    for (std::size_t iq = 0; iq < std::size(kQs); ++iq)
      for (std::size_t ia = 0; ia < std::size(kAlphas); ++ia) {
        // Sanitizers: one order per (sigma, q), each sigma meeting integer and fractional ones.
        if (!keep_cell(is + iq + ia, std::size(kAlphas))) continue;
        const double sigma = kSigmas[is], q = kQs[iq], alpha = kAlphas[ia];
        const double ref = reference(alpha, q, sigma, alpha);
        const double v = hsdp::div::s_alpha(alpha, q, sigma);
        EXPECT_NEAR(v, ref, 1e-9 * ref) << "alpha=" << alpha << " q=" << q << " sigma=" << sigma;
      }
}

// Small sigma, fractional orders: the alternating MTZ series cancels catastrophically (or
// fails outright) there, and the quadrature of A - 1 takes over (docs/rdp.md).
TEST(SampledGaussian, SmallSigmaFractionalMatchesQuadrature) {
  const double sigmas[] = {0.2, 0.3}, qs[] = {1e-3, 0.05, 0.9}, alphas[] = {1.1, 2.06, 5.5, 33.3};
  for (std::size_t is = 0; is < std::size(sigmas); ++is)
    for (std::size_t iq = 0; iq < std::size(qs); ++iq)
      for (std::size_t ia = 0; ia < std::size(alphas); ++ia) {
        // Sanitizers: one order per (sigma, q); every order is still met (keep_cell above).
        if (!keep_cell(is + iq + ia, std::size(alphas))) continue;
        const double sigma = sigmas[is], q = qs[iq], alpha = alphas[ia];
        const double ref = reference(alpha, q, sigma, alpha);
        const double v = hsdp::div::s_alpha(alpha, q, sigma);
        EXPECT_NEAR(v, ref, 1e-9 * ref) << "alpha=" << alpha << " q=" << q << " sigma=" << sigma;
      }
}

// 1 < alpha < 2 at sigma < 0.5: the Gauss-Hermite rules disagree there and the series needs
// up to 1e5 terms; the series is given 200 terms and the quadrature of A - 1 takes over
// (docs/rdp.md). shifted-renyi evaluates these orders exactly (no chord to alpha = 2).
TEST(SampledGaussian, FractionalBelowTwoMatchesQuadrature) {
  const double sigmas[] = {0.05, 0.2, 0.36}, qs[] = {1e-4, 0.1, 0.9}, alphas[] = {1.1, 1.7};
  for (std::size_t is = 0; is < std::size(sigmas); ++is)
    for (std::size_t iq = 0; iq < std::size(qs); ++iq)
      for (std::size_t ia = 0; ia < std::size(alphas); ++ia) {
        // Sanitizers: one of the two orders per (sigma, q) (keep_cell above).
        if (!keep_cell(is + iq + ia, std::size(alphas))) continue;
        const double sigma = sigmas[is], q = qs[iq], alpha = alphas[ia];
        const double ref = reference(alpha, q, sigma, alpha);
        const double v = hsdp::div::s_alpha(alpha, q, sigma);
        EXPECT_NEAR(v, ref, 1e-9 * ref) << "alpha=" << alpha << " q=" << q << " sigma=" << sigma;
      }
}

// MTZ 2019 Sec. 3.3: for Poisson add/remove the direction D((1-q)N0 + qN1 || N0) is the
// larger one (ERRATA 2). Checked on the whole grid (Release) by quadrature of both directions.
TEST(SampledGaussian, ReverseDirectionIsSmaller) {
  const double qs[] = {1e-4, 0.01, 0.2, 0.9};
  for (std::size_t is = 0; is < std::size(kSigmas); ++is)
    for (std::size_t iq = 0; iq < std::size(qs); ++iq)
      for (std::size_t ia = 0; ia < std::size(kAlphas); ++ia) {
        // Sanitizers: one order per (sigma, q), as in MatchesQuadratureTo1e9 (keep_cell above).
        if (!keep_cell(is + iq + ia, std::size(kAlphas))) continue;
        const double sigma = kSigmas[is], q = qs[iq], alpha = kAlphas[ia];
        if (sigma == 0.5 && alpha > 64) continue;  // reverse integrand ~e^{-huge}: trivially small
        const double fwd = reference(alpha, q, sigma, alpha);
        const double rev = reference(alpha, q, sigma, -(alpha - 1));
        EXPECT_LE(rev, fwd * (1 + 1e-12)) << "alpha=" << alpha << " q=" << q << " sigma=" << sigma;
        EXPECT_LE(rev, hsdp::div::s_alpha(alpha, q, sigma) * (1 + 1e-9));
      }
}

TEST(SampledGaussian, FullBatchIsGaussianMechanism) {
  for (double alpha : {1.01, 1.5, 2.0, 3.7, 100.0, 1024.0})
    for (double sigma : {0.3, 1.0, 7.0}) {
      EXPECT_DOUBLE_EQ(hsdp::div::s_alpha(alpha, 1.0, sigma), alpha / (2 * sigma * sigma));
      EXPECT_DOUBLE_EQ(hsdp::div::gaussian_rdp(alpha, 1.0 / sigma), alpha / (2 * sigma * sigma));
      // replace-one: sensitivity 2
      EXPECT_DOUBLE_EQ(
          hsdp::div::sampled_gaussian_rdp(alpha, 1.0, sigma, Subsampling::poisson, Neighbours::replace),
          2 * alpha / (sigma * sigma));
      EXPECT_DOUBLE_EQ(
          hsdp::div::sampled_gaussian_rdp(alpha, 1.0, sigma, Subsampling::fixed, Neighbours::replace),
          2 * alpha / (sigma * sigma));
    }
}

// dp_accounting, python/dp_accounting/dp_accounting/rdp/rdp_privacy_accountant_test.py,
// test_compute_rdp_poisson_sampled_gaussian: q = 0.01, noise multiplier 2.5, 50 steps,
// orders 1.5, 2.5, 5, 50, 100 -> 6.70579741e-04, 1.08548710e-03, 2.18075656e-03,
// 2.38460375e-02, 1.67416308e02. At the integer orders dp_accounting evaluates the exact
// binomial sum: hsdp agrees to the 9 published digits. At the fractional orders the current
// dp_accounting adds the absolute values of the alternating MTZ series (_log_comb via
// gammaln, no sign), an upper bound: hsdp's exact value is below it and equals the older
// TensorFlow Privacy value (tensorflow_privacy rdp_accountant_test.py,
// test_compute_rdp_sequence: 0.00065, 0.001085 with delta 1e-5) and the 50-digit quadrature.
TEST(SampledGaussian, DpAccountingPublishedValues) {
  const double int_orders[] = {5, 50, 100};
  const double int_expected[] = {2.18075656e-03, 2.38460375e-02, 1.67416308e02};
  for (int i = 0; i < 3; ++i) {
    const double v = 50 * hsdp::div::s_alpha(int_orders[i], 0.01, 2.5);
    EXPECT_NEAR(v, int_expected[i], 1e-8 * int_expected[i]) << int_orders[i];
  }
  const double frac_orders[] = {1.5, 2.5};
  const double dp_accounting_bound[] = {6.70579741e-04, 1.08548710e-03};
  const double tf_privacy[] = {0.00065, 0.001085};
  for (int i = 0; i < 2; ++i) {
    const double v = 50 * hsdp::div::s_alpha(frac_orders[i], 0.01, 2.5);
    EXPECT_LE(v, dp_accounting_bound[i]) << frac_orders[i];
    EXPECT_NEAR(v, tf_privacy[i], 1e-5) << frac_orders[i];
    EXPECT_NEAR(v, 50 * reference(frac_orders[i], 0.01, 2.5, frac_orders[i]), 1e-9 * v);
  }
  // tensorflow_privacy rdp_accountant_test.py: compute_rdp(0.1, 2, 10, 5) = 0.07737 (5
  // places) and compute_rdp(1, 10, 1, 20) = 0.1 (no data: the Gaussian mechanism).
  EXPECT_NEAR(10 * hsdp::div::s_alpha(5, 0.1, 2), 0.07737, 5e-6);
  EXPECT_DOUBLE_EQ(hsdp::div::s_alpha(20, 1.0, 10), 0.1);
  // dp_accounting test_compute_rdp_gaussian: alpha/(2 sigma^2), alpha = 3.14159, sigma = 2.71828.
  EXPECT_DOUBLE_EQ(hsdp::div::s_alpha(3.14159, 1.0, 2.71828), 3.14159 / (2 * 2.71828 * 2.71828));
}

TEST(SampledGaussian, NoOverflowAndMonotone) {
  for (double q : {1e-4, 0.01, 0.2, 0.99, 1.0})
    for (double sigma : {0.3, 0.5, 1.0, 20.0})
      for (double alpha : {1.0001, 1.5, 2.0, 3.7, 64.0, 256.5, 1024.0}) {
        for (auto scheme : {Subsampling::poisson, Subsampling::fixed})
          for (auto nb : {Neighbours::remove, Neighbours::replace}) {
            const double v = hsdp::div::sampled_gaussian_rdp(alpha, q, sigma, scheme, nb);
            EXPECT_TRUE(std::isfinite(v)) << alpha << " " << q << " " << sigma;
            EXPECT_GT(v, 0.0) << alpha << " " << q << " " << sigma;
          }
      }
  // non-decreasing in alpha (Poisson add/remove, exact)
  for (double q : {1e-3, 0.05, 0.5})
    for (double sigma : {0.3, 1.0, 5.0}) {
      double prev = 0;
      for (double alpha = 1.1; alpha < 300; alpha *= 1.37) {
        const double v = hsdp::div::s_alpha(alpha, q, sigma);
        EXPECT_GE(v, prev * (1 - 1e-12)) << alpha << " " << q << " " << sigma;
        prev = v;
      }
    }
  // sigma = 0.3, alpha = 1024: A ~ q^1024 e^{1024*1023/(2*0.09)}, finite in log domain
  const double big = hsdp::div::s_alpha(1024, 0.01, 0.3);
  EXPECT_NEAR(big, (1024.0 * 1023 / 0.18 + 1024 * std::log(0.01)) / 1023, 1e-6 * big);
}

// Huge orders: valid, finite, never NaN (past 1e6 the Gaussian value alpha/(2 sigma^2)).
TEST(SampledGaussian, HugeOrders) {
  for (double alpha : {1e5 + 0.5, 2e6, 1e9})
    for (auto scheme : {Subsampling::poisson, Subsampling::fixed})
      for (auto nb : {Neighbours::remove, Neighbours::replace}) {
        const double v = hsdp::div::sampled_gaussian_rdp(alpha, 0.01, 3.0, scheme, nb);
        EXPECT_TRUE(std::isfinite(v)) << alpha;
        EXPECT_LE(v, 2 * alpha / 9.0 * (1 + 1e-12)) << alpha;
      }
  EXPECT_EQ(hsdp::div::s_alpha(2e6, 0.01, 3.0), 2e6 / 18.0);
  EXPECT_TRUE(std::isinf(hsdp::div::s_alpha(INFINITY, 0.01, 3.0)));
}

// A noise so large that (alpha^2 - alpha) / (2 sigma^2) <= 1e-6: the integer-order sum is
// replaced by its O(1) upper bound e^x q^2 x, within a factor 1 + 2e-6 of the sum on either side
// of the switch (sigma such that x = 1e-6 (1 +- 1e-3)), and never below it.
TEST(SampledGaussian, HugeNoiseIntegerOrdersInClosedForm) {
  for (const double alpha : {2.0, 100.0, 5000.0})
    for (const double q : {1e-4, 0.01, 0.5}) {
      const double sigma_at = std::sqrt((alpha * alpha - alpha) / 2e-6);
      const double sum = hsdp::div::s_alpha(alpha, q, sigma_at * (1 - 1e-3));    // x just above 1e-6
      const double bound = hsdp::div::s_alpha(alpha, q, sigma_at * (1 + 1e-3));  // x just below
      // D_alpha scales as 1/sigma^2 there: compare at the same sigma.
      const double scaled = bound * std::pow((1 + 1e-3) / (1 - 1e-3), 2);
      EXPECT_GE(scaled, sum * (1 - 1e-9)) << alpha << " " << q;
      EXPECT_LE(scaled, sum * (1 + 1e-5)) << alpha << " " << q;
    }
}

// Upper bounds that are not exact dominate the exact add/remove value they relax.
TEST(SampledGaussian, BoundsDominateWhereTheyMust) {
  for (double q : {1e-3, 0.05, 0.5})
    for (double sigma : {0.7, 2.0, 8.0})
      for (double alpha : {1.5, 2.0, 3.7, 10.0, 40.0}) {
        const double rem = hsdp::div::s_alpha(alpha, q, sigma);
        // replace-one (two records differ) is never below add/remove
        EXPECT_GE(hsdp::div::sampled_gaussian_rdp(alpha, q, sigma, Subsampling::poisson,
                                                  Neighbours::replace),
                  rem);
        // the fixed-size replace bound never exceeds no amplification
        EXPECT_LE(hsdp::div::sampled_gaussian_rdp(alpha, q, sigma, Subsampling::fixed,
                                                  Neighbours::replace),
                  2 * alpha / (sigma * sigma));
      }
}

// Fixed-size sampling, replace-one (WBK 2019 Thm 9): the bound dominates the exact
// divergence of a small worst-case instance, n = 2, b = 1 (q = 1/2), where one step outputs
// (1/2) N(g_1, s^2) + (1/2) N(g_2, s^2): D = {x, y}, D' = {x', y}, g_x = 1, g_x' = -1, g_y = 0
// (||g|| <= 1), both orders of the pair, computed by quadrature.
TEST(SampledGaussian, FixedReplaceDominatesSmallInstance) {
  for (double sigma : {0.8, 1.0, 2.0, 4.0})
    for (double alpha : {1.5, 2.0, 3.0, 4.5, 8.0}) {
      auto log_mix = [sigma](double z, double m) {
        const double a = -0.5 * (z - m) * (z - m) / (sigma * sigma), b = -0.5 * z * z / (sigma * sigma);
        return std::max(a, b) + std::log1p(std::exp(-std::fabs(a - b))) + std::log(0.5);
      };
      auto f = [&](double z) {
        return std::exp(alpha * log_mix(z, 1.0) + (1 - alpha) * log_mix(z, -1.0) - 0.5 * std::log(2 * M_PI) - std::log(sigma));
      };
      const double exact = std::log(hsdp::num::integrate(f, -INFINITY, INFINITY, 1e-12)) / (alpha - 1);
      const double bound = hsdp::div::sampled_gaussian_rdp(alpha, 0.5, sigma, Subsampling::fixed,
                                                           Neighbours::replace);
      EXPECT_GE(bound, exact) << "alpha=" << alpha << " sigma=" << sigma;
    }
}

// Poisson, replace-one (weak triangle / no amplification): dominates the exact divergence of
// (1-q) N(0, s^2) + q N(1, s^2) against (1-q) N(0, s^2) + q N(-1, s^2) (the same coins for
// the replaced record, g_x = 1, g_x' = -1).
TEST(SampledGaussian, PoissonReplaceDominatesSmallInstance) {
  for (double q : {0.01, 0.1, 0.5})
    for (double sigma : {0.8, 1.0, 2.0, 4.0})
      for (double alpha : {1.5, 2.0, 3.0, 4.5, 8.0}) {
        auto log_mix = [sigma, q](double z, double m) {
          const double a = std::log(q) - 0.5 * (z - m) * (z - m) / (sigma * sigma);
          const double b = std::log1p(-q) - 0.5 * z * z / (sigma * sigma);
          return std::max(a, b) + std::log1p(std::exp(-std::fabs(a - b)));
        };
        auto f = [&](double z) {
          return std::exp(alpha * log_mix(z, 1.0) + (1 - alpha) * log_mix(z, -1.0) -
                          0.5 * std::log(2 * M_PI) - std::log(sigma));
        };
        const double exact = std::log(hsdp::num::integrate(f, -INFINITY, INFINITY, 1e-12)) / (alpha - 1);
        const double bound = hsdp::div::sampled_gaussian_rdp(alpha, q, sigma, Subsampling::poisson,
                                                             Neighbours::replace);
        EXPECT_GE(bound, exact) << "alpha=" << alpha << " q=" << q << " sigma=" << sigma;
      }
}

TEST(SampledGaussian, RejectsBadInput) {
  using hsdp::InvalidArgument;
  EXPECT_THROW(hsdp::div::s_alpha(1.0, 0.1, 1.0), InvalidArgument);
  EXPECT_THROW(hsdp::div::s_alpha(0.5, 0.1, 1.0), InvalidArgument);
  EXPECT_THROW(hsdp::div::s_alpha(NAN, 0.1, 1.0), InvalidArgument);
  EXPECT_THROW(hsdp::div::s_alpha(2.0, 0.0, 1.0), InvalidArgument);
  EXPECT_THROW(hsdp::div::s_alpha(2.0, 1.5, 1.0), InvalidArgument);
  EXPECT_THROW(hsdp::div::s_alpha(2.0, 0.1, 0.0), InvalidArgument);
  EXPECT_THROW(hsdp::div::s_alpha(2.0, 0.1, -1.0), InvalidArgument);
  try {
    hsdp::div::s_alpha(1.0, 0.1, 1.0);
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "alpha = 1: must be > 1");
  }
  try {
    hsdp::div::s_alpha(2.0, 2.0, 1.0);
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("q = 2"), std::string::npos) << e.what();
  }
  try {
    hsdp::div::s_alpha(2.0, 0.5, 0.0);
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("sigma = 0"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------
// Conversions

TEST(Conversion, ClosedFormsAtOneOrder) {
  const double alpha = 5, rho = 0.3, delta = 1e-6;
  // Mironov 2017 Prop. 3
  EXPECT_NEAR(hsdp::div::epsilon_from_rdp(alpha, rho, delta, RdpConversion::mironov),
              rho + std::log(1 / delta) / (alpha - 1), 1e-14);
  // CKS 2020 Prop. 12 / Balle et al. 2020 Thm 21
  const double cks = rho + std::log((alpha - 1) / alpha) - (std::log(delta) + std::log(alpha)) / (alpha - 1);
  EXPECT_NEAR(hsdp::div::epsilon_from_rdp(alpha, rho, delta, RdpConversion::cks), cks, 1e-14);
  EXPECT_LE(hsdp::div::epsilon_from_rdp(alpha, rho, delta, RdpConversion::optimal), cks);
  // delta and eps are inverse to each other
  for (auto c : {RdpConversion::mironov, RdpConversion::cks, RdpConversion::optimal}) {
    const double e = hsdp::div::epsilon_from_rdp(alpha, rho, delta, c);
    EXPECT_NEAR(hsdp::div::log_delta_from_rdp(alpha, rho, e, c), std::log(delta), 1e-10)
        << hsdp::div::to_string(c);
  }
}

// dp_accounting rdp_privacy_accountant_test.py, test_compute_epsilon_delta_pure_dp: orders
// 2..32, rdp = 1.1 at every order, delta = 1e-5 -> eps = 1.32783806176 at order 32 (the CKS
// conversion). The constant curve on (1, 32] is minimised at the end point 32.
TEST(Conversion, DpAccountingPureDp) {
  EXPECT_NEAR(hsdp::div::epsilon_from_rdp(32, 1.1, 1e-5, RdpConversion::cks), 1.32783806176, 1e-10);
  hsdp::div::RdpCurve c{[](double) { return 1.1; }, 32.0};
  const auto r = hsdp::div::best_epsilon(c, 1e-5);
  EXPECT_NEAR(r.value, 1.32783806176, 1e-6 * 1.33);
  EXPECT_NEAR(r.alpha, 32.0, 1e-9);
  EXPECT_NEAR(hsdp::div::log_delta_from_rdp(32, 1.1, 1.32783806176, RdpConversion::cks),
              std::log(1e-5), 1e-9);
}

// dp_accounting test_compute_epsilon_delta_gaussian: the Gaussian mechanism with noise
// multiplier 4.530877117 is exactly (1, 1e-6)-DP through the CKS conversion minimised over
// the orders 1.000..99.999 (step 0.001). The continuous minimum can only be lower.
TEST(Conversion, DpAccountingGaussian) {
  const double s = 4.530877117;
  hsdp::div::RdpCurve c{[s](double a) { return a / (2 * s * s); }};
  const auto r = hsdp::div::best_epsilon(c, 1e-6);
  EXPECT_LE(r.value, 1.0 + 1e-9);
  EXPECT_NEAR(r.value, 1.0, 1e-6);
  EXPECT_NEAR(std::exp(hsdp::div::best_log_delta(c, 1.0).value), 1e-6, 1e-6 * 1e-6);
  // The value is attained at the returned order.
  EXPECT_DOUBLE_EQ(r.value, std::min(hsdp::div::epsilon_from_rdp(r.alpha, c.epsilon(r.alpha), 1e-6,
                                                                 RdpConversion::optimal),
                                     r.value));
}

// Opacus, opacus/tests/accountants_test.py, test_rdp_accountant: noise 1.5, sample rate 0.04,
// 2250 steps, delta 1e-5 -> eps = 7.32911117143 over Opacus' DEFAULT_ALPHAS
// (1.1, 1.2, ..., 10.9, 12, ..., 63) with the CKS conversion of get_privacy_spent.
TEST(Conversion, OpacusPublishedEpsilon) {
  std::vector<double> orders;
  for (int x = 1; x < 100; ++x) orders.push_back(1 + x / 10.0);
  for (int a = 12; a < 64; ++a) orders.push_back(a);
  double best = INFINITY;
  for (double a : orders) {
    const double rho = 2250 * hsdp::div::s_alpha(a, 0.04, 1.5);
    best = std::min(best, hsdp::div::epsilon_from_rdp(a, rho, 1e-5, RdpConversion::cks));
  }
  EXPECT_NEAR(best, 7.32911117143, 1e-6 * 7.33);
  // the continuous minimum is never above the discrete one
  hsdp::div::RdpCurve c{[](double a) { return 2250 * hsdp::div::s_alpha(a, 0.04, 1.5); }};
  EXPECT_LE(hsdp::div::best_epsilon(c, 1e-5).value, best);
}

TEST(Conversion, OrdersNearOneNeverGiveZero) {
  // Only orders within 1e-6 of 1 allowed (KL ~ 1/2): the best eps is large, never 0 by
  // underflow; near alpha = 1 the second term of (23) is the Markov bound delta ~ KL / eps.
  hsdp::div::RdpCurve c{[](double a) { return a / 2; }, 1 + 1e-6};
  const auto r = hsdp::div::best_epsilon(c, 1e-5);
  EXPECT_GT(r.value, 1e4);
  EXPECT_TRUE(std::isfinite(r.value));
  EXPECT_GT(hsdp::div::best_delta(c, 1.0).value, 0.49);
  for (double a : {1 + 1e-15, 1 + 1e-9, 1.001})
    for (auto conv : {RdpConversion::mironov, RdpConversion::cks, RdpConversion::optimal}) {
      EXPECT_GT(hsdp::div::epsilon_from_rdp(a, 1e-3, 1e-5, conv), 1.0);
      // Mironov and CKS give delta ~ 1 near alpha = 1; the second term of (23) tends to
      // rho / eps (a Markov bound): 1e-3 here.
      EXPECT_GT(hsdp::div::log_delta_from_rdp(a, 1e-3, 1.0, conv),
                conv == RdpConversion::optimal ? std::log(1e-3) - 0.01 : -1e-2);
    }
  // An RDP value that underflows to 0 near alpha = 1 gives no bound from the second term of
  // (23) (rather than the false delta = 0).
  EXPECT_GT(hsdp::div::log_delta_from_rdp(1 + 1e-15, 1e-310, 1.0, RdpConversion::optimal), -1.0);
  // +inf curve: no guarantee, never NaN
  hsdp::div::RdpCurve inf{[](double) { return INFINITY; }};
  EXPECT_TRUE(std::isinf(hsdp::div::best_epsilon(inf, 1e-5).value));
  EXPECT_EQ(hsdp::div::best_delta(inf, 1.0).value, 1.0);
}

TEST(Conversion, TinyDeltaInLogDomain) {
  const double s = 0.5;
  hsdp::div::RdpCurve c{[s](double a) { return a / (2 * s * s); }};
  const auto r = hsdp::div::best_log_delta(c, 100.0);
  // Gaussian, mu = 2, eps = 100: log delta ~ -(eps - rho)^2 / (4 rho) with rho = 2: ~ -1200
  EXPECT_LT(r.value, -1000);
  EXPECT_GT(r.value, -1300);
}

}  // namespace
