// The contraction analyses (src/analysis/contraction.cpp):
//   contraction-per-index    journal Thm 4 eq. (16) / isit Thm 4
//   contraction-laplace      isit Thm 3
//   contraction-random-stop  journal Thm 5 eq. (17) (max over i, ERRATA 1), (18)-(20), isit Thm 5
// Values are checked against the papers' formulas evaluated here with div::theta in plain
// doubles (brute-force products and sums), against numerical integration for the Laplace
// E_gamma, and against each other (closed forms >= exact sums, O(1) path == O(T) path).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "analysis/common.hpp"
#include "hsdp/analysis/analysis.hpp"
#include "hsdp/divergence/hockey_stick.hpp"
#include "hsdp/numerics/quadrature.hpp"
#include "hsdp/run.hpp"

namespace {

using RunT = hsdp::Run;
using hsdp::Schedule;
constexpr double kInf = std::numeric_limits<double>::infinity();

const hsdp::AnalysisPtr& per_index() {
  static const auto a = hsdp::find_analysis("contraction-per-index");
  return a;
}
const hsdp::AnalysisPtr& laplace() {
  static const auto a = hsdp::find_analysis("contraction-laplace");
  return a;
}
const hsdp::AnalysisPtr& random_stop() {
  static const auto a = hsdp::find_analysis("contraction-random-stop");
  return a;
}

/// One pass of PNSGD with batch 1: n = steps records, cyclic order, Lipschitz-only loss.
RunT pnsgd(std::int64_t n, double eta, double noise_std, double L = 1.0, double D = 1.0) {
  RunT run;
  run.n = n;
  run.steps = n;
  run.batch_size = 1;
  run.sampling = hsdp::Sampling::cyclic;
  run.eta = Schedule(eta);
  run.noise_std = Schedule(noise_std);
  run.loss.lipschitz = L;
  run.diameter = D;
  run.release = hsdp::Release::last;
  return run;
}

std::optional<double> detail(const hsdp::AnalysisResult& r, const std::string& name) {
  for (const auto& d : r.details)
    if (d.name == name) return d.value;
  return std::nullopt;
}

// ---- Independent evaluations of the papers' formulas (plain doubles, div::theta).

/// dia(Psi_t(W)) for a Lipschitz-only loss: D + 2 eta_t L (journal (38)).
double lipschitz_dia(const RunT& run, std::int64_t t) {
  return run.diameter + 2.0 * run.eta.at(t) * *run.loss.lipschitz;
}

/// journal (16): theta(psi_t/s_t) prod_{j>t} theta(D_j/s_j), psi_t = 2 eta_t L / b.
double brute_per_index(const RunT& run, double eps, std::int64_t t) {
  const double L = *run.loss.lipschitz;
  const double b = static_cast<double>(run.batch_size);
  double delta = hsdp::div::theta(eps, 2.0 * run.eta.at(t) * L / b / run.noise_std.at(t));
  for (std::int64_t j = t + 1; j <= run.steps; ++j)
    delta *= hsdp::div::theta(eps, lipschitz_dia(run, j) / run.noise_std.at(j));
  return delta;
}

/// journal (17) at one position: (1/T) sum_{tau=t}^{T} theta(psi_t/s_t) prod_{j=t+1}^{tau} theta(D_j/s_j).
double brute_random_stop(const RunT& run, double eps, std::int64_t t) {
  const double L = *run.loss.lipschitz;
  const double b = static_cast<double>(run.batch_size);
  const double first = hsdp::div::theta(eps, 2.0 * run.eta.at(t) * L / b / run.noise_std.at(t));
  double sum = 0.0, product = 1.0;
  for (std::int64_t tau = t; tau <= run.steps; ++tau) {
    if (tau > t) product *= hsdp::div::theta(eps, lipschitz_dia(run, tau) / run.noise_std.at(tau));
    sum += first * product;
  }
  return sum / static_cast<double>(run.steps);
}

/// 1 - theta_{e^eps}(r) = Q(-u) + e^eps Q(v) with u = eps/r - r/2, v = eps/r + r/2
/// (journal Thm 1): a sum of positive terms, accurate where 1 - theta(r) underflows.
double one_minus_theta(double eps, double r) {
  auto Q = [](double x) { return 0.5 * std::erfc(x / std::sqrt(2.0)); };
  const double u = eps / r - r / 2, v = eps / r + r / 2;
  return Q(-u) + std::exp(eps) * Q(v);
}

void expect_rel(double actual, double expected, double tol, const std::string& what) {
  if (expected == 0.0) {
    EXPECT_EQ(actual, 0.0) << what;
    return;
  }
  EXPECT_NEAR(actual / expected, 1.0, tol) << what << ": actual " << actual << " expected " << expected;
}

Schedule inv_sqrt(double base, std::int64_t steps) {
  return hsdp::make_schedule(hsdp::ScheduleShape::inv_sqrt, base, steps);
}

// ---------------------------------------------------------------------------------------
// contraction-per-index

TEST(ContractionPerIndex, EveryIndexMatchesBruteForceProductConstant) {
  RunT run = pnsgd(40, 0.5, 1.0);
  for (double eps : {0.0, 0.3, 1.0, 3.0}) {
    for (std::int64_t i = 1; i <= 40; ++i) {
      const double expected = brute_per_index(run, eps, i);
      expect_rel(std::exp(hsdp::detail::log_per_index_delta(run, eps, i)), expected, 1e-12,
                 "eps " + std::to_string(eps) + " i " + std::to_string(i));
      run.index = i;
      expect_rel(std::exp(per_index()->log_delta(run, eps)), expected, 1e-12, "analysis at index");
      run.index.reset();
    }
  }
}

TEST(ContractionPerIndex, EveryIndexMatchesBruteForceSchedule) {
  // eta_t = 0.5/sqrt(t) exercises the O(T) path, with the noise either constant in
  // parameter space (psi_t/s_t varies with t) or eta_t * sigma (journal convention).
  for (bool journal : {false, true}) {
    RunT run = pnsgd(40, 0.5, 1.0);
    run.eta = inv_sqrt(0.5, 40);
    if (journal) {
      std::vector<double> s;
      for (double e : run.eta.values()) s.push_back(e * 2.0);
      run.noise_std = Schedule(s);
    }
    for (double eps : {0.0, 0.5, 2.0}) {
      double worst = 0.0;
      for (std::int64_t i = 1; i <= 40; ++i) {
        const double expected = brute_per_index(run, eps, i);
        worst = std::max(worst, expected);
        expect_rel(std::exp(hsdp::detail::log_per_index_delta(run, eps, i)), expected, 1e-12,
                   "schedule i " + std::to_string(i));
      }
      // No index: the maximum over positions.
      expect_rel(std::exp(per_index()->log_delta(run, eps)), worst, 1e-12, "worst");
    }
  }
}

TEST(ContractionPerIndex, WorstIndexIsTheLastProcessedWithConstantParameters) {
  // Every contraction factor is <= 1: the record processed last is amplified by nothing, so
  // the worst index is n and delta there is one Gaussian step theta(2L/sigma).
  RunT run = pnsgd(100, 0.05, 0.15);
  const auto r = per_index()->evaluate(run, hsdp::Query::at_epsilon(1.0));
  ASSERT_TRUE(r.applicable) << r.reason;
  EXPECT_EQ(r.index, 100);
  EXPECT_EQ(detail(r, "worst_index"), 100.0);
  const double one_step = hsdp::div::theta(1.0, 2.0 * 0.05 / 0.15);
  EXPECT_GE(*r.delta, one_step);
  EXPECT_NEAR(*r.delta / one_step, 1.0, 3e-9);
  for (std::int64_t i = 1; i <= 100; ++i) EXPECT_LE(brute_per_index(run, 1.0, i), one_step * (1 + 1e-12));
}

TEST(ContractionPerIndex, ConstantPathEqualsSchedulePathForConstantValues) {
  // The same run written with one value (O(1) closed forms) and with T equal values (O(T)
  // recursions) must give the same numbers, position by position and at the worst.
  for (std::int64_t n : {1, 2, 40, 1000}) {
    RunT c = pnsgd(n, 0.3, 0.8);
    RunT s = c;
    s.eta = Schedule(std::vector<double>(static_cast<std::size_t>(n), 0.3));
    s.noise_std = Schedule(std::vector<double>(static_cast<std::size_t>(n), 0.8));
    for (double eps : {0.0, 0.7, 2.5}) {
      for (std::int64_t t : {std::int64_t{1}, n / 2 + 1, n}) {
        expect_rel(std::exp(hsdp::detail::log_per_index_delta(s, eps, t)),
                   std::exp(hsdp::detail::log_per_index_delta(c, eps, t)), 1e-11, "per-index");
        expect_rel(std::exp(hsdp::detail::log_random_stop_delta(s, eps, t)),
                   std::exp(hsdp::detail::log_random_stop_delta(c, eps, t)), 1e-11, "random-stop");
      }
      std::int64_t ws = 0, wc = 0;
      expect_rel(std::exp(hsdp::detail::log_random_stop_delta_worst(s, eps, &ws)),
                 std::exp(hsdp::detail::log_random_stop_delta_worst(c, eps, &wc)), 1e-11, "worst");
      EXPECT_EQ(ws, wc);
      expect_rel(std::exp(per_index()->log_delta(s, eps)), std::exp(per_index()->log_delta(c, eps)),
                 1e-11, "per-index worst");
    }
  }
}

TEST(ContractionPerIndex, LongRunsKeepTheDigitsOfOneMinusTheta) {
  // D/s = 10: 1 - theta ~ 7e-7, so 10^6 contraction steps multiply to ~e^{-0.7}. The
  // product needs log c to relative accuracy in 1 - theta, not just absolute accuracy.
  RunT run = pnsgd(1000000, 0.1, 0.12, 1.0, 1.0);
  run.loss.smoothness = 1.0;  // D_t = 1: D/s = 8.33
  for (double eps : {0.0, 0.5, 2.0}) {
    const double c1m = one_minus_theta(eps, 1.0 / 0.12);
    for (std::int64_t i : {1, 500000, 999999}) {
      run.index = i;
      const double expected = hsdp::div::theta(eps, 0.2 / 0.12) *
                              std::exp(static_cast<double>(1000000 - i) * std::log1p(-c1m));
      expect_rel(std::exp(per_index()->log_delta(run, eps)), expected, 1e-11, "long run");
    }
  }
}

TEST(ContractionPerIndex, BatchesMapIndexToStep) {
  // n = 40 records in batches of 4: 10 steps, psi = 2 eta L / 4, index 37..40 at step 10.
  RunT run = pnsgd(40, 0.5, 0.5);
  run.batch_size = 4;
  run.steps = 10;
  for (std::int64_t i : {1, 4, 5, 21, 37, 40}) {
    run.index = i;
    const std::int64_t step = (i - 1) / 4 + 1;
    expect_rel(std::exp(per_index()->log_delta(run, 0.5)), brute_per_index(run, 0.5, step), 1e-12,
               "batch index " + std::to_string(i));
    EXPECT_EQ(per_index()->index(run), i);
  }
  // A record never processed (one pass that stops early) has delta = 0 and eps = 0.
  run.steps = 8;
  run.index = 33;
  EXPECT_EQ(per_index()->log_delta(run, 0.0), -kInf);
  const auto r = per_index()->evaluate(run, hsdp::Query::at_delta(1e-6));
  ASSERT_TRUE(r.applicable) << r.reason;
  EXPECT_EQ(*r.epsilon, 0.0);
  EXPECT_EQ(detail(r, "step"), 0.0);
}

TEST(ContractionPerIndex, IsitFig2AndFig3) {
  // isit Thm 4: delta = theta(2L/sigma) theta(M D_K/(eta sigma))^{n-i}, isit noise eta*sigma.
  struct Case {
    double sigma, L, beta, eta, rho, D;
    std::vector<std::int64_t> indices;
  };
  // Fig. 2: sigma = 2, L = 1, beta = 0.5, eta = 0.5, rho = 0, D_K = 1, n = 40.
  // Fig. 3: sigma = 1, rho = 0.4, eta = 0.7, L = 1, beta = 0.3, D_K = 1, n = 40. Note that
  // rho = 0.4 > beta = 0.3 is impossible for a real loss (RunT::validate rejects it); the
  // formula is still evaluated here, without validate(), to reproduce the figure.
  for (const Case& c : {Case{2.0, 1.0, 0.5, 0.5, 0.0, 1.0, {1, 20, 39}},
                        Case{1.0, 1.0, 0.3, 0.7, 0.4, 1.0, {20, 30, 39}}}) {
    RunT run = pnsgd(40, c.eta, hsdp::noise_std_from_sigma(hsdp::Convention::isit, c.sigma, c.eta, 1));
    run.loss.smoothness = c.beta;
    run.loss.strong_convexity = c.rho;
    run.diameter = c.D;
    const double M = std::sqrt(1.0 - 2.0 * c.eta * c.beta * c.rho / (c.beta + c.rho));  // (14)
    for (double eps : {0.1, 0.5, 1.0, 2.0, 4.0}) {
      double previous = -1.0;
      for (std::int64_t i : c.indices) {
        const double expected = hsdp::div::theta(eps, 2.0 * c.L / c.sigma) *
                                std::pow(hsdp::div::theta(eps, M * c.D / (c.eta * c.sigma)), 40 - i);
        run.index = i;
        const double got = std::exp(per_index()->log_delta(run, eps));
        expect_rel(got, expected, 1e-12, "isit fig, i = " + std::to_string(i));
        // Earlier records get more privacy: delta increases with i.
        EXPECT_GT(got, previous);
        previous = got;
      }
    }
  }
}

TEST(ContractionPerIndex, UnboundedDomainIsOneGaussianStep) {
  // theta(inf) = 1: no contraction, every index gets the one-step delta theta(psi/s).
  RunT run = pnsgd(50, 0.2, 0.5, 1.0, kInf);
  for (std::int64_t i : {1, 25, 50}) {
    run.index = i;
    expect_rel(std::exp(per_index()->log_delta(run, 1.0)), hsdp::div::theta(1.0, 0.4 / 0.5), 1e-14, "inf D");
  }
}

// ---------------------------------------------------------------------------------------
// contraction-random-stop

TEST(ContractionRandomStop, ExactSumMatchesBruteForceAndTakesTheMaximum) {
  for (bool schedule : {false, true}) {
    RunT run = pnsgd(60, 0.1, 0.2);
    run.release = hsdp::Release::random_stop;
    if (schedule) run.eta = inv_sqrt(0.4, 60);
    for (double eps : {0.0, 0.5, 1.5, 3.0}) {
      double worst = 0.0, least = kInf;
      std::int64_t worst_t = 0;
      for (std::int64_t t = 1; t <= 60; ++t) {
        const double b = brute_random_stop(run, eps, t);
        if (b > worst) worst = b, worst_t = t;
        least = std::min(least, b);
        expect_rel(std::exp(hsdp::detail::log_random_stop_delta(run, eps, t)), b, 1e-12, "position");
      }
      std::int64_t got_t = 0;
      expect_rel(std::exp(hsdp::detail::log_random_stop_delta_worst(run, eps, &got_t)), worst, 1e-12,
                 "worst");
      EXPECT_EQ(got_t, worst_t);
      expect_rel(std::exp(random_stop()->log_delta(run, eps)), worst, 1e-12, "analysis");
      // ERRATA 1: the printed "min over i" is strictly smaller; hsdp reports the maximum.
      EXPECT_GT(worst, least * 1.01);
      if (!schedule) EXPECT_EQ(worst_t, 1);
    }
  }
}

TEST(ContractionRandomStop, ClosedFormsBoundTheExactSum) {
  // (18) >= (17) at the worst index; with these parameters (18) is (19) (Lipschitz rule)
  // or (20) (convex, beta-smooth, eta <= 2/beta).
  int checked = 0;
  for (bool smooth : {false, true})
    for (std::int64_t n : {10, 100, 1000})
      for (double eta : {0.05, 0.1, 0.5})
        for (double sigma : {0.5, 1.0, 3.0, 10.0})
          for (double eps : {0.0, 0.1, 0.5, 1.0, 2.0, 5.0}) {
            RunT run = pnsgd(n, eta, eta * sigma);
            run.release = hsdp::Release::random_stop;
            if (smooth) run.loss.smoothness = 1.0;
            const double D = smooth ? 1.0 : 1.0 + 2.0 * eta;
            const double closed = hsdp::div::theta(eps, 2.0 / sigma) /
                                  one_minus_theta(eps, D / (eta * sigma)) / static_cast<double>(n);
            const double exact = std::exp(random_stop()->log_delta(run, eps));
            EXPECT_GE(closed, exact * (1 - 1e-13)) << n << " " << eta << " " << sigma << " " << eps;
            const auto r = random_stop()->evaluate(run, hsdp::Query::at_epsilon(eps));
            ASSERT_TRUE(r.applicable) << r.reason;
            const auto c18 = detail(r, "closed_form_18");
            ASSERT_TRUE(c18);
            EXPECT_GE(*c18, closed * (1 - 1e-12));
            EXPECT_NEAR(*c18 / closed, 1.0, 3e-9);
            EXPECT_GE(*c18, *r.delta * (1 - 1e-9));
            ++checked;
          }
  EXPECT_EQ(checked, 432);
}

TEST(ContractionRandomStop, JournalCorollary1AtFig2Parameters) {
  // journal Fig. 2: L = 1, beta = 1, n = 100, diameter 1, eta in {0.05, 0.1}, sigma = 1..6.
  // Without smoothness the closed form is (19); with beta = 1 (eta <= 2/beta) it is (20).
  for (double eta : {0.05, 0.1})
    for (double sigma : {1.0, 2.0, 3.0, 4.0, 5.0, 6.0})
      for (double eps : {0.5, 1.0, 2.0, 4.0, 8.0})
        for (bool smooth : {false, true}) {
          RunT run = pnsgd(100, eta, hsdp::noise_std_from_sigma(hsdp::Convention::journal, sigma, eta, 1));
          run.release = hsdp::Release::random_stop;
          if (smooth) run.loss.smoothness = 1.0;
          const double inner = smooth ? 1.0 / (eta * sigma) : (1.0 + 2.0 * eta) / (eta * sigma);
          const double paper = hsdp::div::theta(eps, 2.0 / sigma) / 100.0 /
                               one_minus_theta(eps, inner);  // (19) / (20)
          const auto r = random_stop()->evaluate(run, hsdp::Query::at_epsilon(eps));
          ASSERT_TRUE(r.applicable) << r.reason;
          const auto named = detail(r, smooth ? "journal_eq_20" : "journal_eq_19");
          ASSERT_TRUE(named) << "missing the equation-named detail";
          EXPECT_EQ(*named, *detail(r, "closed_form_18"));
          EXPECT_GE(*named, paper * (1 - 1e-12));  // rounded up
          EXPECT_NEAR(*named / paper, 1.0, 3e-9);
          EXPECT_LE(*r.delta, *named);
        }
}

TEST(ContractionRandomStop, IsitTheorem5StronglyConvex) {
  // isit Thm 5 (16): (1/n) theta(2L/sigma) (1 - theta(M D_K/(eta sigma)))^{-1}.
  const double sigma = 1.5, eta = 0.5, beta = 1.0, rho = 0.5, D = 2.0, eps = 1.0;
  RunT run = pnsgd(200, eta, eta * sigma, 1.0, D);
  run.release = hsdp::Release::random_stop;
  run.loss.smoothness = beta;
  run.loss.strong_convexity = rho;
  const double M = std::sqrt(1.0 - 2.0 * eta * beta * rho / (beta + rho));
  const double paper = hsdp::div::theta(eps, 2.0 / sigma) / 200.0 / one_minus_theta(eps, M * D / (eta * sigma));
  const auto r = random_stop()->evaluate(run, hsdp::Query::at_epsilon(eps));
  const auto named = detail(r, "isit_thm5_eq_16");
  ASSERT_TRUE(named);
  EXPECT_NEAR(*named / paper, 1.0, 3e-9);
  // Exact (17) at the worst index = (16) * (1 - c^n) for constant parameters.
  const double c = hsdp::div::theta(eps, M * D / (eta * sigma));
  EXPECT_NEAR(*r.delta / (paper * (1.0 - std::pow(c, 200))), 1.0, 3e-9);
}

TEST(ContractionRandomStop, LargeNConstantIsClosedFormTimesOneMinusCToTheN) {
  // n = 10^6 through the O(1) path: (17) at i = 1 equals (18) (1 - c^n) exactly.
  RunT run = pnsgd(1000000, 0.05, 0.05 * 3.0);
  run.release = hsdp::Release::random_stop;
  run.loss.smoothness = 1.0;
  for (double eps : {0.01, 0.5, 2.0}) {
    const double c = hsdp::div::theta(eps, 1.0 / 0.15);
    const double c18 = hsdp::div::theta(eps, 2.0 / 3.0) / (1.0 - c) / 1e6;
    const double exact = std::exp(random_stop()->log_delta(run, eps));
    expect_rel(exact, c18 * -std::expm1(1e6 * std::log(c)), 1e-12, "n = 1e6");
  }
}

TEST(ContractionRandomStop, UnboundedDomain) {
  // theta(inf) = 1: G(1) = T, so the worst position gives exactly theta(psi/s); (18) is +inf.
  RunT run = pnsgd(30, 0.2, 0.5, 1.0, kInf);
  run.release = hsdp::Release::random_stop;
  expect_rel(std::exp(random_stop()->log_delta(run, 1.0)), hsdp::div::theta(1.0, 0.8), 1e-13, "inf D");
  const auto r = random_stop()->evaluate(run, hsdp::Query::at_epsilon(1.0));
  EXPECT_EQ(detail(r, "closed_form_18"), kInf);
}

// ---------------------------------------------------------------------------------------
// contraction-laplace

/// E_gamma(Lap(0, b) || Lap(m, b)) by numerical integration of (p - gamma q)^+.
double numeric_laplace_e_gamma(double eps, double m, double b) {
  const double gamma = std::exp(eps);
  auto f = [&](double x) {
    const double p = std::exp(-std::abs(x) / b) / (2 * b);
    const double q = std::exp(-std::abs(x - m) / b) / (2 * b);
    return std::max(0.0, p - gamma * q);
  };
  // Break points: the two kinks of the densities and the edge of the positive part.
  std::vector<double> cuts = {0.0, m};
  const double x0 = (m - eps * b) / 2;  // p = gamma q for x in (0, m)
  if (x0 > 0 && x0 < m) cuts.push_back(x0);
  std::sort(cuts.begin(), cuts.end());
  double total = hsdp::num::integrate(f, -kInf, cuts.front(), 1e-13);
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k)
    total += hsdp::num::integrate(f, cuts[k], cuts[k + 1], 1e-13);
  total += hsdp::num::integrate(f, cuts.back(), kInf, 1e-13);
  return total;
}

