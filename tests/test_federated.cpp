// federated and federated-random-stop (Asoodeh, Chen, Calmon, Ozgur 2021): values against
// brute-force sums written from the paper's own formulas, the paper's Fig. 2 ordering,
// closed forms (Thm 2, (11), (12)) never below the sums, and the applicability checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "hsdp/analysis/analysis.hpp"
#include "hsdp/divergence/hockey_stick.hpp"
#include "hsdp/run.hpp"

namespace {

using hsdp::AnalysisPtr;
using hsdp::Schedule;
using hsdp::div::theta;
using hsdp::testing::thm2_brute;

AnalysisPtr fed() { return hsdp::find_analysis("federated"); }
AnalysisPtr fed_rs() { return hsdp::find_analysis("federated-random-stop"); }

// Alg. 1 with the paper's parameters: m users per round, federated sigma, ball of radius
// rho (diameter 2 rho), convex L-Lipschitz beta-smooth loss.
hsdp::Run paper_run(std::int64_t n, std::int64_t m, double eta, double sigma, double L, double rho,
              double beta = 1.0) {
  hsdp::Run r;
  r.n = n;
  r.batch_size = m;
  r.steps = n / m;
  r.sampling = hsdp::Sampling::shuffle;
  r.eta = Schedule(eta);
  r.noise_std = Schedule(hsdp::noise_std_from_sigma(hsdp::Convention::federated, sigma, eta, m));
  r.loss.lipschitz = L;
  r.loss.smoothness = beta;
  r.diameter = 2.0 * rho;
  r.release = hsdp::Release::last;
  r.validate();
  return r;
}

// federated Cor. 3 as printed, with 1/T^2 replaced by (m/n)(1/T) (equal when T m = n).
double cor3_brute(double eps, std::int64_t n, std::int64_t m, const std::vector<double>& eta,
                  const std::vector<double>& sigma, double L, double rho) {
  const std::size_t T = eta.size();
  const double sm = std::sqrt(static_cast<double>(m));
  double sum = 0;
  for (std::size_t tau = 0; tau < T; ++tau)
    for (std::size_t t = 0; t <= tau; ++t) {
      double term = theta(eps, 2 * L / (sm * sigma[t]));
      for (std::size_t j = t + 1; j <= tau; ++j) term *= theta(eps, 2 * rho * sm / (eta[j] * sigma[j]));
      sum += term;
    }
  return static_cast<double>(m) / static_cast<double>(n) / static_cast<double>(T) * sum;
}

double detail(const hsdp::AnalysisResult& r, const std::string& name) {
  for (const auto& d : r.details)
    if (d.name == name) return d.value;
  ADD_FAILURE() << r.name << ": no detail " << name;
  return std::numeric_limits<double>::quiet_NaN();
}

bool has_detail(const hsdp::AnalysisResult& r, const std::string& name) {
  for (const auto& d : r.details)
    if (d.name == name) return true;
  return false;
}

// A run with an explicit (non-constant) schedule in the federated convention.
hsdp::Run schedule_run(std::int64_t n, std::int64_t m, const std::vector<double>& eta,
                 const std::vector<double>& sigma, double L, double rho,
                 std::optional<double> beta) {
  hsdp::Run r;
  r.n = n;
  r.batch_size = m;
  r.steps = static_cast<std::int64_t>(eta.size());
  r.sampling = hsdp::Sampling::shuffle;
  r.eta = Schedule(eta);
  std::vector<double> s(eta.size());
  for (std::size_t t = 0; t < eta.size(); ++t)
    s[t] = hsdp::noise_std_from_sigma(hsdp::Convention::federated, sigma[t], eta[t], m);
  r.noise_std = Schedule(s);
  r.loss.lipschitz = L;
  r.loss.smoothness = beta;
  r.diameter = 2 * rho;
  r.validate();
  return r;
}

// ---- Fig. 2 ------------------------------------------------------------------------------

// federated Fig. 2: eta = 0.5, L = 1, rho = 1, sigma = 1.5, n = 100, q = m/n in {0.1, 0.2,
// 0.3}. The exact values equal the printed Thm 2 double loop, and delta decreases as q grows.
TEST(Federated, Figure2ValuesAndOrdering) {
  const std::vector<std::int64_t> ms = {10, 20, 30};
  for (double eps : {0.0, 0.1, 0.5, 1.0, 2.0, 3.0, 5.0}) {
    std::vector<double> deltas;
    for (auto m : ms) {
      const hsdp::Run run = paper_run(100, m, 0.5, 1.5, 1.0, 1.0);
      ASSERT_FALSE(fed()->check(run)) << *fed()->check(run);
      const std::int64_t T = 100 / m;
      const double brute = thm2_brute(eps, 100, m, std::vector<double>(T, 0.5),
                                      std::vector<double>(T, 1.5), 1.0, 1.0);
      const double got = std::exp(fed()->log_delta(run, eps));
      EXPECT_NEAR(got, brute, 1e-12 * brute) << "eps=" << eps << " m=" << m;
      deltas.push_back(got);
    }
    EXPECT_GT(deltas[0], deltas[1]) << "eps=" << eps;
    EXPECT_GT(deltas[1], deltas[2]) << "eps=" << eps;
  }
}

// ---- closed forms ------------------------------------------------------------------------

// Thm 2's closed form (constant parameters) equals the sum.
TEST(Federated, Thm2ClosedFormEqualsSum) {
  for (std::int64_t m : {1, 5, 25})
    for (double sigma : {0.5, 1.5, 6.0})
      for (double eps : {0.2, 1.0, 4.0}) {
        const hsdp::Run run = paper_run(100, m, 0.5, sigma, 1.0, 1.0);
        const auto r = fed()->evaluate(run, hsdp::Query::at_epsilon(eps));
        const double exact = std::exp(fed()->log_delta(run, eps));
        const double closed = detail(r, "thm2_closed_form");
        EXPECT_GE(closed, exact);
        // A delta below the smallest normal double is reported as DBL_MIN (rounded up).
        EXPECT_LE(closed, std::max(exact, std::numeric_limits<double>::min()) * (1 + 2e-9))
            << "m=" << m << " sigma=" << sigma << " eps=" << eps;
      }
}

// Cor. 1: eta_t = 1/(lambda t), sigma_t = sigma. (11) is never below the Thm 2 sum, and
// equals the printed (11) (D = 2 rho since eta_1 = 1/lambda <= 2/beta).
TEST(Federated, Cor1BoundNeverBelowSum) {
  for (double lambda : {1.0, 2.0})
    for (std::int64_t m : {2, 10})
      for (double sigma : {0.5, 2.0, 8.0})
        for (double eps : {0.1, 1.0, 3.0}) {
          const std::int64_t n = 60;
          const std::int64_t T = n / m;
          const double rho = 0.5, L = 1.0;
          std::vector<double> eta(T), sig(T, sigma);
          for (std::int64_t t = 1; t <= T; ++t) eta[t - 1] = 1.0 / (lambda * t);
          const hsdp::Run run = schedule_run(n, m, eta, sig, L, rho, 1.0);
          const auto r = fed()->evaluate(run, hsdp::Query::at_epsilon(eps));
          const double exact = std::exp(fed()->log_delta(run, eps));
          // Far below 1e-30 the brute-force products lose digits (exp of large logs,
          // subnormals): compare logs there, relative to |log delta|.
          const double brute = thm2_brute(eps, n, m, eta, sig, L, rho);
          if (brute > 1e-30)
            EXPECT_NEAR(exact, brute, 1e-12 * exact);
          else if (brute > 1e-290)
            EXPECT_NEAR(std::log(exact), std::log(brute), 1e-12 * std::abs(std::log(brute)));
          const double b11 = detail(r, "cor1_eq_11");
          EXPECT_GE(b11, exact);
          // (11) as printed: (m/n) theta(2L/(sqrt(m) sigma)) (1 - c^{n/m}) / (1 - c),
          // c = theta(2 rho lambda n / (sqrt(m) sigma)).
          const double sm = std::sqrt(static_cast<double>(m));
          const double c = theta(eps, 2 * rho * lambda * n / (sm * sigma));
          const double printed = static_cast<double>(m) / n * theta(eps, 2 * L / (sm * sigma)) *
                                 (1 - std::pow(c, static_cast<double>(T))) / (1 - c);
          if (c < 1 - 1e-6) {  // the printed form itself cancels when c is near 1
            EXPECT_GE(b11, printed * (1 - 1e-9));
            EXPECT_LE(b11, std::max(printed, std::numeric_limits<double>::min()) * (1 + 1e-6));
          }
        }
}

// (12) is never below the Cor. 3 double sum, for non-constant eta and sigma.
TEST(FederatedRandomStop, Bound12NeverBelowSum) {
  for (double base_sigma : {0.7, 2.0, 5.0})
    for (double eps : {0.0, 0.3, 1.0, 3.0}) {
      const std::int64_t n = 40, m = 4, T = 10;
      std::vector<double> eta(T), sig(T);
      for (std::int64_t t = 1; t <= T; ++t) {
        eta[t - 1] = 0.8 / std::sqrt(static_cast<double>(t));
        sig[t - 1] = base_sigma * (1.0 + 0.1 * static_cast<double>(t % 3));
      }
      const hsdp::Run base = schedule_run(n, m, eta, sig, 1.0, 1.0, 1.0);
      hsdp::Run run = base;
      run.release = hsdp::Release::random_stop;
      ASSERT_FALSE(fed_rs()->check(run));
      const double exact = std::exp(fed_rs()->log_delta(run, eps));
      EXPECT_NEAR(exact, cor3_brute(eps, n, m, eta, sig, 1.0, 1.0), 1e-12 * exact);
      const auto r = fed_rs()->evaluate(run, hsdp::Query::at_epsilon(eps));
      const double b12 = detail(r, "cor3_eq_12");
      EXPECT_GE(b12, exact) << "sigma=" << base_sigma << " eps=" << eps;
      // (12) as printed (T m = n so 1/T^2): eta* = eta_T, sigma* = min sigma.
      const double smin = *std::min_element(sig.begin(), sig.end());
      const double sm = std::sqrt(static_cast<double>(m));
      const double c = theta(eps, 2.0 * sm / (eta[T - 1] * smin));
      double s = 0, geo = 0, ck = 1;
      for (std::int64_t tau = 1; tau <= T; ++tau) {
        geo += ck;  // sum_{k<tau} c^k = (1 - c^tau)/(1 - c)
        ck *= c;
        s += geo;
      }
      const double printed = theta(eps, 2.0 / (sm * smin)) * s / (T * T);
      EXPECT_NEAR(b12, printed, 1e-8 * printed);
    }
}

// ---- recursions against O(T^2) brute force ------------------------------------------------

// The O(T) Horner recursion equals the double loop at small T with non-constant schedules,
// for a smooth loss (D_j = 2 rho) and a merely Lipschitz one (D_j = 2 rho + 2 eta_j L).
TEST(Federated, RecursionEqualsBruteForce) {
  const std::vector<double> eta = {0.9, 0.3, 0.6, 0.25, 0.5, 0.45, 0.2};
  const std::vector<double> sig = {1.0, 2.5, 0.8, 1.7, 3.0, 1.1, 0.9};
  const std::int64_t n = 50, m = 5;  // T = 7 < n / m: some users never used
  const double L = 1.3, rho = 0.75;
  for (bool smooth : {true, false})
    for (double eps : {0.0, 0.25, 1.0, 2.5, 6.0}) {
      const hsdp::Run run = schedule_run(n, m, eta, sig, L, rho,
                                   smooth ? std::optional<double>(1.0) : std::nullopt);
      ASSERT_FALSE(fed()->check(run));
      // Brute force in hsdp terms: a_t = theta(psi_t/s_t), c_j = theta(D_j/s_j).
      const double sm = std::sqrt(static_cast<double>(m));
      std::vector<double> a(7), c(7);
      for (int t = 0; t < 7; ++t) {
        const double s = eta[t] * sig[t] / sm;
        a[t] = theta(eps, 2 * eta[t] * L / m / s);
        c[t] = theta(eps, (2 * rho + (smooth ? 0.0 : 2 * eta[t] * L)) / s);
      }
      double last = 0, rs = 0;
      for (int tau = 0; tau < 7; ++tau)
        for (int t = 0; t <= tau; ++t) {
          double term = a[t];
          for (int j = t + 1; j <= tau; ++j) term *= c[j];
          rs += term;
          if (tau == 6) last += term;
        }
      last *= static_cast<double>(m) / n;
      rs *= static_cast<double>(m) / n / 7.0;
      EXPECT_NEAR(std::exp(fed()->log_delta(run, eps)), last, 1e-12 * last)
          << "smooth=" << smooth << " eps=" << eps;
      hsdp::Run rsr = run;
      rsr.release = hsdp::Release::random_stop;
      EXPECT_NEAR(std::exp(fed_rs()->log_delta(rsr, eps)), rs, 1e-12 * rs)
          << "smooth=" << smooth << " eps=" << eps;
      if (smooth) {
        EXPECT_NEAR(last, thm2_brute(eps, n, m, eta, sig, L, rho), 1e-12 * last);
        EXPECT_NEAR(rs, cor3_brute(eps, n, m, eta, sig, L, rho), 1e-12 * rs);
      }
    }
}

// The constant-parameter fast paths (O(1) closed form, O(log T) doubling) agree with the
// general O(T) recursion, reached by perturbing one step size by 1e-15 relative; also for
// contraction factors near 1 (large D/s), where (1 - c^T)/(1 - c) cancels naively.
TEST(Federated, FastPathsEqualRecursion) {
  for (std::int64_t T : {1, 2, 3, 37, 64, 1000, 4097})
    for (double sigma : {0.3, 1.5, 40.0})
      for (double eps : {0.05, 1.0, 4.0}) {
        hsdp::Run run = paper_run(T * 3, 3, 0.5, sigma, 1.0, 1.0);
        std::vector<double> eta(T, 0.5);
        eta[0] *= 1 + 1e-15;
        if (T == 1) eta[0] = 0.5;  // a one-step schedule is constant anyway
        hsdp::Run pert = run;
        pert.eta = Schedule(eta);
        pert.noise_std = Schedule(std::vector<double>(T, run.noise_std.at(1)));
        for (auto rel : {hsdp::Release::last, hsdp::Release::random_stop}) {
          run.release = pert.release = rel;
          const auto& a = rel == hsdp::Release::last ? fed() : fed_rs();
          const double fast = a->log_delta(run, eps), slow = a->log_delta(pert, eps);
          EXPECT_NEAR(fast, slow, 1e-11 * std::max(1.0, std::abs(slow)))
              << "T=" << T << " sigma=" << sigma << " eps=" << eps;
        }
      }
}

// Random stop with constant parameters: the doubling equals the plain double loop.
TEST(FederatedRandomStop, DoublingEqualsDoubleLoop) {
  for (std::int64_t T : {1, 2, 5, 13, 100})
    for (double eps : {0.0, 0.7, 2.0}) {
      hsdp::Run run = paper_run(T * 2, 2, 0.3, 1.2, 1.0, 0.5);
      run.release = hsdp::Release::random_stop;
      const double brute = cor3_brute(eps, T * 2, 2, std::vector<double>(T, 0.3),
                                      std::vector<double>(T, 1.2), 1.0, 0.5);
      EXPECT_NEAR(std::exp(fed_rs()->log_delta(run, eps)), brute, 1e-12 * brute) << T;
    }
}

// ---- semantics ---------------------------------------------------------------------------

// T b < n: the weight of each round stays b/n (users never used contribute 0), so the
// delta is the same sum with the same b/n prefactor.
TEST(Federated, PartialPassKeepsBatchWeight) {
  hsdp::Run run = paper_run(100, 10, 0.5, 1.5, 1.0, 1.0);
  run.steps = 4;
  run.validate();
  const double got = std::exp(fed()->log_delta(run, 1.0));
  EXPECT_NEAR(got, thm2_brute(1.0, 100, 10, std::vector<double>(4, 0.5),
                              std::vector<double>(4, 1.5), 1.0, 1.0),
              1e-12 * got);
  run.release = hsdp::Release::random_stop;
  const double rs = std::exp(fed_rs()->log_delta(run, 1.0));
  EXPECT_NEAR(rs, cor3_brute(1.0, 100, 10, std::vector<double>(4, 0.5),
                             std::vector<double>(4, 1.5), 1.0, 1.0),
              1e-12 * rs);
}

// Unconstrained parameters (D = inf): no contraction, delta = (T b / n) theta_a.
TEST(Federated, UnboundedDomainHasNoContraction) {
  hsdp::Run run = paper_run(100, 10, 0.5, 1.5, 1.0, 1.0);
  run.diameter = std::numeric_limits<double>::infinity();
  run.loss.smoothness.reset();
  ASSERT_FALSE(fed()->check(run));
  const double a = theta(1.0, 2.0 / (std::sqrt(10.0) * 1.5));
  EXPECT_NEAR(std::exp(fed()->log_delta(run, 1.0)), a, 1e-12 * a);
}

// Without smoothness the diameter of Psi(ball) is 2 rho + 2 eta L (the remark after Thm 2),
// which gives a larger delta than the smooth case.
TEST(Federated, WithoutSmoothnessUsesLargerDiameter) {
  hsdp::Run smooth = paper_run(100, 10, 0.5, 1.5, 1.0, 1.0);
  hsdp::Run rough = smooth;
  rough.loss.smoothness.reset();
  const double eps = 1.0;
  const double a = theta(eps, 2.0 / (std::sqrt(10.0) * 1.5));
  const double c = theta(eps, (2.0 + 2 * 0.5) * std::sqrt(10.0) / (0.5 * 1.5));
  double expect = 0;
  for (int k = 0; k < 10; ++k) expect += a * std::pow(c, k);
  expect *= 0.1;
  EXPECT_NEAR(std::exp(fed()->log_delta(rough, eps)), expect, 1e-12 * expect);
  EXPECT_GT(fed()->log_delta(rough, eps), fed()->log_delta(smooth, eps));
}

TEST(Federated, EpsilonDeltaRoundTrip) {
  for (auto rel : {hsdp::Release::last, hsdp::Release::random_stop})
    for (double target : {1e-3, 1e-5, 1e-10}) {
      hsdp::Run run = paper_run(1000, 10, 0.5, 3.0, 1.0, 1.0);
      run.release = rel;
      const auto& a = rel == hsdp::Release::last ? fed() : fed_rs();
      const double eps = a->epsilon(run, target);
      ASSERT_TRUE(std::isfinite(eps));
      EXPECT_LE(a->log_delta(run, eps), std::log(target));
      EXPECT_GT(a->log_delta(run, eps * (1 - 1e-8)), std::log(target));
      const auto r = a->evaluate(run, hsdp::Query::at_delta(target));
      EXPECT_GE(*r.epsilon, eps);
      // The details report the closed form's epsilon for a delta query.
      EXPECT_TRUE(has_detail(r, rel == hsdp::Release::last ? "thm2_closed_form"
                                                           : "cor3_eq_12"));
    }
}

// delta far below 1e-300 stays finite in the log domain; never NaN.
TEST(Federated, TinyDeltaInLogDomain) {
  hsdp::Run run = paper_run(100, 10, 0.5, 0.2, 1.0, 1.0);
  for (double eps : {0.0, 50.0, 500.0, 5000.0}) {
    const double ld = fed()->log_delta(run, eps);
    EXPECT_FALSE(std::isnan(ld));
    if (eps >= 500) EXPECT_LT(ld, -700.0);
    run.release = hsdp::Release::random_stop;
    EXPECT_FALSE(std::isnan(fed_rs()->log_delta(run, eps)));
    run.release = hsdp::Release::last;
  }
}

// Contraction factors so close to 1 that log theta rounds to 0 or slightly above it
// (D/s around 16): the closed forms treat c as 1 (never NaN, never below the sum).
TEST(Federated, ContractionNearOneNeverNaN) {
  for (double r = 15.0; r < 18.0; r *= 1.01)
    for (double eps : {0.5, 1.0, 1.75}) {
      // D_j / s_j = 2 rho sqrt(m) / (eta sigma) = r with rho = 1, m = 4, eta = 0.5.
      hsdp::Run run = paper_run(40, 4, 0.5, 2.0 * 2.0 / (0.5 * r), 1.0, 1.0);
      for (auto rel : {hsdp::Release::last, hsdp::Release::random_stop}) {
        run.release = rel;
        const auto& a = rel == hsdp::Release::last ? fed() : fed_rs();
        const auto res = a->evaluate(run, hsdp::Query::at_epsilon(eps));
        ASSERT_TRUE(res.delta);
        EXPECT_FALSE(std::isnan(*res.delta));
        for (const auto& d : res.details) {
          EXPECT_FALSE(std::isnan(d.value)) << d.name << " r=" << r << " eps=" << eps;
          EXPECT_GE(d.value, *res.delta * (1 - 1e-9)) << d.name;
        }
      }
    }
}

// ---- applicability -----------------------------------------------------------------------

TEST(Federated, NotApplicableReasons) {
  const hsdp::Run good = paper_run(100, 10, 0.5, 1.5, 1.0, 1.0);
  ASSERT_FALSE(fed()->check(good));
  auto reason = [](const AnalysisPtr& a, const hsdp::Run& r) {
    auto why = a->check(r);
    return why ? *why : std::string("(applies)");
  };
  hsdp::Run r = good;
  r.sampling = hsdp::Sampling::cyclic;
  EXPECT_NE(reason(fed(), r).find("shuffle"), std::string::npos) << reason(fed(), r);
  r = good;
  r.sampling = hsdp::Sampling::poisson;
  EXPECT_NE(reason(fed(), r).find("shuffle"), std::string::npos);
  r = good;
  r.steps = 20;  // two passes
  EXPECT_NE(reason(fed(), r).find("at most once"), std::string::npos) << reason(fed(), r);
  r = good;
  r.loss.lipschitz.reset();
  EXPECT_NE(reason(fed(), r).find("Lipschitz"), std::string::npos) << reason(fed(), r);
  r = good;
  r.adjacency = hsdp::Adjacency::remove;
  EXPECT_NE(reason(fed(), r).find("replace"), std::string::npos) << reason(fed(), r);
  r = good;
  r.noise = hsdp::NoiseKind::laplace;
  EXPECT_NE(reason(fed(), r).find("Gaussian"), std::string::npos);
  r = good;
  r.release = hsdp::Release::random_stop;
  EXPECT_NE(reason(fed(), r).find("federated-random-stop"), std::string::npos) << reason(fed(), r);
  EXPECT_FALSE(fed_rs()->check(r));
  r.release = hsdp::Release::every;
  EXPECT_NE(reason(fed(), r).find("release = last"), std::string::npos);
  EXPECT_NE(reason(fed_rs(), r).find("release = random-stop"), std::string::npos);
  EXPECT_NE(reason(fed_rs(), good).find("federated"), std::string::npos) << reason(fed_rs(), good);
}

}  // namespace
