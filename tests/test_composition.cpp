// composition-rdp (src/analysis/composition.cpp): the baseline that assumes every iterate is
// released. Closed forms, published values of TensorFlow Privacy / dp_accounting / Opacus,
// and the CLI plumbing (--alpha, --noise-multiplier, --clip).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "hsdp/analysis/analysis.hpp"
#include "hsdp/divergence/rdp.hpp"
#include "hsdp/errors.hpp"

using nlohmann::json;

namespace {

hsdp::Run dpsgd_run(std::int64_t n, std::int64_t b, std::int64_t steps, double z, double clip,
                    hsdp::Sampling sampling, hsdp::Adjacency adj = hsdp::Adjacency::remove) {
  hsdp::Run run;
  run.n = n;
  run.batch_size = b;
  run.steps = steps;
  run.sampling = sampling;
  run.eta = hsdp::Schedule(0.5);
  run.noise_std = hsdp::Schedule(hsdp::noise_std_from_multiplier(z, clip, 0.5, b));
  run.clip = clip;
  run.adjacency = adj;
  run.release = hsdp::Release::every;
  run.validate();
  return run;
}

const hsdp::AnalysisPtr& composition() {
  static const auto a = hsdp::find_analysis("composition-rdp");
  return a;
}

TEST(Composition, FullBatchIsComposedGaussianMechanism) {
  // A full batch averages over the data set's own records: a record added or removed moves the
  // mean by at most 2C/n (over n or n +- 1 records), as a replaced one does (neighbours.md).
  const auto run = dpsgd_run(100, 100, 7, 3.0, 2.0, hsdp::Sampling::full);
  EXPECT_FALSE(composition()->check(run).has_value());
  for (double alpha : {1.5, 2.0, 10.0, 77.7}) {
    EXPECT_NEAR(*composition()->rdp_at(run, alpha), 4 * 7 * alpha / (2 * 9.0), 1e-12 * alpha);
  }
  auto rep = dpsgd_run(100, 100, 7, 3.0, 2.0, hsdp::Sampling::full, hsdp::Adjacency::replace);
  EXPECT_NEAR(*composition()->rdp_at(rep, 3.0), 4 * 7 * 3.0 / 18.0, 1e-12);
  // The sum over every record divided by the fixed n (Poisson, q = 1): sensitivity C, add/remove.
  auto fixed_norm = dpsgd_run(100, 100, 7, 3.0, 2.0, hsdp::Sampling::poisson);
  EXPECT_NEAR(*composition()->rdp_at(fixed_norm, 3.0), 7 * 3.0 / 18.0, 1e-12);
  // Cyclic batches under add/remove are refused (positions shift); shuffled ones when b
  // divides n or n + 1 (a neighbour has a different number of batches per epoch).
  auto cyc = dpsgd_run(100, 10, 7, 3.0, 2.0, hsdp::Sampling::cyclic);
  ASSERT_TRUE(composition()->check(cyc).has_value());
  EXPECT_NE(composition()->check(cyc)->find("cyclic"), std::string::npos);
  auto shu_r = dpsgd_run(100, 10, 7, 3.0, 2.0, hsdp::Sampling::shuffle);
  ASSERT_TRUE(composition()->check(shu_r).has_value());
  // b = 7 divides neither 100 nor 101: add/remove as replace-one (14 batches per epoch).
  auto shu_ar = dpsgd_run(100, 7, 20, 3.0, 2.0, hsdp::Sampling::shuffle);
  ASSERT_FALSE(composition()->check(shu_ar).has_value());
  EXPECT_NEAR(*composition()->rdp_at(shu_ar, 3.0), 4 * 2 * 3.0 / 18.0, 1e-12);
  // shuffle, replace-one: at most once per epoch of floor(n/b) steps (7 steps of a 10-step
  // epoch -> 1; 25 -> 3; b = 30 of n = 100: epochs of 3 steps, 7 steps -> 3)
  auto shu = dpsgd_run(100, 10, 7, 3.0, 2.0, hsdp::Sampling::shuffle, hsdp::Adjacency::replace);
  EXPECT_NEAR(*composition()->rdp_at(shu, 3.0), 4 * 1 * 3.0 / 18.0, 1e-12);
  auto shu3 = dpsgd_run(100, 10, 25, 3.0, 2.0, hsdp::Sampling::shuffle, hsdp::Adjacency::replace);
  EXPECT_NEAR(*composition()->rdp_at(shu3, 3.0), 4 * 3 * 3.0 / 18.0, 1e-12);
  auto shu_drop = dpsgd_run(100, 30, 7, 3.0, 2.0, hsdp::Sampling::shuffle, hsdp::Adjacency::replace);
  EXPECT_NEAR(*composition()->rdp_at(shu_drop, 3.0), 4 * 3 * 3.0 / 18.0, 1e-12);
  // The partial last batch kept (b = 30: 3 batches of 30 and one of 10, averaged over its own
  // 10): 4 steps per epoch, 7 steps -> 2 epochs, each charged at the partial batch's 2C/10 =
  // 6 in units of C/b: RDP 2 * alpha 36 / (2 z^2).
  auto shu_keep = shu_drop;
  shu_keep.drop_last = false;
  EXPECT_NEAR(*composition()->rdp_at(shu_keep, 3.0), 2 * 36 * 3.0 / 18.0, 1e-12);
  // ... and under add/remove (b divides neither n - 1 nor n): the last batch also changes every
  // epoch: 4 + 36 per epoch.
  auto shu_keep_ar = shu_keep;
  shu_keep_ar.adjacency = hsdp::Adjacency::remove;
  ASSERT_FALSE(composition()->check(shu_keep_ar).has_value());
  EXPECT_NEAR(*composition()->rdp_at(shu_keep_ar, 3.0), 2 * 40 * 3.0 / 18.0, 1e-12);
  // cyclic, replace-one: a record is read by ceil(T b / n) steps only (7*10/100 -> 1;
  // 25 steps -> 3), each a Gaussian step at sensitivity 2
  auto cyc_r = dpsgd_run(100, 10, 7, 3.0, 2.0, hsdp::Sampling::cyclic, hsdp::Adjacency::replace);
  EXPECT_NEAR(*composition()->rdp_at(cyc_r, 3.0), 4 * 1 * 3.0 / 18.0, 1e-12);
  auto cyc_r3 = dpsgd_run(100, 10, 25, 3.0, 2.0, hsdp::Sampling::cyclic, hsdp::Adjacency::replace);
  EXPECT_NEAR(*composition()->rdp_at(cyc_r3, 3.0), 4 * 3 * 3.0 / 18.0, 1e-12);
  // with a schedule the k steps with the least noise are charged
  cyc_r3.noise_std = hsdp::Schedule([] {
    std::vector<double> v(25, 0.5 * 3.0 * 2.0 / 10);
    v[20] = 0.5 * 1.0 * 2.0 / 10;  // z = 1 at step 21
    return v;
  }());
  cyc_r3.validate();
  EXPECT_NEAR(*composition()->rdp_at(cyc_r3, 3.0), 4 * 3.0 / 2 * (1.0 + 2.0 / 9.0), 1e-12);
  // (eps, delta) of the composed Gaussian: never below the exact Gaussian-mechanism curve
  // (Balle-Wang 2018), mu = 2 sqrt(T)/z.
  const double mu = 2 * std::sqrt(7.0) / 3.0, eps = 1.0;
  const double exact = 0.5 * std::erfc((eps / mu - mu / 2) / std::sqrt(2.0)) -
                       std::exp(eps) * 0.5 * std::erfc((eps / mu + mu / 2) / std::sqrt(2.0));
  const double ld = composition()->log_delta(run, eps);
  EXPECT_GE(std::exp(ld), exact);
  EXPECT_LE(std::exp(ld), 3 * exact);  // and not absurdly loose
}

TEST(Composition, LipschitzStandsInForTheClip) {
  auto run = dpsgd_run(1000, 10, 100, 1.3, 1.0, hsdp::Sampling::poisson);
  run.clip.reset();
  EXPECT_TRUE(composition()->check(run).has_value());  // neither clip nor L
  run.loss.lipschitz = 1.0;
  EXPECT_FALSE(composition()->check(run).has_value());
  EXPECT_NEAR(*composition()->rdp_at(run, 4.0), 100 * hsdp::div::s_alpha(4.0, 0.01, 1.3), 1e-12);
  run.noise = hsdp::NoiseKind::laplace;
  EXPECT_TRUE(composition()->check(run).has_value());
}

// tensorflow_privacy, privacy/analysis/rdp_accountant_test.py, test_get_privacy_spent /
// test_get_privacy_spent_check_target_delta: q = 0.01, noise multiplier 4, 10^4 steps
// (the Abadi et al. 2016 setting), orders 2..32, delta = 1e-5, Mironov's conversion
// (eps = rdp - log(delta)/(alpha-1)) -> eps = 1.258575 at order 20.
TEST(Composition, TensorFlowPrivacyAbadiSetting) {
  const auto run = dpsgd_run(100000, 1000, 10000, 4.0, 1.0, hsdp::Sampling::poisson);
  double best = INFINITY;
  int best_order = 0;
  for (int a = 2; a <= 32; ++a) {
    const double e = hsdp::div::epsilon_from_rdp(a, *composition()->rdp_at(run, a), 1e-5,
                                                 hsdp::div::RdpConversion::mironov);
    if (e < best) best = e, best_order = a;
  }
  EXPECT_NEAR(best, 1.258575, 1e-6 * 1.258575);
  EXPECT_EQ(best_order, 20);
  // hsdp's own answer (CKS / (23), continuous alpha) is never above it.
  EXPECT_LE(composition()->epsilon(run, 1e-5), best);
}

// Opacus, opacus/tests/accountants_test.py, test_rdp_accountant: noise 1.5, sample rate 0.04,
// 2250 steps, delta 1e-5 -> eps = 7.32911117143 on Opacus' default orders, CKS conversion.
TEST(Composition, OpacusSetting) {
  const auto run = dpsgd_run(10000, 400, 2250, 1.5, 0.7, hsdp::Sampling::poisson);
  std::vector<double> orders;
  for (int x = 1; x < 100; ++x) orders.push_back(1 + x / 10.0);
  for (int a = 12; a < 64; ++a) orders.push_back(a);
  double best = INFINITY;
  for (double a : orders)
    best = std::min(best, hsdp::div::epsilon_from_rdp(a, *composition()->rdp_at(run, a), 1e-5,
                                                      hsdp::div::RdpConversion::cks));
  EXPECT_NEAR(best, 7.32911117143, 1e-6 * 7.33);
  const double eps = composition()->epsilon(run, 1e-5);
  EXPECT_LE(eps, best);
  EXPECT_GT(eps, 0.97 * best);
  // and delta(eps) is consistent with eps(delta)
  EXPECT_NEAR(std::exp(composition()->log_delta(run, eps)), 1e-5, 1e-5 * 1e-3);
}

TEST(Composition, SchedulesSumPerStepRdp) {
  auto run = dpsgd_run(1000, 10, 3, 1.0, 1.0, hsdp::Sampling::poisson);
  run.noise_std = hsdp::Schedule(std::vector<double>{0.5 * 1.0 / 10, 0.5 * 2.0 / 10, 0.5 * 4.0 / 10});
  run.validate();
  const double expected = hsdp::div::s_alpha(3.0, 0.01, 1.0) + hsdp::div::s_alpha(3.0, 0.01, 2.0) +
                          hsdp::div::s_alpha(3.0, 0.01, 4.0);
  EXPECT_NEAR(*composition()->rdp_at(run, 3.0), expected, 1e-12 * expected);
}

TEST(Composition, FixedSizeBatches) {
  const auto rep = dpsgd_run(1000, 10, 100, 2.0, 1.0, hsdp::Sampling::fixed, hsdp::Adjacency::replace);
  const double v = *composition()->rdp_at(rep, 4.0);
  EXPECT_NEAR(v, 100 * hsdp::div::sampled_gaussian_rdp(4.0, 0.01, 2.0, hsdp::div::Subsampling::fixed,
                                                       hsdp::div::Neighbours::replace),
              1e-12 * v);
  EXPECT_LT(v, 100 * 2 * 4.0 / 4.0);  // amplified below the no-subsampling value
  // add/remove with fixed-size batches: the larger data set's batch is the smaller's with one
  // member swapped in with probability <= b/n (neighbours.md): the Poisson add/remove pair of
  // sensitivity 2, i.e. noise multiplier z/2, amplified below the Gaussian of sensitivity 2.
  const auto rem = dpsgd_run(1000, 10, 100, 2.0, 1.0, hsdp::Sampling::fixed);
  const double w = *composition()->rdp_at(rem, 4.0);
  EXPECT_NEAR(w, 100 * hsdp::div::sampled_gaussian_rdp(4.0, 0.01, 1.0, hsdp::div::Subsampling::poisson,
                                                       hsdp::div::Neighbours::remove),
              1e-12 * w);
  EXPECT_LT(w, 100 * 2 * 4.0 / 4.0);
}

TEST(Composition, EvaluateFillsTheRdpCurve) {
  const auto run = dpsgd_run(100, 100, 7, 3.0, 2.0, hsdp::Sampling::full);
  auto q = hsdp::Query::at_delta(1e-5);
  q.alphas = {2.0, 8.0};
  const auto r = composition()->evaluate(run, q);
  ASSERT_EQ(r.rdp.size(), 2u);
  EXPECT_EQ(r.rdp[0].alpha, 2.0);
  EXPECT_GE(r.rdp[0].epsilon, 4 * 7 * 2.0 / 18);  // full batch: 2C/n (neighbours.md)
  EXPECT_NEAR(r.rdp[0].epsilon, 4 * 7 * 2.0 / 18, 1e-8);
  q.alphas = {1.0};
  try {
    composition()->evaluate(run, q);
    FAIL();
  } catch (const hsdp::InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "alpha = 1: must be > 1");
  }
}

