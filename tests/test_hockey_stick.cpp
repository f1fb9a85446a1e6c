// Hockey-stick divergences (src/divergence/hockey_stick.cpp).
//
// theta_gamma(r) = E_gamma(N(r,1) || N(0,1)) = Q(eps/r - r/2) - e^eps Q(eps/r + r/2)
// (journal Thm 1 / Def. 3, isit Lemma 2) is checked against
//  - a 100-digit evaluation straight from that Q definition (no Mills-ratio identity),
//  - numerical integration of (phi(x - r) - gamma phi(x))^+,
//  - the closed form theta_1(r) = erf(r / (2 sqrt 2)) and its Taylor series,
// and the Laplace E_gamma (isit Lemma 1, eq. (9)) against numerical integration of
// (p1 - gamma p2)^+ of the two Laplace densities.
#include <gtest/gtest.h>

#include <boost/math/special_functions/erf.hpp>
#include <boost/math/special_functions/expm1.hpp>
#include <boost/math/special_functions/log1p.hpp>
#include <boost/multiprecision/cpp_bin_float.hpp>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <numbers>
#include <vector>

#include "hsdp/divergence/hockey_stick.hpp"
#include "hsdp/numerics/log_normal.hpp"
#include "hsdp/numerics/quadrature.hpp"
#include "hsdp/numerics/root.hpp"

