// The generic calibration solver (calibrate_parameter) on custom adapters: toy analyses
// whose boundary is known in closed form, in both directions and both domains, and a real
// one -- the step size eta of the journal's run under contraction-per-index, whose
// boundary is the closed form of journal Thm 4 at the last position. Each returned value
// meets the target, sits on the conservative side of the boundary, and the next value
// towards less privacy (x (1 + tol) for a continuous parameter, x +- 1 for an integer)
// does not meet it. The built-in adapters give what calibrate() gives.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>

#include "hsdp/calibrate.hpp"
#include "hsdp/errors.hpp"

namespace {

using hsdp::CalibrationAdapter;
using hsdp::ParameterDomain;
using hsdp::PrivacyDirection;

// delta(eps) = exp(-eps - s) with s = g(run): meets (eps, delta) iff s >= -log(delta) - eps.
class Toy final : public hsdp::Analysis {
 public:
  explicit Toy(std::function<double(const hsdp::Run&)> s) : s_(std::move(s)) {}
  std::string_view name() const override { return "toy"; }
  std::string_view citation() const override { return "test"; }
  std::optional<std::string> check(const hsdp::Run&) const override { return std::nullopt; }
  double log_delta(const hsdp::Run& run, double eps) const override { return -eps - s_(run); }

