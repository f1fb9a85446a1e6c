// The trainer's plan (include/hsdp/train/planner.hpp, docs/training.md "The plan").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "hsdp/divergence/pld.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/train/planner.hpp"
#include "hsdp/train/train_spec.hpp"
#include "fixtures.hpp"

namespace {

using namespace hsdp;
using namespace hsdp::train;

TrainConfig request(const std::string& model, double epsilon) {
  TrainSpec s;
  s.model = model;
  TrainConfig c = s.resolve();
  c.target_epsilon = epsilon;
  c.delta = 1e-5;
  return c;
}

// docs/privacy-utility.md's table: mu at delta = 1e-5; and the exact GDP curve (an
// independent formula: Dong-Roth-Su Cor. 2.13 by erfc) meets delta at mu and not above.
TEST(Planner, GdpMuMeetsTheTargetExactly) {
  const double eps[] = {0.5, 1, 2, 4};
  const double expected[] = {0.1422, 0.2681, 0.5016, 0.9249};
  for (int k = 0; k < 4; ++k) {
    const double mu = gdp_mu_for(eps[k], 1e-5);
    EXPECT_NEAR(mu, expected[k], 1e-4) << eps[k];
    auto delta = [&](double m) {
      return 0.5 * std::erfc((eps[k] / m - m / 2) / std::sqrt(2.0)) -
             std::exp(eps[k]) * 0.5 * std::erfc((eps[k] / m + m / 2) / std::sqrt(2.0));
    };
    EXPECT_NEAR(delta(mu), 1e-5, 1e-13);
    EXPECT_GT(delta(mu * (1 + 1e-6)), 1e-5);
  }
  // Extremes: monotone in epsilon and finite from 1e-6 to 60.
  double last = 0;
  for (double e : {1e-6, 1e-3, 0.1, 1.0, 10.0, 50.0, 60.0}) {
    const double mu = gdp_mu_for(e, 1e-5);
    EXPECT_TRUE(std::isfinite(mu));
    EXPECT_GT(mu, last) << e;
    last = mu;
  }
  // delta = 1e-300 (log domain): still met exactly; at eps = 1e-6 no mu >= 1e-6 meets it and
  // the search's lower end is returned (a planning quantity: the noise is calibrated anyway).
  const double tiny = gdp_mu_for(5.0, 1e-300);
  EXPECT_LE(div::gdp_log_delta(5.0, tiny), std::log(1e-300) + 1e-9);
  EXPECT_GT(div::gdp_log_delta(5.0, tiny * (1 + 1e-6)), std::log(1e-300));
  EXPECT_EQ(gdp_mu_for(1e-6, 1e-300), 1e-6);
  EXPECT_THROW(gdp_mu_for(1, 0), InvalidArgument);
  EXPECT_THROW(gdp_mu_for(0, 1e-5), InvalidArgument);
  // Large eps (issue 37: eps = 1e300 threw "the bracket does not straddle"): the upper end grows
  // past 1e3; the boundary is about sqrt(2 eps) and still met; from 1e150 on the cap (which meets
  // the target) is returned.
  for (double e : {1e7, 1e8, 1e100}) {
    const double mu = gdp_mu_for(e, 1e-5);
    EXPECT_GT(mu, 1e3) << e;
    EXPECT_NEAR(mu, std::sqrt(2 * e), 0.05 * std::sqrt(2 * e)) << e;
    EXPECT_LE(div::gdp_log_delta(e, mu), std::log(1e-5)) << e;
  }
  EXPECT_EQ(gdp_mu_for(1e300, 1e-5), 1e150);
  EXPECT_LE(div::gdp_log_delta(1e300, 1e150), std::log(1e-5));
  const auto rule = training_rule(1000, 1.0, 1.0, 1e300, 1e-5, std::nullopt, 1.0);
  EXPECT_LE(rule.steps, 100 * 1000 + 1000);  // at most 100 epochs (T <= 100 n, whole epochs)
}

// docs/privacy-utility.md: logistic 5 vs 7 (n = 12000, d = 784) at eps = 1: b = 1500, 36
// epochs (288 steps), eta = 3.96, radius 100; the three batch policies calibrated, the one
// with the least noise chosen.
TEST(Planner, FashionMnistSizeAtEpsilonOne) {
  const auto p = plan_training(request("logistic", 1), 12000, 784, 1);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->target_steps, 287);
  EXPECT_EQ(p->batches_per_epoch, 8);
  EXPECT_EQ(p->config.batch_size, 1500);
  EXPECT_EQ(p->config.steps.value(), 288);
  EXPECT_DOUBLE_EQ(*p->config.eta, 3.96);
  EXPECT_DOUBLE_EQ(p->config.constraint.radius, 100);
  ASSERT_EQ(p->candidates.size(), 3u);
  const auto& cyc = p->candidates[0];
  const auto& shu = p->candidates[1];
  const auto& poi = p->candidates[2];
  EXPECT_EQ(cyc.sampling, Sampling::cyclic);
  EXPECT_EQ(shu.sampling, Sampling::shuffle);
  EXPECT_EQ(poi.sampling, Sampling::poisson);
  ASSERT_TRUE(cyc.feasible && shu.feasible && poi.feasible);
  EXPECT_EQ(cyc.analysis, "shifted-interpolation");
  EXPECT_EQ(shu.analysis, "shifted-interpolation");
  // Measured (docs/privacy-utility.md): cyclic 0.06459 by the last iterate, shuffled 0.06134
  // (the position average), Poisson 0.05909 by composition-pld: Poisson chosen.
  EXPECT_NEAR(cyc.noise_std, 0.06459, 2e-4);
  EXPECT_NEAR(shu.noise_std, 0.06134, 2e-4);
  EXPECT_NEAR(poi.noise_std, 0.05909, 2e-4);
  EXPECT_EQ(p->config.sampling, Sampling::poisson);
  EXPECT_EQ(p->chosen, (std::vector<std::string>{"radius", "eta", "batch_size", "epochs", "sampling"}));
}

