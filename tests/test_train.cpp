// The trainer: loss constants (closed forms and a numerical check), projections, batch
// policies, noise, random stopping, federated rounds, the attached report, and accuracy
// on breast_cancer against the same code without noise.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <set>

#include "hsdp/random/csprng.hpp"
#include "hsdp/random/samplers.hpp"
#include "hsdp/accountant.hpp"
#include "hsdp/data/readers.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/train/trainer.hpp"
#include "fixtures.hpp"
#include "train/sampler.hpp"

namespace {

using namespace hsdp;
using namespace hsdp::train;

using hsdp::testing::synthetic;

TrainResult fit(const data::Dataset& d, const TrainConfig& c) { return hsdp::train::train(d, c); }

TrainConfig base_config() {
  TrainConfig c;
  c.loss.kind = LossKind::logistic;
  c.constraint = {ConstraintKind::ball, 5.0};
  c.record_norm = 1.0;
  c.seed = 7;
  return c;
}

// ---------------------------------------------------------------------------------------
// Constants

TEST(TrainConstants, ClosedForms) {
  const Constraint ball{ConstraintKind::ball, 3.0}, box{ConstraintKind::box, 1.0};
  LossSpec l;
  l.kind = LossKind::logistic;
  auto c = derive_constants(l, 2.0, false, ball, 4);
  EXPECT_EQ(*c.lipschitz_data, 2.0);
  EXPECT_EQ(c.smoothness(), 1.0);  // R^2/4
  l.kind = LossKind::huber;
  l.huber_smoothing = 0.5;
  c = derive_constants(l, 2.0, false, ball, 4);
  EXPECT_EQ(*c.lipschitz_data, 2.0);
  EXPECT_EQ(c.smoothness(), 8.0);  // R^2/h
  l.kind = LossKind::squared;
  l.label_bound = 1.0;
  c = derive_constants(l, 2.0, false, ball, 4);
  EXPECT_EQ(*c.lipschitz_data, 14.0);  // R (R r + Y) = 2 (6 + 1)
  EXPECT_EQ(c.smoothness(), 4.0);
  c = derive_constants(l, 2.0, false, box, 4);  // sup ||theta|| = 1 * sqrt(4) = 2
  EXPECT_EQ(*c.lipschitz_data, 10.0);
  c = derive_constants(l, 2.0, false, Constraint{ConstraintKind::none, 1.0}, 4);
  EXPECT_FALSE(c.lipschitz_data.has_value());
  l.kind = LossKind::softmax;
  l.classes = 3;
  c = derive_constants(l, 2.0, false, ball, 12);
  EXPECT_DOUBLE_EQ(*c.lipschitz_data, 2.0 * std::sqrt(2.0));
  EXPECT_EQ(c.smoothness(), 2.0);  // R^2/2
  // With the bias feature R^2 = R_x^2 + 1 exactly: R_x = 1 gives beta = 2/4 = 0.5, so
  // eta = 2/beta = 4 is allowed (not lost to sqrt(2)^2 rounding).
  l.kind = LossKind::logistic;
  c = derive_constants(l, 1.0, true, ball, 4);
  EXPECT_EQ(c.smoothness(), 0.5);
  EXPECT_EQ(*c.lipschitz_data, std::sqrt(2.0));
  l.l2 = 0.25;
  c = derive_constants(l, 2.0, false, ball, 4);
  EXPECT_EQ(c.smoothness(), 1.25);
  EXPECT_EQ(*c.lipschitz_data, 2.0);                 // the sensitivity ignores the regulariser
  EXPECT_EQ(*c.lipschitz_total(ball, 4), 2.0 + 0.75);  // L + lambda r
  EXPECT_EQ(*c.lipschitz_total(box, 4), 2.0 + 0.5);    // L + lambda sqrt(p) r
}

// The analytic gradient against central differences of loss_at, and the derived L and
// beta against the largest gradient norm and gradient-difference ratio seen at random
// points (they must bound them, and for logistic/softmax/squared come close).
TEST(TrainConstants, GradientAndConstantsNumerically) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> g;
  const double R = 1.5;
  for (auto kind : {LossKind::logistic, LossKind::huber, LossKind::squared, LossKind::softmax}) {
    LossSpec spec;
    spec.kind = kind;
    spec.classes = 3;
    spec.huber_smoothing = 0.5;
    spec.label_bound = 1.0;
    const std::size_t d = 3;
    LinearModel m = LinearModel::zeros(spec, d, /*bias=*/false);
    const std::size_t P = m.parameters();
    const Constraint ball{ConstraintKind::ball, 2.0};
    const LossConstants c = derive_constants(spec, R, false, ball, P);
    double max_norm = 0, max_ratio = 0;
    for (int trial = 0; trial < 3000; ++trial) {
      std::vector<double> x(d);
      double nx = 0;
      for (auto& v : x) nx += (v = g(rng)) * v;
      for (auto& v : x) v *= R / std::sqrt(nx);  // ||x|| = R: the worst case
      const double y = kind == LossKind::softmax ? static_cast<double>(trial % 3)
                       : kind == LossKind::squared ? (trial % 2 ? 1.0 : -1.0)
                                                   : (trial % 2 ? 1.0 : -1.0);
      auto random_point = [&] {
        std::vector<double> t(P);
        for (auto& v : t) v = g(rng) * (trial % 3 == 0 ? 0.05 : 0.7);
        ball.project(t);
        return t;
      };
      auto grad_at = [&](const std::vector<double>& t) {
        m.theta = t;
        std::vector<double> gr(P, 0.0);
        add_example_gradient(m, x.data(), y, 0.0, gr.data());
        return gr;
      };
      const auto t1 = random_point(), t2 = random_point();
      const auto g1 = grad_at(t1), g2 = grad_at(t2);
      if (trial < 50) {  // central differences
        for (std::size_t j = 0; j < P; ++j) {
          auto tp = t1, tm = t1;
          tp[j] += 1e-6;
          tm[j] -= 1e-6;
          m.theta = tp;
          const double fp = m.loss_at(x.data(), y);
          m.theta = tm;
          const double fm = m.loss_at(x.data(), y);
          EXPECT_NEAR(g1[j], (fp - fm) / 2e-6, 1e-6) << to_string(kind);
        }
      }
      double n1 = 0, dg = 0, dt = 0;
      for (std::size_t j = 0; j < P; ++j) {
        n1 += g1[j] * g1[j];
        dg += (g1[j] - g2[j]) * (g1[j] - g2[j]);
        dt += (t1[j] - t2[j]) * (t1[j] - t2[j]);
      }
      max_norm = std::max(max_norm, std::sqrt(n1));
      if (dt > 1e-12) max_ratio = std::max(max_ratio, std::sqrt(dg / dt));
    }
    EXPECT_LE(max_norm, *c.lipschitz_data * (1 + 1e-12)) << to_string(kind);
    EXPECT_LE(max_ratio, c.smoothness() * (1 + 1e-9)) << to_string(kind);
    // The bounds are not loose by more than the sampling explains.
    if (kind == LossKind::logistic || kind == LossKind::huber) EXPECT_GE(max_norm, 0.9 * *c.lipschitz_data);
    if (kind == LossKind::logistic || kind == LossKind::squared) EXPECT_GE(max_ratio, 0.8 * c.smoothness());
  }
}

