// The accountant picks the tightest valid upper bound; evaluate() rounds up and inverts
// conservatively. Uses small analyses with known closed forms.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "hsdp/accountant.hpp"
#include "hsdp/errors.hpp"

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

}  // namespace
