// The `hsdp plan` command: its JSON equals the library's plan, and bad input exits 2 naming
// the flag.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fmt/format.h>
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

// hsdp plan --setting noisy-sgd plans the run hsdp train performs: with --dimension the
// proposal is accounted with the trainer's noise grid (docs/security.md), so its epsilon is what
// `hsdp account` gives the planned run with the grid charges computed here by hand
// (slack 2 2^-32 sqrt(P), epsilon 2 P T 2^-52, log beta log(P T) - 11000); without it the
// continuous plan is kept and a note says so. The grid costs more noise than the continuous
// plan, by far less than 1%, and the continuous plan's run on the grid misses its epsilon by
// less than 1%.
std::string grid_flags(double P, double T) {
  return fmt::format(" --grid-slack {:.17g} --grid-epsilon {:.17g} --grid-log-beta {:.17g}",
                     2.0 * 0x1p-32 * std::sqrt(P), 2.0 * P * T * 0x1p-52, std::log(P * T) - 11000.0);
}

std::string account_of(const nlohmann::json& plan) {
  const auto& run = plan["report"]["run"];
  return fmt::format(
      "account --n {} --steps {} --batch-size {} --sampling {} --eta {:.17g} --noise-std {:.17g} "
      "--lipschitz {:.17g} --smoothness {:.17g} --dimension 785 --delta 1e-5 --json",
      run["n"].get<std::int64_t>(), run["steps"].get<std::int64_t>(), run["batch_size"].get<std::int64_t>(),
      run["sampling"].get<std::string>(), run["eta"].get<double>(), run["noise_std"].get<double>(),
      run["lipschitz"].get<double>(), run["smoothness"].get<double>());
}

TEST(Plan, CliNoisySgdPlansWithTheTrainersGrid) {
  const std::string request =
      "plan --setting noisy-sgd --epsilon 1 --delta 1e-5 --n 12000 --lipschitz 1.4142135623730951 "
      "--smoothness 0.5";
  const auto g = hsdp::testing::run_cli(request + " --dimension 785 --json");
  const auto c = hsdp::testing::run_cli(request + " --json");
  ASSERT_EQ(g.status, 0) << g.err;
  ASSERT_EQ(c.status, 0) << c.err;
  const auto jg = nlohmann::json::parse(g.out), jc = nlohmann::json::parse(c.out);
  const double T = jg["proposal"]["steps"].get<double>();
  ASSERT_EQ(T, 288);
  ASSERT_TRUE(jg["report"]["run"].contains("noise_grid"));
  EXPECT_FALSE(jc["report"]["run"].contains("noise_grid"));
  // The planned epsilon is hsdp account's for the planned run with the trainer's grid.
  const auto a = hsdp::testing::run_cli(account_of(jg) + grid_flags(785, T));
  ASSERT_EQ(a.status, 0) << a.err;
  const auto ja = nlohmann::json::parse(a.out);
  const double planned = jg["best"]["epsilon"].get<double>();
  EXPECT_EQ(ja["best"]["epsilon"].get<double>(), planned);
  EXPECT_EQ(ja["best"]["name"], jg["best"]["name"]);
  EXPECT_LE(planned, 1.0);
  // The grid needs more noise than continuous noise, within 1%.
  const double sg = jg["proposal"]["noise_std"].get<double>(), sc = jc["proposal"]["noise_std"].get<double>();
  EXPECT_GE(sg, sc);
  EXPECT_LE(sg, 1.01 * sc);
  // The continuous plan's run, trained (on the grid): epsilon >= its continuous value, within 1%.
  const double continuous = jc["best"]["epsilon"].get<double>();
  const auto on_grid = hsdp::testing::run_cli(account_of(jc) + grid_flags(785, T));
  ASSERT_EQ(on_grid.status, 0) << on_grid.err;
  const double trained = nlohmann::json::parse(on_grid.out)["best"]["epsilon"].get<double>();
  EXPECT_GE(trained, continuous);
  EXPECT_LE(trained, 1.01 * continuous);
  // The note: only without --dimension, naming the flag.
  const std::string note = "accounted with continuous noise: a model trained by hsdp draws its noise on a grid";
  const auto text = hsdp::testing::run_cli(request);
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("note: " + note), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("give --dimension (the model's number of parameters) to plan with it"), std::string::npos);
  EXPECT_EQ(g.out.find(note), std::string::npos);
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