// ---------------------------------------------------------------------------------------
// Projections: the result is in W and satisfies the variational inequality
// <z - P(z), w - P(z)> <= 0 for every w in W (which characterises the Euclidean projection).

TEST(TrainConstraint, ProjectionIsExact) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> g;
  for (auto kind : {ConstraintKind::ball, ConstraintKind::box}) {
    const Constraint W{kind, 0.7};
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<double> z(6);
      for (auto& v : z) v = 2 * g(rng);
      auto p = z;
      W.project(p);
      EXPECT_LE(W.excess(p), 1e-15);
      for (int k = 0; k < 50; ++k) {
        std::vector<double> w(6);
        for (auto& v : w) v = g(rng);
        W.project(w);
        double ip = 0;
        for (std::size_t j = 0; j < 6; ++j) ip += (z[j] - p[j]) * (w[j] - p[j]);
        EXPECT_LE(ip, 1e-12);
      }
    }
  }
  EXPECT_EQ((Constraint{ConstraintKind::ball, 0.7}.diameter(9)), 1.4);
  EXPECT_DOUBLE_EQ((Constraint{ConstraintKind::box, 0.7}.diameter(9)), 4.2);  // 2 r sqrt(p)
}

TEST(TrainConstraint, IteratesStayInTheSet) {
  const auto ds = synthetic(300, 5, 1.0, 1, LossKind::logistic);
  for (auto kind : {ConstraintKind::ball, ConstraintKind::box}) {
    TrainConfig c = base_config();
    c.constraint = {kind, 0.3};
    c.noise_std = 2.0;  // far larger than the set: every step needs the projection
    c.sampling = Sampling::fixed;
    c.batch_size = 10;
    c.epochs = 3;
    const auto r = fit(ds, c);
    EXPECT_LE(r.max_constraint_excess, 1e-12);
    EXPECT_GT(r.max_constraint_excess, -1e-9);  // the noise pushes iterates to the boundary
    EXPECT_LE(c.constraint.excess(r.model.theta), 1e-12);
  }
}

