// Noise on a grid (docs/security.md): langevin, langevin-lower, pabi-feldman, balle-mixing,
// ye-shokri, federated and federated-random-stop on runs that carry the trainer's grid
// (Run::grid). Each value is the analysis' grid derivation: >= the continuous run's value,
// within 1% at the trainer's slack (~1e-8), larger at a large slack, closed forms where the
// derivation has one; the analyses whose derivation fails on the grid say which step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>
#include <string>

#include "hsdp/analysis/analysis.hpp"
#include "hsdp/analysis/rdp_analysis.hpp"
#include "hsdp/run.hpp"
#include "fixtures.hpp"

namespace {

using hsdp::Query;
using RunT = hsdp::Run;
using hsdp::Sampling;

RunT gridded(const RunT& r, double slack) { return hsdp::testing::on_noise_grid(r, slack); }

RunT base(std::int64_t n, std::int64_t T, std::int64_t b, Sampling s, double eta, double std) {
  RunT r;
  r.n = n;
  r.steps = T;
  r.batch_size = b;
  r.sampling = s;
  r.eta = hsdp::Schedule(eta);
  r.noise_std = hsdp::Schedule(std);
  r.loss.lipschitz = 1.0;
  r.loss.smoothness = 1.0;
  return r;
}

double eps(const std::string& name, const RunT& r) {
  const auto res = hsdp::find_analysis(name)->evaluate(r, Query::at_delta(1e-5));
  EXPECT_TRUE(res.applicable) << name << ": " << res.reason << " " << r.summary();
  return res.applicable ? *res.epsilon : NAN;
}

void check_close(const std::string& name, const RunT& r) {
  const double c = eps(name, r), g8 = eps(name, gridded(r, 1e-8)), g2 = eps(name, gridded(r, 1e-2));
  EXPECT_GE(g8, c) << name << " " << r.summary();
  EXPECT_LE(g8, 1.01 * c) << name << " " << r.summary();
  EXPECT_GT(g2, g8) << name << " " << r.summary();
}

std::string reason(const std::string& name, const RunT& r) {
  return hsdp::find_analysis(name)->evaluate(r, Query::at_delta(1e-5)).reason;
}

TEST(GridAnalyses, AboveContinuousAndWithinOnePercent) {
  // langevin (Thm 1), convex full-batch GD.
  check_close("langevin", base(100, 200, 100, Sampling::full, 0.5, 0.3));
  // ye-shokri: one epoch (derived) and three (the paper's earlier-epochs term).
  RunT ys = base(1000, 100, 10, Sampling::shuffle, 0.5, 0.1);
  ys.loss.strong_convexity = 0.2;
  check_close("ye-shokri", ys);
  ys.steps = 300;
  check_close("ye-shokri", ys);
  // balle-mixing: the worst position and a given one.
  RunT bm = base(500, 500, 1, Sampling::cyclic, 0.5, 2.0);
  check_close("balle-mixing", bm);
  bm.index = 100;
  check_close("balle-mixing", bm);
  // federated Thm 2 and Cor. 3: one pass, shuffled users, a ball.
  RunT fd = base(1000, 100, 10, Sampling::shuffle, 0.5, 0.1);
  fd.diameter = 2.0;
  check_close("federated", fd);
  fd.release = hsdp::Release::random_stop;
  check_close("federated-random-stop", fd);
}

// langevin Thm 1 on the grid: K Gaussian mechanisms of sensitivity eta S_g / n + slack s, std s:
// RDP alpha K (eta S_g / n + slack s)^2 / (2 s^2), closed form.
TEST(GridAnalyses, LangevinTheorem1PaysOneRoundingPerStep) {
  const double eta = 0.5, s = 0.3, slack = 0.05;
  const std::int64_t n = 100, K = 200;
  const RunT r = gridded(base(n, K, n, Sampling::full, eta, s), slack);
  const auto& a = dynamic_cast<const hsdp::RdpAnalysis&>(*hsdp::find_analysis("langevin"));
  ASSERT_FALSE(a.not_applicable(r));
  const double shift = eta * 2.0 / n + slack * s;
  for (const double alpha : {2.0, 10.0})
    EXPECT_NEAR(a.rdp(r, alpha), alpha * K * shift * shift / (2 * s * s), 1e-12 * alpha * K) << alpha;
}

// Where the derivation fails on the grid, the reason says which step.
TEST(GridAnalyses, NotDerivedStepsAreNamed) {
  RunT sc = base(100, 200, 100, Sampling::full, 0.5, 0.3);
  sc.loss.strong_convexity = 0.5;
  // langevin falls back to Thm 1 and its note says why Cor. 1 is not used.
  const auto res = hsdp::find_analysis("langevin")->evaluate(gridded(sc, 1e-8), Query::at_delta(1e-5));
  ASSERT_TRUE(res.applicable);
  EXPECT_NE(res.note.find("log-Sobolev"), std::string::npos) << res.note;
  EXPECT_GT(*res.epsilon, eps("langevin", sc));  // Cor. 1 is smaller on the continuous run
  RunT lo = base(100, 200, 100, Sampling::full, 0.5, 0.3);
  lo.loss.strong_convexity = 1.0;
  EXPECT_TRUE(hsdp::find_analysis("langevin-lower")->evaluate(lo, Query::at_delta(1e-5)).applicable);
  EXPECT_NE(reason("langevin-lower", gridded(lo, 1e-8)).find("lower bound"), std::string::npos);
  RunT pf = base(500, 500, 1, Sampling::cyclic, 0.5, 2.0);
  pf.release = hsdp::Release::random_stop;
  EXPECT_TRUE(hsdp::find_analysis("pabi-feldman")->evaluate(pf, Query::at_delta(1e-5)).applicable);
  EXPECT_NE(reason("pabi-feldman", gridded(pf, 1e-8)).find("Lemma 25"), std::string::npos);
}

}  // namespace