// pabi-feldman and balle-mixing state RDP curves too (journal Thm 6, isit Prop. 1); with the
// shared conversion module they report them through rdp_at (--alpha).
TEST(Composition, ComparisonsReportTheirRdpCurves) {
  hsdp::Run run;
  run.n = 100;
  run.steps = 100;
  run.eta = hsdp::Schedule(0.05);
  run.noise_std = hsdp::Schedule(0.05 * 3);
  run.loss.lipschitz = 1;
  run.loss.smoothness = 1;
  run.diameter = 1;
  run.validate();
  const auto balle = hsdp::find_analysis("balle-mixing");
  ASSERT_FALSE(balle->check(run).has_value());
  // kappa = 2 L^2 / sigma^2 at the worst index i = n
  EXPECT_NEAR(*balle->rdp_at(run, 2.0), 2.0 * 2.0 / 9.0, 1e-12);
  run.release = hsdp::Release::random_stop;
  const auto pabi = hsdp::find_analysis("pabi-feldman");
  ASSERT_FALSE(pabi->check(run).has_value());
  double h = 0;
  for (int k = 1; k <= 100; ++k) h += 1.0 / k;
  // zeta = 4 alpha L^2 H_n / (n sigma^2) for alpha <= alpha*; no statement beyond alpha*
  EXPECT_NEAR(*pabi->rdp_at(run, 2.0), 4 * 2.0 * h / (100 * 9.0), 1e-10);
  EXPECT_TRUE(std::isinf(*pabi->rdp_at(run, 1000.0)));
}

}  // namespace

