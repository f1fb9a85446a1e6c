// The accountant picks the tightest valid upper bound; evaluate() rounds up and inverts
// conservatively. Uses small analyses with known closed forms.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "hsdp/accountant.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/run_spec.hpp"

namespace {

// delta(eps) = scale * exp(-eps): eps(delta) = log(scale / delta) exactly.
class Exponential final : public hsdp::Analysis {
 public:
  Exponential(std::string name, double scale, bool applicable = true,
              hsdp::BoundKind kind = hsdp::BoundKind::upper)
      : name_(std::move(name)), scale_(scale), applicable_(applicable), kind_(kind) {}
  std::string_view name() const override { return name_; }
  std::string_view citation() const override { return "test"; }
  hsdp::BoundKind kind() const override { return kind_; }
  std::optional<std::string> check(const hsdp::Run&) const override {
    if (applicable_) return std::nullopt;
    return std::string("test reason");
  }
  double log_delta(const hsdp::Run&, double eps) const override { return std::log(scale_) - eps; }

 private:
  std::string name_;
  double scale_;
  bool applicable_;
  hsdp::BoundKind kind_;
};

// delta = 0 beyond eps = 2, 1 - eps/2 below (pure DP at eps = 2).
class PureAtTwo final : public hsdp::Analysis {
 public:
  std::string_view name() const override { return "pure"; }
  std::string_view citation() const override { return "test"; }
  std::optional<std::string> check(const hsdp::Run&) const override { return std::nullopt; }
  double log_delta(const hsdp::Run&, double eps) const override {
    return eps >= 2 ? -std::numeric_limits<double>::infinity() : std::log1p(-eps / 2);
  }
};

hsdp::Run some_run() {
  hsdp::Run run;
  run.n = 10;
  run.steps = 10;
  return run;
}

TEST(Accountant, BestIsMinimumOverApplicableUpperBounds) {
  std::vector<hsdp::AnalysisPtr> list = {
      std::make_shared<Exponential>("a", 0.5), std::make_shared<Exponential>("b", 0.1),
      std::make_shared<Exponential>("c", 0.001, /*applicable=*/false),
      std::make_shared<Exponential>("lower", 0.0001, true, hsdp::BoundKind::lower),
      std::make_shared<Exponential>("d", 0.2)};
  const auto by_delta = hsdp::account(some_run(), hsdp::Query::at_delta(1e-6), list);
  ASSERT_TRUE(by_delta.best);
  EXPECT_EQ(by_delta.analyses[*by_delta.best].name, "b");
  const auto by_eps = hsdp::account(some_run(), hsdp::Query::at_epsilon(1.0), list);
  ASSERT_TRUE(by_eps.best);
  EXPECT_EQ(by_eps.analyses[*by_eps.best].name, "b");
  EXPECT_FALSE(by_eps.analyses[2].applicable);
  EXPECT_EQ(by_eps.analyses[2].reason, "test reason");
  EXPECT_FALSE(by_eps.analyses[2].delta.has_value());
}

TEST(Accountant, NoBestWhenNothingApplies) {
  std::vector<hsdp::AnalysisPtr> list = {std::make_shared<Exponential>("c", 0.1, false)};
  EXPECT_FALSE(hsdp::account(some_run(), hsdp::Query::at_delta(1e-6), list).best);
}

TEST(Accountant, EpsilonInversionIsConservativeAndTight) {
  Exponential e("e", 0.3);
  for (double delta : {0.2, 1e-3, 1e-5, 1e-12, 1e-100, 1e-300}) {
    const auto r = e.evaluate(some_run(), hsdp::Query::at_delta(delta));
    const double exact = std::log(0.3 / delta);
    EXPECT_GE(*r.epsilon, exact) << delta;
    EXPECT_LE(*r.epsilon, exact * (1 + 3e-9) + 1e-12) << delta;
  }
  // delta(0) <= target already: eps = 0.
  EXPECT_EQ(*e.evaluate(some_run(), hsdp::Query::at_delta(0.5)).epsilon, 0.0);
}

TEST(Accountant, PureDpPointIsFound) {
  PureAtTwo p;
  const auto r = p.evaluate(some_run(), hsdp::Query::at_delta(1e-9));
  // 1 - eps/2 <= 1e-9 at eps = 2 - 2e-9: the answer lies in [2 - 2e-9, 2].
  EXPECT_GE(*r.epsilon, 2.0 - 2e-9);
  EXPECT_LE(*r.epsilon, 2.0 * (1 + 3e-9));
  EXPECT_EQ(*p.evaluate(some_run(), hsdp::Query::at_epsilon(2.5)).delta, 0.0);
}

TEST(Accountant, DeltaCappedAtOneAndRoundedUp) {
  Exponential e("e", 5.0);
  EXPECT_EQ(*e.evaluate(some_run(), hsdp::Query::at_epsilon(0.1)).delta, 1.0);
  const auto r = e.evaluate(some_run(), hsdp::Query::at_epsilon(10.0));
  const double exact = 5.0 * std::exp(-10.0);
  EXPECT_GE(*r.delta, exact);
  EXPECT_LE(*r.delta, exact * (1 + 3e-9));
}

TEST(Accountant, InfiniteEpsilonIsStated) {
  Exponential e("e", 1e300);  // eps(1e-300) = log(1e300 / 1e-300) = 1381.6: large but finite
  const auto r = e.evaluate(some_run(), hsdp::Query::at_delta(1e-300));
  EXPECT_NEAR(*r.epsilon, std::log(1e300) - std::log(1e-300), 1e-5);
  class Never final : public hsdp::Analysis {
   public:
    std::string_view name() const override { return "never"; }
    std::string_view citation() const override { return "test"; }
    std::optional<std::string> check(const hsdp::Run&) const override { return std::nullopt; }
    double log_delta(const hsdp::Run&, double) const override { return 0.0; }
  } never;
  const auto inf = never.evaluate(some_run(), hsdp::Query::at_delta(1e-5));
  EXPECT_TRUE(std::isinf(*inf.epsilon));
  EXPECT_FALSE(inf.note.empty());
}

TEST(RoundUp, NeverBelowAndTight) {
  for (double x : {1e-300, 3.3e-17, 0.1, 1.0 / 3.0, 2.0, 12345.678, 1e300}) {
    const double r = hsdp::round_up(x);
    EXPECT_GE(r, x);
    EXPECT_LE(r, x * (1 + 2.1e-9));
  }
  EXPECT_EQ(hsdp::round_up(0.0), 0.0);
  EXPECT_TRUE(std::isinf(hsdp::round_up(std::numeric_limits<double>::infinity())));
}

TEST(Query, Validation) {
  EXPECT_THROW(hsdp::Query::at_delta(0.0), hsdp::InvalidArgument);
  EXPECT_THROW(hsdp::Query::at_delta(1.0), hsdp::InvalidArgument);
  EXPECT_THROW(hsdp::Query::at_delta(std::nan("")), hsdp::InvalidArgument);
  EXPECT_THROW(hsdp::Query::at_epsilon(-1e-9), hsdp::InvalidArgument);
  EXPECT_THROW(hsdp::Query::at_epsilon(INFINITY), hsdp::InvalidArgument);
  EXPECT_NO_THROW(hsdp::Query::at_epsilon(0.0));
}

// ---- The accountant on real runs: best = minimum over applicable upper bounds.

// journal Fig. 2 setting (n = T = 100, b = 1, eta = 0.05, L = beta = 1, D = 1), journal sigma.
hsdp::Run journal_run(double sigma) {
  hsdp::Run run;
  run.n = 100;
  run.steps = 100;
  run.batch_size = 1;
  run.sampling = hsdp::Sampling::cyclic;
  run.eta = hsdp::Schedule(0.05);
  run.noise_std = hsdp::Schedule(0.05 * sigma);
  run.loss.lipschitz = 1.0;
  run.loss.smoothness = 1.0;
  run.diameter = 1.0;
  return run;
}

std::vector<hsdp::Run> several_runs() {
  std::vector<hsdp::Run> runs;
  runs.push_back(journal_run(3.0));  // last iterate: contraction, balle, composition, shifted
  auto stop = journal_run(3.0);
  stop.release = hsdp::Release::random_stop;  // contraction-random-stop, online-gd, pabi
  runs.push_back(stop);
  auto shuffled = journal_run(2.0);
  shuffled.sampling = hsdp::Sampling::shuffle;
  shuffled.batch_size = 10;
  shuffled.steps = 10;
  runs.push_back(shuffled);
  auto full = journal_run(4.0);  // full-batch noisy GD: langevin and its lower bound
  full.sampling = hsdp::Sampling::full;
  full.batch_size = 100;
  full.steps = 50;
  full.loss.strong_convexity = 0.5;
  full.diameter = std::numeric_limits<double>::infinity();  // langevin Thm 3 is unconstrained
  runs.push_back(full);
  auto every = journal_run(5.0);
  every.release = hsdp::Release::every;
  runs.push_back(every);
  return runs;
}

TEST(Accountant, BestEqualsMinimumOverApplicableAnalysesOnRealRuns) {
  int with_lower = 0;
  for (const auto& run : several_runs()) {
    for (const auto& query : {hsdp::Query::at_delta(1e-5), hsdp::Query::at_epsilon(1.0)}) {
      const auto report = hsdp::account(run, query);
      ASSERT_TRUE(report.best) << run.summary();
      // Independently of account(): each analysis evaluated on its own, the minimum taken
      // over those that apply and are upper bounds.
      double minimum = std::numeric_limits<double>::infinity();
      std::string argmin;
      for (const auto& a : hsdp::all_analyses()) {
        if (a->check(run)) continue;
        if (a->kind() == hsdp::BoundKind::lower) {
          ++with_lower;
          continue;
        }
        if (a->kind() == hsdp::BoundKind::heuristic) continue;  // never a guarantee
        const auto r = a->evaluate(run, query);
        const double v = query.delta ? *r.epsilon : *r.delta;
        if (v < minimum) minimum = v, argmin = r.name;
      }
      const auto& best = report.analyses[*report.best];
      EXPECT_EQ(best.kind, hsdp::BoundKind::upper);
      EXPECT_EQ(query.delta ? *best.epsilon : *best.delta, minimum) << run.summary();
      EXPECT_EQ(best.name, argmin) << run.summary();
      // Every applicable result carries a number; every other one a reason and no number.
      for (const auto& r : report.analyses) {
        EXPECT_EQ(r.applicable, r.reason.empty()) << r.name;
        EXPECT_EQ(r.applicable, r.epsilon.has_value()) << r.name;
      }
    }
  }
  EXPECT_GT(with_lower, 0);  // the full-batch run exercises langevin-lower, never "best"
}

// ---- Per-index view.

// E_{e^eps}(N(r,1) || N(0,1)) = Q(eps/r - r/2) - e^eps Q(eps/r + r/2) (journal Lemma 1).
double theta(double eps, double r) {
  auto q = [](double x) { return 0.5 * std::erfc(x / std::sqrt(2.0)); };
  return q(eps / r - r / 2) - std::exp(eps) * q(eps / r + r / 2);
}

TEST(PerIndex, ContractionCurveMatchesThm4ClosedForm) {
  // journal Thm 4 eq. (16), constant parameters, b = 1: the record at position i is
  // processed at step i and contracted by the T - i later steps:
  //   delta_i(eps) = theta(2 eta L / s) theta(D / s)^{T - i},  s = eta sigma,
  // with D = dia(W) = 1 (convex, smooth, eta <= 2/beta: journal App. H).
  const auto run = journal_run(3.0);
  const double eps = 1.0, s = 0.15;
  auto report = hsdp::account(run, hsdp::Query::at_epsilon(eps));
  hsdp::add_per_index(report, hsdp::all_analyses());
  ASSERT_TRUE(report.per_index);
  const auto& view = *report.per_index;
  EXPECT_FALSE(view.subsampled);
  ASSERT_EQ(view.indices.size(), 100u);
  const hsdp::PerIndexView::Curve* contraction = nullptr;
  for (const auto& c : view.curves) {
    if (c.name == "contraction-per-index") contraction = &c;
    EXPECT_NE(c.name, "composition-rdp");  // not position-dependent
    EXPECT_NE(c.name, "shifted-renyi");
  }
  ASSERT_NE(contraction, nullptr);
  ASSERT_EQ(contraction->points.size(), 100u);
  double largest = 0;
  for (std::size_t k = 0; k < 100; ++k) {
    const auto& p = contraction->points[k];
    const auto i = static_cast<double>(p.index);
    EXPECT_EQ(p.index, static_cast<std::int64_t>(k + 1));
    const double exact = theta(eps, 0.1 / s) * std::pow(theta(eps, 1.0 / s), 100.0 - i);
    EXPECT_GE(p.delta, exact) << p.index;  // rounded up, never down
    EXPECT_NEAR(p.delta / exact, 1.0, 1e-8) << p.index;
    if (k > 0) EXPECT_GE(p.delta, contraction->points[k - 1].delta);  // later = less private
    largest = std::max(largest, p.delta);
  }
  // The worst index is the last one and the curve's maximum is the analysis' own result.
  ASSERT_TRUE(contraction->worst_index);
  EXPECT_EQ(*contraction->worst_index, 100);
  for (const auto& r : report.analyses)
    if (r.name == "contraction-per-index") EXPECT_EQ(*r.delta, largest);
}

TEST(PerIndex, EpsilonCurveWorstEqualsReport) {
  auto report = hsdp::account(journal_run(3.0), hsdp::Query::at_delta(1e-5));
  hsdp::add_per_index(report, hsdp::all_analyses());
  int curves = 0;
  for (const auto& c : report.per_index->curves) {
    double largest = 0;
    for (const auto& p : c.points) largest = std::max(largest, p.epsilon);
    for (const auto& r : report.analyses)
      if (r.name == c.name) {
        EXPECT_EQ(*r.epsilon, largest) << c.name;
        ++curves;
      }
    // The worst index the analysis names attains the maximum (balle-mixing ties at
    // i = n - 1 and n with M = 1: kappa = 2 L^2 M^{n-i} / ((n-i) sigma^2) is equal there).
    ASSERT_TRUE(c.worst_index);
    EXPECT_EQ(c.points[static_cast<std::size_t>(*c.worst_index - 1)].epsilon, largest) << c.name;
  }
  EXPECT_EQ(curves, 2);  // contraction-per-index and balle-mixing
}

TEST(PerIndex, Classification) {
  const auto run = journal_run(3.0);
  EXPECT_TRUE(hsdp::is_per_index(*hsdp::find_analysis("contraction-per-index"), run));
  EXPECT_TRUE(hsdp::is_per_index(*hsdp::find_analysis("balle-mixing"), run));
  EXPECT_FALSE(hsdp::is_per_index(*hsdp::find_analysis("composition-rdp"), run));
  EXPECT_FALSE(hsdp::is_per_index(*hsdp::find_analysis("contraction-laplace"), run));  // n/a
  auto stop = run;
  stop.release = hsdp::Release::random_stop;  // bounds the worst position whatever i is
  EXPECT_FALSE(hsdp::is_per_index(*hsdp::find_analysis("contraction-random-stop"), stop));
  auto shuffled = run;
  shuffled.sampling = hsdp::Sampling::shuffle;  // balle: a record's position is random
  EXPECT_FALSE(hsdp::is_per_index(*hsdp::find_analysis("balle-mixing"), shuffled));
  auto indexed = run;
  indexed.index = 5;
  auto report = hsdp::account(indexed, hsdp::Query::at_delta(1e-5));
  EXPECT_THROW(hsdp::add_per_index(report, hsdp::all_analyses()), hsdp::InvalidArgument);
}

TEST(PerIndex, SubsampleForLargeN) {
  const auto all = hsdp::per_index_positions(10, 1000);
  ASSERT_EQ(all.size(), 10u);
  EXPECT_EQ(all.front(), 1);
  EXPECT_EQ(all.back(), 10);
  const std::int64_t n = 1'000'000;
  const auto some = hsdp::per_index_positions(n, 1000);
  EXPECT_LE(some.size(), 1000u);
  EXPECT_GE(some.size(), 500u);
  EXPECT_TRUE(std::is_sorted(some.begin(), some.end()));
  EXPECT_EQ(some.front(), 1);
  EXPECT_EQ(some.back(), n);
  // Dense near the end, where the bound changes fastest: n - 1 .. n - 5 are all present.
  for (std::int64_t k = 1; k <= 5; ++k)
    EXPECT_TRUE(std::binary_search(some.begin(), some.end(), n - k)) << k;
  EXPECT_THROW(hsdp::per_index_positions(n, 3), hsdp::InvalidArgument);
}

}  // namespace