RunT laplace_run(std::int64_t n, double eta, double v, double L, double a, double b) {
  RunT run = pnsgd(n, eta, hsdp::noise_std_from_sigma(hsdp::Convention::isit, v, eta, 1, hsdp::NoiseKind::laplace),
                  L, b - a);
  run.noise = hsdp::NoiseKind::laplace;
  run.dimension = 1;
  return run;
}

TEST(ContractionLaplace, OneStepMatchesNumericalEGamma) {
  // One step: delta = E_gamma of two Laplace laws with scale eta v whose means differ by
  // psi = 2 eta L (isit (21)).
  for (double v : {0.5, 1.0, 3.0})
    for (double eps : {0.0, 0.2, 1.0, 2.5}) {
      RunT run = laplace_run(1, 0.5, v, 1.0, 0.0, 1.0);
      const double numeric = numeric_laplace_e_gamma(eps, 2 * 0.5 * 1.0, 0.5 * v);
      const double got = std::exp(laplace()->log_delta(run, eps));
      if (numeric < 1e-14) {
        EXPECT_EQ(got, 0.0) << v << " " << eps;
      } else {
        EXPECT_NEAR(got / numeric, 1.0, 1e-9) << v << " " << eps;
      }
      // isit Thm 3 with n = i: (1 - e^{eps/2 - L/v})_+
      EXPECT_NEAR(got, std::max(0.0, 1.0 - std::exp(eps / 2 - 1.0 / v)), 1e-15);
    }
}