namespace {

using hsdp::div::laplace_e_gamma;
using hsdp::div::log_laplace_e_gamma;
using hsdp::div::log_theta;
using hsdp::div::theta;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kLogTiny = std::log(1e-300);

// ---- 100-digit reference from the Q definition ------------------------------------
// 100 digits leave > 40 correct digits in the cancellation Q(u) - gamma Q(v) even at
// r = 1e-8 with eps = 500 (log Q(u) ~ -1.25e21 while the difference of logs is ~1e-19).
using mp = boost::multiprecision::cpp_bin_float_100;

mp mp_log_phi(const mp& x) {
  return -x * x / 2 - log(2 * boost::math::constants::pi<mp>()) / 2;
}
mp mp_log_q_nonneg(const mp& x) {
  if (x < 30) return log(boost::math::erfc(x / sqrt(mp(2))) / 2);
  // Asymptotic series of the Mills ratio; terms shrink by (2k+1)/x^2 < 0.07.
  const mp x2 = x * x;
  mp term = 1, sum = 1;
  for (int k = 1; k < 2000; ++k) {
    term *= -(2 * k - 1) / x2;
    sum += term;
    if (abs(term) < mp(1e-110)) break;
  }
  return mp_log_phi(x) + log(sum / x);
}
mp mp_log_q(const mp& x) {
  if (x >= 0) return mp_log_q_nonneg(x);
  return boost::math::log1p(-exp(mp_log_q_nonneg(-x)));
}
// log theta = log Q(u) + log(1 - exp(eps + log Q(v) - log Q(u))).
mp mp_log_theta(double eps, double r) {
  const mp e(eps), rr(r);
  const mp u = e / rr - rr / 2, v = e / rr + rr / 2;
  const mp lu = mp_log_q(u);
  return lu + log(-boost::math::expm1(e + mp_log_q(v) - lu));
}

// Error in the sense of the requirement: relative error of theta while theta >= 1e-300
// (= absolute error of log theta), relative error of log theta below.
double log_theta_error(double got, const mp& ref) {
  const double err = static_cast<double>(abs(mp(got) - ref));
  return ref < kLogTiny ? err / static_cast<double>(abs(ref)) : err;
}

std::vector<double> log_space(double lo, double hi, int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(lo * std::pow(hi / lo, i / double(n - 1)));
  return v;
}

// ---- theta against the 100-digit reference ----------------------------------------

TEST(Theta, MatchesMultiprecisionReference) {
  const std::vector<double> eps_grid = {0,   1e-12, 1e-6, 1e-3, 0.1, 0.5, 1,
                                        2,   5,     10,   20,   50,  100, 500};
  std::vector<double> r_grid = log_space(1e-8, 1e4, 25);
  for (double r : {0.3, 0.7, 1.5, 3.0, 74.0, 75.0}) r_grid.push_back(r);
  double worst = 0, worst_lin = 0, we = 0, wr = 0;
  for (double eps : eps_grid) {
    for (double r : r_grid) {
      const mp ref = mp_log_theta(eps, r);
      const double got = log_theta(eps, r);
      ASSERT_FALSE(std::isnan(got)) << eps << " " << r;
      const double err = log_theta_error(got, ref);
      EXPECT_LE(err, 1e-12) << "eps " << eps << " r " << r << " got " << got << " ref " << ref;
      if (err > worst) worst = err, we = eps, wr = r;
      if (ref > kLogTiny) {  // theta itself, relative
        const double lin = static_cast<double>(abs(mp(theta(eps, r)) / exp(ref) - 1));
        EXPECT_LE(lin, 1e-13) << "eps " << eps << " r " << r;
        worst_lin = std::max(worst_lin, lin);
      }
    }
  }
  std::cout << "[ measured ] log_theta worst error " << worst << " (eps " << we << ", r " << wr
            << "); theta worst relative error " << worst_lin << "\n";
}

TEST(Theta, AccurateAroundTheQuadratureSwitch) {
  // The branch switch is at r K(eps/r) = 0.02 with K(m) = 2 / (sqrt(m^2 + 4) + m); sweep
  // r across it (a factor 10 either side) for several eps.
  double worst = 0;
  for (double eps : {0.0, 1e-4, 0.1, 1.0, 5.0, 30.0, 500.0}) {
    for (double target = 0.002; target < 0.2; target *= 1.25) {
      // r with r K(eps / r) = target, by bisection on the increasing map r -> r K(eps/r).
      double lo = 1e-12, hi = 1e6;
      for (int i = 0; i < 200; ++i) {
        const double r = std::sqrt(lo * hi), m = eps / r;
        (r * 2 / (std::sqrt(m * m + 4) + m) < target ? lo : hi) = r;
      }
      const double r = std::sqrt(lo * hi);
      const mp ref = mp_log_theta(eps, r);
      const double err = log_theta_error(log_theta(eps, r), ref);
      EXPECT_LE(err, 1e-12) << "eps " << eps << " r " << r;
      worst = std::max(worst, err);
      if (ref > kLogTiny) {
        EXPECT_LE(static_cast<double>(abs(mp(theta(eps, r)) / exp(ref) - 1)), 1e-13)
            << "eps " << eps << " r " << r;
      }
    }
  }
  std::cout << "[ measured ] log_theta worst error near the switch " << worst << "\n";
}

TEST(Theta, MatchesNumericalIntegrationOfDensities) {
  // E_gamma(P || Q) = integral (p - gamma q)^+ with p = N(r, 1), q = N(0, 1). The
  // integrand is positive exactly for x > v = eps/r + r/2; the range is split there so
  // that the kink of the positive part sits on an endpoint.
  double worst = 0;
  for (double eps : {0.0, 0.1, 1.0, 3.0}) {
    for (double r : {0.1, 0.5, 1.0, 2.0, 5.0}) {
      const double gamma = std::exp(eps);
      auto integrand = [=](double x) {
        const double p = std::exp(-0.5 * (x - r) * (x - r)) / std::sqrt(2 * std::numbers::pi);
        const double q = std::exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi);
        return std::max(0.0, p - gamma * q);
      };
      const double v = eps / r + r / 2;
      const double left = hsdp::num::integrate(integrand, -kInf, v, 1e-13);
      const double right = hsdp::num::integrate(integrand, v, kInf, 1e-13);
      const double t = theta(eps, r);
      EXPECT_LE(left, 1e-15 * t);  // rounding noise of p - gamma q at the crossing only
      EXPECT_NEAR((left + right) / t, 1.0, 1e-9) << "eps " << eps << " r " << r;
      worst = std::max(worst, std::abs((left + right) / t - 1));
    }
  }
  std::cout << "[ measured ] theta vs integral of the densities: worst relative difference "
            << worst << "\n";
}