namespace {

// KL and TV of the subsampled Gaussian pair P = (1 - q) N(0, z^2) + q N(a, z^2) against
// Q = N(0, z^2), by the trapezoid rule in long double on x/z in [-40, 40 + a/z] (step 1/400:
// the integrands are smooth and Gaussian-weighted, so the rule converges far below the
// tolerances used). With u(x) = dP/dQ - 1 = q expm1((2 a x - a^2) / (2 z^2)):
// KL(P||Q) = E_Q[(1 + u) log1p(u) - u], KL(Q||P) = E_Q[u - log1p(u)], TV = E_Q|u| / 2.
struct PairNumbers {
  long double kl_pq = 0, kl_qp = 0, tv = 0;
};
PairNumbers pair_by_quadrature(double q, double z, double a) {
  PairNumbers out;
  const long double h = 1.0L / 400, lo = -40.0L, hi = 40.0L + a / z;
  const long double norm = 1.0L / std::sqrt(2.0L * 3.14159265358979323846264338327950288L);
  for (long double y = lo; y <= hi; y += h) {  // y = x / z
    const long double x = y * z, w = norm * std::exp(-y * y / 2) * h;
    const long double u = q * std::expm1((2 * a * x - a * a) / (2.0L * z * z));
    out.kl_pq += w * ((1 + u) * std::log1p(u) - u);
    out.kl_qp += w * (u - std::log1p(u));
    out.tv += w * std::fabs(u) / 2;
  }
  return out;
}

double detail_of(const hsdp::AnalysisResult& r, const std::string& name) {
  for (const auto& d : r.details)
    if (d.name == name) return d.value;
  return std::nan("");
}

}  // namespace