TEST(ContractionLaplace, Theorem3EveryIndexAndZeroDeltaEpsilon) {
  // isit Thm 3 with K = [a, b], beta-smooth rho-strongly convex loss (Lemma 4's M).
  const double eta = 0.5, v = 1.0, L = 1.0, a = -1.0, b = 1.0, beta = 1.0, rho = 0.5;
  const std::int64_t n = 30;
  RunT run = laplace_run(n, eta, v, L, a, b);
  run.loss.smoothness = beta;
  run.loss.strong_convexity = rho;
  const double M = std::sqrt(1.0 - 2.0 * eta * beta * rho / (beta + rho));
  const double zero_inner = std::min(2 * L / v, M * (b - a) / (eta * v));  // isit "Consequently"
  for (std::int64_t i : {1, 10, 29, 30}) {
    run.index = i;
    for (double eps : {0.0, 0.3, 1.0, 1.9}) {
      const double expected = std::max(0.0, 1 - std::exp(eps / 2 - L / v)) *
                              std::pow(std::max(0.0, 1 - std::exp(eps / 2 - M * (b - a) / (2 * eta * v))),
                                       static_cast<double>(n - i));
      expect_rel(std::exp(laplace()->log_delta(run, eps)), expected, 1e-12, "isit Thm 3");
    }
    // eps at which delta becomes exactly 0: the min for i < n, 2L/v for i = n (empty product).
    const double zero = i < n ? zero_inner : 2 * L / v;
    const auto r = laplace()->evaluate(run, hsdp::Query::at_epsilon(0.5));
    ASSERT_TRUE(r.applicable) << r.reason;
    const auto z = detail(r, "eps_zero_delta");
    ASSERT_TRUE(z);
    EXPECT_GE(*z, zero);
    EXPECT_NEAR(*z, zero, 3e-9 * zero);  // rounded up
    EXPECT_EQ(laplace()->log_delta(run, zero), -kInf);
    EXPECT_GT(laplace()->log_delta(run, zero * (1 - 1e-9)), -kInf);
    // eps(delta) never exceeds the pure-DP epsilon and approaches it as delta -> 0.
    for (double d : {1e-3, 1e-12, 1e-300}) {
      const double e = laplace()->epsilon(run, d);
      EXPECT_LE(e, zero);
      EXPECT_LE(laplace()->log_delta(run, e), std::log(d));
    }
    EXPECT_NEAR(laplace()->epsilon(run, 1e-300), zero, 1e-9);
  }
  // No index: the worst position is the last one, with pure-DP epsilon 2L/v.
  run.index.reset();
  const auto r = laplace()->evaluate(run, hsdp::Query::at_delta(1e-5));
  EXPECT_EQ(r.index, n);
  EXPECT_NEAR(*detail(r, "eps_zero_delta"), 2 * L / v, 3e-9);
  EXPECT_LE(*r.epsilon, 2 * L / v * (1 + 3e-9));
}

