// Membership-inference audit (include/hsdp/audit/mia.hpp): Clopper–Pearson bounds against
// an independent computation, the empirical bound on score samples of known privacy, and
// the audit against the real trainer: empirical eps <= certified eps, > 0 with tiny noise.
#include "hsdp/audit/mia.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "fixtures.hpp"
#include "hsdp/errors.hpp"

namespace {

using namespace hsdp;
using namespace hsdp::audit;
using hsdp::testing::tiny_dataset;

// P(Bin(n, p) <= k), summed in long double in the log domain (lgammal), independent of
// Boost's incomplete beta.
double binomial_cdf(std::int64_t k, std::int64_t n, double p) {
  if (p <= 0) return 1.0;
  if (p >= 1) return k >= n ? 1.0 : 0.0;
  const long double N = static_cast<long double>(n), P = p;
  long double s = 0;
  for (std::int64_t i = 0; i <= k; ++i) {
    const long double I = static_cast<long double>(i);
    s += std::exp(std::lgamma(N + 1) - std::lgamma(I + 1) - std::lgamma(N - I + 1) + I * std::log(P) +
                  (N - I) * std::log1p(-P));
  }
  return static_cast<double>(s);
}

// Bisection for the p in (0, 1) where the decreasing function f(p) crosses alpha.
template <typename F>
double bisect_decreasing(F f, double alpha) {
  double lo = 0, hi = 1;
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (lo + hi);
    (f(mid) > alpha ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

TEST(ClopperPearson, KnownValues) {
  // k = 0: upper = 1 - alpha^(1/n); k = n: lower = alpha^(1/n).
  EXPECT_NEAR(clopper_pearson_upper(0, 10, 0.05), 0.2588655508, 1e-9);
  EXPECT_NEAR(clopper_pearson_upper(0, 10, 0.05), 1 - std::pow(0.05, 0.1), 1e-11);
  EXPECT_NEAR(clopper_pearson_lower(10, 10, 0.05), std::pow(0.05, 0.1), 1e-11);
  EXPECT_EQ(clopper_pearson_upper(10, 10, 0.05), 1.0);
  EXPECT_EQ(clopper_pearson_lower(0, 10, 0.05), 0.0);
  // The textbook two-sided 95% interval for 5 of 10 is [0.187086, 0.812914].
  EXPECT_NEAR(clopper_pearson_lower(5, 10, 0.025), 0.1870860284, 1e-9);
  EXPECT_NEAR(clopper_pearson_upper(5, 10, 0.025), 0.8129139716, 1e-9);
}

TEST(ClopperPearson, MatchesBisectionOnTheBinomialCdf) {
  for (std::int64_t n : {1, 7, 50, 400})
    for (std::int64_t k : {std::int64_t{0}, std::int64_t{1}, n / 3, n / 2, n - 1, n})
      for (double alpha : {0.05, 0.025, 1e-4}) {
        if (k < 0 || k > n) continue;
        const double up = clopper_pearson_upper(k, n, alpha);
        const double lo = clopper_pearson_lower(k, n, alpha);
        if (k < n) {
          const double ref = bisect_decreasing([&](double p) { return binomial_cdf(k, n, p); }, alpha);
          EXPECT_NEAR(up, ref, 1e-9 * std::max(1.0, ref)) << k << "/" << n << " alpha " << alpha;
          EXPECT_GE(up, ref - 1e-15);  // never optimistic
        }
        if (k > 0) {
          // P(Bin >= k) = 1 - P(Bin <= k - 1), increasing in p.
          const double ref = bisect_decreasing([&](double p) { return binomial_cdf(k - 1, n, p); }, 1 - alpha);
          EXPECT_NEAR(lo, ref, 1e-9 * std::max(1.0, ref)) << k << "/" << n << " alpha " << alpha;
          EXPECT_LE(lo, ref + 1e-15);
        }
        EXPECT_LE(lo, up);
      }
}

TEST(ClopperPearson, RejectsBadInput) {
  EXPECT_THROW(clopper_pearson_upper(11, 10, 0.05), InvalidArgument);
  EXPECT_THROW(clopper_pearson_upper(-1, 10, 0.05), InvalidArgument);
  EXPECT_THROW(clopper_pearson_lower(1, 0, 0.05), InvalidArgument);
  try {
    clopper_pearson_lower(1, 10, 1.0);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("alpha"), std::string::npos);
  }
}

TEST(EmpiricalEpsilon, SeparatedSamplesGiveTheClosedForm) {
  // 100 trials a side, completely separated: the test chosen on trials 1..50 sees 50/50 vs
  // 0/50 on the other 50; each bound at alpha = 0.025: p_lo = 0.025^(1/50), q_hi = 1 - p_lo.
  std::vector<double> without(100), with(100);
  for (int i = 0; i < 100; ++i) {
    without[i] = -1.0 - 0.01 * i;
    with[i] = 1.0 + 0.01 * i;
  }
  const double delta = 1e-5;
  const EmpiricalEpsilon e = empirical_epsilon(without, with, delta);
  const double p_lo = std::pow(0.025, 1.0 / 50);
  EXPECT_EQ(e.selection_trials, 50);
  EXPECT_EQ(e.evaluation_trials, 50);
  EXPECT_EQ(e.evaluated.k_p, 50);
  EXPECT_EQ(e.evaluated.k_q, 0);
  EXPECT_NEAR(e.epsilon_lower, std::log((p_lo - delta) / (1 - p_lo)), 1e-9);
  EXPECT_GT(e.epsilon_lower, 2.5);
  // Swapping the samples finds the mirror test with the same bound.
  const EmpiricalEpsilon m = empirical_epsilon(with, without, delta);
  EXPECT_NEAR(m.epsilon_lower, e.epsilon_lower, 1e-12);
}

TEST(EmpiricalEpsilon, IdenticalSamplesGiveZero) {
  std::vector<double> s(60);
  for (int i = 0; i < 60; ++i) s[i] = std::sin(i);
  EXPECT_EQ(empirical_epsilon(s, s, 1e-5).epsilon_lower, 0.0);
}

TEST(EmpiricalEpsilon, RejectsBadInput) {
  const std::vector<double> a(10, 0.0), b(9, 0.0);
  EXPECT_THROW(empirical_epsilon(a, b, 1e-5), InvalidArgument);
  EXPECT_THROW(empirical_epsilon(a, a, 0.0), InvalidArgument);
  EXPECT_THROW(empirical_epsilon(a, a, 1e-5, 1.0), InvalidArgument);
  std::vector<double> c = a;
  c[3] = std::nan("");
  EXPECT_THROW(empirical_epsilon(c, a, 1e-5), InvalidArgument);
}

// The Gaussian shift N(0,1) vs N(mu,1) has the exact curve (Balle & Wang 2018)
//   delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu).
double gaussian_epsilon(double mu, double delta) {
  auto phi = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  auto d = [&](double e) { return phi(mu / 2 - e / mu) - std::exp(e) * phi(-mu / 2 - e / mu); };
  double lo = 0, hi = 50;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (d(mid) > delta ? lo : hi) = mid;
  }
  return hi;
}

TEST(EmpiricalEpsilon, BelowTheTrueEpsilonOfAGaussianShift) {
  // 40 repetitions of 500 samples a side: the 95% lower bound may exceed the truth in at most
  // a few of them (here: none), and it must find a clearly positive value.
  const double mu = 2.0, delta = 1e-5;
  const double truth = gaussian_epsilon(mu, delta);
  std::mt19937_64 rng(12345);
  std::normal_distribution<double> z;
  int above = 0;
  double largest = 0;
  for (int rep = 0; rep < 40; ++rep) {
    std::vector<double> a(500), b(500);
    for (auto& v : a) v = z(rng);
    for (auto& v : b) v = mu + z(rng);
    const double e = empirical_epsilon(a, b, delta).epsilon_lower;
    above += e > truth ? 1 : 0;
    largest = std::max(largest, e);
  }
  EXPECT_EQ(above, 0) << "truth " << truth;
  EXPECT_GT(largest, 1.0);
  EXPECT_LT(largest, truth);
}

train::TrainConfig tiny_config() {
  train::TrainConfig c;
  c.algorithm = train::Algorithm::noisy_gd;
  c.loss.kind = train::LossKind::logistic;
  c.steps = 5;
  c.constraint.radius = 2;
  return c;
}

TEST(Canary, LeastUsedAxisMinorityLabelNormR) {
  const data::Dataset d = tiny_dataset();
  train::TrainConfig c = tiny_config();
  c.record_norm = 0.8;
  const Canary k = make_canary(d, c);
  EXPECT_EQ(k.axis, 2u);
  EXPECT_DOUBLE_EQ(k.x[2], 0.8);
  EXPECT_EQ(k.x[0], 0.0);
  EXPECT_EQ(k.y, -1.0);  // 10 of 24 are -1
  EXPECT_EQ(k.position, 24);
  c.release = Release::random_stop;
  EXPECT_EQ(make_canary(d, c).position, 1);
  EXPECT_EQ(make_canary(d, c, 5).position, 5);
  const data::Dataset w = with_canary(d, make_canary(d, c, 5));
  EXPECT_EQ(w.row(4)[2], 0.8);
  EXPECT_EQ(w.y[4], -1.0);
  EXPECT_EQ(w.row(3)[2], 0.0);
  try {
    make_canary(d, c, 25);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("canary_index"), std::string::npos);
  }
}