// The first command on 200 records and on 10^6: a valid plan (b <= n, whole epochs, at most
// 100 epochs), without touching data.
TEST(Planner, SmallAndLargeTrainingSets) {
  TrainConfig c = request("logistic", 1);
  c.sampling = Sampling::poisson;
  c.unstated.sampling = false;  // stated: no calibration here, only the rule
  const auto small = plan_training(c, 200, 10, 1);
  ASSERT_TRUE(small);
  EXPECT_EQ(small->target_steps, 5);  // round(200 * 0.2681 / (2 sqrt(2) 3.96)) = 5
  EXPECT_EQ(small->config.batch_size, 200);
  EXPECT_EQ(*small->config.steps, 5);

  const auto large = plan_training(c, 1000000, 784, 1);
  ASSERT_TRUE(large);
  EXPECT_EQ(large->target_steps, 23932);
  EXPECT_EQ(large->batches_per_epoch, 250);  // ceil(T/100) = 240 -> the next divisor of 10^6
  EXPECT_EQ(large->config.batch_size, 4000);
  EXPECT_LE(large->config.epochs, 100);
  EXPECT_EQ(*large->config.steps, 96 * 250);

  // A prime n: no divisor near l; b = floor(n / l) and T steps.
  const auto prime = plan_training(c, 100003, 50, 1);
  ASSERT_TRUE(prime);
  EXPECT_LE(prime->config.batch_size, 100003);
  EXPECT_EQ(*prime->config.steps, prime->target_steps);
}

TEST(Planner, StatedFieldsAreKeptAndNoPlanWithoutATarget) {
  TrainConfig c = request("logistic", 1);
  c.batch_size = 64;
  c.unstated.batch_size = false;
  c.sampling = Sampling::cyclic;
  c.unstated.sampling = false;
  c.eta = 1.0;
  c.unstated.eta = false;
  const auto p = plan_training(c, 12000, 784, 1);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->config.batch_size, 64);
  EXPECT_EQ(p->config.sampling, Sampling::cyclic);
  EXPECT_DOUBLE_EQ(*p->config.eta, 1.0);
  EXPECT_EQ(p->target_steps, std::lround(12000 * gdp_mu_for(1, 1e-5) / (2 * std::sqrt(2.0) * 1.0)));
  EXPECT_EQ(p->chosen, (std::vector<std::string>{"radius", "epochs"}));
  EXPECT_TRUE(p->candidates.empty());

  // A stated length keeps the default step 1/beta (the rule's eta goes with its T).
  TrainConfig length = request("logistic", 1);
  length.epochs = 10;
  length.unstated.length = false;
  const auto q = plan_training(length, 12000, 784, 1);
  ASSERT_TRUE(q);
  EXPECT_FALSE(q->config.eta);
  EXPECT_EQ(std::count(q->chosen.begin(), q->chosen.end(), "eta"), 0);
  EXPECT_DOUBLE_EQ(q->config.epochs, 10);

  // Everything plannable stated but eta (which goes with a planned length): no plan at all.
  TrainConfig all = length;
  all.sampling = Sampling::fixed;
  all.unstated.sampling = false;
  all.batch_size = 64;
  all.unstated.batch_size = false;
  all.constraint.radius = 2;
  all.unstated.radius = false;
  EXPECT_FALSE(plan_training(all, 12000, 784, 1));

  TrainConfig sigma = request("logistic", 1);
  sigma.target_epsilon.reset();
  sigma.sigma = 1;
  EXPECT_FALSE(plan_training(sigma, 1000, 10, 1));
  TrainConfig pnsgd = request("logistic", 1);
  pnsgd.algorithm = Algorithm::pnsgd;
  EXPECT_FALSE(plan_training(pnsgd, 1000, 10, 1));
  // Squared loss: L grows with the radius, which is then not planned.
  const auto sq = plan_training(request("squared", 1), 1000, 10, 1);
  ASSERT_TRUE(sq);
  EXPECT_DOUBLE_EQ(sq->config.constraint.radius, 10);
}

