// `hsdp account` on the analyses' documented examples: the per-index view, a delta below the
// smallest double, the composition RDP curve, the federated figure, the Langevin worked example
// and LSI constant, online GD and the RDP comparisons; bad input exits 2 naming the flag. The
// command's general contract (schema, exit statuses) is tests/cli/test_cli.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "fixtures.hpp"
#include "hsdp/divergence/rdp.hpp"

namespace {

using hsdp::testing::fig1_composition;
using hsdp::testing::fig1_ours;
using hsdp::testing::run_cli;
using hsdp::testing::thm2_brute;
using nlohmann::json;

// ---- per-index view and the accountant's rounding -------------------------------------------

// E_{e^eps}(N(r,1) || N(0,1)) = Q(eps/r - r/2) - e^eps Q(eps/r + r/2) (journal Lemma 1).
double theta(double eps, double r) {
  auto q = [](double x) { return 0.5 * std::erfc(x / std::sqrt(2.0)); };
  return q(eps / r - r / 2) - std::exp(eps) * q(eps / r + r / 2);
}

TEST(PerIndex, CliJsonAndTable) {
  const std::string run = " --n 100 --eta 0.05 --lipschitz 1 --smoothness 1 --diameter 1 "
                          "--sigma 3 --convention journal --epsilon 1";
  const auto r = hsdp::testing::run_cli("account --per-index --json" + run);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("per_index"));
  EXPECT_EQ(j["per_index"]["indices_evaluated"], 100);
  EXPECT_FALSE(j["per_index"]["subsampled"].get<bool>());
  bool found = false;
  for (const auto& a : j["per_index"]["analyses"]) {
    if (a["name"] != "contraction-per-index") continue;
    found = true;
    EXPECT_EQ(a["worst_index"], 100);
    ASSERT_EQ(a["points"].size(), 100u);
    const double d1 = a["points"][0]["delta"].get<double>();
    const double exact = theta(1.0, 0.1 / 0.15) * std::pow(theta(1.0, 1.0 / 0.15), 99.0);
    EXPECT_NEAR(d1 / exact, 1.0, 1e-8);
  }
  EXPECT_TRUE(found);
  const auto t = hsdp::testing::run_cli("account --per-index --per-index-points 16" + run);
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find("of the n = 100 positions"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("worst index (contraction-per-index): 100"), std::string::npos) << t.out;
  const auto bad = hsdp::testing::run_cli("account --per-index --index 5" + run);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--index"), std::string::npos) << bad.err;
}