TEST(Mia, EmpiricalBelowCertifiedOnASmallInstance) {
  const data::Dataset d = tiny_dataset();
  train::TrainConfig c = tiny_config();
  c.sigma = 0.05;  // chourasia convention: noise std sqrt(2 eta) sigma
  MiaOptions o;
  o.trials = 400;
  o.seed = 2024;
  const MiaResult r = mia(d, c, o);
  ASSERT_TRUE(r.certified_name.has_value());
  EXPECT_TRUE(std::isfinite(r.certified_epsilon));
  EXPECT_GT(r.empirical.epsilon_lower, 0.0);  // the canary is detected ...
  EXPECT_LE(r.empirical.epsilon_lower, r.certified_epsilon);  // ... and never beyond the bound
  EXPECT_EQ(r.empirical.delta, 1e-5);
  EXPECT_EQ(r.scores_with.size(), 400u);
  std::printf("small instance: empirical %.4f certified %.4f (%s), %.2f s\n", r.empirical.epsilon_lower,
              r.certified_epsilon, r.certified_name->c_str(), r.seconds);
}

TEST(Mia, PositiveWithTinyNoise) {
  const data::Dataset d = tiny_dataset();
  train::TrainConfig c = tiny_config();
  c.noise_std = 1e-4;
  MiaOptions o;
  o.trials = 40;
  o.seed = 5;
  const MiaResult r = mia(d, c, o);
  // Completely separated: 20/20 vs 0/20 on the evaluation half.
  const double p_lo = std::pow(0.025, 1.0 / 20);
  EXPECT_NEAR(r.empirical.epsilon_lower, std::log((p_lo - 1e-5) / (1 - p_lo)), 1e-9);
  EXPECT_GT(r.empirical.epsilon_lower, 1.5);
  EXPECT_LE(r.empirical.epsilon_lower, r.certified_epsilon);
}