// ---------------------------------------------------------------------------------------
// Batch policies

TEST(TrainSampler, PoissonFixedShuffleCyclic) {
  auto rng = hsdp::random::Csprng::from_seed(11);
  const std::int64_t n = 1000, b = 50, T = 2000;
  std::vector<std::int64_t> batch;
  {
    BatchSampler s(Sampling::poisson, n, b, rng);
    std::vector<double> counts(n, 0);
    double total = 0;
    for (std::int64_t t = 1; t <= T; ++t) {
      s.next(t, batch);
      EXPECT_TRUE(std::is_sorted(batch.begin(), batch.end()));
      EXPECT_TRUE(std::adjacent_find(batch.begin(), batch.end()) == batch.end());
      for (auto i : batch) counts[static_cast<std::size_t>(i)] += 1;
      total += static_cast<double>(batch.size());
    }
    // Mean batch size b: sd of the total is sqrt(T n q (1-q)) ~ 308.
    EXPECT_NEAR(total / T, 50.0, 5 * std::sqrt(T * n * 0.05 * 0.95) / T);
    // Each record with probability q = 0.05: chi-square over records (dof 999).
    double chi = 0;
    const double e = T * 0.05;
    for (double v : counts) chi += (v - e) * (v - e) / (e * 0.95);
    EXPECT_LT(chi, 999 + 5 * std::sqrt(2 * 999.0));
    EXPECT_GT(chi, 999 - 5 * std::sqrt(2 * 999.0));
  }
  {
    BatchSampler s(Sampling::fixed, n, b, rng);
    std::vector<double> counts(n, 0);
    for (std::int64_t t = 1; t <= T; ++t) {
      s.next(t, batch);
      ASSERT_EQ(batch.size(), 50u);
      EXPECT_EQ(std::set<std::int64_t>(batch.begin(), batch.end()).size(), 50u);
      for (auto i : batch) counts[static_cast<std::size_t>(i)] += 1;
    }
    double chi = 0;
    const double e = T * 0.05;
    for (double v : counts) chi += (v - e) * (v - e) / e;
    EXPECT_LT(chi, 999 + 5 * std::sqrt(2 * 999.0));
  }
  {
    BatchSampler s(Sampling::shuffle, 10, 3, rng);  // 3 batches per epoch, 1 record left out
    for (int epoch = 0; epoch < 5; ++epoch) {
      std::set<std::int64_t> seen;
      for (int k = 1; k <= 3; ++k) {
        s.next(epoch * 3 + k, batch);
        ASSERT_EQ(batch.size(), 3u);
        seen.insert(batch.begin(), batch.end());
      }
      EXPECT_EQ(seen.size(), 9u);  // no record twice within an epoch
    }
  }
  {
    BatchSampler s(Sampling::cyclic, 5, 2, rng);
    s.next(1, batch);
    EXPECT_EQ(batch, (std::vector<std::int64_t>{0, 1}));
    s.next(3, batch);
    EXPECT_EQ(batch, (std::vector<std::int64_t>{4, 0}));
  }
}

TEST(TrainSampler, ParallelFullGradientEqualsSerialSum) {
  const auto ds = synthetic(20000, 7, 1.0, 2, LossKind::softmax, 3);
  LossSpec spec;
  spec.kind = LossKind::softmax;
  spec.classes = 3;
  LinearModel m = LinearModel::zeros(spec, 7, true);
  std::mt19937_64 rng(1);
  std::normal_distribution<double> g;
  for (auto& v : m.theta) v = g(rng);
  std::vector<double> fused(m.parameters(), 0.0), serial(m.parameters(), 0.0);
  full_gradient_sum(m, ds, 0.0, fused);
  for (std::size_t i = 0; i < ds.n; ++i) add_example_gradient(m, ds.row(i), ds.y[i], 0.0, serial.data());
  for (std::size_t j = 0; j < fused.size(); ++j) EXPECT_NEAR(fused[j], serial[j], 1e-9 * (1 + std::abs(serial[j])));
}

