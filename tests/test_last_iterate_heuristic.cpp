// The last-iterate heuristic (Steinke et al., ICLR 2025) against independent computations:
// the Gaussian closed form at q = 1, and numerical integration of the two densities.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "hsdp/accountant.hpp"
#include "hsdp/analysis/analysis.hpp"
#include "hsdp/divergence/hockey_stick.hpp"
#include "hsdp/divergence/last_iterate_heuristic.hpp"
#include "hsdp/numerics/quadrature.hpp"

namespace {

double binom(int T, int k, double q) {
  return std::exp(std::lgamma(T + 1.0) - std::lgamma(k + 1.0) - std::lgamma(T - k + 1.0) +
                  k * std::log(q) + (T - k) * std::log1p(-q));
}

/// max of both hockey-stick divergences by quadrature of (p - g q)^+ over the real line.
double delta_by_quadrature(int T, double q, double sigma, double eps) {
  const double v = T * sigma * sigma, s = std::sqrt(v), g = std::exp(eps);
  auto norm = [&](double x, double m) {
    return std::exp(-0.5 * (x - m) * (x - m) / v) / (s * std::sqrt(2 * M_PI));
  };
  auto p = [&](double x) {
    double sum = 0;
    for (int k = 0; k <= T; ++k) sum += binom(T, k, q) * norm(x, k);
    return sum;
  };
  auto qd = [&](double x) { return norm(x, 0.0); };
  const double lo = -12 * s - 1, hi = T + 12 * s + 1;
  // The integrands have kinks where p = g q; split the range finely so each piece is smooth
  // or has one kink (tanh-sinh handles a kink at an end point well enough for 1e-9).
  double pq = 0, qp = 0;
  const int pieces = 400;
  for (int i = 0; i < pieces; ++i) {
    const double a = lo + (hi - lo) * i / pieces, b = lo + (hi - lo) * (i + 1) / pieces;
    pq += hsdp::num::integrate([&](double x) { return std::max(0.0, p(x) - g * qd(x)); }, a, b);
    qp += hsdp::num::integrate([&](double x) { return std::max(0.0, qd(x) - g * p(x)); }, a, b);
  }
  return std::max(pq, qp);
}

TEST(LastIterateHeuristic, FullSamplingIsTheGaussianMechanism) {
  // q = 1: K = T, so P = N(T, T sigma^2), Q = N(0, T sigma^2): mu = sqrt(T)/sigma.
  for (int T : {1, 10, 1000})
    for (double sigma : {0.5, 2.0, 30.0})
      for (double eps : {0.0, 0.5, 3.0}) {
        const double mu = std::sqrt(static_cast<double>(T)) / sigma;
        const double want = hsdp::div::log_theta(eps, mu);
        EXPECT_NEAR(hsdp::div::heuristic_log_delta(T, 1.0, sigma, eps), want,
                    1e-9 * std::max(1.0, std::abs(want)))
            << T << " " << sigma << " " << eps;
      }
}

TEST(LastIterateHeuristic, AgainstQuadratureOfTheMixture) {
  struct Case {
    int T;
    double q, sigma, eps;
  };
  for (const Case& c : {Case{1, 0.1, 1.0, 0.5}, Case{1, 0.5, 0.7, 1.0}, Case{5, 0.3, 1.0, 0.2},
                        Case{20, 0.05, 0.8, 1.0}, Case{50, 0.2, 2.0, 0.3}, Case{3, 0.9, 0.5, 2.0}}) {
    const double got = std::exp(hsdp::div::heuristic_log_delta(c.T, c.q, c.sigma, c.eps));
    const double want = delta_by_quadrature(c.T, c.q, c.sigma, c.eps);
    EXPECT_NEAR(got, want, 1e-7 * want + 1e-12) << c.T << " " << c.q << " " << c.sigma;
  }
}

TEST(LastIterateHeuristic, MonotoneAndInverse) {
  double previous = 0.0;
  for (double eps = 0.0; eps < 8; eps += 0.25) {
    const double ld = hsdp::div::heuristic_log_delta(10000, 0.01, 1.0, eps);
    if (eps > 0) EXPECT_LT(ld, previous);
    previous = ld;
  }
  const double e = hsdp::div::heuristic_epsilon(10000, 0.01, 1.0, 1e-5);
  EXPECT_LE(hsdp::div::heuristic_log_delta(10000, 0.01, 1.0, e), std::log(1e-5) + 1e-9);
  EXPECT_GT(hsdp::div::heuristic_log_delta(10000, 0.01, 1.0, e * (1 - 1e-6)), std::log(1e-5));
  // K ~ Binomial(10^4, 0.01) has mean 100 against a noise std of 100: about the Gaussian
  // mechanism with mu = 1, a little worse for the spread of K; below the composition of the
  // same DP-SGD run (6.19 by PLD, 6.71 by RDP).
  double mu1 = 0, hi = 50;  // eps of 1-GDP at 1e-5, by bisection on theta
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (mu1 + hi);
    (hsdp::div::theta(mid, 1.0) > 1e-5 ? mu1 : hi) = mid;
  }
  EXPECT_GT(e, hi);
  EXPECT_LT(e, 1.1 * hi);
  EXPECT_LT(e, 6.19);
  EXPECT_THROW(hsdp::div::heuristic_log_delta(0, 0.5, 1.0, 1.0), std::invalid_argument);
  EXPECT_THROW(hsdp::div::heuristic_log_delta(5, 0.0, 1.0, 1.0), std::invalid_argument);
  EXPECT_THROW(hsdp::div::heuristic_epsilon(5, 0.5, 1.0, 1.5), std::invalid_argument);
}

}  // namespace

