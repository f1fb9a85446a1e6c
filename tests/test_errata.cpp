// docs/errata.md: where hsdp deliberately departs from a paper's literal text.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "hsdp/analysis/analysis.hpp"
#include "hsdp/divergence/hockey_stick.hpp"

namespace {

// Erratum 1 (journal Thm 5, eq. (17)): the guarantee is the maximum over the position
// i of the differing record, not the printed minimum.
TEST(Errata, RandomStopUsesTheWorstIndex) {
  const int n = 50;
  const double eta = 0.1, sigma = 2.0, L = 1.0, D = 1.0, eps = 0.5;
  hsdp::Run run;
  run.n = n;
  run.steps = n;
  run.eta = hsdp::Schedule(eta);
  run.noise_std = hsdp::Schedule(eta * sigma);
  run.loss.lipschitz = L;
  run.loss.smoothness = 1.0;  // eta <= 2/beta: dia(Psi(W)) = D (journal (20))
  run.diameter = D;
  run.release = hsdp::Release::random_stop;

  // Brute force (17) in plain doubles: (1/n) sum_{t=i}^{n} theta(psi/s) theta(D/s)^(t-i).
  const double a = hsdp::div::theta(eps, 2 * eta * L / (eta * sigma));
  const double c = hsdp::div::theta(eps, D / (eta * sigma));
  std::vector<double> per_i;
  for (int i = 1; i <= n; ++i) {
    double s = 0;
    for (int t = i; t <= n; ++t) s += a * std::pow(c, t - i);
    per_i.push_back(s / n);
  }
  const double worst = *std::max_element(per_i.begin(), per_i.end());
  const double literal_min = *std::min_element(per_i.begin(), per_i.end());
  EXPECT_DOUBLE_EQ(worst, per_i.front());  // i = 1 for constant parameters

  const auto r = hsdp::find_analysis("contraction-random-stop")
                     ->evaluate(run, hsdp::Query::at_epsilon(eps));
  ASSERT_TRUE(r.applicable) << r.reason;
  EXPECT_GE(*r.delta, worst);
  EXPECT_NEAR(*r.delta, worst, 1e-8 * worst);
  // The literal "min" would under-report by about 1 / (1 - c).
  EXPECT_GT(*r.delta, 1.5 * literal_min);
  EXPECT_NEAR(worst / literal_min, (1 - std::pow(c, n)) / (1 - c), 1e-9 * worst / literal_min);
}

}  // namespace