// release = every: composition only, which cannot amplify deterministic batches -- Poisson
// is the only candidate; noisy-gd plans T full-batch steps.
TEST(Planner, ReleaseEveryAndNoisyGd) {
  TrainConfig every = request("logistic", 2);
  every.release = Release::every;
  const auto p = plan_training(every, 5000, 20, 1);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->candidates.size(), 1u);
  EXPECT_EQ(p->config.sampling, Sampling::poisson);

  TrainConfig gd = request("logistic", 1);
  gd.algorithm = Algorithm::noisy_gd;
  const auto g = plan_training(gd, 455, 30, 1);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->config.epochs, 11);  // round(455 * 0.2681 / (2 sqrt(2) 3.96))
}

// The record norm (docs/training.md "The plan"): R = 2 for a planned model with a bias and a
// loss whose L does not grow with R; never when stated, without a target, without a bias, for
// the squared loss or an algorithm without a plan. The plan claims it only when the records
// were prepared with it (the request does that); T = round(sqrt(2) n mu / (2 L eta X)) with
// X = sqrt(R^2 + 1), which for logistic at eta = 1.98/beta = 7.92/L^2 does not depend on R.
TEST(Planner, RecordNormIsPlannedForModelsWithABias) {
  for (const char* model : {"logistic", "huber", "softmax"}) EXPECT_EQ(planned_record_norm(request(model, 1)), 2.0);
  EXPECT_FALSE(planned_record_norm(request("squared", 1)));
  TrainConfig c = request("logistic", 1);
  c.bias = false;
  EXPECT_FALSE(planned_record_norm(c));
  c = request("logistic", 1);
  c.unstated.record_norm = false;
  EXPECT_FALSE(planned_record_norm(c));
  c = request("logistic", 1);
  c.target_epsilon.reset();
  c.sigma = 1;
  EXPECT_FALSE(planned_record_norm(c));
  c = request("logistic", 1);
  c.algorithm = Algorithm::pnsgd;
  EXPECT_FALSE(planned_record_norm(c));

  TrainConfig planned = request("logistic", 1);
  planned.record_norm = 2;
  const auto p = plan_training(planned, 12000, 784, 1);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->chosen.front(), "record_norm");
  EXPECT_DOUBLE_EQ(p->lipschitz, std::sqrt(5.0));
  EXPECT_DOUBLE_EQ(*p->config.eta, 1.98 / 1.25);
  const double mu = gdp_mu_for(1, 1e-5);
  EXPECT_EQ(p->target_steps, std::lround(std::sqrt(2.0) * 12000 * mu / (2 * std::sqrt(5.0) * 1.584 * std::sqrt(5.0))));
  EXPECT_EQ(p->target_steps, 287);  // as at R = 1 (FashionMnistSizeAtEpsilonOne)
  EXPECT_NE(p->summary.find("T = round(sqrt(2) n mu / (2 L eta X)) = 287; R = 2 (the bias feature weighs 1/R"),
            std::string::npos)
      << p->summary;
  // Softmax: L = sqrt(2) X, beta = X^2 / 2.
  TrainConfig soft = request("softmax", 1);
  soft.record_norm = 2;
  const auto s = plan_training(soft, 60000, 784, 10);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->target_steps, std::lround(std::sqrt(2.0) * 60000 * mu / (2 * std::sqrt(10.0) * (1.98 / 2.5) * std::sqrt(5.0))));
  // Prepared otherwise (R = 1 kept by a caller that did not apply the plan): not claimed.
  EXPECT_EQ(std::count(p->chosen.begin(), p->chosen.end(), "record_norm"), 1);
  const auto kept = plan_training(request("logistic", 1), 12000, 784, 1);
  EXPECT_EQ(std::count(kept->chosen.begin(), kept->chosen.end(), "record_norm"), 0);
  // No bias, R = 1: X = 1, so sqrt(2) times the steps of R = 1 with a bias.
  TrainConfig nobias = request("logistic", 1);
  nobias.bias = false;
  nobias.sampling = Sampling::poisson;
  nobias.unstated.sampling = false;
  const auto nb = plan_training(nobias, 1000, 10, 1);
  ASSERT_TRUE(nb);
  EXPECT_EQ(nb->target_steps, std::lround(std::sqrt(2.0) * 1000 * mu / (2 * 1.0 * (1.98 / 0.25) * 1.0)));
}

// The plan reads no data: two data sets of the same shape get the same plan, and the run
// meets the target under the accountant.
TEST(Planner, TrainerPlansFromPublicQuantitiesOnly) {
  TrainConfig c = request("logistic", 1);
  c.seed = 1;
  const TrainResult a = train::train(hsdp::testing::synthetic(300, 5, 1.0, 1, LossKind::logistic), c);
  const TrainResult b = train::train(hsdp::testing::synthetic(300, 5, 1.0, 2, LossKind::logistic), c);
  ASSERT_FALSE(a.plan_summary.empty());
  EXPECT_EQ(a.plan_summary, b.plan_summary);
  EXPECT_EQ(a.run.batch_size, b.run.batch_size);
  EXPECT_EQ(a.run.steps, b.run.steps);
  ASSERT_TRUE(a.report && a.report->best);
  EXPECT_LE(*a.report->analyses[*a.report->best].epsilon, 1.0);
  EXPECT_DOUBLE_EQ(a.config.constraint.radius, 100);
}

}  // namespace