namespace {

// As an analysis: reported with kind "heuristic", never the best, even where it is smallest.
TEST(LastIterateHeuristic, ReportedButNeverBest) {
  hsdp::Run run;
  run.n = 100000;
  run.batch_size = 1000;
  run.steps = 10000;
  run.sampling = hsdp::Sampling::poisson;
  run.eta = hsdp::Schedule(0.1);
  run.noise_std = hsdp::Schedule(hsdp::noise_std_from_multiplier(1.0, 1.0, 0.1, 1000));
  run.clip = 1.0;
  run.adjacency = hsdp::Adjacency::remove;
  run.release = hsdp::Release::last;
  const auto report = hsdp::account(run, hsdp::Query::at_delta(1e-5));
  ASSERT_TRUE(report.best);
  const auto& best = report.analyses[*report.best];
  EXPECT_EQ(best.kind, hsdp::BoundKind::upper);
  bool found = false;
  for (const auto& r : report.analyses) {
    if (r.name != "last-iterate-heuristic") continue;
    found = true;
    ASSERT_TRUE(r.applicable) << r.reason;
    EXPECT_EQ(r.kind, hsdp::BoundKind::heuristic);
    EXPECT_EQ(hsdp::to_string(r.kind), "heuristic");
    EXPECT_LT(*r.epsilon, *best.epsilon);  // smaller than every guarantee, still not best
    const double e = hsdp::div::heuristic_epsilon(10000, 0.01, 1.0, 1e-5);
    EXPECT_GE(*r.epsilon, e);  // rounded up
    EXPECT_LE(*r.epsilon, e * (1 + 3e-9));
  }
  EXPECT_TRUE(found);
}

// Beyond kHeuristicTerms counts the sum takes every h-th count (weight h): on a binomial spread
// of ~900 counts (T = 10^6, q = 0.5, ~20000 counts within e^-60 of the mode) the sampled sums
// agree with every count summed (max_terms large) to ~1e-9, at every eps and both directions.
TEST(LastIterateHeuristic, SampledCountsAgreeWithEveryCount) {
  for (const double sigma : {0.05, 1.0, 20.0})
    for (const double eps : {0.0, 1.0, 4.0}) {
      const double every = hsdp::div::heuristic_log_delta(1000000, 0.5, sigma, eps, std::int64_t{1} << 20);
      const double sampled = hsdp::div::heuristic_log_delta(1000000, 0.5, sigma, eps);
      EXPECT_NEAR(sampled, every, 1e-9 * std::max(1.0, std::abs(every))) << sigma << " " << eps;
    }
  // Beyond T = 2^20 the weights are Loader's saddle-point form instead of lgamma differences:
  // one more step changes delta by about 1/T, not by a jump between the two forms.
  const double a = hsdp::div::heuristic_log_delta(1048576, 0.001, 1.0, 1.0);
  const double b = hsdp::div::heuristic_log_delta(1048577, 0.001, 1.0, 1.0);
  EXPECT_NEAR(a, b, 1e-5 * std::abs(a));
}

// The cost of one evaluation does not grow with T: T = 2^40 Poisson steps (a spread of ~10^5
// counts) is evaluated like T = 10^4, and the answer is the one of the Gaussian limit: K is
// then about N(Tq, Tq(1-q)), so P ~ N(Tq, T (q(1-q) + sigma^2)) against Q = N(0, T sigma^2).
TEST(LastIterateHeuristic, HugeStepCountsAreBoundedWork) {
  const std::int64_t T = std::int64_t{1} << 40;
  const double q = 1e-6, sigma = 10.0;  // mean shift sqrt(T) q / sigma ~ 0.1 std
  const double e = hsdp::div::heuristic_epsilon(T, q, sigma, 1e-5);
  EXPECT_TRUE(std::isfinite(e));
  EXPECT_GT(e, 0.0);
  EXPECT_LE(hsdp::div::heuristic_log_delta(T, q, sigma, e), std::log(1e-5) + 1e-9);
  // Far apart: no finite epsilon up to 1e4, found just as fast.
  EXPECT_TRUE(std::isinf(hsdp::div::heuristic_epsilon(T, 0.01, 1.5, 1e-5)));
}

}  // namespace