TEST(ContractionLaplace, LastRecordIsNotPureDpAtTheMinimum) {
  // isit Thm 3 "Consequently, delta = 0 if eps >= min{2L/v, M(b-a)/(eta v)}" fails for
  // i = n, where the product is empty: with M(b-a) < 2 eta L the min is M(b-a)/(eta v) but
  // the last record still has delta = (1 - e^{eps/2 - L/v})_+ > 0 up to eps = 2L/v.
  const double eta = 1.0, v = 1.0, L = 1.0;
  const std::int64_t n = 10;
  RunT run = laplace_run(n, eta, v, L, 0.0, 1.0);
  run.loss.smoothness = 1.0;  // eta <= 2/beta: M = 1, dia(Psi(W)) = b - a = 1
  const double paper_min = std::min(2 * L / v, 1.0 * 1.0 / (eta * v));
  ASSERT_EQ(paper_min, 1.0);
  run.index = n - 1;
  EXPECT_EQ(laplace()->log_delta(run, paper_min), -kInf);  // i < n: the min is right
  run.index = n;
  const double eps = 1.5;  // between the paper's min and 2L/v
  const double expected = 1 - std::exp(eps / 2 - L / v);
  ASSERT_GT(expected, 0.1);
  expect_rel(std::exp(laplace()->log_delta(run, eps)), expected, 1e-14, "i = n");
  const auto r = laplace()->evaluate(run, hsdp::Query::at_epsilon(eps));
  EXPECT_NEAR(*detail(r, "eps_zero_delta"), 2 * L / v, 3e-9 * 2);
  EXPECT_GE(*detail(r, "eps_zero_delta"), 2 * L / v);
  // Without --index the worst position is the last record: the same 2L/v.
  run.index.reset();
  EXPECT_NEAR(laplace()->epsilon(run, 1e-300), 2 * L / v, 1e-9);
  EXPECT_GT(laplace()->epsilon(run, 1e-3), paper_min);
}