 private:
  std::function<double(const hsdp::Run&)> s_;
};

hsdp::Run base_run() {
  hsdp::Run run;
  run.n = 100;
  run.steps = 100;
  run.batch_size = 1;
  run.sampling = hsdp::Sampling::cyclic;
  run.eta = hsdp::Schedule(0.05);
  run.noise_std = hsdp::Schedule(0.15);
  run.loss.lipschitz = 1.0;
  run.loss.smoothness = 1.0;
  run.diameter = 1.0;
  return run;
}

// Does some analysis of `list` certify (eps, delta) at `run`? (The accountant, from scratch.)
bool meets(const hsdp::Run& run, double eps, double delta, std::span<const hsdp::AnalysisPtr> list) {
  const auto r = hsdp::account(run, hsdp::Query::at_delta(delta), list);
  return r.best && *r.analyses[*r.best].epsilon <= eps;
}

constexpr double kEps = 1.0, kDelta = 1e-5;
const double kBoundary = -std::log(kDelta) - kEps;  // s* = 10.5129...

TEST(CalibrateParameter, ContinuousMorePrivateReturnsSmallestValue) {
  // s = noise std: the smallest std meeting the target is s* (up to the rounding of delta).
  const std::vector<hsdp::AnalysisPtr> list = {
      std::make_shared<Toy>([](const hsdp::Run& r) { return r.noise_std.at(1); })};
  CalibrationAdapter a;
  a.name = "noise_std";
  a.domain = ParameterDomain::continuous;
  a.direction = PrivacyDirection::larger_is_more_private;
  a.lower = 1e-3;
  a.upper = 1e3;
  a.start = 0.5;
  a.make = [](double x) {
    hsdp::Run r = base_run();
    r.noise_std = hsdp::Schedule(x);
    return r;
  };
  const double tol = 1e-4;
  const auto s = hsdp::calibrate_parameter(a, kEps, kDelta, {list, tol});
  ASSERT_TRUE(s.feasible) << s.reason;
  EXPECT_EQ(s.achieved_name, "toy");
  EXPECT_LE(s.achieved_epsilon, kEps);
  EXPECT_GE(s.value, kBoundary);                          // the conservative side
  EXPECT_LE(s.value, kBoundary * (1 + tol) * (1 + 1e-8));  // within the tolerance
  EXPECT_TRUE(meets(a.make(s.value), kEps, kDelta, list));
  EXPECT_FALSE(meets(a.make(s.value / (1 + tol)), kEps, kDelta, list));
  EXPECT_DOUBLE_EQ(s.value, std::stod(fmt::format("{:.10g}", s.value)));  // as printed
  EXPECT_FALSE(s.at_limit);
  EXPECT_GT(s.evaluations, 0);
  EXPECT_DOUBLE_EQ(s.run.noise_std.at(1), s.value);
}

TEST(CalibrateParameter, ContinuousLessPrivateReturnsLargestValue) {
  // s = 100 / eta: the largest step size meeting the target is eta* = 100 / s*.
  const std::vector<hsdp::AnalysisPtr> list = {
      std::make_shared<Toy>([](const hsdp::Run& r) { return 100.0 / r.eta.at(1); })};
  CalibrationAdapter a;
  a.name = "eta";
  a.direction = PrivacyDirection::larger_is_less_private;
  a.lower = 1e-6;
  a.upper = 1e6;  // start: the geometric mean, 1
  a.make = [](double x) {
    hsdp::Run r = base_run();
    r.eta = hsdp::Schedule(x);
    return r;
  };
  for (const double tol : {1e-4, 1e-7}) {
    const auto s = hsdp::calibrate_parameter(a, kEps, kDelta, {list, tol});
    ASSERT_TRUE(s.feasible) << s.reason;
    const double exact = 100.0 / kBoundary;
    EXPECT_LE(s.value, exact);  // never above the boundary
    EXPECT_GE(s.value, exact / (1 + tol) / (1 + 1e-8)) << tol;
    EXPECT_TRUE(meets(a.make(s.value), kEps, kDelta, list));
    EXPECT_FALSE(meets(a.make(s.value * (1 + tol)), kEps, kDelta, list)) << tol;
    EXPECT_LE(s.achieved_epsilon, kEps);
    EXPECT_DOUBLE_EQ(s.value, std::stod(fmt::format("{:.10g}", s.value)));
  }
}

TEST(CalibrateParameter, IntegerBothDirectionsAreExact) {
  // s = T / 100 (more steps, more private here: a toy), boundary T* = ceil(100 s*) = 1052.
  const std::vector<hsdp::AnalysisPtr> up = {
      std::make_shared<Toy>([](const hsdp::Run& r) { return static_cast<double>(r.steps) / 100.0; })};
  CalibrationAdapter a;
  a.name = "steps";
  a.domain = ParameterDomain::integer;
  a.direction = PrivacyDirection::larger_is_more_private;
  a.lower = 1;
  a.upper = 1 << 20;
  a.make = [](double T) {
    hsdp::Run r = base_run();
    r.steps = static_cast<std::int64_t>(T);
    return r;
  };
  const auto s = hsdp::calibrate_parameter(a, kEps, kDelta, {up});
  ASSERT_TRUE(s.feasible) << s.reason;
  EXPECT_EQ(s.value, std::ceil(100 * kBoundary));
  EXPECT_EQ(s.value, 1052.0);
  EXPECT_TRUE(s.exact_boundary);
  EXPECT_TRUE(meets(a.make(s.value), kEps, kDelta, up));
  EXPECT_FALSE(meets(a.make(s.value - 1), kEps, kDelta, up));
  EXPECT_EQ(s.note, "steps = 1052 meets the target and steps = 1051 does not");

  // s = 1e4 / T (fewer steps, more private), boundary T* = floor(1e4 / s*) = 951.
  const std::vector<hsdp::AnalysisPtr> down = {
      std::make_shared<Toy>([](const hsdp::Run& r) { return 1e4 / static_cast<double>(r.steps); })};
  a.direction = PrivacyDirection::larger_is_less_private;
  const auto t = hsdp::calibrate_parameter(a, kEps, kDelta, {down});
  ASSERT_TRUE(t.feasible) << t.reason;
  EXPECT_EQ(t.value, std::floor(1e4 / kBoundary));
  EXPECT_TRUE(meets(a.make(t.value), kEps, kDelta, down));
  EXPECT_FALSE(meets(a.make(t.value + 1), kEps, kDelta, down));
  // A narrower window: the boundary lies beyond the upper limit.
  a.lower = 10;
  a.upper = 500;
  const auto w = hsdp::calibrate_parameter(a, kEps, kDelta, {down});
  ASSERT_TRUE(w.feasible);
  EXPECT_EQ(w.value, 500.0);
  EXPECT_TRUE(w.at_limit);
  EXPECT_FALSE(w.exact_boundary);
  EXPECT_EQ(w.holds_from, 10);
}

TEST(CalibrateParameter, StepSizeOfTheJournalRunMatchesThm4ClosedForm) {
  // contraction-per-index alone: its worst position is the last step, delta =
  // theta_{e^eps}(r) with r = 2 L eta / std (journal Thm 4 eq. (16), an empty product), so the
  // largest step size at noise std 0.15 solves theta(eps, 2 eta / 0.15) = delta.
  auto q = [](double x) { return 0.5 * std::erfc(x / std::sqrt(2.0)); };
  auto theta = [&](double eps, double r) { return q(eps / r - r / 2) - std::exp(eps) * q(eps / r + r / 2); };
  const std::vector<hsdp::AnalysisPtr> only = {hsdp::find_analysis("contraction-per-index")};
  CalibrationAdapter a;
  a.name = "eta";
  a.direction = PrivacyDirection::larger_is_less_private;
  a.lower = 1e-6;
  a.upper = 1.0;  // eta <= 2 / beta keeps the contraction analysis applicable
  a.start = 0.05;
  a.make = [](double eta) {
    hsdp::Run r = base_run();
    r.eta = hsdp::Schedule(eta);
    return r;
  };
  const double tol = 1e-4;
  for (const auto& [eps, delta] : {std::pair{1.0, 1e-5}, {0.5, 1e-6}}) {
    const auto s = hsdp::calibrate_parameter(a, eps, delta, {only, tol});
    ASSERT_TRUE(s.feasible) << s.reason;
    double lo = 1e-4, hi = 10;  // bisection on r: theta grows with r
    for (int i = 0; i < 200; ++i) ((theta(eps, 0.5 * (lo + hi)) < delta) ? lo : hi) = 0.5 * (lo + hi);
    const double exact = 0.5 * (lo + hi) * 0.15 / 2;
    EXPECT_LE(s.value, exact * (1 + 1e-9)) << eps;
    EXPECT_GE(s.value, exact / (1 + 2 * tol)) << eps;
    EXPECT_LE(s.achieved_epsilon, eps);
    EXPECT_TRUE(meets(a.make(s.value), eps, delta, only));
    EXPECT_FALSE(meets(a.make(s.value * (1 + tol)), eps, delta, only));
  }
}

TEST(CalibrateParameter, InfeasibleIsAResultAndBadAdaptersThrow) {
  const std::vector<hsdp::AnalysisPtr> list = {
      std::make_shared<Toy>([](const hsdp::Run& r) { return r.noise_std.at(1); })};
  CalibrationAdapter a;
  a.name = "noise_std";
  a.lower = 1e-3;
  a.upper = 5;  // below s* = 10.5
  a.make = [](double x) {
    hsdp::Run r = base_run();
    r.noise_std = hsdp::Schedule(x);
    return r;
  };
  const auto s = hsdp::calibrate_parameter(a, kEps, kDelta, {list});
  EXPECT_FALSE(s.feasible);
  ASSERT_TRUE(s.at_private_limit.has_value());
  EXPECT_EQ(s.at_private_limit->analyses[0].name, "toy");
  EXPECT_NE(s.reason.find("noise_std = 5"), std::string::npos) << s.reason;

  auto field_of = [&](const CalibrationAdapter& bad) {
    try {
      hsdp::calibrate_parameter(bad, kEps, kDelta, {list});
    } catch (const hsdp::InvalidArgument& e) {
      return e.field().empty() ? std::string(e.what()) : e.field();
    }
    return std::string("(no error)");
  };
  CalibrationAdapter b = a;
  b.lower = 10;
  EXPECT_EQ(field_of(b), "lower");
  b = a;
  b.upper = std::numeric_limits<double>::infinity();
  EXPECT_EQ(field_of(b), "upper");
  b = a;
  b.make = nullptr;
  EXPECT_EQ(field_of(b), "make");
  b = a;
  b.domain = ParameterDomain::integer;
  b.lower = 1.5;
  EXPECT_EQ(field_of(b), "lower");
  EXPECT_THROW(hsdp::calibrate_parameter(a, -1, kDelta, {list}), hsdp::InvalidArgument);
  EXPECT_THROW(hsdp::calibrate_parameter(a, kEps, 1.0, {list}), hsdp::InvalidArgument);
}

TEST(CalibrateParameter, BuiltInAdaptersGiveWhatCalibrateGives) {
  hsdp::CalibrationOptions o;
  o.noise = hsdp::NoiseParameter{hsdp::NoiseUnit::sigma, hsdp::Convention::journal, 3.0};
  for (const auto which : {hsdp::CalibrationParameter::noise, hsdp::CalibrationParameter::steps,
                           hsdp::CalibrationParameter::sampling_rate}) {
    hsdp::Run run = base_run();
    run.noise_std = hsdp::Schedule(0.05 * 8.0);
    o.noise->value = 8.0;
    if (which == hsdp::CalibrationParameter::sampling_rate) run.sampling = hsdp::Sampling::poisson;
    o.max_steps = 1 << 12;
    const auto adapter = hsdp::calibration_adapter(run, which, o);
    const auto s = hsdp::calibrate_parameter(adapter, 1.0, 1e-5);
    const auto r = hsdp::calibrate(run, which, 1.0, 1e-5, o);
    ASSERT_TRUE(r.feasible) << hsdp::to_string(which) << ": " << r.reason;
    ASSERT_TRUE(s.feasible) << hsdp::to_string(which) << ": " << s.reason;
    EXPECT_EQ(adapter.name, r.name);
    EXPECT_EQ(s.value, r.value) << hsdp::to_string(which);
    EXPECT_EQ(s.evaluations, r.evaluations);
    EXPECT_EQ(s.achieved_epsilon, r.achieved_epsilon);
  }
}

}  // namespace