// A delta below the smallest normal double must not be reported as 0 (exp underflows): an
// upper bound reports DBL_MIN, above the true value, and says so with the exact log delta.
TEST(Accountant, DeltaBelowTheSmallestDoubleIsNotReportedAsZero) {
  const auto r = hsdp::testing::run_cli("account --example --epsilon 60 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  int checked = 0;
  for (const auto& a : j.at("analyses")) {
    if (!a.at("applicable").get<bool>()) continue;
    const double delta = a.at("delta").get<double>();
    EXPECT_GE(delta, std::numeric_limits<double>::min()) << a.at("name");
    EXPECT_NE(a.at("note").get<std::string>().find("below the smallest normal double"),
              std::string::npos) << a.at("name");
    ++checked;
  }
  EXPECT_GE(checked, 2);
}

// Issue 38: the add/remove column of a two-adjacency report is the number `--adjacency remove`
// prints alone, and the replace-one number the one `--adjacency replace` prints (each process
// starts with empty caches): no adjacency's value is taken from the other's cache entry.
TEST(Accountant, BothAdjacenciesInOneReportMatchEachAlone) {
  const std::string run = "account --json --sampling fixed --n 4 --batch-size 2 --steps 3 --eta 1 --noise-std 1.0 "
                          "--lipschitz 1 --smoothness 1 --diameter 1e6 --release last --epsilon 1";
  auto analyses = [&](const std::string& more) {
    const auto r = hsdp::testing::run_cli(run + more);
    EXPECT_EQ(r.status, 0) << r.err;
    std::map<std::string, nlohmann::json> out;
    const auto doc = nlohmann::json::parse(r.out);
    for (const auto& a : doc.at("analyses")) out[a.at("name").get<std::string>()] = a;
    return out;
  };
  const auto both = analyses(""), remove = analyses(" --adjacency remove"), replace = analyses(" --adjacency replace");
  const auto& si = both.at("shifted-interpolation");
  EXPECT_EQ(si.at("delta").get<double>(), 0.1304553239);
  EXPECT_EQ(si.at("add_remove").at("delta").get<double>(), 0.1167504957);
  int compared = 0;
  for (const auto& [name, a] : both) {
    if (!a.at("applicable").get<bool>() || !a.contains("add_remove") || !a.at("add_remove").contains("delta")) continue;
    ASSERT_TRUE(replace.count(name) && remove.count(name)) << name;
    EXPECT_EQ(a.at("delta"), replace.at(name).at("delta")) << name;
    EXPECT_EQ(a.at("add_remove").at("delta"), remove.at(name).at("delta")) << name;
    ++compared;
  }
  EXPECT_GE(compared, 2);
}

// ---- composition-rdp ------------------------------------------------------------------------

const char* kDpSgd =
    "account --n 60000 --batch-size 600 --sampling poisson --steps 10000 --eta 0.1 "
    "--noise-multiplier 1.1 --clip 1 --adjacency remove --release every";

TEST(CompositionCli, AlphaCurveInJsonAndTable) {
  auto r = run_cli(std::string(kDpSgd) + " --delta 1e-5 --alpha 2 --alpha 8 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["run"]["clip"].get<double>(), 1.0);
  bool found = false;
  for (const auto& a : j["analyses"]) {
    if (a["name"] != "composition-rdp") continue;
    found = true;
    ASSERT_TRUE(a["applicable"].get<bool>()) << a["reason"];
    ASSERT_EQ(a["rdp"].size(), 2u);
    EXPECT_EQ(a["rdp"][0]["alpha"].get<double>(), 2.0);
    const double expected = 10000 * hsdp::div::s_alpha(2.0, 0.01, 1.1);
    EXPECT_NEAR(a["rdp"][0]["epsilon"].get<double>(), expected, 1e-8 * expected);
    EXPECT_GE(a["rdp"][0]["epsilon"].get<double>(), expected);
  }
  EXPECT_TRUE(found);
  auto t = run_cli(std::string(kDpSgd) + " --alpha 2");
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find("RDP: eps(2)="), std::string::npos) << t.out;
}

TEST(CompositionCli, BadInput) {
  auto r = run_cli(std::string(kDpSgd) + " --alpha 1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--alpha = 1: must be > 1"), std::string::npos) << r.err;
  r = run_cli(std::string(kDpSgd) + " --alpha 0.5");
  EXPECT_EQ(r.status, 2);
  r = run_cli(
      "account --n 100 --batch-size 10 --sampling poisson --eta 0.1 --noise-multiplier 1.1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--clip"), std::string::npos) << r.err;
  r = run_cli(std::string(kDpSgd) + " --noise-std 0.1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--noise-multiplier"), std::string::npos) << r.err;
  r = run_cli(
      "account --n 100 --batch-size 10 --sampling poisson --eta 0.1 --noise-multiplier 1.1 "
      "--clip 0");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--clip = 0"), std::string::npos) << r.err;
}

// ---- federated ------------------------------------------------------------------------------