TEST(Theta, ClosedFormAtGammaOne) {
  // theta_1(r) = Q(-r/2) - Q(r/2) = 2 Phi(r/2) - 1 = erf(r / (2 sqrt 2)).
  for (double r : log_space(1e-10, 60, 80)) {
    const double ref = std::erf(r / (2 * std::numbers::sqrt2));
    // Up to ~50x cancellation in M(u) - M(v) just above the quadrature switch (r > 0.02).
    EXPECT_NEAR(theta(0.0, r) / ref, 1.0, 2e-14) << r;
    EXPECT_NEAR(log_theta(0.0, r), std::log(ref), 2e-14 * std::max(1.0, -std::log(ref))) << r;
  }
  // Taylor series at small r: erf(z) = 2/sqrt(pi) (z - z^3/3 + z^5/10 - ...).
  for (double r : {1e-300, 1e-200, 1e-12, 1e-8, 1e-5, 1e-3}) {
    const double z = r / (2 * std::numbers::sqrt2);
    const double series = 2 / std::sqrt(std::numbers::pi) * z * (1 - z * z / 3 + z * z * z * z / 10);
    EXPECT_NEAR(log_theta(0.0, r), std::log(series), 3e-16 * std::abs(std::log(series))) << r;
  }
  // Subnormal r: theta is subnormal, log theta keeps full precision.
  const double r = 1e-320;
  EXPECT_NEAR(log_theta(0.0, r), std::log(1e-320) - 0.5 * std::log(2 * std::numbers::pi),
              1e-14 * 740);
}

TEST(Theta, SmallRAsymptotics) {
  // For fixed eps > 0 and r -> 0: u = eps/r - r/2 -> inf and
  // log theta = log phi(u) + log(M(u) - M(v)) ~ -u^2/2 - log sqrt(2 pi) + log(r / u^2),
  // since M(u) - M(v) ~ r g(u) with g(u) ~ 1/u^2 (1 - 3/u^2). Checks the tiny-theta
  // regime (theta far below 1e-300) with a formula independent of the implementation.
  for (double eps : {0.5, 5.0, 500.0}) {
    for (double r : {1e-6, 1e-7, 1e-8}) {
      const double u = eps / r - r / 2;
      const double approx = -0.5 * u * u - 0.5 * std::log(2 * std::numbers::pi) +
                            std::log(r / (u * u)) - 3 / (u * u) - r / u;
      const double got = log_theta(eps, r);
      EXPECT_NEAR(got / approx, 1.0, 1e-15) << eps << " " << r;
      EXPECT_NEAR(got, approx, 1e-15 * std::abs(approx) + 1e-9) << eps << " " << r;
    }
  }
}

TEST(Theta, MonotoneOnA60By60Grid) {
  // theta increases with r and decreases with gamma (journal Thm 1): strictly wherever
  // the neighbouring values are distinguishable in double (theta < 1 - 1e-6), on the
  // log scale also far below 1e-300.
  const std::vector<double> rs = log_space(1e-8, 1e4, 60);
  std::vector<double> es = log_space(1e-3, 500, 59);
  es.insert(es.begin(), 0.0);
  std::vector<std::vector<double>> lt(es.size(), std::vector<double>(rs.size()));
  for (std::size_t i = 0; i < es.size(); ++i)
    for (std::size_t j = 0; j < rs.size(); ++j) {
      lt[i][j] = log_theta(es[i], rs[j]);
      ASSERT_FALSE(std::isnan(lt[i][j]));
      ASSERT_LE(lt[i][j], 0.0);
      ASSERT_GT(lt[i][j], -kInf) << es[i] << " " << rs[j];
    }
  int strict_r = 0, strict_e = 0;
  for (std::size_t i = 0; i < es.size(); ++i)
    for (std::size_t j = 0; j + 1 < rs.size(); ++j) {
      EXPECT_LE(lt[i][j], lt[i][j + 1]) << "eps " << es[i] << " r " << rs[j];
      if (lt[i][j] < -1e-6) {
        EXPECT_LT(lt[i][j], lt[i][j + 1]) << "eps " << es[i] << " r " << rs[j];
        ++strict_r;
      }
    }
  for (std::size_t j = 0; j < rs.size(); ++j)
    for (std::size_t i = 0; i + 1 < es.size(); ++i) {
      EXPECT_GE(lt[i][j], lt[i + 1][j]) << "eps " << es[i] << " r " << rs[j];
      if (lt[i][j] < -1e-6) {
        EXPECT_GT(lt[i][j], lt[i + 1][j]) << "eps " << es[i] << " r " << rs[j];
        ++strict_e;
      }
    }
  EXPECT_GT(strict_r, 2500);
  EXPECT_GT(strict_e, 2500);
  // theta() agrees with exp(log_theta()) on the same grid.
  for (std::size_t i = 0; i < es.size(); i += 7)
    for (std::size_t j = 0; j < rs.size(); ++j)
      EXPECT_NEAR(theta(es[i], rs[j]), std::exp(lt[i][j]), 1e-12 * std::exp(lt[i][j]));
}

