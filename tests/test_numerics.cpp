// Log-domain special functions and the quadrature wrapper (src/numerics).
//
// References are computed independently in 100-digit arithmetic (Boost.Multiprecision,
// boost::math::erfc, and the asymptotic series of the Mills ratio summed to 1e-110 for
// x >= 30), so each accuracy claim in docs/numerics.md can fail here.
#include <gtest/gtest.h>

#include <boost/math/special_functions/erf.hpp>
#include <boost/math/special_functions/log1p.hpp>
#include <boost/multiprecision/cpp_bin_float.hpp>

#include <array>
#include <cmath>
#include <iostream>
#include <limits>
#include <numbers>
#include <vector>

#include "hsdp/numerics/log_normal.hpp"
#include "hsdp/numerics/quadrature.hpp"

namespace {

using hsdp::num::integrate;
using hsdp::num::log1mexp;
using hsdp::num::log_mills;
using hsdp::num::log_phi;
using hsdp::num::log_q;
using hsdp::num::logaddexp;
using hsdp::num::logsubexp;
using hsdp::num::logsumexp;
using hsdp::num::mills;
using hsdp::num::neg_mills_prime;
using hsdp::num::phi;
using hsdp::num::q;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kDenormMin = std::numeric_limits<double>::denorm_min();
constexpr double kMinNormal = std::numeric_limits<double>::min();

// ---- 100-digit reference ------------------------------------------------------------
using mp = boost::multiprecision::cpp_bin_float_100;

mp mp_log_phi(const mp& x) {
  return -x * x / 2 - log(2 * boost::math::constants::pi<mp>()) / 2;
}
// log Q(x) for x >= 0: erfc below 30; above, log phi + log M with M from its asymptotic
// series sum_k (-1)^k (2k-1)!! / x^(2k+1), whose terms shrink by (2k+1)/x^2 < 0.07 until
// far beyond the 1e-110 stopping point.
mp mp_log_q_nonneg(const mp& x) {
  if (x < 30) return log(boost::math::erfc(x / sqrt(mp(2))) / 2);
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
  return boost::math::log1p(-exp(mp_log_q_nonneg(-x)));  // Q(x) = 1 - Q(-x)
}
mp mp_log_mills(const mp& x) { return mp_log_q(x) - mp_log_phi(x); }

double rel_err(double got, const mp& ref) {
  if (ref == 0) return got == 0 ? 0.0 : kInf;
  return static_cast<double>(abs((mp(got) - ref) / ref));
}

// A grid with the points the requirements name and log-spaced points in between.
std::vector<double> log_q_grid() {
  std::vector<double> x = {-38, -37.9, -37.5, -37, -30, -26, -20, -10, -5, -2, -1, -0.5,
                           -1e-3, -1e-10, 0, 1e-300, 1e-10, 1e-3, 0.5, 1, 2, 3, 5, 8, 10,
                           13.999, 14, 14.001, 20, 25, 26, 27, 29.999, 30, 30.001, 37.5, 38,
                           38.6, 50, 100, 199.9, 200, 1e3, 9999, 1e4, 99999, 1e5, 1e6};
  for (double e = -3; e <= 6; e += 0.25) x.push_back(std::pow(10.0, e));
  for (double v = -37.3; v < 0; v += 1.7) x.push_back(v);
  return x;
}

double g_worst_log_q = 0, g_worst_log_q_x = 0;

// ---- log Q -------------------------------------------------------------------------

TEST(LogQ, MatchesMultiprecisionReferenceTo1e13) {
  for (double x : log_q_grid()) {
    const mp ref = mp_log_q(mp(x));
    const double got = log_q(x);
    ASSERT_FALSE(std::isnan(got)) << x;
    if (abs(ref) < kMinNormal) {
      // x < -37.5: log Q(x) = -Q(-x) is subnormal, resolved to a subnormal ulp.
      EXPECT_LE(static_cast<double>(abs(mp(got) - ref)), 2 * kDenormMin) << "x = " << x;
      continue;
    }
    const double err = rel_err(got, ref);
    EXPECT_LE(err, 1e-13) << "x = " << x << " got " << got << " ref " << ref;
    if (err > g_worst_log_q) g_worst_log_q = err, g_worst_log_q_x = x;
  }
  std::cout << "[ measured ] log_q worst relative error " << g_worst_log_q << " at x = "
            << g_worst_log_q_x << "\n";
}

TEST(LogQ, SpecialValues) {
  EXPECT_EQ(log_q(-kInf), 0.0);
  EXPECT_EQ(log_q(kInf), -kInf);
  EXPECT_TRUE(std::isnan(log_q(kNaN)));
  EXPECT_DOUBLE_EQ(log_q(0.0), -std::numbers::ln2);
  EXPECT_EQ(log_q(-40.0), 0.0);        // -Q(40) ~ -4e-350 is below the smallest subnormal
  EXPECT_EQ(log_q(2e154), -kInf);      // x^2 / 2 overflows: the true value is < -DBL_MAX
  EXPECT_LT(log_q(1e154), -4.9e307);   // still finite just below
  EXPECT_TRUE(std::isfinite(log_q(1e154)));
  EXPECT_TRUE(std::isfinite(log_q(-1e300)));
}

TEST(LogQ, IsDecreasingAndNeverNaN) {
  double prev = 0.0;
  for (double x = -40; x < 60; x += 0.01) {
    const double v = log_q(x);
    ASSERT_FALSE(std::isnan(v)) << x;
    ASSERT_LE(v, prev) << x;
    prev = v;
  }
}

TEST(LogQ, ContinuousAcrossBranchSwitches) {
  // Switches at x = 0, 14 (erfc -> asymptotic series) and the asymptotic term counts.
  for (double s : {0.0, 14.0, 30.0, 200.0, 1e4, 1e5}) {
    const double below = std::nextafter(s, -kInf), above = s;
    const double d = log_q(above) - log_q(below);
    // d/dx log Q = -1/M(x) ~ -x; one ulp step changes log Q by ~x * ulp(x).
    EXPECT_LE(std::abs(d), 4e-16 * std::max(1.0, std::abs(log_q(s)))) << s;
  }
}

// ---- Q, phi, Mills ratio -------------------------------------------------------------

TEST(Q, MatchesReferenceWhereNormal) {
  double worst = 0;
  for (double x = -38; x <= 38.5; x += 0.173) {
    const mp ref = exp(mp_log_q(mp(x)));
    const double got = q(x);
    if (ref < kMinNormal) {
      EXPECT_LE(static_cast<double>(abs(mp(got) - ref)), 1.0 * kDenormMin) << x;
      continue;
    }
    const double err = rel_err(got, ref);
    EXPECT_LE(err, 1e-14) << x;
    worst = std::max(worst, err);
  }
  std::cout << "[ measured ] q worst relative error " << worst << "\n";
  EXPECT_EQ(q(kInf), 0.0);
  EXPECT_EQ(q(-kInf), 1.0);
  EXPECT_EQ(q(39.0), 0.0);
  EXPECT_TRUE(std::isnan(q(kNaN)));
}

TEST(Phi, MatchesReference) {
  double worst = 0;
  for (double x = -37.4; x <= 37.4; x += 0.2131) {
    const mp ref = exp(mp_log_phi(mp(x)));
    const double err = rel_err(phi(x), ref);
    EXPECT_LE(err, 4e-16) << x;
    worst = std::max(worst, err);
    const double ref_log = static_cast<double>(mp_log_phi(mp(x)));
    EXPECT_NEAR(log_phi(x), ref_log, 4.5e-16 * std::max(1.0, std::abs(ref_log))) << x;
  }
  std::cout << "[ measured ] phi worst relative error " << worst << "\n";
  EXPECT_EQ(phi(kInf), 0.0);
  EXPECT_EQ(phi(-41.0), 0.0);
  EXPECT_TRUE(std::isnan(phi(kNaN)));
}

TEST(Mills, MatchesReference) {
  double worst_m = 0, worst_g = 0, worst_log = 0;
  std::vector<double> xs;
  // From -37.5: below, 1 - x M(x) exceeds DBL_MAX (and is +inf, as documented).
  for (double x = -37.5; x < 40; x += 0.1371) xs.push_back(x);
  for (double e = 1.6; e <= 6.01; e += 0.2) xs.push_back(std::pow(10.0, e));
  for (double x : {13.999, 14.0, 29.999, 30.0, 199.99, 200.0, 9999.0, 1e4, 99999.0, 1e5})
    xs.push_back(x);
  for (double x : xs) {
    const mp lm = mp_log_mills(mp(x));
    const mp m = exp(lm);
    const mp g = 1 - mp(x) * m;
    const double em = rel_err(mills(x), m);
    const double eg = rel_err(neg_mills_prime(x), g);
    const double el =
        std::abs(log_mills(x) - static_cast<double>(lm)) / std::max(1.0, std::abs(double(lm)));
    EXPECT_LE(em, 2e-15) << x;
    EXPECT_LE(eg, 2e-13) << x;  // 1 - x M cancels up to x^2 + 2 ~ 200 below x = 14
    EXPECT_LE(el, 1e-15) << x;
    worst_m = std::max(worst_m, em);
    worst_g = std::max(worst_g, eg);
    worst_log = std::max(worst_log, el);
  }
  std::cout << "[ measured ] mills " << worst_m << ", neg_mills_prime " << worst_g
            << ", log_mills " << worst_log << "\n";
}

TEST(Mills, ExtremeArguments) {
  EXPECT_EQ(mills(-38.0), kInf);  // sqrt(2 pi) exp(722) overflows ...
  const double lm = log_mills(-38.0);  // ... its logarithm does not
  EXPECT_NEAR(lm, static_cast<double>(mp_log_mills(mp(-38))), 1e-15 * std::abs(lm));
  EXPECT_NEAR(log_mills(-1e5), 5e9 + 0.5 * std::log(2 * std::numbers::pi), 1e-6);
  EXPECT_EQ(mills(kInf), 0.0);
  EXPECT_EQ(neg_mills_prime(kInf), 0.0);
  EXPECT_EQ(log_mills(kInf), -kInf);
  EXPECT_NEAR(log_mills(1e300), -std::log(1e300), 1e-12);
  EXPECT_TRUE(std::isnan(mills(kNaN)));
  EXPECT_TRUE(std::isnan(log_mills(kNaN)));
  EXPECT_TRUE(std::isnan(neg_mills_prime(kNaN)));
  // M(0) = sqrt(pi / 2); -M'(0) = 1.
  EXPECT_DOUBLE_EQ(mills(0.0), std::sqrt(std::numbers::pi / 2));
  EXPECT_DOUBLE_EQ(neg_mills_prime(0.0), 1.0);
}

TEST(Mills, NegMillsPrimeIsPositiveAndDecreasing) {
  // -M' = 1 - x M is positive and decreasing (M is convex): the quadrature in theta
  // relies on it.
  double prev = kInf;
  for (double x = -37; x < 100; x += 0.01) {
    const double g = neg_mills_prime(x);
    ASSERT_GT(g, 0.0) << x;
    ASSERT_LE(g, prev * (1 + 1e-13)) << x;
    prev = g;
  }
}

// ---- log1mexp, logaddexp, logsubexp, logsumexp ------------------------------------

TEST(Log1mexp, EdgeCases) {
  EXPECT_EQ(log1mexp(0.0), -kInf);
  EXPECT_EQ(log1mexp(-0.0), -kInf);
  EXPECT_EQ(log1mexp(-kInf), 0.0);
  EXPECT_TRUE(std::isnan(log1mexp(1e-300)));
  EXPECT_TRUE(std::isnan(log1mexp(kInf)));
  EXPECT_TRUE(std::isnan(log1mexp(kNaN)));
  EXPECT_DOUBLE_EQ(log1mexp(-1e-300), std::log(1e-300));  // 1 - e^a ~ -a
  EXPECT_DOUBLE_EQ(log1mexp(-1e-20), std::log(1e-20));
  EXPECT_DOUBLE_EQ(log1mexp(-kDenormMin), std::log(kDenormMin));
  EXPECT_DOUBLE_EQ(log1mexp(-800.0), -std::exp(-800.0));  // log(1 - tiny) = -tiny
  EXPECT_EQ(log1mexp(-1e300), 0.0);
}

TEST(Log1mexp, MatchesReference) {
  double worst = 0;
  for (double e = -20; e <= 2.7; e += 0.05) {
    const double a = -std::pow(10.0, e);
    // log1p(-e^a) keeps log(1 - 1e-194) ~ -1e-194 that log(1 - e^a) rounds to 0.
    const mp ref = a > -1 ? log(-boost::math::expm1(mp(a))) : boost::math::log1p(-exp(mp(a)));
    const double err = rel_err(log1mexp(a), ref);
    EXPECT_LE(err, 4e-16) << a;
    worst = std::max(worst, err);
  }
  // Both sides of Maechler's switch at -log 2.
  for (double a : {std::nextafter(-std::numbers::ln2, 0.0), -std::numbers::ln2,
                   std::nextafter(-std::numbers::ln2, -1.0)}) {
    EXPECT_LE(rel_err(log1mexp(a), log(-boost::math::expm1(mp(a)))), 4e-16);
  }
  std::cout << "[ measured ] log1mexp worst relative error " << worst << "\n";
}

TEST(Logaddexp, EdgeCases) {
  EXPECT_EQ(logaddexp(-kInf, -kInf), -kInf);
  EXPECT_EQ(logaddexp(-kInf, 3.0), 3.0);
  EXPECT_EQ(logaddexp(3.0, -kInf), 3.0);
  EXPECT_EQ(logaddexp(kInf, 3.0), kInf);
  EXPECT_EQ(logaddexp(kInf, kInf), kInf);
  EXPECT_EQ(logaddexp(kInf, -kInf), kInf);
  EXPECT_TRUE(std::isnan(logaddexp(kNaN, 0.0)));
  EXPECT_TRUE(std::isnan(logaddexp(0.0, kNaN)));
  EXPECT_TRUE(std::isnan(logaddexp(kInf, kNaN)));
  EXPECT_DOUBLE_EQ(logaddexp(0.0, 0.0), std::numbers::ln2);
  EXPECT_DOUBLE_EQ(logaddexp(1e308, 1e308), 1e308);  // + log 2, no overflow
  EXPECT_DOUBLE_EQ(logaddexp(-1e308, 1e308), 1e308);
  EXPECT_DOUBLE_EQ(logaddexp(-1e308, -1e308), -1e308);
  EXPECT_DOUBLE_EQ(logaddexp(0.0, -40.0), std::log1p(std::exp(-40.0)));
  EXPECT_EQ(logaddexp(0.0, -800.0), 0.0);
  EXPECT_DOUBLE_EQ(logaddexp(-1000.0, -1000.0), -1000.0 + std::numbers::ln2);
  EXPECT_EQ(logaddexp(2.0, 5.0), logaddexp(5.0, 2.0));
}

TEST(Logsubexp, EdgeCases) {
  EXPECT_EQ(logsubexp(3.0, 3.0), -kInf);
  EXPECT_EQ(logsubexp(-kInf, -kInf), -kInf);
  EXPECT_EQ(logsubexp(3.0, -kInf), 3.0);
  EXPECT_EQ(logsubexp(kInf, 3.0), kInf);
  EXPECT_TRUE(std::isnan(logsubexp(kInf, kInf)));
  EXPECT_TRUE(std::isnan(logsubexp(1.0, 2.0)));
  EXPECT_TRUE(std::isnan(logsubexp(-kInf, 0.0)));
  EXPECT_TRUE(std::isnan(logsubexp(kNaN, 0.0)));
  EXPECT_TRUE(std::isnan(logsubexp(0.0, kNaN)));
  // log(1 - e^-1e-20) = log(1e-20) to full precision (no 1 - 1 cancellation).
  EXPECT_DOUBLE_EQ(logsubexp(0.0, -1e-20), std::log(1e-20));
  EXPECT_DOUBLE_EQ(logsubexp(1e308, std::nextafter(1e308, 0.0)), 1e308);  // + log(ulp)
  EXPECT_DOUBLE_EQ(logsubexp(-700.0, -701.0), -700.0 + std::log(-std::expm1(-1.0)));
  EXPECT_DOUBLE_EQ(logsubexp(1e308, -1e308), 1e308);
  EXPECT_DOUBLE_EQ(logsubexp(std::log(5.0), std::log(3.0)), std::log(2.0));
}

TEST(Logsumexp, EdgeCases) {
  EXPECT_EQ(logsumexp({}), -kInf);
  const std::array<double, 3> all_neg_inf = {-kInf, -kInf, -kInf};
  EXPECT_EQ(logsumexp(all_neg_inf), -kInf);
  const std::array<double, 3> with_inf = {1.0, kInf, -kInf};
  EXPECT_EQ(logsumexp(with_inf), kInf);
  const std::array<double, 3> with_nan = {1.0, kNaN, 2.0};
  EXPECT_TRUE(std::isnan(logsumexp(with_nan)));
  const std::array<double, 2> nan_inf = {kInf, kNaN};
  EXPECT_TRUE(std::isnan(logsumexp(nan_inf)));
  const std::array<double, 1> one = {-3.5};
  EXPECT_EQ(logsumexp(one), -3.5);
  // A term far below the maximum keeps its digits: log(1 + e^-40) = 4.25e-18.
  const std::array<double, 2> far = {0.0, -40.0};
  EXPECT_DOUBLE_EQ(logsumexp(far), std::log1p(std::exp(-40.0)));
  const std::array<double, 3> huge = {1e308, 1e308, 1e308};
  EXPECT_DOUBLE_EQ(logsumexp(huge), 1e308);
  const std::array<double, 3> tiny = {-1e308, -1e308, -kInf};
  EXPECT_DOUBLE_EQ(logsumexp(tiny), -1e308);
  const std::array<double, 2> ties = {-745.0, -745.0};
  EXPECT_DOUBLE_EQ(logsumexp(ties), -745.0 + std::numbers::ln2);
  std::vector<double> zeros(1000, 0.0);
  EXPECT_NEAR(logsumexp(zeros), std::log(1000.0), 1e-13);
  // Agrees with repeated logaddexp.
  const std::array<double, 5> v = {-3.0, 2.5, 0.1, -700.0, 2.5};
  double acc = -kInf;
  for (double x : v) acc = logaddexp(acc, x);
  EXPECT_NEAR(logsumexp(v), acc, 1e-15);
}

// ---- quadrature -------------------------------------------------------------------

TEST(Integrate, FiniteRange) {
  EXPECT_NEAR(integrate([](double x) { return x * x; }, 0, 1), 1.0 / 3, 1e-15);
  EXPECT_NEAR(integrate([](double x) { return std::sin(x); }, 0, std::numbers::pi), 2.0, 1e-14);
  // Endpoint singularity (tanh-sinh never evaluates the endpoints).
  EXPECT_NEAR(integrate([](double x) { return 1 / std::sqrt(x); }, 0, 1), 2.0, 1e-12);
  // Reversed limits and an empty range.
  EXPECT_NEAR(integrate([](double x) { return x; }, 1, 0), -0.5, 1e-15);
  EXPECT_EQ(integrate([](double x) { return x; }, 2, 2), 0.0);
  EXPECT_TRUE(std::isnan(integrate([](double x) { return x; }, kNaN, 1)));
}

TEST(Integrate, HalfInfiniteRanges) {
  EXPECT_NEAR(integrate([](double x) { return std::exp(-x); }, 0, kInf), 1.0, 1e-14);
  EXPECT_NEAR(integrate([](double x) { return std::exp(x); }, -kInf, 0), 1.0, 1e-14);
  EXPECT_NEAR(integrate([](double x) { return 1 / (x * x); }, 1, kInf), 1.0, 1e-13);
  // The normal tail beyond 3 against Q(3).
  EXPECT_NEAR(integrate([](double x) { return phi(x); }, 3, kInf), q(3.0), 1e-15);
  EXPECT_NEAR(integrate([](double x) { return phi(x); }, -kInf, -3), q(3.0), 1e-15);
  EXPECT_NEAR(integrate([](double x) { return std::exp(-x); }, kInf, 0), -1.0, 1e-14);
}

TEST(Integrate, InfiniteRange) {
  EXPECT_NEAR(integrate([](double x) { return phi(x); }, -kInf, kInf), 1.0, 1e-14);
  EXPECT_NEAR(integrate([](double x) { return 1 / (1 + x * x); }, -kInf, kInf),
              std::numbers::pi, 1e-12);
  EXPECT_NEAR(integrate([](double x) { return x * x * phi(x - 1); }, -kInf, kInf), 2.0, 1e-13);
}

}  // namespace
