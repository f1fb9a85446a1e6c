// The run description: validation messages and the paper noise conventions (DESIGN.md).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "hsdp/errors.hpp"
#include "hsdp/run.hpp"

namespace {

hsdp::Run valid_run() {
  hsdp::Run run;
  run.n = 100;
  run.steps = 100;
  run.eta = hsdp::Schedule(0.1);
  run.noise_std = hsdp::Schedule(1.0);
  return run;
}

std::string message_of(const hsdp::Run& run) {
  try {
    run.validate();
  } catch (const hsdp::InvalidArgument& e) {
    return e.what();
  }
  return "";
}

TEST(Run, ValidRunPasses) { EXPECT_NO_THROW(valid_run().validate()); }

TEST(Run, MessagesNameParameterValueAndRange) {
  auto run = valid_run();
  run.noise_std = hsdp::Schedule(-1.0);
  EXPECT_EQ(message_of(run), "noise-std = -1: must be finite and > 0");
  run = valid_run();
  run.eta = hsdp::Schedule(std::vector<double>(100, 0.1));
  run.eta = hsdp::Schedule([] {
    std::vector<double> v(100, 0.1);
    v[41] = std::numeric_limits<double>::quiet_NaN();
    return v;
  }());
  EXPECT_EQ(message_of(run), "eta[42] = nan: must be finite and > 0");
  run = valid_run();
  run.eta = hsdp::Schedule(std::vector<double>(7, 0.1));
  EXPECT_NE(message_of(run).find("exactly steps = 100 values"), std::string::npos);
  run = valid_run();
  run.index = 0;
  EXPECT_EQ(message_of(run), "index = 0: must be an integer in [1, 100]");
  run = valid_run();
  run.loss.smoothness = 1.0;
  run.loss.strong_convexity = 2.0;
  EXPECT_NE(message_of(run).find("strong-convexity = 2"), std::string::npos);
  run = valid_run();
  run.sampling = hsdp::Sampling::full;
  EXPECT_NE(message_of(run).find("batch-size = 1"), std::string::npos);
  run = valid_run();
  run.diameter = std::numeric_limits<double>::infinity();
  EXPECT_EQ(message_of(run), "");
}

TEST(Run, ErrorTypeIsInvalidArgument) {
  auto run = valid_run();
  run.n = 0;
  EXPECT_THROW(run.validate(), hsdp::InvalidArgument);
  EXPECT_THROW(run.validate(), std::invalid_argument);
}

TEST(Run, NoiseConventionsMatchDesignTable) {
  using hsdp::Convention;
  const double eta = 0.3, sigma = 2.0;
  EXPECT_DOUBLE_EQ(hsdp::noise_std_from_sigma(Convention::journal, sigma, eta, 10), eta * sigma);
  EXPECT_DOUBLE_EQ(hsdp::noise_std_from_sigma(Convention::isit, sigma, eta, 10), eta * sigma);
  EXPECT_DOUBLE_EQ(hsdp::noise_std_from_sigma(Convention::altschuler, sigma, eta, 10), eta * sigma);
  EXPECT_DOUBLE_EQ(hsdp::noise_std_from_sigma(Convention::federated, sigma, eta, 16),
                   eta * sigma / 4.0);
  EXPECT_DOUBLE_EQ(hsdp::noise_std_from_sigma(Convention::chourasia, sigma, eta, 10),
                   std::sqrt(2 * eta) * sigma);
  // DP-SGD: N(0, (z C)^2) on the sum of b clipped gradients, divided by b, times eta.
  EXPECT_DOUBLE_EQ(hsdp::noise_std_from_multiplier(1.1, 2.0, 0.5, 256), 0.5 * 1.1 * 2.0 / 256);
  // Laplace: the paper's sigma is the scale v of Z; std of eta Z is sqrt(2) eta v.
  EXPECT_DOUBLE_EQ(hsdp::noise_std_from_sigma(Convention::isit, sigma, eta, 1, hsdp::NoiseKind::laplace),
                   std::sqrt(2.0) * eta * sigma);
  for (auto c : {Convention::journal, Convention::federated, Convention::chourasia}) {
    const double s = hsdp::noise_std_from_sigma(c, sigma, eta, 9);
    EXPECT_NEAR(hsdp::sigma_from_noise_std(c, s, eta, 9), sigma, 1e-15);
  }
  EXPECT_THROW(hsdp::noise_std_from_sigma(Convention::journal, 0.0, eta, 1), hsdp::InvalidArgument);
  EXPECT_THROW(hsdp::parse_convention("opacus"), hsdp::InvalidArgument);
}

TEST(Run, Schedules) {
  auto s = hsdp::make_schedule(hsdp::ScheduleShape::inv_sqrt, 2.0, 4);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_DOUBLE_EQ(s.at(4), 1.0);
  EXPECT_DOUBLE_EQ(s.min(), 1.0);
  EXPECT_DOUBLE_EQ(s.max(), 2.0);
  auto t = hsdp::make_schedule(hsdp::ScheduleShape::inv_t, 2.0, 4);
  EXPECT_DOUBLE_EQ(t.at(4), 0.5);
  auto c = hsdp::make_schedule(hsdp::ScheduleShape::constant, 2.0, 4);
  EXPECT_TRUE(c.is_constant());
  EXPECT_DOUBLE_EQ(c.at(3), 2.0);
}

TEST(Run, SinglePass) {
  auto run = valid_run();
  run.batch_size = 10;
  run.steps = 10;
  EXPECT_TRUE(run.single_pass());
  run.steps = 11;
  EXPECT_FALSE(run.single_pass());
  run.steps = 5;
  run.sampling = hsdp::Sampling::poisson;
  EXPECT_FALSE(run.single_pass());
  run.sampling = hsdp::Sampling::full;
  run.batch_size = 100;
  run.steps = 1;
  EXPECT_TRUE(run.single_pass());
  run.steps = 2;
  EXPECT_FALSE(run.single_pass());
}

}  // namespace