TEST(Theta, MonotoneAcrossBranchSwitchesOnAFineGrid) {
  // Dense in r around every branch (quadrature / subtraction, u = -37): a switch that
  // disagrees by more than rounding shows up as a step backwards.
  for (double eps : {0.0, 0.05, 1.0, 8.0}) {
    double prev = -kInf;
    for (double r = 1e-3; r < 120; r *= 1.0005) {
      const double v = log_theta(eps, r);
      ASSERT_GE(v, prev - 1e-15 * std::abs(prev) - 1e-16) << eps << " " << r;
      prev = v;
    }
  }
}

TEST(Theta, SpecialAndInvalidValues) {
  for (double bad : {kNaN, -1.0, -1e-300, -kInf}) {
    EXPECT_TRUE(std::isnan(theta(bad, 1.0)));
    EXPECT_TRUE(std::isnan(log_theta(bad, 1.0)));
    EXPECT_TRUE(std::isnan(theta(1.0, bad)));
    EXPECT_TRUE(std::isnan(log_theta(1.0, bad)));
  }
  EXPECT_EQ(theta(1.0, 0.0), 0.0);
  EXPECT_EQ(log_theta(1.0, 0.0), -kInf);
  EXPECT_EQ(theta(0.0, 0.0), 0.0);
  EXPECT_EQ(theta(1.0, kInf), 1.0);
  EXPECT_EQ(log_theta(1.0, kInf), 0.0);
  EXPECT_EQ(theta(kInf, 1.0), 0.0);
  EXPECT_EQ(log_theta(kInf, 1.0), -kInf);
  EXPECT_EQ(log_theta(1.0, 1e-320), -kInf);  // eps / r overflows: theta ~ exp(-1e640)
}

TEST(Theta, NeverNaNForValidInput) {
  const std::vector<double> es = {0, 1e-300, 1e-10, 1, 700, 1e5, 1e150, 1e300,
                                  std::numeric_limits<double>::max()};
  const std::vector<double> rs = {std::numeric_limits<double>::denorm_min(), 1e-310, 1e-200,
                                  1e-20, 1e-8, 0.02, 1, 37, 74, 75, 1e5, 1e150, 1e300,
                                  std::numeric_limits<double>::max()};
  for (double e : es)
    for (double r : rs) {
      const double lt = log_theta(e, r), t = theta(e, r);
      EXPECT_FALSE(std::isnan(lt)) << e << " " << r;
      EXPECT_FALSE(std::isnan(t)) << e << " " << r;
      EXPECT_LE(lt, 0.0) << e << " " << r;
      EXPECT_GE(t, 0.0);
      EXPECT_LE(t, 1.0);
    }
}

// ---- Laplace (isit Lemma 1) ---------------------------------------------------------

TEST(LaplaceEGamma, MatchesNumericalIntegrationOfDensities) {
  // Lap(m, b) has density exp(-|x - m| / b) / (2b). The kinks of (p1 - gamma p2)^+ are
  // at 0, m1 = shift and the crossing point, found here with the root finder from the
  // densities alone (p1 / p2 is non-decreasing in x).
  double worst = 0;
  for (double b : {0.5, 1.0, 3.0}) {
    for (double s : {0.05, 0.5, 1.0, 2.0, 5.0, 20.0}) {
      const double m1 = s * b;
      auto p1 = [=](double x) { return std::exp(-std::abs(x - m1) / b) / (2 * b); };
      auto p2 = [=](double x) { return std::exp(-std::abs(x) / b) / (2 * b); };
      for (double eps : {0.0, 0.01, 0.3, 1.0, 4.0, 19.0}) {
        const double gamma = std::exp(eps);
        auto integrand = [&](double x) { return std::max(0.0, p1(x) - gamma * p2(x)); };
        std::vector<double> cuts = {0.0, m1};
        // Crossing: the largest x where p1 - gamma p2 <= 0 (if any inside (0, m1)).
        auto h = [&](double x) { return p1(x) - gamma * p2(x); };
        if (h(0.0) <= 0 && h(m1) > 0)
          cuts.push_back(hsdp::num::monotone_boundary(h, 0.0, m1, hsdp::num::Holds::below));
        std::sort(cuts.begin(), cuts.end());
        double integral = hsdp::num::integrate(integrand, -kInf, cuts.front(), 1e-13) +
                          hsdp::num::integrate(integrand, cuts.back(), kInf, 1e-13);
        for (std::size_t k = 0; k + 1 < cuts.size(); ++k)
          integral += hsdp::num::integrate(integrand, cuts[k], cuts[k + 1], 1e-13);
        const double closed = laplace_e_gamma(eps, s);
        EXPECT_NEAR(integral, closed, 1e-10 + 1e-9 * closed) << "b " << b << " s " << s
                                                               << " eps " << eps;
        worst = std::max(worst, std::abs(integral - closed));
        if (closed > 0) {
          EXPECT_NEAR(log_laplace_e_gamma(eps, s), std::log(closed), 1e-14);
        } else {
          EXPECT_EQ(log_laplace_e_gamma(eps, s), -kInf);
        }
      }
    }
  }
  std::cout << "[ measured ] Laplace E_gamma vs integral: worst absolute difference " << worst
            << "\n";
}

