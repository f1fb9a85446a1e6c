// `hsdp train --algorithm federated --users FILE` in one process (docs/distributed.md
// "Federated training"): the run's n is the number of users of the training set, the
// adjacency is stated as user-level, the report equals `hsdp account` of the printed
// command, and bad --users input exits 2 naming --users and the line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli_runner.hpp"

namespace {

using hsdp::testing::run_cli;
using nlohmann::json;

struct Files {
  std::string data, test, users;
  std::vector<std::string> ids;
  std::vector<int> labels;
};

// 40 records of 2 features with labels 0, 1, 2 (i % 3) and users of 1..3 records ("user-0",
// ...), ids not contiguous; a separate test file.
Files make_files(const std::string& tag) {
  Files f;
  const std::string base = ::testing::TempDir() + "hsdp_fed_" + tag + "_" + std::to_string(::getpid());
  f.data = base + ".csv";
  f.test = base + "_test.csv";
  f.users = base + "_users.txt";
  std::ofstream d(f.data), t(f.test), u(f.users);
  for (int i = 0; i < 40; ++i) {
    const double a = 0.3 * std::sin(1.7 * i), b = 0.3 * std::cos(0.9 * i);
    f.labels.push_back(i % 3);
    d << a << "," << b << "," << (i % 3) << "\n";
    t << b << "," << a << "," << (i % 3) << "\n";
    f.ids.push_back("user-" + std::to_string((i * 7) % 17));  // 17 users, 2 or 3 records each
    u << f.ids.back() << "\n";
  }
  return f;
}

std::string base_args(const Files& f) {
  return "train --data " + f.data + " --test-data " + f.test +
         " --model logistic --classes 0 1 --algorithm federated --batch-size 3 --sigma 1 --seed 2";
}

TEST(FederatedCli, RunCountsUsersAndStatesUserLevelAdjacency) {
  const Files f = make_files("count");
  const auto r = run_cli(base_args(f) + " --users " + f.users + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json doc = json::parse(r.out);
  // The users of the records kept by --classes 0 1.
  std::set<std::string> users;
  std::size_t records = 0;
  for (std::size_t i = 0; i < f.ids.size(); ++i)
    if (f.labels[i] != 2) {
      users.insert(f.ids[i]);
      ++records;
    }
  EXPECT_EQ(doc["report"]["run"]["n"].get<std::int64_t>(), static_cast<std::int64_t>(users.size()));
  const json& adj = doc["configuration"]["adjacency"];
  EXPECT_EQ(adj["unit"], "user");
  EXPECT_EQ(adj["users"].get<std::size_t>(), users.size());
  EXPECT_EQ(adj["records"].get<std::size_t>(), records);
  // 2 eta L / m with L = sqrt(2) (record norm 1 and the bias), eta = 1/beta = 2, m = 3.
  EXPECT_NEAR(adj["sensitivity"].get<double>(), 2 * 2 * std::sqrt(2.0) / 3, 1e-12);
  EXPECT_NE(doc["account_command"].get<std::string>().find("--n " + std::to_string(users.size()) + " "),
            std::string::npos);
  // The report equals `hsdp account` of the printed command.
  std::string account = doc["account_command"].get<std::string>();
  ASSERT_EQ(account.rfind("hsdp ", 0), 0u);
  const auto a = run_cli(account.substr(5));
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(json::parse(a.out).dump(), doc["report"].dump());
  // The text output states it too.
  const auto text = run_cli(base_args(f) + " --users " + f.users);
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("adjacency: user-level: neighbouring training sets differ in all the records of one user"),
            std::string::npos)
      << text.out;
}

TEST(FederatedCli, WithoutUsersNoAdjacencyKey) {
  const Files f = make_files("plain");
  const auto r = run_cli(base_args(f) + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json doc = json::parse(r.out);
  EXPECT_FALSE(doc["configuration"].contains("adjacency"));
  EXPECT_EQ(doc["report"]["run"]["n"].get<int>(), 27);  // records of classes 0 and 1
}

TEST(FederatedCli, BadUsersFileExitsTwoNamingTheLine) {
  const Files f = make_files("bad");
  const std::string shortf = f.users + ".short", blank = f.users + ".blank", longf = f.users + ".long";
  {
    std::ofstream s(shortf), b(blank), l(longf);
    for (int i = 0; i < 39; ++i) s << "u" << i << "\n";
    for (int i = 0; i < 40; ++i) b << (i == 6 ? "  " : "u" + std::to_string(i)) << "\n";
    for (int i = 0; i < 41; ++i) l << "u" << i << "\n";
  }
  const auto s = run_cli(base_args(f) + " --users " + shortf);
  EXPECT_EQ(s.status, 2);
  EXPECT_NE(s.err.find("hsdp: error: --users = "), std::string::npos) << s.err;
  EXPECT_NE(s.err.find(shortf + ":40"), std::string::npos) << s.err;
  const auto b = run_cli(base_args(f) + " --users " + blank);
  EXPECT_EQ(b.status, 2);
  EXPECT_NE(b.err.find(blank + ":7: (blank)"), std::string::npos) << b.err;
  const auto l = run_cli(base_args(f) + " --users " + longf);
  EXPECT_EQ(l.status, 2);
  EXPECT_NE(l.err.find(longf + ":41"), std::string::npos) << l.err;
  const auto missing = run_cli(base_args(f) + " --users " + f.users + ".nonexistent");
  EXPECT_EQ(missing.status, 2) << missing.err;
  EXPECT_EQ(missing.err.rfind("hsdp: error: --users = " + f.users + ".nonexistent: must be a readable file", 0), 0u) << missing.err;
  EXPECT_NE(missing.err.find("must be a readable file"), std::string::npos) << missing.err;
  EXPECT_EQ(s.out + b.out + l.out + missing.out, "");
  for (const auto& p : {shortf, blank, longf}) std::filesystem::remove(p);
}

TEST(FederatedCli, UsersWithAnotherAlgorithmExitsTwo) {
  const Files f = make_files("algo");
  const auto r = run_cli("train --data " + f.data + " --model logistic --classes 0 1 --algorithm noisy-gd"
                         " --steps 3 --sigma 1 --users " + f.users);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("hsdp: error: --users"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--algorithm federated"), std::string::npos) << r.err;
}

}  // namespace