TEST(ContractionLaplace, ScheduleMatchesConstantAndWorstZeroEpsilon) {
  RunT c = laplace_run(20, 0.4, 1.5, 1.0, 0.0, 2.0);
  RunT s = c;
  s.eta = Schedule(std::vector<double>(20, 0.4));
  s.noise_std = Schedule(std::vector<double>(20, c.noise_std.at(1)));
  for (double eps : {0.0, 0.5, 1.0}) {
    expect_rel(std::exp(laplace()->log_delta(s, eps)), std::exp(laplace()->log_delta(c, eps)), 1e-12, "worst");
    for (std::int64_t i : {1, 7, 20}) {
      c.index = s.index = i;
      expect_rel(std::exp(laplace()->log_delta(s, eps)), std::exp(laplace()->log_delta(c, eps)), 1e-12, "index");
    }
    c.index.reset();
    s.index.reset();
  }
  // A step-size schedule: the worst-position pure-DP epsilon is max_t min(psi_t/b_t, min_{j>t} D_j/b_j).
  s.eta = inv_sqrt(0.4, 20);
  const auto r = laplace()->evaluate(s, hsdp::Query::at_delta(1e-8));
  ASSERT_TRUE(r.applicable) << r.reason;
  double expected = 0.0, suffix = kInf;
  for (std::int64_t t = 20; t >= 1; --t) {
    const double bt = s.laplace_scale(t);
    expected = std::max(expected, std::min(2 * s.eta.at(t) / bt, suffix));
    suffix = std::min(suffix, (2.0 + 2 * s.eta.at(t)) / bt);
  }
  EXPECT_NEAR(*detail(r, "eps_zero_delta"), expected, 3e-9 * expected);
  EXPECT_EQ(laplace()->log_delta(s, expected * (1 + 1e-12)), -kInf);
  EXPECT_LE(*r.epsilon, expected * (1 + 3e-9));
}