TEST(LaplaceEGamma, EdgeCases) {
  EXPECT_EQ(laplace_e_gamma(1.0, 1.0), 0.0);  // log gamma >= shift: no privacy loss mass
  EXPECT_EQ(laplace_e_gamma(2.0, 1.0), 0.0);
  EXPECT_EQ(log_laplace_e_gamma(2.0, 1.0), -kInf);
  EXPECT_EQ(laplace_e_gamma(0.0, 0.0), 0.0);
  EXPECT_EQ(laplace_e_gamma(0.0, kInf), 1.0);
  EXPECT_EQ(log_laplace_e_gamma(0.0, kInf), 0.0);
  // Tiny difference: 1 - exp(-1e-20 / 2) = 5e-21 to full precision.
  EXPECT_DOUBLE_EQ(laplace_e_gamma(1.0, 1.0 + 1e-15), -std::expm1(-0.5 * ((1.0 + 1e-15) - 1.0)));
  EXPECT_DOUBLE_EQ(log_laplace_e_gamma(0.0, 1e-20), std::log(0.5e-20));
  // gamma = 1 is the total variation distance of two Laplace laws: 1 - exp(-s/2).
  EXPECT_DOUBLE_EQ(laplace_e_gamma(0.0, 2.0), 1 - std::exp(-1.0));
  for (double bad : {kNaN, -1.0}) {
    EXPECT_TRUE(std::isnan(laplace_e_gamma(bad, 1.0)));
    EXPECT_TRUE(std::isnan(laplace_e_gamma(1.0, bad)));
    EXPECT_TRUE(std::isnan(log_laplace_e_gamma(bad, 1.0)));
    EXPECT_TRUE(std::isnan(log_laplace_e_gamma(1.0, bad)));
  }
}

}  // namespace

namespace {

// log(1 - theta): equals log1p(-theta) where theta is representable away from 1, is
// continuous across the theta = 1/2 switch, keeps falling (no underflow to -inf) for
// large r, and is decreasing in r.
TEST(LogOneMinusTheta, AgreesWithThetaAndStaysFiniteInTheTail) {
  for (double eps : {0.0, 0.3, 1.0, 5.0}) {
    double previous = 1.0;
    for (double r = 0.05; r < 200.0; r *= 1.1) {
      const double l = hsdp::div::log_one_minus_theta(eps, r);
      ASSERT_TRUE(std::isfinite(l)) << eps << " " << r;
      if (previous < -1e-12) EXPECT_LT(l, previous) << eps << " " << r;
      EXPECT_LE(l, previous) << eps << " " << r;
      previous = l;
      const double t = hsdp::div::theta(eps, r);
      if (t < 0.999) {
        EXPECT_NEAR(l, std::log1p(-t), 1e-12 * std::max(1.0, std::abs(l))) << eps << " " << r;
      }
    }
  }
  // Far tail: 1 - theta ~ Q(r/2 - eps/r) for eps = 0 (the gamma Q(v) term is equal), i.e.
  // log 2 + log Q(r/2); at r = 100, about -1250, far below the smallest double.
  EXPECT_NEAR(hsdp::div::log_one_minus_theta(0.0, 100.0),
              std::log(2.0) + hsdp::num::log_q(50.0), 1e-9);
  EXPECT_EQ(hsdp::div::log_one_minus_theta(1.0, INFINITY), -INFINITY);
  EXPECT_EQ(hsdp::div::log_one_minus_theta(1.0, 0.0), 0.0);
  EXPECT_TRUE(std::isnan(hsdp::div::log_one_minus_theta(-1.0, 1.0)));
}

}  // namespace
