// Every new last-iterate upper bound against the exact privacy loss of the same run.
//
// hsdp audit exact computes the true delta(eps) of a one-dimensional worst-case instance of
// projected noisy GD (linear losses of slope L, the two walks drifting apart by the full
// sensitivity 2 eta L / b on the steps that read the record) with a stated error. Any valid
// upper bound on the run's privacy must be >= that value minus its error. 1,000 random runs,
// full, cyclic and random fixed-size batches, T up to 40, every scale from a tight to a loose bound.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "hsdp/analysis/analysis.hpp"
#include "hsdp/audit/exact.hpp"
#include "hsdp/run.hpp"
#include "fixtures.hpp"

namespace {

TEST(LastIterateSweep, ShiftedInterpolationNeverBelowTheExactAudit) {
  const auto bound = hsdp::find_analysis("shifted-interpolation");
  std::mt19937_64 g(20261124);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  auto log_uniform = [&](double lo, double hi) { return lo * std::pow(hi / lo, u(g)); };
  int checked = 0, violations = 0, tight = 0;
  // Under the sanitizers the first 200 of the 1,000 random runs (every kind: full, cyclic,
  // fixed-size batches, both audit pairs): the sanitizers check memory and undefined behaviour
  // on the paths, the Release build checks the bound against the audit on all 1,000.
  const int runs = hsdp::testing::repetitions(1000, 200);
  for (int i = 0; i < runs; ++i) {
    hsdp::Run run;
    // One run in twenty: NoisySGD (random fixed-size batches, composed by PLD).
    const bool fixed = i % 20 == 19, cyclic = !fixed && i % 2 == 1;
    const std::int64_t b = cyclic || fixed ? 1 + static_cast<std::int64_t>(3 * u(g)) : 0;
    const std::int64_t l = cyclic || fixed ? 1 + static_cast<std::int64_t>(5 * u(g)) : 1;
    run.n = cyclic || fixed ? b * l : 1 + static_cast<std::int64_t>(10 * u(g));
    run.batch_size = cyclic || fixed ? b : run.n;
    run.sampling = fixed ? hsdp::Sampling::fixed : cyclic ? hsdp::Sampling::cyclic : hsdp::Sampling::full;
    run.steps = 1 + static_cast<std::int64_t>(40 * u(g));
    const double eta = log_uniform(0.05, 1.0);
    run.eta = hsdp::Schedule(eta);
    run.noise_std = hsdp::Schedule(log_uniform(0.05, 2.0));
    run.loss.lipschitz = log_uniform(0.1, 2.0);
    run.loss.smoothness = 1.0 / eta;  // linear losses: any beta with eta <= 2/beta
    run.diameter = log_uniform(0.2, 5.0);
    run.release = hsdp::Release::last;
    run.adjacency = hsdp::Adjacency::replace;
    const double eps = log_uniform(0.05, 6.0);
    hsdp::audit::ExactOptions options;
    options.grid = 1025;
    options.pair = i % 4 < 3 ? hsdp::audit::Pair::opposite : hsdp::audit::Pair::sec4;
    const auto exact = hsdp::audit::exact(run, hsdp::Query::at_epsilon(eps), options);
    if (!std::isfinite(exact.error)) continue;
    const auto r = bound->evaluate(run, hsdp::Query::at_epsilon(eps));
    ASSERT_TRUE(r.applicable) << r.reason << " " << run.summary();
    ++checked;
    if (*r.delta < exact.lo()) {
      ++violations;
      ADD_FAILURE() << run.summary() << " eps " << eps << ": bound " << *r.delta << " < exact "
                    << exact.delta << " - " << exact.error;
    }
    if (*r.delta <= 1.05 * exact.hi() && exact.delta > 1e-6) ++tight;
  }
  EXPECT_GE(checked, runs - runs / 20);
  EXPECT_EQ(violations, 0);
  // The bound is exact for some instances (e.g. one full-batch step): the sweep reaches them.
  EXPECT_GT(tight, 10);
  std::printf("checked %d runs, %d within 5%% of the exact delta, %d violations\n", checked,
              tight, violations);
}

}  // namespace