// ---------------------------------------------------------------------------------------
// Inversion, reasons, robustness

TEST(Contraction, EpsilonDeltaRoundTrip) {
  RunT gaussian = pnsgd(200, 0.1, 0.1 * 2.0);
  gaussian.loss.smoothness = 1.0;
  RunT stop = gaussian;
  stop.release = hsdp::Release::random_stop;
  RunT indexed = gaussian;
  indexed.index = 150;
  RunT lap = laplace_run(200, 0.5, 1.0, 1.0, 0.0, 1.0);
  RunT lap_indexed = lap;
  lap_indexed.index = 100;
  RunT sched = stop;
  sched.eta = inv_sqrt(0.2, 200);
  struct Case {
    const hsdp::AnalysisPtr& a;
    const RunT& run;
  };
  for (const Case& c : {Case{per_index(), gaussian}, Case{per_index(), indexed}, Case{random_stop(), stop},
                        Case{random_stop(), sched}, Case{laplace(), lap}, Case{laplace(), lap_indexed}}) {
    for (double d : {0.1, 1e-5, 1e-10, 1e-100}) {
      const auto r = c.a->evaluate(c.run, hsdp::Query::at_delta(d));
      ASSERT_TRUE(r.applicable) << r.reason;
      const double eps = *r.epsilon;
      ASSERT_TRUE(std::isfinite(eps)) << c.a->name() << " " << d;
      EXPECT_LE(c.a->log_delta(c.run, eps), std::log(d)) << c.a->name() << " " << d;
      if (eps > 0) EXPECT_GT(c.a->log_delta(c.run, eps * (1 - 1e-6)), std::log(d)) << c.a->name() << " " << d;
      // and delta(eps) reported at that eps is <= d (after rounding up, within 1e-9).
      const auto back = c.a->evaluate(c.run, hsdp::Query::at_epsilon(eps));
      EXPECT_LE(*back.delta, d * (1 + 3e-9)) << c.a->name();
    }
  }
}

