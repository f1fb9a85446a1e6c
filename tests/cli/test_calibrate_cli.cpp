// The `hsdp calibrate` command: its JSON contract, `hsdp account` at the printed value agrees,
// the steps and sampling-rate texts, and infeasible targets and bad input exit 2 naming the flag.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.hpp"

namespace {

const std::string kExample = " --n 100 --eta 0.05 --lipschitz 1 --smoothness 1 --diameter 1";

TEST(CalibrateCli, JsonContractAndReEvaluation) {
  const auto r = hsdp::testing::run_cli("calibrate --for noise --epsilon 1 --delta 1e-5 --sigma 3 "
                                        "--convention journal --json" + kExample);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["parameter"], "noise");
  EXPECT_EQ(j["unit"], "sigma");
  EXPECT_EQ(j["convention"], "journal");
  const double sigma = j["value"].get<double>();
  EXPECT_EQ(j["achieved"]["delta"].get<double>(), 1e-5);
  EXPECT_LE(j["achieved"]["epsilon"].get<double>(), 1.0);
  EXPECT_FALSE(j["achieved"]["name"].get<std::string>().empty());
  // `account` at the printed sigma agrees.
  const auto a = hsdp::testing::run_cli("account --delta 1e-5 --json --convention journal --sigma " +
                                        nlohmann::json(sigma).dump() + kExample);
  ASSERT_EQ(a.status, 0) << a.err;
  const auto k = nlohmann::json::parse(a.out);
  EXPECT_LE(k["best"]["epsilon"].get<double>(), 1.0);
  EXPECT_EQ(k["best"]["name"], j["achieved"]["name"]);
}

TEST(CalibrateCli, StepsAndSamplingRateText) {
  const auto s = hsdp::testing::run_cli("calibrate --for steps --epsilon 1 --delta 1e-5 --sigma 10 "
                                        "--convention journal --max-steps 1048576" + kExample);
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_NE(s.out.find("largest steps = 1048576"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("unbounded"), std::string::npos) << s.out;
  const auto missing = hsdp::testing::run_cli(
      "calibrate --for sampling-rate --epsilon 1 --delta 1e-5 --noise-std 1" + kExample);
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("--steps"), std::string::npos) << missing.err;
}

TEST(CalibrateCli, InfeasibleAndBadInputExitTwo) {
  const auto r = hsdp::testing::run_cli("calibrate --for steps --epsilon 1 --delta 1e-5 --sigma 5 "
                                        "--convention journal" + kExample);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("infeasible target"), std::string::npos) << r.err;
  const auto bad = hsdp::testing::run_cli("calibrate --for noize --epsilon 1 --delta 1e-5" + kExample);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--for"), std::string::npos) << bad.err;
  const auto no_delta = hsdp::testing::run_cli("calibrate --for noise --epsilon 1" + kExample);
  EXPECT_EQ(no_delta.status, 2);
  EXPECT_NE(no_delta.err.find("--delta"), std::string::npos) << no_delta.err;
}

}  // namespace