// The parallel pass sums fixed chunks in chunk order: bit-for-bit the same gradient for any
// number of threads, and whichever count the self-timing picks on a given call.
TEST(TrainSampler, ParallelGradientIsTheSameForEveryThreadCount) {
  const auto ds = synthetic(60000, 20, 1.0, 2, LossKind::softmax, 3);  // count x P > 2^20
  LossSpec spec;
  spec.kind = LossKind::softmax;
  spec.classes = 3;
  LinearModel m = LinearModel::zeros(spec, 20, true);
  std::mt19937_64 rng(2);
  std::normal_distribution<double> g;
  for (auto& v : m.theta) v = g(rng);
  const int before = omp_get_max_threads();
  std::vector<double> reference;
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    for (int call = 0; call < 6; ++call) {  // through the 1-thread and team probes
      std::vector<double> grad(m.parameters(), 0.0);
      full_gradient_sum(m, ds, 0.0, grad);
      if (reference.empty()) reference = grad;
      for (std::size_t j = 0; j < grad.size(); ++j)
        ASSERT_EQ(grad[j], reference[j]) << "threads " << threads << " call " << call;
    }
  }
  omp_set_num_threads(before);
}

// ---------------------------------------------------------------------------------------
// Noise: with zero records (x = 0, y = 0, squared loss, no bias) the gradient vanishes and
// theta after T unconstrained steps is the sum of T noise vectors: N(0, T s^2) per
// coordinate (Gaussian), or a sum of Laplace(s/sqrt 2). Kolmogorov-Smirnov at a fixed seed.

double ks_statistic(std::vector<double> v, const std::function<double(double)>& cdf) {
  std::sort(v.begin(), v.end());
  double dmax = 0;
  const double n = static_cast<double>(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double f = cdf(v[i]);
    dmax = std::max({dmax, f - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - f});
  }
  return dmax;
}

TEST(TrainNoise, DistributionAtFixedSeed) {
  data::Dataset zero;
  zero.n = 10;
  zero.d = 4000;
  zero.x.assign(zero.n * zero.d, 0.0);
  zero.y.assign(zero.n, 0.0);
  TrainConfig c;
  c.algorithm = Algorithm::noisy_sgd;
  c.loss.kind = LossKind::squared;
  c.bias = false;
  c.constraint = {ConstraintKind::none, 1.0};
  c.sampling = Sampling::cyclic;
  c.batch_size = 1;
  c.eta = 0.5;
  c.seed = 2024;
  const double s = 0.3;
  c.noise_std = s;
  const double crit = 1.95 / std::sqrt(4000.0);  // KS critical value at level 0.001
  for (std::int64_t T : {1, 4}) {
    c.steps = T;
    c.noise = NoiseKind::gaussian;
    auto r = fit(zero, c);
    const double sd = s * std::sqrt(static_cast<double>(T));
    EXPECT_LT(ks_statistic(r.model.theta, [&](double x) { return 0.5 * std::erfc(-x / (sd * std::sqrt(2.0))); }), crit);
    // A wrong scale is detected: the same sample against N(0, (1.2 sd)^2).
    EXPECT_GT(ks_statistic(r.model.theta, [&](double x) { return 0.5 * std::erfc(-x / (1.2 * sd * std::sqrt(2.0))); }), crit);
  }
  c.steps = 1;
  c.noise = NoiseKind::laplace;
  auto r = fit(zero, c);
  const double b = s / std::sqrt(2.0);
  auto lap = [&](double x) { return x < 0 ? 0.5 * std::exp(x / b) : 1 - 0.5 * std::exp(-x / b); };
  EXPECT_LT(ks_statistic(r.model.theta, lap), crit);
  EXPECT_GT(ks_statistic(r.model.theta, [&](double x) { return 0.5 * std::erfc(-x / (s * std::sqrt(2.0))); }), 0.0);
  // Reproducible with the seed, and marked so.
  auto r2 = fit(zero, c);
  EXPECT_EQ(r.model.theta, r2.model.theta);
  EXPECT_TRUE(r.seeded);
  c.seed.reset();
  auto r3 = fit(zero, c);
  EXPECT_FALSE(r3.seeded);
  EXPECT_NE(r3.model.theta, r.model.theta);
}

// ---------------------------------------------------------------------------------------
// Random stop: tau is uniform on 1..T (chi-square over 3000 runs), and the released model
// is the iterate at tau (the same run without noise, stopped at tau).