TEST(Mia, SeedsAreRecordedAndReproduceTheScores) {
  const data::Dataset d = tiny_dataset();
  train::TrainConfig c = tiny_config();
  c.sigma = 0.1;
  MiaOptions o;
  o.trials = 8;
  o.seed = 99;
  o.threads = 2;
  std::int64_t calls = 0, last = 0;
  o.progress = [&](std::int64_t done, std::int64_t total) {
    ++calls;
    last = done;
    EXPECT_EQ(total, 16);
  };
  const MiaResult a = mia(d, c, o);
  EXPECT_EQ(calls, 16);
  EXPECT_EQ(last, 16);
  EXPECT_TRUE(a.seeded);
  EXPECT_EQ(a.master_seed, 99u);
  for (std::size_t k = 0; k < 8; ++k) {
    EXPECT_EQ(a.seeds_without[k], derive_seed(99, 2 * k));
    EXPECT_EQ(a.seeds_with[k], derive_seed(99, 2 * k + 1));
  }
  // One thread, same master: the same scores; a trial retrained alone: the same score.
  o.threads = 1;
  o.progress = nullptr;
  const MiaResult b = mia(d, c, o);
  EXPECT_EQ(a.scores_without, b.scores_without);
  EXPECT_EQ(a.scores_with, b.scores_with);
  train::TrainConfig one = c;
  one.seed = a.seeds_with[5];
  const train::TrainResult t = train::train(with_canary(d, a.canary), one);
  EXPECT_EQ(canary_score(t.model, a.canary), a.scores_with[5]);
  // Without a seed the master comes from the OS and is recorded.
  o.seed.reset();
  const MiaResult e = mia(d, c, o);
  EXPECT_FALSE(e.seeded);
  EXPECT_EQ(e.seeds_without[0], derive_seed(e.master_seed, 0));
  const nlohmann::json j = to_json(a);
  EXPECT_EQ(j["seeds"]["master"].get<std::uint64_t>(), 99u);
  EXPECT_EQ(j["seeds"]["with"].size(), 8u);
  EXPECT_EQ(j["empirical"]["trials"].get<int>(), 8);
  EXPECT_EQ(j["empirical"]["confidence"].get<double>(), 0.95);
  EXPECT_EQ(j["certified"]["name"].get<std::string>(), *a.certified_name);
}

TEST(Mia, RejectsBadInput) {
  const data::Dataset d = tiny_dataset();
  train::TrainConfig c = tiny_config();
  c.sigma = 0.1;
  auto names = [&](MiaOptions o, train::TrainConfig cfg, const std::string& parameter) {
    try {
      mia(d, cfg, o);
      ADD_FAILURE() << "no error for " << parameter;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(parameter), std::string::npos) << e.what();
    }
  };
  MiaOptions o;
  o.trials = 3;
  names(o, c, "trials = ");
  o = {};
  o.delta = 1.5;
  names(o, c, "delta = ");
  o = {};
  o.confidence = 0;
  names(o, c, "confidence = ");
  o = {};
  train::TrainConfig quiet = c;
  quiet.sigma.reset();
  quiet.no_noise = true;
  names(o, quiet, "no_noise = ");
}

}  // namespace