// The same figure through the CLI (federated convention), as documented.
TEST(Federated, Figure2ThroughCli) {
  auto r = hsdp::testing::run_cli(
      "account --n 100 --batch-size 20 --sampling shuffle --eta 0.5 --sigma 1.5 "
      "--convention federated --lipschitz 1 --smoothness 1 --diameter 2 --epsilon 1 "
      "--analysis federated --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& a = j["analyses"][0];
  ASSERT_EQ(a["name"], "federated");
  const double brute = thm2_brute(1.0, 100, 20, std::vector<double>(5, 0.5),
                                  std::vector<double>(5, 1.5), 1.0, 1.0);
  EXPECT_GE(a["delta"].get<double>(), brute);
  EXPECT_LE(a["delta"].get<double>(), brute * (1 + 1e-8));
  EXPECT_GE(a["details"]["thm2_closed_form"].get<double>(), brute);
}

// A named analysis that does not apply is rejected, with its reason.
TEST(Federated, NotApplicableThroughCli) {
  auto cli = hsdp::testing::run_cli(
      "account --n 100 --batch-size 10 --sampling cyclic --eta 0.5 --noise-std 0.2 "
      "--lipschitz 1 --diameter 2 --epsilon 1 --analysis federated");
  EXPECT_EQ(cli.status, 2);
  EXPECT_NE(cli.err.find("shuffle"), std::string::npos) << cli.err;
}

// ---- langevin -------------------------------------------------------------------------------

// Thm 2 with an asserted LSI constant (--lsi), and a bad constant is rejected naming the flag.
TEST(Langevin, LsiThroughCli) {
  const auto cli = hsdp::testing::run_cli(
      "account --n 100 --steps 5000 --batch-size 100 --sampling full --eta 0.1 --sigma 0.5 "
      "--convention chourasia --lipschitz 1 --non-convex --lsi 2 --release last --delta 1e-5 "
      "--analysis langevin --alpha 3 --json");
  ASSERT_EQ(cli.status, 0) << cli.err;
  const auto j = nlohmann::json::parse(cli.out).at("analyses").at(0);
  EXPECT_NEAR(j.at("rdp").at(0).at("epsilon").get<double>(), 0.0048, 1e-11);
  EXPECT_NEAR(j.at("details").at("thm2_rdp_per_alpha").get<double>(), 0.0016, 1e-15);
  const auto bad = hsdp::testing::run_cli(
      "account --n 100 --steps 50 --batch-size 100 --sampling full --eta 0.1 --sigma 0.5 "
      "--convention chourasia --lipschitz 1 --lsi 0 --delta 1e-5");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--lsi"), std::string::npos) << bad.err;
}

TEST(Langevin, CliWorkedExample) {
  // docs/analyses/langevin.md: Fig. 1 at lambda = 1, K = 1000.
  const auto r = hsdp::testing::run_cli(
      "account --n 5000 --steps 1000 --batch-size 5000 --sampling full --eta 0.02 --sigma 0.02 "
      "--convention chourasia --lipschitz 2 --smoothness 4 --strong-convexity 1 --diameter 10 "
      "--release last --delta 1e-5 --analysis langevin --alpha 10 --alpha 30 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& a = j.at("analyses").at(0);
  EXPECT_EQ(a.at("name"), "langevin");
  EXPECT_EQ(a.at("kind"), "upper");
  ASSERT_EQ(a.at("rdp").size(), 2u);
  EXPECT_NEAR(a.at("rdp").at(0).at("epsilon").get<double>(), fig1_ours(10, 1, 1000), 1e-9);
  EXPECT_NEAR(a.at("rdp").at(1).at("epsilon").get<double>(), fig1_ours(30, 1, 1000), 1e-9);
  EXPECT_NEAR(a.at("details").at("composition_rdp(alpha=30)").get<double>(),
              fig1_composition(30, 1000), 1e-12);
  EXPECT_GT(a.at("epsilon").get<double>(), 0.0);
  // The step-size violation is named on the command line too (Cor. 1 is dropped, Thm 1 stays).
  const auto bad = hsdp::testing::run_cli(
      "account --n 5000 --steps 1000 --batch-size 5000 --sampling full --eta 0.3 --sigma 0.02 "
      "--convention chourasia --lipschitz 2 --smoothness 4 --strong-convexity 1 --release last "
      "--epsilon 1 --analysis langevin --json");
  ASSERT_EQ(bad.status, 0) << bad.err;
  const auto jb = nlohmann::json::parse(bad.out).at("analyses").at(0);
  EXPECT_NE(jb.at("note").get<std::string>().find("eta = 0.3 exceeds 1/beta = 0.25"),
            std::string::npos) << bad.out;
  // alpha <= 1 is rejected by the shared flag parsing, naming the parameter.
  const auto a1 = hsdp::testing::run_cli(
      "account --n 5000 --steps 1000 --batch-size 5000 --sampling full --eta 0.02 --sigma 0.02 "
      "--convention chourasia --lipschitz 2 --smoothness 4 --strong-convexity 1 --release last "
      "--analysis langevin --alpha 1");
  EXPECT_EQ(a1.status, 2);
  EXPECT_NE(a1.err.find("--alpha"), std::string::npos) << a1.err;
}

// ---- online-gd ------------------------------------------------------------------------------

// The documented CLI example: Prop. 3 schedule (--eta D/L), journal sigma (Example 3).
TEST(OnlineGd, CliExample) {
  auto r = hsdp::testing::run_cli(
      "account --n 1000 --batch-size 1 --sampling cyclic --eta 0.5 --eta-schedule inv-sqrt "
      "--sigma 4 --convention journal --lipschitz 2 --smoothness 1 --diameter 1 "
      "--release random-stop --dimension 10 --epsilon 1 --analysis online-gd --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& a = j["analyses"][0];
  ASSERT_EQ(a["name"], "online-gd");
  EXPECT_TRUE(a["details"].contains("example_3"));
  EXPECT_TRUE(a["details"].contains("prop3_regret"));
  EXPECT_GE(a["details"]["example_3"].get<double>(), a["delta"].get<double>() * (1 - 1e-9));
}

// ---- pabi-feldman and balle-mixing ------------------------------------------------------------

TEST(RdpComparisons, Cli) {
  using hsdp::testing::run_cli;
  const std::string base =
      "account --n 100 --eta 0.05 --sigma 3 --convention journal --lipschitz 1 --smoothness 1 "
      "--diameter 1 ";
  auto r = run_cli(base + "--release random-stop --epsilon 2 --analysis pabi-feldman --json");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"delta_23\""), std::string::npos);
  r = run_cli(base + "--release last --delta 1e-5 --analysis balle-mixing");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("balle-mixing"), std::string::npos);
  r = run_cli(base + "--release last --epsilon 2 --analysis pabi-feldman");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("random-stop"), std::string::npos);
}

}  // namespace