TEST(TrainRandomStop, StoppingTimeIsUniformAndReleasedIterateIsTau) {
  const auto ds = synthetic(10, 3, 1.0, 4, LossKind::logistic);
  TrainConfig c = base_config();
  c.algorithm = Algorithm::pnsgd;
  c.batch_size = 1;
  c.release = Release::random_stop;
  c.no_noise = true;  // no report needed here: tau is drawn the same way
  std::vector<double> counts(10, 0);
  const int runs = 3000;
  for (int k = 0; k < runs; ++k) {
    c.seed = static_cast<std::uint64_t>(k) + 1000;
    const auto r = fit(ds, c);
    ASSERT_GE(r.released_step, 1);
    ASSERT_LE(r.released_step, 10);
    counts[static_cast<std::size_t>(r.released_step - 1)] += 1;
    if (k < 10) {
      TrainConfig last = c;
      last.release = Release::last;
      last.steps = r.released_step;
      EXPECT_EQ(fit(ds, last).model.theta, r.model.theta);
    }
  }
  double chi = 0;
  for (double v : counts) chi += (v - runs / 10.0) * (v - runs / 10.0) / (runs / 10.0);
  EXPECT_LT(chi, 27.88);  // chi-square, 9 dof, level 0.001
}

// ---------------------------------------------------------------------------------------
// Federated: one pass, m users per round, each user in exactly one round.