namespace {

// Opacus' MNIST example as a DP-SGD user states it: no step size.
hsdp::Run dp_sgd(std::optional<double> eta) {
  hsdp::RunSpec s;
  s.n = 60000;
  s.batch_size = 256;
  s.sampling = "poisson";
  s.noise_multiplier = 1.1;
  s.clip = 1;
  s.steps = 14062;
  s.eta = eta;
  return s.resolve();
}

TEST(Accountant, WithoutEtaOnlyTheAnalysesThatReadTheNoiseRelativeToTheStepApply) {
  const hsdp::Query q = hsdp::Query::at_delta(1e-5);
  const hsdp::Report r = hsdp::account_request(dp_sgd(std::nullopt), q);
  // With any step size, the same composition values: they read only z = std b / (eta C).
  const hsdp::Report with_eta = hsdp::account(dp_sgd(0.37), q);
  for (std::size_t i = 0; i < r.analyses.size(); ++i) {
    const auto& a = r.analyses[i];
    const bool ratio_only = a.name == "composition-rdp" || a.name == "composition-pld" ||
                            a.name == "last-iterate-heuristic";
    EXPECT_EQ(a.applicable, ratio_only) << a.name << ": " << a.reason;
    if (ratio_only) {
      EXPECT_EQ(*a.epsilon, *with_eta.analyses[i].epsilon) << a.name;
    } else {
      EXPECT_EQ(a.reason, "needs the step size eta (eta)") << a.name;
      EXPECT_TRUE(hsdp::find_analysis(a.name)->not_applicable(dp_sgd(std::nullopt)).has_value());
    }
  }
  ASSERT_TRUE(r.best);
  EXPECT_EQ(r.analyses[*r.best].name, "composition-pld");
  EXPECT_NEAR(*r.analyses[*r.best].epsilon, 4.22, 0.005);
}

TEST(Accountant, AReplaceOneReportGivesTheAddRemoveValuesBeside) {
  const hsdp::Query q = hsdp::Query::at_delta(1e-5);
  const hsdp::Run run = dp_sgd(std::nullopt);
  const hsdp::Report r = hsdp::account_request(run, q);
  // The add/remove values are the report of the same run under add/remove-one.
  hsdp::Run remove = run;
  remove.adjacency = hsdp::Adjacency::remove;
  const hsdp::Report other = hsdp::account(remove, q);
  ASSERT_EQ(r.add_remove.size(), 3u);  // composition-rdp, composition-pld, the heuristic
  for (const auto& a : r.add_remove) {
    const auto it = std::find_if(other.analyses.begin(), other.analyses.end(),
                                 [&](const hsdp::AnalysisResult& x) { return x.name == a.name; });
    ASSERT_NE(it, other.analyses.end());
    EXPECT_EQ(*a.epsilon, *it->epsilon) << a.name;
  }
  ASSERT_TRUE(r.add_remove_best);
  // Opacus and dp_accounting (add/remove, PLD) report 2.38 for this run.
  EXPECT_EQ(r.add_remove[*r.add_remove_best].name, "composition-pld");
  EXPECT_NEAR(*r.add_remove[*r.add_remove_best].epsilon, 2.38, 0.005);
  const nlohmann::json j = hsdp::to_json(r);
  EXPECT_EQ(j["adjacency"], "replace");
  EXPECT_EQ(j["best_add_remove"]["name"], "composition-pld");
  EXPECT_TRUE(j["run"]["eta"].is_null());
  EXPECT_EQ(j["run"]["noise_std_per_eta"].get<double>(), 1.1 / 256);
  // An add/remove run has nothing beside; neither has a report made without the request.
  EXPECT_TRUE(hsdp::account_request(remove, q).add_remove.empty());
  EXPECT_TRUE(hsdp::account_request(run, q, {}, false, std::nullopt, false).add_remove.empty());
  const std::string table = hsdp::to_table(r);
  EXPECT_NE(table.find("adjacency: replace-one"), std::string::npos) << table;
  EXPECT_NE(table.find("best under add/remove-one: composition-pld (epsilon = 2.38"), std::string::npos) << table;
}

}  // namespace