TEST(Contraction, NotApplicableReasonsNameTheIssue) {
  auto reason = [](const hsdp::AnalysisPtr& a, const RunT& run) {
    auto why = a->check(run);
    return why ? *why : std::string("(applies)");
  };
  const RunT base = pnsgd(100, 0.1, 0.3);
  RunT lap = laplace_run(100, 0.1, 1.0, 1.0, 0.0, 1.0);
  RunT stop = base;
  stop.release = hsdp::Release::random_stop;
  EXPECT_EQ(reason(per_index(), base), "(applies)");
  EXPECT_EQ(reason(laplace(), lap), "(applies)");
  EXPECT_EQ(reason(random_stop(), stop), "(applies)");

  for (const auto* a : {&per_index(), &random_stop()}) {
    RunT r = *a == per_index() ? base : stop;
    RunT poisson = r;
    poisson.sampling = hsdp::Sampling::poisson;
    EXPECT_NE(reason(*a, poisson).find("at most once"), std::string::npos) << reason(*a, poisson);
    EXPECT_NE(reason(*a, poisson).find("poisson"), std::string::npos);
    RunT multi = r;
    multi.steps = 300;  // 3 epochs
    EXPECT_NE(reason(*a, multi).find("at most once"), std::string::npos) << reason(*a, multi);
    RunT no_l = r;
    no_l.loss.lipschitz.reset();
    EXPECT_NE(reason(*a, no_l).find("Lipschitz"), std::string::npos) << reason(*a, no_l);
    RunT remove = r;
    remove.adjacency = hsdp::Adjacency::remove;
    EXPECT_NE(reason(*a, remove).find("replace"), std::string::npos) << reason(*a, remove);
    RunT lap_noise = r;
    lap_noise.noise = hsdp::NoiseKind::laplace;
    EXPECT_NE(reason(*a, lap_noise).find("Gaussian"), std::string::npos) << reason(*a, lap_noise);
    RunT every = r;
    every.release = hsdp::Release::every;
    EXPECT_NE(reason(*a, every).find("release = every"), std::string::npos) << reason(*a, every);
  }
  // Release mismatch between the two Gaussian analyses.
  EXPECT_NE(reason(per_index(), stop).find("release = last"), std::string::npos);
  EXPECT_NE(reason(random_stop(), base).find("release = random-stop"), std::string::npos);

  RunT no_dim = lap;
  no_dim.dimension.reset();
  EXPECT_NE(reason(laplace(), no_dim).find("dimension = 1"), std::string::npos) << reason(laplace(), no_dim);
  RunT dim3 = lap;
  dim3.dimension = 3;
  EXPECT_NE(reason(laplace(), dim3).find("dimension = 3"), std::string::npos) << reason(laplace(), dim3);
  EXPECT_NE(reason(laplace(), base).find("Laplace"), std::string::npos) << reason(laplace(), base);
  RunT lap_stop = lap;
  lap_stop.release = hsdp::Release::random_stop;
  EXPECT_NE(reason(laplace(), lap_stop).find("release = last"), std::string::npos);
  RunT lap_poisson = lap;
  lap_poisson.sampling = hsdp::Sampling::poisson;
  EXPECT_NE(reason(laplace(), lap_poisson).find("at most once"), std::string::npos);

  // "Not applicable" is a result with the reason, never a number.
  const auto r = per_index()->evaluate(stop, hsdp::Query::at_epsilon(1.0));
  EXPECT_FALSE(r.applicable);
  EXPECT_FALSE(r.delta.has_value());
}

