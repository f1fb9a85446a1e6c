// Calibration: the returned value, re-evaluated by the accountant, meets the target and
// sits within 1% of the boundary; values are checked against independent closed forms
// (the Gaussian hockey-stick divergence of journal Thm 4 at the last position, exact
// Gaussian-DP composition); non-monotone envelopes and infeasible targets are handled.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>

#include "hsdp/calibrate.hpp"
#include "hsdp/errors.hpp"

namespace {

using hsdp::CalibrationParameter;

// Q(x) = P(N(0,1) > x).
double q_tail(double x) { return 0.5 * std::erfc(x / std::sqrt(2.0)); }

// Hockey-stick divergence E_{e^eps}(N(r, 1) || N(0, 1)) (journal Lemma 1):
// Q(eps/r - r/2) - e^eps Q(eps/r + r/2). Also the exact delta(eps) of mu-Gaussian DP.
double theta(double eps, double r) { return q_tail(eps / r - r / 2) - std::exp(eps) * q_tail(eps / r + r / 2); }

// Bisection for the x in [lo, hi] where f changes sign (f increasing or decreasing).
double bisect(const std::function<double(double)>& f, double lo, double hi) {
  const bool lo_negative = f(lo) < 0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    ((f(mid) < 0) == lo_negative ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// journal Fig. 2 setting: n = T = 100, b = 1, cyclic, eta = 0.05, L = beta = 1, D = 1.
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

// Full-batch DP-SGD released at every step, add/remove neighbours: T-fold composition of
// the Gaussian mechanism with noise multiplier z (sensitivity 1 of the clipped sum).
hsdp::Run full_batch_run(std::int64_t steps, double z) {
  hsdp::Run run;
  run.n = 1000;
  run.steps = steps;
  run.batch_size = 1000;
  // Every record at every step, the sum divided by the fixed n (Poisson with q = 1): each step
  // is the Gaussian mechanism of sensitivity C under add/remove. (A full batch averaged over
  // its own records is charged 2C/n, docs/analyses/neighbours.md.)
  run.sampling = hsdp::Sampling::poisson;
  run.eta = hsdp::Schedule(0.1);
  run.clip = 1.0;
  run.loss.lipschitz = 1.0;
  run.release = hsdp::Release::every;
  run.adjacency = hsdp::Adjacency::remove;
  run.noise_std = hsdp::Schedule(hsdp::noise_std_from_multiplier(z, 1.0, 0.1, 1000));
  return run;
}

double best_epsilon(const hsdp::Run& run, double delta,
                    std::span<const hsdp::AnalysisPtr> analyses = {}) {
  const auto r = analyses.empty() ? hsdp::account(run, hsdp::Query::at_delta(delta))
                                  : hsdp::account(run, hsdp::Query::at_delta(delta), analyses);
  if (!r.best) return std::numeric_limits<double>::infinity();
  return *r.analyses[*r.best].epsilon;
}

hsdp::Run with_sigma(hsdp::Run run, double sigma) {
  run.noise_std = hsdp::Schedule(run.eta.at(1) * sigma);
  return run;
}

TEST(CalibrateNoise, JournalSigmaMatchesClosedFormOfThm4) {
  // Only contraction-per-index: its worst position is the last step, delta = theta(2L/sigma)
  // (journal Thm 4 eq. (16) with an empty product), so the smallest sigma solves
  // theta_{e^eps}(2/sigma) = delta exactly.
  const std::vector<hsdp::AnalysisPtr> only = {hsdp::find_analysis("contraction-per-index")};
  hsdp::CalibrationOptions o;
  o.analyses = only;
  o.noise = hsdp::NoiseParameter{hsdp::NoiseUnit::sigma, hsdp::Convention::journal, 3.0};
  for (const auto& [eps, delta] : {std::pair{1.0, 1e-5}, {0.5, 1e-6}, {3.0, 1e-3}}) {
    const auto r = hsdp::calibrate(journal_run(3.0), CalibrationParameter::noise, eps, delta, o);
    ASSERT_TRUE(r.feasible) << r.reason;
    EXPECT_EQ(r.name, "sigma");
    EXPECT_EQ(r.convention, "journal");
    const double exact = bisect([&](double s) { return theta(eps, 2.0 / s) - delta; }, 0.1, 1e3);
    EXPECT_GE(r.value, exact * (1 - 1e-9)) << eps;  // never below the boundary
    EXPECT_LE(r.value, exact * (1 + 2e-4)) << eps;  // within the solver's tolerance
    EXPECT_LE(r.achieved_epsilon, eps);
    EXPECT_EQ(r.achieved_name, "contraction-per-index");
    EXPECT_DOUBLE_EQ(r.run.noise_std.at(1), 0.05 * r.value);
  }
}

TEST(CalibrateNoise, EnvelopeMeetsTargetAndIsWithinOnePercent) {
  for (const auto& [eps, delta] : {std::pair{1.0, 1e-5}, {2.0, 1e-6}, {0.3, 1e-4}}) {
    hsdp::CalibrationOptions o;
    o.noise = hsdp::NoiseParameter{hsdp::NoiseUnit::sigma, hsdp::Convention::journal, 3.0};
    const auto r = hsdp::calibrate(journal_run(3.0), CalibrationParameter::noise, eps, delta, o);
    ASSERT_TRUE(r.feasible) << r.reason;
    // Re-evaluated from scratch: meets the target; 1% less noise does not.
    EXPECT_LE(best_epsilon(with_sigma(journal_run(1), r.value), delta), eps);
    EXPECT_GT(best_epsilon(with_sigma(journal_run(1), 0.99 * r.value), delta), eps);
    EXPECT_EQ(r.achieved_epsilon, best_epsilon(r.run, delta));
    // The envelope is never looser than one of its members.
    const std::vector<hsdp::AnalysisPtr> only = {hsdp::find_analysis("contraction-per-index")};
    o.analyses = only;
    const auto c = hsdp::calibrate(journal_run(3.0), CalibrationParameter::noise, eps, delta, o);
    EXPECT_LE(r.value, c.value * (1 + 1e-9));
  }
}

TEST(CalibrateNoise, UnitsAreConsistent) {
  // The same boundary expressed as a parameter-space std and as a journal sigma (std = eta sigma).
  const auto s = hsdp::calibrate(journal_run(3.0), CalibrationParameter::noise, 1.0, 1e-5);
  hsdp::CalibrationOptions o;
  o.noise = hsdp::NoiseParameter{hsdp::NoiseUnit::sigma, hsdp::Convention::journal, 3.0};
  const auto g = hsdp::calibrate(journal_run(3.0), CalibrationParameter::noise, 1.0, 1e-5, o);
  ASSERT_TRUE(s.feasible && g.feasible);
  EXPECT_EQ(s.name, "noise_std");
  EXPECT_NEAR(s.value / (0.05 * g.value), 1.0, 3e-4);
}

TEST(CalibrateNoise, MultiplierAgainstExactGaussianComposition) {
  // T-fold composition of the Gaussian mechanism is exactly mu-GDP with mu = sqrt(T)/z
  // (Dong-Roth-Su): the RDP accountant can only need MORE noise than the exact curve, and
  // for these parameters not much more.
  const std::int64_t T = 50;
  hsdp::CalibrationOptions o;
  o.noise = hsdp::NoiseParameter{hsdp::NoiseUnit::multiplier, hsdp::Convention::journal, 1.0};
  for (const auto& [eps, delta] : {std::pair{1.0, 1e-5}, {4.0, 1e-6}}) {
    const auto r = hsdp::calibrate(full_batch_run(T, 1.0), CalibrationParameter::noise, eps, delta, o);
    ASSERT_TRUE(r.feasible) << r.reason;
    EXPECT_EQ(r.name, "noise_multiplier");
    // composition-pld: the exact GDP curve up to its discretisation (tighter than RDP).
    EXPECT_EQ(r.achieved_name, "composition-pld");
    const double mu = bisect([&](double m) { return theta(eps, m) - delta; }, 1e-3, 50);
    const double z_exact = std::sqrt(static_cast<double>(T)) / mu;
    EXPECT_GE(r.value, z_exact);
    EXPECT_LE(r.value, 1.15 * z_exact);
    // DP-SGD convention: std = eta z C / b.
    EXPECT_NEAR(r.run.noise_std.at(1), 0.1 * r.value / 1000, 1e-15);
    EXPECT_LE(best_epsilon(full_batch_run(T, r.value), delta), eps);
    EXPECT_GT(best_epsilon(full_batch_run(T, 0.99 * r.value), delta), eps);
  }
}

TEST(CalibrateSteps, LargestTIsExactBoundaryAndBelowExactComposition) {
  const double z = 20.0, eps = 1.0, delta = 1e-5;
  hsdp::CalibrationOptions o;
  o.noise = hsdp::NoiseParameter{hsdp::NoiseUnit::multiplier, hsdp::Convention::journal, z};
  const auto r = hsdp::calibrate(full_batch_run(10, z), CalibrationParameter::steps, eps, delta, o);
  ASSERT_TRUE(r.feasible) << r.reason;
  EXPECT_FALSE(r.unbounded);
  const auto T = static_cast<std::int64_t>(r.value);
  EXPECT_LE(best_epsilon(full_batch_run(T, z), delta), eps);
  EXPECT_GT(best_epsilon(full_batch_run(T + 1, z), delta), eps);
  // Exact GDP: T_exact = floor((mu z)^2) is an upper limit; RDP is not far below it.
  const double mu = bisect([&](double m) { return theta(eps, m) - delta; }, 1e-3, 50);
  const double t_exact = std::floor(mu * mu * z * z);
  EXPECT_LE(static_cast<double>(T), t_exact);
  EXPECT_GE(static_cast<double>(T), 0.75 * t_exact);
}

// delta(eps) = scale e^{-eps} (times T when `grows`), applicable for steps in [lo, hi].
class Window final : public hsdp::Analysis {
 public:
  Window(std::string name, double scale, bool grows, std::int64_t lo, std::int64_t hi, std::int64_t cap)
      : name_(std::move(name)), scale_(scale), grows_(grows), lo_(lo), hi_(hi), cap_(cap) {}
  std::string_view name() const override { return name_; }
  std::string_view citation() const override { return "test"; }
  std::optional<std::string> check(const hsdp::Run& run) const override {
    if (run.steps < lo_ || run.steps > hi_) return std::string("outside the window");
    return std::nullopt;
  }
  double log_delta(const hsdp::Run& run, double eps) const override {
    const double t = static_cast<double>(std::min(run.steps, cap_));
    return std::log(scale_) - eps + (grows_ ? std::log(t) : 0.0);
  }

 private:
  std::string name_;
  double scale_;
  bool grows_;
  std::int64_t lo_, hi_, cap_;
};

TEST(CalibrateSteps, NonMonotoneFeasibleSetIsNotBisectedBlindly) {
  // Feasible at eps = 1, delta = 1e-5: T <= 50 (first window) and 100 <= T <= 271 (the
  // second: 1e-7 e^{-1} T <= 1e-5 iff T <= 271.8); infeasible on 51..99 and above 271.
  const std::vector<hsdp::AnalysisPtr> list = {
      std::make_shared<Window>("early", 1e-9, false, 1, 50, 1 << 30),
      std::make_shared<Window>("late", 1e-7, true, 100, std::int64_t{1} << 40, std::int64_t{1} << 40)};
  hsdp::CalibrationOptions o;
  o.analyses = list;
  const auto r = hsdp::calibrate(journal_run(3.0), CalibrationParameter::steps, 1.0, 1e-5, o);
  ASSERT_TRUE(r.feasible) << r.reason;
  EXPECT_EQ(r.value, 271.0);
  EXPECT_EQ(r.achieved_name, "late");
  EXPECT_FALSE(r.unbounded);
}

TEST(CalibrateSteps, PlateauIsReportedUnbounded) {
  // delta = 1e-9 e^{-eps} min(T, 1000): flat beyond T = 1000 and always below target.
  const std::vector<hsdp::AnalysisPtr> list = {
      std::make_shared<Window>("plateau", 1e-9, true, 1, std::int64_t{1} << 40, 1000)};
  hsdp::CalibrationOptions o;
  o.analyses = list;
  o.max_steps = 1 << 20;
  const auto r = hsdp::calibrate(journal_run(3.0), CalibrationParameter::steps, 1.0, 1e-5, o);
  ASSERT_TRUE(r.feasible);
  EXPECT_TRUE(r.unbounded);
  EXPECT_EQ(r.value, static_cast<double>(1 << 20));
  EXPECT_NE(r.note.find("plateaued"), std::string::npos) << r.note;
}

TEST(CalibrateSteps, RealLastIterateBoundsUnboundedOrInfeasible) {
  // journal sigma 10: shifted-renyi (Altschuler-Talwar) stays below eps = 1 for every T.
  hsdp::CalibrationOptions o;
  o.max_steps = std::int64_t{1} << 30;
  const auto r = hsdp::calibrate(journal_run(10.0), CalibrationParameter::steps, 1.0, 1e-5, o);
  ASSERT_TRUE(r.feasible) << r.reason;
  EXPECT_TRUE(r.unbounded);
  EXPECT_LE(r.achieved_epsilon, 1.0);
  auto at_limit = journal_run(10.0);
  at_limit.steps = std::int64_t{1} << 30;
  EXPECT_LE(best_epsilon(at_limit, 1e-5), 1.0);
  // journal sigma 5: already one step costs eps = 1.55 > 1 (the last position's delta,
  // theta(2/5), does not depend on T): infeasible, with the reason.
  const auto bad = hsdp::calibrate(journal_run(5.0), CalibrationParameter::steps, 1.0, 1e-5, o);
  EXPECT_FALSE(bad.feasible);
  EXPECT_NE(bad.reason.find("T = 1"), std::string::npos) << bad.reason;
  const double eps_one_step = bisect([](double e) { return theta(e, 2.0 / 5.0) - 1e-5; }, 0, 20);
  EXPECT_GT(eps_one_step, 1.0);
}

TEST(CalibrateSamplingRate, LargestBatchIsExactBoundary) {
  // DP-SGD with fixed-size batches (Wang-Balle-Kasiviswanathan Thm 9), every iterate
  // released, noise multiplier fixed: a larger rate b/n weakens amplification by subsampling.
  hsdp::Run run;
  run.n = 10000;
  run.steps = 200;
  run.batch_size = 10;
  run.sampling = hsdp::Sampling::fixed;
  run.eta = hsdp::Schedule(0.1);
  run.clip = 1.0;
  run.loss.lipschitz = 1.0;
  run.release = hsdp::Release::every;
  run.noise_std = hsdp::Schedule(hsdp::noise_std_from_multiplier(1.5, 1.0, 0.1, 10));
  const std::vector<hsdp::AnalysisPtr> only = {hsdp::find_analysis("composition-rdp")};
  hsdp::CalibrationOptions o;
  o.analyses = only;
  o.noise = hsdp::NoiseParameter{hsdp::NoiseUnit::multiplier, hsdp::Convention::journal, 1.5};
  const auto r = hsdp::calibrate(run, CalibrationParameter::sampling_rate, 2.0, 1e-5, o);
  ASSERT_TRUE(r.feasible) << r.reason;
  const auto b = static_cast<std::int64_t>(r.value);
  ASSERT_GT(b, 1);
  ASSERT_LT(b, run.n);
  EXPECT_DOUBLE_EQ(*r.sampling_rate, r.value / 10000.0);
  auto at = [&](std::int64_t batch) {
    hsdp::Run x = run;
    x.batch_size = batch;
    x.noise_std = hsdp::Schedule(hsdp::noise_std_from_multiplier(1.5, 1.0, 0.1, batch));
    return best_epsilon(x, 1e-5, only);
  };
  EXPECT_LE(at(b), 2.0);
  EXPECT_GT(at(b + 1), 2.0);
  // The DP-SGD std follows b: eta z C / b.
  EXPECT_DOUBLE_EQ(r.run.noise_std.at(1), 0.1 * 1.5 / static_cast<double>(b));
}

TEST(Calibrate, InfeasibleNoiseIsAResultWithReason) {
  hsdp::CalibrationOptions o;
  o.noise_max = 0.2;  // std; the boundary is about 0.373
  const auto r = hsdp::calibrate(journal_run(3.0), CalibrationParameter::noise, 1.0, 1e-5, o);
  EXPECT_FALSE(r.feasible);
  EXPECT_NE(r.reason.find("search limit"), std::string::npos) << r.reason;
  const auto j = hsdp::to_json(r);
  EXPECT_FALSE(j["feasible"].get<bool>());
  EXPECT_TRUE(j["value"].is_null());
  // Without L (and no clip) no upper bound applies at any noise: said so, not a number.
  auto unknown = journal_run(3.0);
  unknown.loss.lipschitz.reset();
  const auto none = hsdp::calibrate(unknown, CalibrationParameter::noise, 1.0, 1e-5);
  EXPECT_FALSE(none.feasible);
  EXPECT_NE(none.reason.find("no upper-bound analysis applies"), std::string::npos) << none.reason;
}

TEST(Calibrate, BadArgumentsThrow) {
  const auto run = journal_run(3.0);
  EXPECT_THROW(hsdp::calibrate(run, CalibrationParameter::noise, -1.0, 1e-5), hsdp::InvalidArgument);
  EXPECT_THROW(hsdp::calibrate(run, CalibrationParameter::noise, 1.0, 0.0), hsdp::InvalidArgument);
  EXPECT_THROW(hsdp::calibrate(run, CalibrationParameter::noise, 1.0, 1.0), hsdp::InvalidArgument);
  EXPECT_THROW(hsdp::calibrate(run, CalibrationParameter::noise, NAN, 1e-5), hsdp::InvalidArgument);
  auto full = full_batch_run(10, 1.0);
  full.sampling = hsdp::Sampling::full;  // no sampling rate to calibrate
  EXPECT_THROW(hsdp::calibrate(full, CalibrationParameter::sampling_rate, 1.0, 1e-5), hsdp::InvalidArgument);
  EXPECT_THROW(hsdp::parse_calibration_parameter("noize"), hsdp::InvalidArgument);
  hsdp::CalibrationOptions o;
  o.noise = hsdp::NoiseParameter{hsdp::NoiseUnit::multiplier, hsdp::Convention::journal, 1.0};
  EXPECT_THROW(hsdp::calibrate(run, CalibrationParameter::noise, 1.0, 1e-5, o), hsdp::InvalidArgument);
}

}  // namespace
