// The `hsdp plan` command: its JSON equals the library's plan, and bad input exits 2 naming
// the flag.
#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.hpp"
#include "fixtures.hpp"
#include "hsdp/plan.hpp"

namespace {

using hsdp::Plan;
using hsdp::testing::langevin_problem;

TEST(Plan, CliJsonMatchesLibrary) {
  const auto r = hsdp::testing::run_cli(
      "plan --setting langevin --epsilon 1 --delta 1e-5 --n 1000 --lipschitz 1 --smoothness 2 "
      "--strong-convexity 0.5 --diameter 1 --dimension 10 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const Plan plan = hsdp::plan(langevin_problem(2.0, 0.5));
  EXPECT_EQ(j["proposal"]["steps"].get<std::int64_t>(), plan.run.steps);
  EXPECT_EQ(j["proposal"]["sigma"].get<double>(), plan.sigma);
  EXPECT_EQ(j["utility"]["value"].get<double>(), plan.utility);
  EXPECT_TRUE(j["privacy"]["meets_target"].get<bool>());
  EXPECT_LE(j["report"]["best"]["epsilon"].get<double>(), 1.0);
  EXPECT_EQ(j["report"]["run"]["steps"].get<std::int64_t>(), plan.run.steps);
}

TEST(Plan, CliBadInputExitsTwo) {
  auto r = hsdp::testing::run_cli(
      "plan --setting langevin --epsilon 1 --delta 2 --n 1000 --lipschitz 1 --smoothness 2 "
      "--strong-convexity 0.5 --diameter 1 --dimension 10");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--delta"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
  r = hsdp::testing::run_cli(
      "plan --setting langevin --epsilon 1 --delta 1e-5 --n 1000 --lipschitz 1 --smoothness 2 "
      "--diameter 1 --dimension 10");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--strong-convexity = 0"), std::string::npos) << r.err;
  r = hsdp::testing::run_cli(
      "plan --setting online --epsilon 1 --delta 1e-5 --n 10 --lipschitz 1 "
      "--diameter 1 --dimension 2 --r0 1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--r0"), std::string::npos) << r.err;
  r = hsdp::testing::run_cli(
      "plan --setting langevin --epsilon 1 --delta 1e-5 --n 1000 --lipschitz 1 --smoothness 2 "
      "--strong-convexity 0.5 --diameter 1 --dimension 10 --batch-size 10");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--batch-size = 10"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
  r = hsdp::testing::run_cli("plan --setting noisy-sgd --epsilon 1 --delta 1e-5 --n 1000 --smoothness 1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--lipschitz"), std::string::npos) << r.err;
}

}  // namespace
