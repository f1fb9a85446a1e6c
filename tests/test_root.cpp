// The monotone root finder (src/numerics/root.cpp): every returned point must satisfy
// the caller's predicate (DESIGN.md: "root finding on a monotone curve returns the
// conservative end of its bracket") and lie within the tolerance of the true boundary.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <vector>

#include "hsdp/divergence/hockey_stick.hpp"
#include "hsdp/numerics/root.hpp"

namespace {

using hsdp::num::BoundaryOptions;
using hsdp::num::Holds;
using hsdp::num::monotone_boundary;
using hsdp::num::smallest_meeting;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Counts evaluations so that the bounded-cost claim is checked too.
struct Counted {
  std::function<double(double)> f;
  int calls = 0;
  std::function<double(double)> fn() {
    return [this](double x) {
      ++calls;
      return f(x);
    };
  }
};

double tolerance(double root, const BoundaryOptions& o = {}) {
  return o.rel_tol * std::abs(root) * 1.01 + o.abs_tol;
}

// Holds::above: the predicate f(x) <= 0 holds for x >= root; the answer is in
// [root, root + tol] and meets the predicate.
void expect_above(const std::function<double(double)>& f, double lo, double hi, double root,
                  const BoundaryOptions& o = {}) {
  Counted c{f};
  const double x = monotone_boundary(c.fn(), lo, hi, Holds::above, o);
  EXPECT_LE(f(x), 0.0) << "returned point does not meet the predicate, root " << root;
  EXPECT_GE(x, root - tolerance(root, o)) << "root " << root;
  EXPECT_LE(x - root, 2 * tolerance(root, o)) << "root " << root << " x " << x;
  EXPECT_LE(c.calls, 140) << "root " << root;
}

void expect_below(const std::function<double(double)>& f, double lo, double hi, double root,
                  const BoundaryOptions& o = {}) {
  Counted c{f};
  const double x = monotone_boundary(c.fn(), lo, hi, Holds::below, o);
  EXPECT_LE(f(x), 0.0) << "returned point does not meet the predicate, root " << root;
  EXPECT_LE(x, root + tolerance(root, o)) << "root " << root;
  EXPECT_LE(root - x, 2 * tolerance(root, o)) << "root " << root << " x " << x;
  EXPECT_LE(c.calls, 140) << "root " << root;
}

TEST(MonotoneBoundary, SmoothFunctionsBothDirections) {
  for (double root : {0.3, 1e-9, 123.456, -7.25, 0.0, 9.999, 1e-300}) {
    expect_above([root](double x) { return root - x; }, -10, 1e4, root);
    expect_below([root](double x) { return x - root; }, -10, 1e4, root);
    // Non-linear, both convex and concave, with very different slopes.
    expect_above([root](double x) { return std::expm1(root - x); }, root - 10, root + 30, root);
    expect_above([root](double x) { return std::cbrt(root - x); }, -10, 1e4, root);
    expect_below([root](double x) { return std::atan(1e6 * (x - root)); }, -10, 1e4, root);
  }
}

TEST(MonotoneBoundary, SteepAndFlatFunctions) {
  expect_above([](double x) { return std::exp(1000 * (0.5 - x)) - 1; }, 0, 1, 0.5);
  expect_above([](double x) { return std::expm1(1e-3 * (2 - x)); }, 0, 1e4, 2.0);
  expect_below([](double x) { return std::pow(x - 3, 3); }, 0, 10, 3.0);  // zero slope at root
}

TEST(MonotoneBoundary, NegativeInfinityPlateau) {
  // log delta(eps) - log target, where delta = 0 (log delta = -inf) beyond eps = 3.
  const double target = std::log(0.1);
  auto f = [target](double eps) { return eps < 3 ? std::log(3 - eps) - target : -kInf; };
  expect_above(f, 0, 10, 2.9);
  expect_above(f, 0, 1e4, 2.9);
  // The boundary is the start of the plateau itself.
  auto g = [](double x) { return x < 2.5 ? 1.0 : -kInf; };
  expect_above(g, 0, 10, 2.5);
  expect_above(g, -1e300, 1e300, 2.5);
  auto huge = [](double x) { return x < 2.5 ? 1e308 : -kInf; };
  expect_above(huge, 0, 1e300, 2.5);
  // Holds::below with a -inf plateau on the low side.
  expect_below([](double x) { return x > 4 ? 1.0 : -kInf; }, -100, 100, 4.0);
}

TEST(MonotoneBoundary, NaNRegionsCountAsNotHolding) {
  // NaN where the bound is undefined, on the failing side of the boundary.
  expect_above([](double x) { return x < 2.5 ? kNaN : -1.0; }, 0, 10, 2.5);
  expect_above([](double x) { return x < 1 ? 5.0 : (x < 2.5 ? kNaN : 2.5 - x); }, 0, 10, 2.5);
  expect_below([](double x) { return x > 6 ? kNaN : x - 6; }, 0, 10, 6.0);
  // A NaN at the holding end of the bracket: the bracket does not straddle.
  EXPECT_THROW(monotone_boundary([](double) { return kNaN; }, 0, 1, Holds::above),
               std::logic_error);
}

TEST(MonotoneBoundary, StepFunctions) {
  expect_below([](double x) { return x <= 7 ? -1.0 : 1.0; }, 0, 100, 7.0);
  expect_above([](double x) { return x >= 7 ? -1.0 : 1.0; }, 0, 100, 7.0);
  // A plateau of exact zeros: the predicate holds on all of it; the finder must go to its
  // left end (the boundary), not stop at the first zero it meets.
  expect_above([](double x) { return x < 1 ? 1.0 : (x < 5 ? 0.0 : -1.0); }, 0, 10, 1.0);
}

TEST(MonotoneBoundary, WideBrackets) {
  expect_below([](double x) { return std::log(x) - std::log(3e200); }, 1e-300, 1e300, 3e200);
  expect_above([](double x) { return std::log(2e-250) - std::log(x); }, 1e-300, 1e300, 2e-250);
  expect_above([](double x) { return 1e-200 - x; }, -1e300, 1e300, 1e-200);
}

TEST(MonotoneBoundary, LooseToleranceStillConservative) {
  BoundaryOptions o;
  o.rel_tol = 1e-4;
  for (double root : {0.123, 77.0}) {
    expect_above([root](double x) { return root - x; }, 0, 1000, root, o);
    expect_below([root](double x) { return x - root; }, 0, 1000, root, o);
  }
  // With a single iteration allowed the answer is still a point that meets the target.
  o.max_iterations = 1;
  const double x = monotone_boundary([](double x) { return 0.3 - x; }, 0, 1, Holds::above, o);
  EXPECT_GE(x, 0.3);
}

TEST(MonotoneBoundary, BadBracketsThrow) {
  auto f = [](double x) { return 1 - x; };
  EXPECT_THROW(monotone_boundary(f, 2, 3, Holds::above), std::logic_error);  // holds at both
  EXPECT_THROW(monotone_boundary(f, -3, -2, Holds::above), std::logic_error);  // fails at both
  EXPECT_THROW(monotone_boundary(f, 0, 2, Holds::below), std::logic_error);  // wrong direction
  EXPECT_THROW(monotone_boundary(f, 3, 0, Holds::above), std::logic_error);    // lo > hi
  EXPECT_THROW(monotone_boundary(f, 1, 1, Holds::above), std::logic_error);    // empty
  EXPECT_THROW(monotone_boundary(f, kNaN, 2, Holds::above), std::logic_error);
  EXPECT_THROW(monotone_boundary(f, 0, kInf, Holds::above), std::logic_error);
}

TEST(MonotoneBoundary, InvertsTheta) {
  // The accountant's use: the smallest eps with log theta_{e^eps}(r) <= log delta.
  for (double r : {0.05, 1.0, 4.0}) {
    for (double delta : {1e-3, 1e-12, 1e-200}) {
      const double target = std::log(delta);
      auto f = [&](double eps) { return hsdp::div::log_theta(eps, r) - target; };
      const double eps = monotone_boundary(f, 0, 1e4, Holds::above);
      EXPECT_LE(hsdp::div::log_theta(eps, r), target);
      // Just below the tolerance the target is missed.
      EXPECT_GT(hsdp::div::log_theta(eps * (1 - 3e-12), r), target) << r << " " << delta;
    }
  }
}

TEST(SmallestMeeting, ExpandsAndFinds) {
  int calls = 0;
  auto f = [&](double x) {
    ++calls;
    return 1000.5 - x;
  };
  const auto x = smallest_meeting(f, 0.0, 1.0, 1e4);
  ASSERT_TRUE(x.has_value());
  EXPECT_GE(*x, 1000.5);
  EXPECT_LE(*x - 1000.5, 2 * tolerance(1000.5));
  EXPECT_LE(calls, 40);
}

TEST(SmallestMeeting, ReturnsStartWhenAlreadyMet) {
  EXPECT_EQ(smallest_meeting([](double x) { return -1 - x; }, 0.0, 1.0, 10.0), 0.0);
  EXPECT_EQ(smallest_meeting([](double) { return -kInf; }, 2.0, 1.0, 10.0), 2.0);
}

TEST(SmallestMeeting, NulloptWhenNotReached) {
  EXPECT_FALSE(smallest_meeting([](double x) { return 20 - x; }, 0.0, 1.0, 10.0).has_value());
  EXPECT_FALSE(smallest_meeting([](double) { return kNaN; }, 0.0, 1.0, 10.0).has_value());
  EXPECT_FALSE(smallest_meeting([](double x) { return 20 - x; }, 5.0, 1.0, 5.0).has_value());
  EXPECT_FALSE(smallest_meeting([](double x) { return 20 - x; }, 5.0, 1.0, 1.0).has_value());
}

TEST(SmallestMeeting, HandlesPlateauAndMaximum) {
  // Boundary on a -inf plateau; boundary exactly at x_max.
  const auto x = smallest_meeting([](double e) { return e < 3 ? 1.0 : -kInf; }, 0, 1, 1e4);
  ASSERT_TRUE(x.has_value());
  EXPECT_GE(*x, 3.0);
  EXPECT_LE(*x - 3.0, 1e-11);
  const auto y = smallest_meeting([](double e) { return 10 - e; }, 0, 1, 10);
  ASSERT_TRUE(y.has_value());
  EXPECT_GE(*y, 10.0);
}

TEST(SmallestMeeting, BadStepThrows) {
  auto f = [](double x) { return 1 - x; };
  EXPECT_THROW(smallest_meeting(f, 0, 0, 10), std::logic_error);
  EXPECT_THROW(smallest_meeting(f, 0, -1, 10), std::logic_error);
  EXPECT_THROW(smallest_meeting(f, 0, kNaN, 10), std::logic_error);
  EXPECT_THROW(smallest_meeting(f, kNaN, 1, 10), std::logic_error);
}

}  // namespace
