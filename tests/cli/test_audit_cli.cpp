// The `hsdp audit` commands: `audit exact` prints the library's numbers (JSON contract), writes
// its plot and CSV whole, and bad input exits 2; `audit mia` keeps its JSON contract and names
// the flag of bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.hpp"
#include "fixtures.hpp"
#include "hsdp/audit/exact.hpp"
#include "hsdp/data/dataset.hpp"

namespace {

using RunT = hsdp::Run;
using hsdp::Sampling;
namespace audit = hsdp::audit;
namespace data = hsdp::data;
using hsdp::testing::make_run;
using hsdp::testing::tiny_dataset;

// ---- audit exact ---------------------------------------------------------------------------

constexpr const char* kCliRun =
    "audit exact --n 10 --steps 10 --batch-size 10 --eta 0.1 --noise-std 0.1 --lipschitz 1 "
    "--smoothness 1 --diameter 1 --grid 1025";

TEST(AuditExactCli, JsonContract) {
  const auto r = hsdp::testing::run_cli(std::string(kCliRun) + " --delta 1e-5 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j["exact"]["epsilon"].is_number());
  EXPECT_EQ(j["exact"]["delta"].get<double>(), 1e-5);
  ASSERT_TRUE(j["exact"]["error"].is_number());
  // The same numbers as the library.
  RunT run = make_run(10, 10, 10, Sampling::full, 0.1, 0.1, 1.0);
  const auto t = audit::tightness(run, hsdp::Query::at_delta(1e-5), {1025, audit::Pair::opposite});
  EXPECT_EQ(j["exact"]["epsilon"].get<double>(), t.exact.epsilon);
  ASSERT_EQ(j["bounds"].size(), t.bounds.size());
  ASSERT_FALSE(t.bounds.empty());
  for (std::size_t i = 0; i < t.bounds.size(); ++i) {
    EXPECT_EQ(j["bounds"][i]["name"], t.bounds[i].name);
    EXPECT_EQ(j["bounds"][i]["epsilon"].get<double>(), t.bounds[i].value);
    EXPECT_GE(j["bounds"][i]["epsilon"].get<double>(), j["exact"]["epsilon"].get<double>());
  }
}

TEST(AuditExactCli, BadInputExitsTwo) {
  for (const std::string extra : {" --grid 10", " --pair both", " --noise laplace", " --delta 2",
                                   " --release every"}) {
    const auto r = hsdp::testing::run_cli(std::string(kCliRun) + extra);
    EXPECT_EQ(r.status, 2) << extra << ": " << r.err;
    EXPECT_NE(r.err.find("--"), std::string::npos) << r.err;
  }
}

TEST(AuditExactCli, PlotAndCsvAreWrittenWhole) {
  const std::string dir = ::testing::TempDir() + "hsdp_audit_plot_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string svg = dir + "/eps.svg", csv = dir + "/eps.csv";
  const auto r = hsdp::testing::run_cli(std::string(kCliRun) + " --points 4 --plot " + svg + " --csv " + csv);
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream in(csv);
  std::string line, text;
  int rows = 0;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#') ++rows, text += line + "\n";
  EXPECT_EQ(rows, 1 + 4) << text;  // header + steps 1, 2, 5, 10
  EXPECT_NE(text.find("steps,exact,exact_lo,exact_hi,"), std::string::npos) << text;
  EXPECT_NE(text.find(",composition-rdp"), std::string::npos) << text;
  std::ifstream s(svg);
  const std::string content((std::istreambuf_iterator<char>(s)), std::istreambuf_iterator<char>());
  EXPECT_NE(content.find("<svg"), std::string::npos);
  EXPECT_NE(content.find("exact (this audit)"), std::string::npos);
  // An unwritable path: exit 2, nothing left behind.
  const std::string bad = dir + "/missing/eps.svg";
  const auto r2 = hsdp::testing::run_cli(std::string(kCliRun) + " --points 2 --plot " + bad);
  EXPECT_EQ(r2.status, 2);
  EXPECT_FALSE(std::filesystem::exists(bad));
  std::filesystem::remove_all(dir);
}

// ---- audit mia -----------------------------------------------------------------------------

std::string write_tiny_csv() {
  const std::string path = ::testing::TempDir() + "hsdp_mia_tiny.csv";
  const data::Dataset d = tiny_dataset();
  std::ofstream f(path);
  f << "a,b,c,label\n";
  for (std::size_t i = 0; i < d.n; ++i)
    f << d.row(i)[0] << "," << d.row(i)[1] << "," << d.row(i)[2] << "," << (d.y[i] > 0 ? 1 : 0) << "\n";
  return path;
}

TEST(MiaCli, JsonContract) {
  const std::string csv = write_tiny_csv();
  const auto r = hsdp::testing::run_cli("audit mia --data " + csv +
                                        " --model logistic --algorithm noisy-gd --steps 5 --radius 2 --sigma 0.05 "
                                        "--trials 40 --delta 1e-5 --seed 3 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["empirical"]["trials"].get<int>(), 40);
  EXPECT_EQ(j["empirical"]["delta"].get<double>(), 1e-5);
  EXPECT_EQ(j["empirical"]["confidence"].get<double>(), 0.95);
  EXPECT_LE(j["empirical"]["epsilon_lower"].get<double>(), j["certified"]["epsilon"].get<double>());
  EXPECT_TRUE(j["certified"]["name"].is_string());
  EXPECT_EQ(j["seeds"]["master"].get<std::uint64_t>(), 3u);
  EXPECT_EQ(j["seeds"]["without"].size(), 40u);
  EXPECT_EQ(j["canary"]["x_axis"].get<int>(), 3);
  EXPECT_TRUE(r.err.empty()) << "no progress bar when stderr is not a terminal";
}

TEST(MiaCli, BadInputExitsTwoNamingTheFlag) {
  const std::string csv = write_tiny_csv();
  const std::string base = "audit mia --data " + csv + " --model logistic --algorithm noisy-gd --steps 5 --sigma 0.1 ";
  auto r = hsdp::testing::run_cli(base + "--trials 2");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--trials"), std::string::npos) << r.err;
  r = hsdp::testing::run_cli(base + "--delta 0");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--delta"), std::string::npos) << r.err;
  r = hsdp::testing::run_cli(base + "--canary-index 99");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--canary-index"), std::string::npos) << r.err;
  r = hsdp::testing::run_cli("audit mia --data " + csv + " --model logistic --steps 5 --trials 10");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--sigma"), std::string::npos) << r.err;
}

}  // namespace
