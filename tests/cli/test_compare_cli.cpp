// The `hsdp compare` command: every cell of its CSV equals `hsdp account --json` at that row's
// value, the SVG is well-formed XML (checked with xmllint), figures write their files, and bad
// input exits 2 naming the flag and leaves no file.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "output_reading.hpp"

namespace {

namespace fs = std::filesystem;
using hsdp::testing::Csv;
using hsdp::testing::cell_value;
using hsdp::testing::has_comment;
using hsdp::testing::parse_csv;
using hsdp::testing::polylines;
using hsdp::testing::read;
using hsdp::testing::run_cli;
using hsdp::testing::temp_path;
using hsdp::testing::well_formed_xml;
using nlohmann::json;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Every cell of a `hsdp compare` CSV equals `hsdp account --json` at that row's value.
void expect_csv_matches_account(const std::string& compare_args, const std::string& account_args,
                                const std::string& sweep_flag, std::size_t rows_expected) {
  const std::string csv_path = temp_path("table.csv"), svg_path = temp_path("plot.svg");
  const auto r = run_cli("compare " + compare_args + " --csv " + csv_path + " --svg " + svg_path);
  ASSERT_EQ(r.status, 0) << r.err;
  const Csv csv = parse_csv(read(csv_path));
  const std::string svg = read(svg_path);
  std::remove(csv_path.c_str());
  std::remove(svg_path.c_str());
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_TRUE(well_formed_xml(svg));
  ASSERT_EQ(csv.rows.size(), rows_expected);
  ASSERT_GE(csv.header.size(), 2u);
  EXPECT_EQ(csv.header[0], sweep_flag.substr(2));  // the x column names the swept flag
  for (const auto& row : csv.rows) {
    const auto a = run_cli("account " + account_args + " " + sweep_flag + " " + row[0] + " --json");
    ASSERT_EQ(a.status, 0) << a.err;
    const json j = json::parse(a.out);
    const bool y_is_delta = sweep_flag == "--epsilon" || j["query"].contains("epsilon");
    std::size_t matched = 0;
    for (const auto& an : j["analyses"]) {
      const std::string name = an["name"].get<std::string>() +
                               (an["kind"] == "lower"       ? " (lower)"
                                : an["kind"] == "heuristic" ? " (heuristic)"
                                                            : "");
      std::size_t col = 0;
      for (std::size_t i = 1; i < csv.header.size(); ++i)
        if (csv.header[i] == name) col = i;
      if (!an["applicable"].get<bool>()) {
        if (col) EXPECT_EQ(row[col], "") << name << " at " << row[0];
        continue;
      }
      ASSERT_NE(col, 0u) << name << " applies at " << row[0] << " but has no column";
      const auto& v = an[y_is_delta ? "delta" : "epsilon"];
      const double want = v.is_string() ? kInf : v.get<double>();
      EXPECT_EQ(cell_value(row[col]), want) << name << " at " << row[0];
      ++matched;
    }
    EXPECT_GE(matched, 1u) << row[0];
  }
}

TEST(CompareCli, CsvMatchesAccountAlongSteps) {
  expect_csv_matches_account("--example --x steps --from 1 --to 300 --points 5 --log-x --delta 1e-6",
                             "--example --delta 1e-6", "--steps", 5);
}

TEST(CompareCli, CsvMatchesAccountAlongNoiseInThePapersSigma) {
  expect_csv_matches_account(
      "--n 100 --eta 0.05 --sigma 3 --convention journal --lipschitz 1 --smoothness 1 --diameter 1 "
      "--release random-stop --x noise --from 1 --to 5 --points 4 --epsilon 2",
      "--n 100 --eta 0.05 --convention journal --lipschitz 1 --smoothness 1 --diameter 1 "
      "--release random-stop --epsilon 2",
      "--sigma", 4);
}

TEST(CompareCli, CsvMatchesAccountAlongEpsilonAndIndexAndN) {
  const std::string isit = "--n 40 --eta 0.5 --sigma 2 --convention isit --lipschitz 1 --smoothness 0.5 --diameter 1";
  expect_csv_matches_account(isit + " --index 20 --x epsilon --from 0.5 --to 3 --points 3",
                             isit + " --index 20", "--epsilon", 3);
  expect_csv_matches_account(isit + " --x index --from 1 --to 40 --points 4 --epsilon 1",
                             isit + " --epsilon 1", "--index", 4);
  expect_csv_matches_account("--example --x n --from 50 --to 400 --points 3 --log-x",
                             "--example", "--n", 3);
}

TEST(CompareCli, FigureWritesFilesAndStdoutCsv) {
  const std::string svg_path = temp_path("fig.svg");
  const auto r = run_cli("compare --figure isit-fig3 --points 5 --svg " + svg_path);
  ASSERT_EQ(r.status, 0) << r.err;
  const Csv csv = parse_csv(r.out);  // no --csv: the table goes to stdout
  EXPECT_EQ(csv.rows.size(), 5u);
  EXPECT_EQ(csv.header.size(), 7u);
  EXPECT_TRUE(has_comment(csv, "beta = 0.4, rho = 0.3"));
  const std::string svg = read(svg_path);
  std::remove(svg_path.c_str());
  EXPECT_TRUE(well_formed_xml(svg));
  EXPECT_EQ(polylines(svg).size(), 6u);
}

TEST(CompareCli, BadInputExitsTwoAndLeavesNoFile) {
  const std::string svg_path = temp_path("bad.svg"), csv_path = temp_path("bad.csv");
  struct Case {
    std::string args, fragment;
  };
  const std::vector<Case> cases = {
      {"--example --x steps --from 10 --to 5", "--to = 5"},
      {"--example --x steps --from 1 --to 10 --points 1", "--points = 1"},
      {"--example --x time --from 1 --to 10", "--x = time"},
      {"--example --x index --from 1 --to 101", "--to = 101"},
      {"--example --x epsilon --from 0 --to 2 --delta 1e-5", "--delta"},
      {"--example --x steps --from 1 --to 10 --rdp 0.5", "--rdp = 0.5"},
      {"--example --x steps --from 1 --to 10 --y-scale cubic", "--y-scale = cubic"},
      {"--figure isit-fig9", "--figure = isit-fig9"},
      {"--figure isit-fig2 --n 10", "--n"},
      {"--x steps --from 1 --to 10 --eta 0.1 --noise-std 1", "--n"},
  };
  for (const auto& c : cases) {
    const auto r = run_cli("compare " + c.args + " --svg " + svg_path + " --csv " + csv_path);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.fragment), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_FALSE(fs::exists(svg_path)) << c.args;
    EXPECT_FALSE(fs::exists(csv_path)) << c.args;
  }
  // An unwritable destination: exit 2 naming the flag, nothing left in the directory.
  const std::string dir = temp_path("ro_dir");
  fs::create_directories(dir);
  // The CSV's destination is fine, the SVG's is not: neither file is written.
  const auto r = run_cli("compare --figure federated-fig2 --points 3 --csv " + dir + "/ok.csv --svg " +
                         dir + "/missing/x.svg");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--svg"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

}  // namespace