// The order-1 route of composition-rdp (docs/rdp.md "Order 1: KL and total variation"): its KL
// bound is above the quadrature KL of the pair in both directions (times T: the steps of a
// non-adaptive product add exactly), and its delta at eps = 0 above the exact TV of one step.
TEST(Composition, KlAndTotalVariationBoundsAboveQuadrature) {
  struct Case {
    double q, z;
    hsdp::Sampling sampling;
    double shift;  // the dominating pair's mean: 1 (Poisson), 2 (fixed-size swap)
  };
  for (const Case c : {Case{1e-3, 1.0, hsdp::Sampling::poisson, 1.0}, Case{1e-2, 0.7, hsdp::Sampling::poisson, 1.0},
                       Case{5e-3, 3.0, hsdp::Sampling::poisson, 1.0}, Case{1e-3, 2.0, hsdp::Sampling::fixed, 2.0}}) {
    const std::int64_t n = static_cast<std::int64_t>(std::llround(1.0 / c.q)), T = 7;
    const PairNumbers exact = pair_by_quadrature(c.q, c.z, c.shift);
    ASSERT_GT(exact.kl_pq, 0);
    for (const auto adj : {hsdp::Adjacency::remove, hsdp::Adjacency::replace}) {
      SCOPED_TRACE(testing::Message() << "q = " << c.q << " z = " << c.z << " shift " << c.shift
                                      << (adj == hsdp::Adjacency::remove ? " add/remove" : " replace"));
      // A delta target that the TV route meets, so that it reports its KL and TV bounds.
      auto run = dpsgd_run(n, 1, T, c.z, 1.0, c.sampling, adj);
      const auto r = composition()->evaluate(run, hsdp::Query::at_delta(0.9));
      ASSERT_TRUE(r.applicable) << r.reason;
      const double kl = detail_of(r, "kl_bound"), tv = detail_of(r, "tv_bound");
      ASSERT_FALSE(std::isnan(kl));
      EXPECT_EQ(*r.epsilon, 0.0);
      EXPECT_GE(kl, T * exact.kl_pq);
      EXPECT_GE(kl, T * exact.kl_qp);
      // Not loose: within the Jensen step log(1 + chi^2) of the KL (a factor ~2 for small chi^2).
      EXPECT_LE(kl, 2.5 * T * exact.kl_pq);
      // TV of the composition is at least that of one step; the bound is above it.
      EXPECT_GE(tv, exact.tv);
      // One step: delta at eps = 0 is the TV route's (or the RDP route's, if smaller: both are
      // above the exact TV).
      run.steps = 1;
      const auto one = composition()->evaluate(run, hsdp::Query::at_epsilon(0.0));
      ASSERT_TRUE(one.applicable) << one.reason;
      EXPECT_GE(*one.delta, exact.tv);
      EXPECT_LE(*one.delta, (adj == hsdp::Adjacency::replace ? 2.0 : 1.0) * std::sqrt(exact.kl_pq * 2.5 / 2) * 1.001);
    }
  }
}