TEST(TrainFederated, EachUserExactlyOnce) {
  const auto ds = synthetic(120, 3, 1.0, 6, LossKind::logistic);
  TrainConfig c = base_config();
  c.algorithm = Algorithm::federated;
  c.batch_size = 8;
  // Seeded (reproducible), but certified as the unseeded run: a seeded run is otherwise
  // certified with its order known, and federated Alg. 1 needs it hidden.
  c.order_known = false;
  c.sigma = 1.0;
  c.record_batches = true;
  const auto r = fit(ds, c);
  EXPECT_EQ(r.run.steps, 15);
  EXPECT_EQ(r.run.sampling, Sampling::shuffle);
  ASSERT_EQ(r.batches.size(), 15u);
  std::vector<int> seen(120, 0);
  for (const auto& b : r.batches) {
    EXPECT_EQ(b.size(), 8u);
    for (auto i : b) ++seen[static_cast<std::size_t>(i)];
  }
  for (int s : seen) EXPECT_EQ(s, 1);
  for (auto u : r.uses) EXPECT_EQ(u, 1);
  // The order is a hidden permutation, not the file order.
  EXPECT_NE(r.batches[0], (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  // Noise convention: std eta sigma / sqrt(m) (federated Alg. 1).
  EXPECT_DOUBLE_EQ(r.run.noise_std.at(1), r.run.eta.at(1) * 1.0 / std::sqrt(8.0));
  ASSERT_TRUE(r.report);
  const auto& fed = *std::find_if(r.report->analyses.begin(), r.report->analyses.end(),
                                  [](const auto& a) { return a.name == "federated"; });
  // On the noise grid (docs/security.md, "Federated runs on the grid"): the users' messages and
  // the update are on one grid, the slack (m + 2) / sqrt(m) 2^-32 sqrt(P); the certificate is at
  // least the continuous run's and within 1% of it.
  ASSERT_TRUE(fed.applicable) << fed.reason;
  ASSERT_TRUE(r.run.grid);
  EXPECT_DOUBLE_EQ(r.run.grid->slack, 10.0 / std::sqrt(8.0) * 0x1p-32 * std::sqrt(double(r.model.parameters())));
  hsdp::Run continuous = r.run;
  continuous.grid.reset();
  const auto cont = hsdp::find_analysis("federated")->evaluate(continuous, hsdp::Query::at_delta(c.delta));
  ASSERT_TRUE(cont.applicable);
  EXPECT_GE(*fed.epsilon, *cont.epsilon);
  EXPECT_LE(*fed.epsilon, 1.01 * *cont.epsilon);
  // The model is on the grid: theta / ((eta / m) lambda) is an integer (before projection; the
  // ball of radius 10 does not bind here).
  const double lambda = hsdp::random::GridNoise(hsdp::random::Law::gaussian, r.run.noise_std.at(1) * std::sqrt(8.0) / r.run.eta.at(1)).lambda();
  double norm2 = 0;
  for (const double th : r.model.theta) norm2 += th * th;
  ASSERT_LT(std::sqrt(norm2), 10.0);  // the projection did not act
  for (const double th : r.model.theta) {
    const double units = th / (r.run.eta.at(1) / 8.0) / lambda;  // a few ulps of |units| < 2^40
    EXPECT_NEAR(units, std::nearbyint(units), 1e-2) << th;
  }
  c.steps = 16;
  EXPECT_THROW(fit(ds, c), InvalidArgument);  // a user would take part twice
}

// ---------------------------------------------------------------------------------------
// The attached report is the accountant's on the run performed.

const AnalysisResult& analysis(const Report& r, std::string_view name) {
  return *std::find_if(r.analyses.begin(), r.analyses.end(), [&](const auto& a) { return a.name == name; });
}

TEST(TrainReport, EqualsAccountantOnTheRunPerformed) {
  const auto ds = synthetic(400, 6, 1.0, 8, LossKind::logistic);
  TrainConfig c = base_config();
  c.algorithm = Algorithm::pnsgd;
  c.batch_size = 4;
  c.sigma = 2.0;
  c.delta = 1e-6;
  const auto r = fit(ds, c);
  ASSERT_TRUE(r.report);
  // The run as performed: one pass of n/b cyclic steps, eta = 1/beta, journal eta sigma.
  EXPECT_EQ(r.run.n, 400);
  EXPECT_EQ(r.run.steps, 100);
  EXPECT_EQ(r.run.batch_size, 4);
  EXPECT_EQ(r.run.sampling, Sampling::cyclic);
  EXPECT_DOUBLE_EQ(r.run.eta.at(1), 1.0 / 0.5);  // R^2 = 1 + 1 (bias): beta = 2/4
  EXPECT_DOUBLE_EQ(r.run.noise_std.at(1), 2.0 * 2.0);
  EXPECT_DOUBLE_EQ(*r.run.loss.lipschitz, std::sqrt(2.0));
  EXPECT_EQ(r.run.diameter, 10.0);
  EXPECT_EQ(*r.run.dimension, 7);
  // The `account` request on the same run (with the add/remove-one column of a replace-one run).
  const Report direct = account_request(planned_run(c, 400, 6, 1), Query::at_delta(1e-6));
  EXPECT_EQ(to_json(*r.report), to_json(direct));
  EXPECT_TRUE(analysis(*r.report, "contraction-per-index").applicable);
  // The same report's request states the noise as the trainer did (sigma, its convention).
  const auto& a = r.account_request;
  const auto sigma = std::find(a.begin(), a.end(), std::pair<std::string, std::string>{"sigma", "2"});
  ASSERT_NE(sigma, a.end());
  ASSERT_NE(sigma + 1, a.end());
  EXPECT_EQ(sigma[1], (std::pair<std::string, std::string>{"convention", "journal"}));
}

TEST(TrainReport, CalibratedTargetIsMet) {
  const auto ds = synthetic(500, 4, 1.0, 9, LossKind::logistic);
  TrainConfig c = base_config();
  c.algorithm = Algorithm::noisy_gd;
  c.steps = 20;
  c.target_epsilon = 2.0;
  c.delta = 1e-5;
  const auto r = fit(ds, c);
  ASSERT_TRUE(r.report && r.report->best && r.sigma);
  const double eps = *r.report->analyses[*r.report->best].epsilon;
  EXPECT_LE(eps, 2.0);
  EXPECT_GT(eps, 1.9);  // not wastefully noisy
  // noisy-gd states its noise as sqrt(2 eta) sigma (chourasia Alg. 1).
  EXPECT_DOUBLE_EQ(r.run.noise_std.at(1), std::sqrt(2 * r.run.eta.at(1)) * *r.sigma);
  // 10% less noise no longer meets the target under the same accountant.
  c.target_epsilon.reset();
  c.sigma = *r.sigma * 0.9;
  const auto weaker = fit(ds, c);
  EXPECT_GT(*weaker.report->analyses[*weaker.report->best].epsilon, 2.0);
}

TEST(TrainReport, ViolatedAssumptionsDropAnalyses) {
  const auto ds = synthetic(200, 3, 1.0, 10, LossKind::logistic);
  TrainConfig c = base_config();
  c.algorithm = Algorithm::noisy_sgd;
  c.sampling = Sampling::poisson;
  c.batch_size = 20;
  c.steps = 30;
  c.sigma = 4.0;
  // eta above 2/beta = 4: trains, but shifted-renyi (needs a contractive step) drops out.
  c.eta = 5.0;
  auto r = fit(ds, c);
  const auto& sr = analysis(*r.report, "shifted-renyi");
  EXPECT_FALSE(sr.applicable);
  EXPECT_NE(sr.reason.find("2/M"), std::string::npos) << sr.reason;
  EXPECT_TRUE(analysis(*r.report, "composition-rdp").applicable);
  EXPECT_FALSE(r.notes.empty());
  // Clipping that can act: only the clip is reported; contraction-type analyses drop out.
  c.eta = 1.0;
  c.clip = 0.5;
  r = fit(ds, c);
  EXPECT_TRUE(r.clipping_acts);
  EXPECT_GT(r.clipped_examples, 0);
  EXPECT_EQ(*r.run.clip, 0.5);
  EXPECT_FALSE(r.run.loss.lipschitz.has_value());
  EXPECT_FALSE(r.run.loss.convex);
  EXPECT_FALSE(analysis(*r.report, "shifted-renyi").applicable);
  EXPECT_TRUE(analysis(*r.report, "composition-rdp").applicable);
  // Clipping at C >= L never acts and is not reported.
  c.clip = 10.0;
  r = fit(ds, c);
  EXPECT_FALSE(r.clipping_acts);
  EXPECT_EQ(r.clipped_examples, 0);
  EXPECT_FALSE(r.run.clip.has_value());
  // shifted-renyi certifies the trained model on the noise grid (docs/security.md, "shifted-renyi
  // on the grid"): at least the continuous run's epsilon, and within 1% of it.
  const auto& on_grid = analysis(*r.report, "shifted-renyi");
  ASSERT_TRUE(on_grid.applicable) << on_grid.reason;
  hsdp::Run continuous = r.run;
  continuous.grid.reset();
  const auto cont = hsdp::find_analysis("shifted-renyi")->evaluate(continuous, hsdp::Query::at_delta(c.delta));
  ASSERT_TRUE(cont.applicable);
  EXPECT_GE(*on_grid.epsilon, *cont.epsilon);
  EXPECT_LE(*on_grid.epsilon, 1.01 * *cont.epsilon);
}

TEST(TrainReport, RegularisedLipschitzRule) {
  TrainConfig c = base_config();
  c.loss.l2 = 0.1;
  c.sigma = 1.0;
  c.sampling = Sampling::shuffle;
  c.batch_size = 10;
  // eta = 1/beta <= 2/beta: the sensitivity uses the data part, L = R = sqrt(2).
  auto run = planned_run(c, 100, 1, 1);
  EXPECT_DOUBLE_EQ(*run.loss.lipschitz, std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(*run.loss.smoothness, 0.5 + 0.1);
  EXPECT_EQ(run.loss.strong_convexity, 0.1);
  // eta > 2/beta: the analyses may bound the update's image by D + 2 eta L, which needs
  // the whole gradient: L + lambda r.
  c.eta = 4.0;
  run = planned_run(c, 100, 1, 1);
  EXPECT_DOUBLE_EQ(*run.loss.lipschitz, std::sqrt(2.0) + 0.1 * 5.0);
}

TEST(TrainOnline, StreamWithInvSqrtStepsAndRandomStop) {
  const auto ds = synthetic(200, 2, 1.0, 12, LossKind::logistic);
  TrainConfig c = base_config();
  c.algorithm = Algorithm::online;
  c.release = Release::random_stop;
  c.sigma = 1.0;
  c.eta = 0.5;
  const auto r = fit(ds, c);
  EXPECT_EQ(r.run.steps, 200);
  EXPECT_EQ(r.run.batch_size, 1);
  EXPECT_DOUBLE_EQ(r.run.eta.at(4), 0.25);  // eta / sqrt(t)
  EXPECT_DOUBLE_EQ(r.run.noise_std.at(4), 0.25);
  const auto& og = analysis(*r.report, "online-gd");
  EXPECT_TRUE(og.applicable) << og.reason;
}

TEST(TrainPnsgd, LaplaceInOneDimension) {
  data::Dataset ds;
  ds.n = 100;
  ds.d = 1;
  for (std::size_t i = 0; i < ds.n; ++i) {
    ds.x.push_back((i % 2 ? 0.8 : -0.8));
    ds.y.push_back(i % 2 ? 1.0 : -1.0);
  }
  TrainConfig c = base_config();
  c.algorithm = Algorithm::pnsgd;
  c.bias = false;
  c.batch_size = 1;
  c.noise = NoiseKind::laplace;
  c.sigma = 0.05;
  c.eta = 0.5;
  const auto r = fit(ds, c);
  EXPECT_EQ(r.convention, Convention::isit);
  EXPECT_DOUBLE_EQ(r.run.noise_std.at(1), std::sqrt(2.0) * 0.5 * 0.05);  // sqrt(2) eta v
  const auto& lap = analysis(*r.report, "contraction-laplace");
  EXPECT_TRUE(lap.applicable) << lap.reason;
  EXPECT_GT(r.model.theta[0], 1.0);  // learns the sign: the drift (>= 100 x 0.5 x 0.8 x 0.05) beats the noise (sd 0.35)
}

TEST(TrainInput, ErrorsNameTheParameter) {
  auto ds = synthetic(50, 3, 1.0, 13, LossKind::logistic);
  TrainConfig c = base_config();
  auto message = [&](const data::Dataset& d, const TrainConfig& cfg) {
    try {
      fit(d, cfg);
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message(ds, c).find("exactly one of sigma"), std::string::npos);
  c.sigma = 1.0;
  auto big = ds;
  big.x[3] = 5.0;
  EXPECT_NE(message(big, c).find("||x|| of record 2"), std::string::npos);
  auto bad = ds;
  bad.y[4] = 3.0;
  EXPECT_NE(message(bad, c).find("label of record 5"), std::string::npos);
  c.constraint.radius = -1;
  EXPECT_NE(message(ds, c).find("radius"), std::string::npos);
  c.constraint.radius = 1;
  c.batch_size = 51;
  EXPECT_NE(message(ds, c).find("batch_size"), std::string::npos);
}

// ---------------------------------------------------------------------------------------
// breast_cancer (scikit-learn's copy, installed by scripts/install-deps.sh).

const std::string kBreastCancer = "/usr/lib/python3/dist-packages/sklearn/datasets/data/breast_cancer.csv";

TEST(TrainBreastCancer, LargeEpsilonWithinTwoPointsOfNonPrivateOptimum) {
  ASSERT_TRUE(std::filesystem::exists(kBreastCancer)) << "run scripts/install-deps.sh (python3-sklearn)";
  auto all = data::read_csv(kBreastCancer);
  data::map_labels(all, data::LabelKind::plus_minus_one);
  auto [tr, te] = data::train_test_split(all, 0.2, 1);
  data::scale_rows_to_norm(tr, 1.0);
  data::scale_rows_to_norm(te, 1.0);
  TrainConfig c;
  c.algorithm = Algorithm::noisy_gd;
  c.loss.kind = LossKind::logistic;
  c.constraint = {ConstraintKind::ball, 100.0};
  c.steps = 3000;
  c.seed = 1;
  c.no_noise = true;
  const auto optimum = fit(tr, c);
  const auto opt_tr = evaluate(optimum.model, tr), opt_te = evaluate(optimum.model, te);
  EXPECT_GT(*opt_tr.accuracy, 0.88);  // the non-private optimum of this (row-normalised) problem
  c.no_noise = false;
  c.target_epsilon = 1000.0;
  c.delta = 1e-5;
  const auto priv = fit(tr, c);
  ASSERT_TRUE(priv.report && priv.report->best);
  EXPECT_LE(*priv.report->analyses[*priv.report->best].epsilon, 1000.0);
  const auto p_tr = evaluate(priv.model, tr), p_te = evaluate(priv.model, te);
  EXPECT_GE(*p_tr.accuracy, *opt_tr.accuracy - 0.02);
  EXPECT_GE(*p_te.accuracy, *opt_te.accuracy - 0.02);

  // Multi-epoch Noisy-SGD (shuffled batches of 32, 100 epochs), same comparison.
  TrainConfig s;
  s.algorithm = Algorithm::noisy_sgd;
  s.sampling = Sampling::shuffle;
  s.batch_size = 32;
  s.epochs = 100;
  s.loss.kind = LossKind::logistic;
  s.constraint = {ConstraintKind::ball, 100.0};
  s.seed = 1;
  s.no_noise = true;
  const auto sgd_opt = fit(tr, s);
  const auto so_tr = evaluate(sgd_opt.model, tr), so_te = evaluate(sgd_opt.model, te);
  EXPECT_GT(*so_tr.accuracy, 0.88);
  s.no_noise = false;
  s.target_epsilon = 1000.0;
  const auto sgd_priv = fit(tr, s);
  EXPECT_EQ(sgd_priv.run.steps, 1422);  // round(epochs n / b) = round(1421.875)
  EXPECT_LE(*sgd_priv.report->analyses[*sgd_priv.report->best].epsilon, 1000.0);
  EXPECT_GE(*evaluate(sgd_priv.model, tr).accuracy, *so_tr.accuracy - 0.02);
  EXPECT_GE(*evaluate(sgd_priv.model, te).accuracy, *so_te.accuracy - 0.02);
}

}  // namespace