namespace {

// ---- DP-SGD users: no --eta; both adjacencies ------------------------------------------------

const std::string kOpacusMnist = " --n 60000 --batch-size 256 --sampling poisson --noise-multiplier 1.1 --clip 1 "
                           "--steps 14062 --delta 1e-5";

TEST(DpSgd, RunsWithoutEtaAndShowsBothAdjacencies) {
  const auto t = run_cli("account" + kOpacusMnist);
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find("eta=unknown"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("adjacency: replace-one"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("add/remove"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("not applicable: needs the step size eta (--eta)"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("best: composition-pld (epsilon = 4.22"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("best under add/remove-one: composition-pld (epsilon = 2.38"), std::string::npos) << t.out;
  const auto j = run_cli("account --json" + kOpacusMnist);
  ASSERT_EQ(j.status, 0) << j.err;
  const json doc = json::parse(j.out);
  EXPECT_EQ(doc["adjacency"], "replace");
  EXPECT_NEAR(doc["best"]["epsilon"].get<double>(), 4.22, 0.005);
  EXPECT_NEAR(doc["best_add_remove"]["epsilon"].get<double>(), 2.38, 0.005);
  for (const auto& a : doc["analyses"])
    if (a["name"] == "composition-pld") EXPECT_EQ(a["add_remove"]["epsilon"], doc["best_add_remove"]["epsilon"]);
  // Under --adjacency remove: that value is the run's own, nothing beside it.
  const auto r = run_cli("account --json --adjacency remove" + kOpacusMnist);
  ASSERT_EQ(r.status, 0) << r.err;
  const json removed = json::parse(r.out);
  EXPECT_EQ(removed["best"]["epsilon"], doc["best_add_remove"]["epsilon"]);
  EXPECT_FALSE(removed.contains("best_add_remove"));
}

TEST(DpSgd, WhatNeedsEtaSaysSo) {
  const auto std_noise = run_cli("account --n 100 --noise-std 1");
  EXPECT_EQ(std_noise.status, 2);
  EXPECT_NE(std_noise.err.find("--eta = (missing): must be given with --noise-std"), std::string::npos) << std_noise.err;
  const auto exact = run_cli("audit exact --n 100 --sigma 3 --convention journal --lipschitz 1");
  EXPECT_EQ(exact.status, 2);
  EXPECT_NE(exact.err.find("--eta = (missing)"), std::string::npos) << exact.err;
}

}  // namespace