// Issue 38: q = 1.18e-5, z = 9.108, T = 76, delta = 1e-5 (Poisson, add/remove): dp_accounting
// proves eps = 0 by the KL bound; so does composition-rdp now (it printed 6.35e-6). KL <=
// 76 log(1 + q^2 (e^{1/z^2} - 1)) = 1.2834e-10, TV <= sqrt(KL/2) = 8.0105e-6 <= 1e-5.
TEST(Composition, TinySamplingRateGivesEpsilonZeroByTotalVariation) {
  const auto run = dpsgd_run(84746, 1, 76, 9.108, 1.0, hsdp::Sampling::poisson);
  const auto r = composition()->evaluate(run, hsdp::Query::at_delta(1e-5));
  ASSERT_TRUE(r.applicable) << r.reason;
  EXPECT_EQ(*r.epsilon, 0.0);
  const double q = 1.0 / 84746, kl = 76 * std::log1p(q * q * std::expm1(1 / (9.108 * 9.108)));
  EXPECT_NEAR(detail_of(r, "kl_bound"), kl, 1e-9 * kl);
  EXPECT_NEAR(detail_of(r, "tv_bound"), std::sqrt(kl / 2), 1e-9 * std::sqrt(kl / 2));
  // Above the target the RDP route answers as before (no TV detail).
  const auto r2 = composition()->evaluate(run, hsdp::Query::at_delta(1e-6));
  EXPECT_GT(*r2.epsilon, 0.0);
  EXPECT_TRUE(std::isnan(detail_of(r2, "kl_bound")));
}