namespace {

// docs/security.md, "Federated runs on the grid": the sum of two independent discrete Gaussians
// of parameters a and b has, at every k, pmf phi_S(k) (1 + O(eps)), S^2 = a^2 + b^2, with eps
// the Poisson-summation terms e^(-2 pi^2 c^2), c^2 = a^2 b^2 / S^2 (and those of a, b in the
// normalisations). Checked by direct convolution at small parameters, where eps is visible.
double theta_tail(double c) {  // sum_{l >= 1} e^(-2 pi^2 c^2 l^2)
  double t = 0;
  for (int l = 1; l < 50; ++l) t += std::exp(-2 * M_PI * M_PI * c * c * l * l);
  return t;
}

std::vector<double> discrete_gaussian(double a, int K) {
  std::vector<double> p(2 * K + 1);
  double z = 0;
  for (int j = -K; j <= K; ++j) z += p[j + K] = std::exp(-0.5 * j * j / (a * a));
  for (auto& v : p) v /= z;
  return p;
}

TEST(GridAnalyses, SumOfDiscreteGaussiansIsOneUpToPoissonSummation) {
  const int K = 80;
  for (const double a : {0.6, 0.9, 1.5})
    for (const double b : {0.7, 1.2, 3.0}) {
      const auto pa = discrete_gaussian(a, K), pb = discrete_gaussian(b, K);
      const double S = std::sqrt(a * a + b * b), c = a * b / S;
      const double eps = 2 * (theta_tail(a) + theta_tail(b) + theta_tail(c));
      double worst = 0;
      for (int k = -20; k <= 20; ++k) {
        double q = 0;
        for (int j = -K; j <= K; ++j)
          if (std::abs(k - j) <= K) q += pa[j + K] * pb[k - j + K];
        const double phi = std::exp(-0.5 * k * k / (S * S)) / (S * std::sqrt(2 * M_PI));
        worst = std::max(worst, std::fabs(std::log(q / phi)));
      }
      EXPECT_LE(worst, 1.5 * eps + 1e-13) << a << " " << b;  // + the doubles' round-off
      if (eps > 1e-8) EXPECT_GT(worst, 0.01 * eps) << a << " " << b;  // the bound is not vacuous here
    }
}

}  // namespace
