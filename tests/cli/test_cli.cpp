// The `hsdp account` contract: JSON schema, exit statuses, messages naming the flag.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "hsdp/accountant.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/divergence/hockey_stick.hpp"

using hsdp::testing::run_cli;
using nlohmann::json;

namespace {

const char* kRun =
    "account --n 100 --eta 0.05 --sigma 3 --convention journal --lipschitz 1 --smoothness 1 "
    "--diameter 1";

TEST(Cli, JsonSchemaAndBest) {
  auto r = run_cli(std::string(kRun) + " --delta 1e-5 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_TRUE(j["analyses"].is_array());
  ASSERT_GE(j["analyses"].size(), 8u);
  double best_eps = INFINITY;
  std::string best_name;
  for (const auto& a : j["analyses"]) {
    for (const char* key : {"name", "citation", "applicable", "reason"})
      EXPECT_TRUE(a.contains(key)) << key;
    if (a["applicable"].get<bool>()) {
      EXPECT_TRUE(a["reason"].get<std::string>().empty());
      ASSERT_TRUE(a.contains("epsilon"));
      ASSERT_TRUE(a.contains("delta"));
      EXPECT_EQ(a["delta"].get<double>(), 1e-5);
      if (a["epsilon"].is_number() && a["kind"] == "upper" &&
          a["epsilon"].get<double>() < best_eps) {
        best_eps = a["epsilon"].get<double>();
        best_name = a["name"];
      }
    } else {
      EXPECT_FALSE(a.contains("epsilon"));
      EXPECT_FALSE(a.contains("delta"));
      EXPECT_FALSE(a["reason"].get<std::string>().empty());
    }
  }
  ASSERT_TRUE(j["best"].is_object());
  EXPECT_EQ(j["best"]["name"], best_name);
  EXPECT_EQ(j["best"]["epsilon"].get<double>(), best_eps);
}

TEST(Cli, JsonEqualsLibrary) {
  // The command names fields as its flags in the reasons; so does the library here.
  hsdp::FieldNames flags;
  flags.option = [](std::string_view field) {
    std::string out = "--" + std::string(field);
    std::replace(out.begin(), out.end(), '_', '-');
    return out;
  };
  flags.option_value = [flags](std::string_view field, std::string_view value) {
    return value.empty() ? flags.option(field) : flags.option(field) + " " + std::string(value);
  };
  flags.parameter = [](std::string_view name) { return std::string(name); };
  hsdp::use_field_names(flags, flags);
  auto r = run_cli(std::string(kRun) + " --epsilon 1 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  hsdp::Run run;
  run.n = 100;
  run.steps = 100;
  run.eta = hsdp::Schedule(0.05);
  run.noise_std = hsdp::Schedule(0.05 * 3);
  run.loss.lipschitz = 1;
  run.loss.smoothness = 1;
  run.diameter = 1;
  // The command's request: every analysis, and the add/remove-one values of this replace-one run.
  const auto report = hsdp::account_request(run, hsdp::Query::at_epsilon(1.0));
  EXPECT_EQ(hsdp::to_json(report)["analyses"], j["analyses"]);
  // Cyclic batches: no add/remove value (a record added or removed moves every later one),
  // with the reason, in the library's report and the command's alike.
  EXPECT_EQ(hsdp::to_json(report)["best_add_remove"], j["best_add_remove"]);
  EXPECT_TRUE(j["best_add_remove"].is_null());
  EXPECT_EQ(hsdp::to_json(report)["add_remove_reason"], j["add_remove_reason"]);
  EXPECT_NE(j["add_remove_reason"].get<std::string>().find("cyclic"), std::string::npos);
}

TEST(Cli, RestrictToOneAnalysis) {
  auto r = run_cli(std::string(kRun) + " --epsilon 1 --json --analysis contraction-per-index");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j["analyses"].size(), 1u);
  EXPECT_EQ(j["analyses"][0]["name"], "contraction-per-index");
  // The worst record is the one processed last: one Gaussian step with shift 2 eta L and
  // noise eta sigma, i.e. theta_{e^1}(2L/sigma) (journal Thm 4 with i = n).
  EXPECT_NEAR(j["analyses"][0]["delta"].get<double>(), hsdp::div::theta(1.0, 2.0 / 3.0),
              1e-8 * hsdp::div::theta(1.0, 2.0 / 3.0));
  EXPECT_GE(j["analyses"][0]["delta"].get<double>(), hsdp::div::theta(1.0, 2.0 / 3.0));
}

TEST(Cli, TableIsReadable) {
  auto r = run_cli("account --example");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("contraction-per-index"), std::string::npos);
  EXPECT_NE(r.out.find("not applicable: "), std::string::npos);
  EXPECT_NE(r.out.find("best: "), std::string::npos);
}

struct BadInput {
  const char* args;
  const char* names;  // the message must contain this
};

class CliBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(CliBadInput, ExitsTwoAndNamesTheParameter) {
  const auto& p = GetParam();
  auto r = run_cli(std::string("account ") + p.args);
  EXPECT_EQ(r.status, 2) << p.args << "\nstdout: " << r.out << "\nstderr: " << r.err;
  EXPECT_NE(r.err.find(p.names), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

const char* kOk = "--n 100 --eta 0.05 --noise-std 0.15 --lipschitz 1 --diameter 1 ";

INSTANTIATE_TEST_SUITE_P(
    All, CliBadInput,
    ::testing::Values(
        BadInput{"--n 0 --eta 0.1 --noise-std 1", "--n"},
        BadInput{"--n -5 --eta 0.1 --noise-std 1", "--n"},
        BadInput{"--eta 0.1 --noise-std 1", "--n"},
        BadInput{"--n 100 --eta 0.1 --noise-std 0", "noise-std"},
        BadInput{"--n 100 --eta 0.1 --noise-std -1", "noise-std"},
        BadInput{"--n 100 --eta 0.1 --noise-std nan", "noise-std"},
        BadInput{"--n 100 --eta 0.1 --noise-std inf", "noise-std"},
        BadInput{"--n 100 --eta 0.1", "--noise-std"},
        BadInput{"--n 100 --noise-std 1", "--eta"},
        BadInput{"--n 100 --eta -0.1 --noise-std 1", "--eta"},
        BadInput{"--n 100 --eta nan --noise-std 1", "--eta"},
        BadInput{"--n 100 --eta 0.1 --sigma 2", "--convention"},
        BadInput{"--n 100 --eta 0.1 --sigma 2 --convention paper", "--convention"},
        BadInput{"--n 100 --eta 0.1 --sigma -2 --convention journal", "--sigma"},
        BadInput{"--n 100 --eta 0.1 --sigma 2 --noise-std 1 --convention journal", "--sigma"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --delta 0", "--delta"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --delta 1", "--delta"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --delta 1.5", "--delta"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --delta nan", "--delta"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --epsilon -1", "--epsilon"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --epsilon nan", "--epsilon"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --index 0", "index"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --index 101", "index"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --batch-size 0", "--batch-size"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --batch-size 101", "--batch-size"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --lipschitz -1", "lipschitz"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --lipschitz nan", "lipschitz"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --smoothness 0", "smoothness"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --strong-convexity -1", "strong-convexity"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --diameter 0", "diameter"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --diameter nan", "diameter"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --steps 0", "--steps"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --sampling random", "--sampling"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --release all", "--release"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --noise cauchy", "--noise"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --analysis nonsense", "--analysis"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --epsilon 1 --delta 1e-5", "--epsilon"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --bogus-flag 3", "bogus"},
        BadInput{"--n abc --eta 0.1 --noise-std 1", "--n"},
        // The PLD grid knobs: named as flags, with div::validate's ranges.
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --pld-interval 0", "--pld-interval = 0: must be in [1e-06, 0.5]"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --pld-interval 0.6", "--pld-interval = 0.6: must be in [1e-06, 0.5]"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --pld-interval -1e-3", "--pld-interval"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --pld-interval nan", "--pld-interval"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --pld-interval fine", "--pld-interval"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --pld-cells 0.5", "--pld-cells = 0.5: must be in [1, 1000]"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --pld-cells 1e4", "--pld-cells"},
        BadInput{"--n 100 --eta 0.1 --noise-std 1 --pld-cells inf", "--pld-cells"},
        // eta > 2/beta where the requested (smoothness-based) bound needs it.
        BadInput{"--n 100 --eta 3 --noise-std 1 --lipschitz 1 --smoothness 1 --diameter 1 "
                 "--release random-stop --analysis pabi-feldman",
                 "eta"}));

}  // namespace

// Issue regression: journal (17) where 1 - c ~ 1e-322 (c = theta_{e^0.2}(76.956)); every term
// of the geometric sum is theta(4), so delta = theta_{e^0.2}(4) = 0.9497613269 (was 0.646).
TEST(Cli, RandomStopDeltaWhereOneMinusCIsSubnormal) {
  for (const char* analysis : {"contraction-random-stop", "online-gd"}) {
    auto r = run_cli(
        std::string("account --json --n 1000 --steps 1000 --batch-size 1 --eta 1 --sigma 0.5 "
                    "--convention journal --lipschitz 1 --smoothness 1 --diameter 38.478 "
                    "--release random-stop --epsilon 0.2 --analysis ") +
        analysis);
    ASSERT_EQ(r.status, 0) << r.err;
    const json j = json::parse(r.out);
    ASSERT_EQ(j["analyses"].size(), 1u);
    EXPECT_GE(j["analyses"][0]["delta"].get<double>(), 0.9497613269) << analysis;
    EXPECT_LE(j["analyses"][0]["delta"].get<double>(), 0.9497613269 * (1 + 1e-8)) << analysis;
  }
}

// The PLD grid knobs on a Gaussian composition, through `hsdp account`: 100 full-batch steps
// with noise multiplier 5 under add/remove are exactly mu-GDP with mu = sqrt(100) / 5 = 2
// (Dong-Roth-Su 2019 Cor. 3.3), whose exact eps(delta) solves
// Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) = delta (Balle-Wang 2018 Thm 8). The
// default (the automatic grid: one Gaussian discretised on mu / 256) and the stated fixed
// grid 1e-4 are both certified (never below the exact value); the finer one is tighter.
namespace {

long double gdp_delta_exact(long double eps, long double mu) {
  auto phi = [](long double x) { return 0.5L * std::erfc(-x / std::sqrt(2.0L)); };
  return phi(-eps / mu + mu / 2) - std::exp(eps) * phi(-eps / mu - mu / 2);
}

double gdp_epsilon_exact(double delta, double mu) {
  long double lo = 0, hi = 50;  // delta(eps) decreases in eps
  for (int i = 0; i < 200; ++i) {
    const long double mid = 0.5L * (lo + hi);
    (gdp_delta_exact(mid, mu) > delta ? lo : hi) = mid;
  }
  return static_cast<double>(hi);
}

struct PldAnswer {
  double epsilon;
  json details;
  json run;
};

PldAnswer composition_pld(const std::string& knobs) {
  auto r = run_cli(
      "account --n 1000 --batch-size 1000 --sampling poisson --steps 100 --eta 0.1 --noise-multiplier 5 --clip 1 "
      "--adjacency remove --release every --delta 1e-5 --json --analysis composition-pld " + knobs);
  EXPECT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  const json& a = j["analyses"][0];
  EXPECT_EQ(a["name"], "composition-pld");
  return {a["epsilon"].get<double>(), a["details"], j["run"]};
}

}  // namespace

TEST(Cli, PldIntervalAndCellsOnAGaussianComposition) {
  const double exact = gdp_epsilon_exact(1e-5, 2.0);  // 9.99725615
  ASSERT_GT(exact, 9.99);
  ASSERT_LT(exact, 10.0);
  const PldAnswer coarse = composition_pld("");
  const PldAnswer fine = composition_pld("--pld-interval 1e-4");
  const PldAnswer cells = composition_pld("--pld-interval 1e-4 --pld-cells 200");
  for (const auto* a : {&coarse, &fine, &cells}) {
    // Never below the exact value: the exact profile at the reported eps meets delta.
    EXPECT_LE(gdp_delta_exact(a->epsilon, 2.0), 1e-5L) << a->epsilon;
    EXPECT_GE(a->epsilon, exact);
  }
  // Measured: 9.997277529 (default: the 100 Gaussian steps are one Gaussian of mu = 2,
  // discretised once on mu / 256: +2.1e-5) and 9.997256161 (the fixed grid 1e-4, +5e-7).
  EXPECT_LT(fine.epsilon, coarse.epsilon);
  EXPECT_LE(coarse.epsilon - exact, 5e-5);
  EXPECT_LE(fine.epsilon - exact, 2e-6);
  EXPECT_LE(cells.epsilon, fine.epsilon + 1e-9);
  // The grid is reported: in the details, and in the run only when stated.
  EXPECT_EQ(coarse.details["pld_interval"].get<double>(), 2.0 / 256);
  EXPECT_EQ(fine.details["pld_interval"].get<double>(), 1e-4);
  EXPECT_FALSE(coarse.run.contains("pld_interval"));
  EXPECT_FALSE(coarse.details.contains("pld_cells"));
  EXPECT_EQ(fine.run["pld_interval"].get<double>(), 1e-4);
  EXPECT_EQ(cells.run["pld_cells"].get<double>(), 200.0);
  EXPECT_EQ(cells.details["pld_cells"].get<double>(), 200.0);
}