TEST(Contraction, NeverNaNAtExtremes) {
  std::vector<RunT> runs;
  for (double s : {1e-6, 0.01, 1.0, 1e4})
    for (double D : {1e-3, 1.0, 1e6, kInf})
      for (std::int64_t n : {1, 3, 1000000}) runs.push_back(pnsgd(n, 0.1, s, 1.0, D));
  // Strongly convex with M ~ 1e-8 (eta just below 2/(beta+lambda) = 1): almost no diameter.
  RunT zero_m = pnsgd(10, 0.4999999999, 0.1);
  zero_m.loss.smoothness = 1.0;
  zero_m.loss.strong_convexity = 1.0;
  runs.push_back(zero_m);
  for (const RunT& base : runs) {
    for (double eps : {0.0, 1e-12, 0.5, 50.0, 1e4, kInf}) {
      RunT stop = base;
      stop.release = hsdp::Release::random_stop;
      RunT lap = base;
      lap.noise = hsdp::NoiseKind::laplace;
      lap.dimension = 1;
      for (double ld : {per_index()->log_delta(base, eps), random_stop()->log_delta(stop, eps),
                        laplace()->log_delta(lap, eps)}) {
        EXPECT_FALSE(std::isnan(ld)) << base.summary() << " eps " << eps;
        EXPECT_LE(ld, 1e-12) << base.summary() << " eps " << eps;
      }
    }
    for (double d : {0.5, 1e-300}) {
      RunT stop = base;
      stop.release = hsdp::Release::random_stop;
      for (const auto& r : {per_index()->evaluate(base, hsdp::Query::at_delta(d)),
                            random_stop()->evaluate(stop, hsdp::Query::at_delta(d))}) {
        ASSERT_TRUE(r.applicable) << r.reason;
        EXPECT_FALSE(std::isnan(*r.epsilon));
        for (const auto& x : r.details) EXPECT_FALSE(std::isnan(x.value)) << x.name;
      }
    }
  }
}

TEST(Contraction, LogDeltaIsNonIncreasingInEpsilon) {
  RunT run = pnsgd(50, 0.3, 0.4);
  run.eta = inv_sqrt(0.3, 50);
  RunT stop = run;
  stop.release = hsdp::Release::random_stop;
  RunT lap = laplace_run(50, 0.3, 0.7, 1.0, 0.0, 1.0);
  double prev[3] = {kInf, kInf, kInf};
  for (double eps = 0.0; eps <= 8.0; eps += 0.05) {
    const double now[3] = {per_index()->log_delta(run, eps), random_stop()->log_delta(stop, eps),
                           laplace()->log_delta(lap, eps)};
    for (int k = 0; k < 3; ++k) {
      EXPECT_LE(now[k], prev[k] + 1e-13) << k << " eps " << eps;
      prev[k] = now[k];
    }
  }
}

}  // namespace
