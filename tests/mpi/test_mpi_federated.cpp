// `hsdp train --algorithm federated` under mpirun (docs/distributed.md "Federated training"):
// rank 0 the trusted aggregator, ranks 1..K-1 the clients holding their users. Against the
// same command as one process: the same configuration and privacy report byte for byte
// (and `hsdp account` of the printed command gives it too); with --no-noise the same model
// up to rounding and the same accuracies; faults stop the job naming the rank. Built only
// with HSDP_WITH_MPI.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "mpi_runner.hpp"

namespace {

using nlohmann::json;
using namespace hsdp::testing::mpi;
using Result = hsdp::testing::CliResult;

std::string users_path() {
  return ::testing::TempDir() + "hsdp_mpi_users_" + std::to_string(::getpid()) + ".txt";
}

// Removes the users file at the end of the run.
struct RemoveUsersFile : ::testing::Environment {
  void TearDown() override { std::filesystem::remove(users_path()); }
};
const auto* const kCleanup = ::testing::AddGlobalTestEnvironment(new RemoveUsersFile);

// heart_scale's 270 records held by users of 1..3 records (ids in a shuffled order).
const std::string& users_file() {
  static const std::string path = [] {
    const std::string p = users_path();
    std::ofstream f(p);
    std::mt19937 rng(4);
    int written = 0, user = 0;
    while (written < 270) {
      const int k = 1 + static_cast<int>(rng() % 3);
      for (int j = 0; j < k && written < 270; ++j, ++written) f << "client-" << (user * 37) % 1000 << "\n";
      ++user;
    }
    return p;
  }();
  return path;
}

std::string federated(const std::string& extra) {
  return "train --data " + kHeart + " --format libsvm --model logistic --algorithm federated --seed 3 --json " + extra;
}

// With noise: the same configuration, report and account command as one process; without
// noise also the same model (within kTolerance) and accuracies.
void expect_like_one_process(const std::string& args, int k) {
  ASSERT_TRUE(std::filesystem::exists(kHeart)) << "run scripts/install-deps.sh (liblinear-tools)";
  const Result one = run(0, args + " --sigma 1");
  ASSERT_EQ(one.status, 0) << one.err;
  const Result many = run(k, args + " --sigma 1");
  ASSERT_EQ(many.status, 0) << many.err;
  const json a = json::parse(one.out), b = json::parse(many.out);  // one document: rank 0 only
  ASSERT_TRUE(a["report"].is_object());
  EXPECT_EQ(a["report"].dump(), b["report"].dump());
  EXPECT_EQ(a["account_command"], b["account_command"]);
  EXPECT_EQ(a["configuration"].dump(), b["configuration"].dump());
  EXPECT_EQ(a["randomness"], b["randomness"]);

  const Result quiet_one = run(0, args + " --no-noise");
  ASSERT_EQ(quiet_one.status, 0) << quiet_one.err;
  const Result quiet = run(k, args + " --no-noise");
  ASSERT_EQ(quiet.status, 0) << quiet.err;
  const json c = json::parse(quiet_one.out), d = json::parse(quiet.out);
  const double diff = max_difference(c["model"], d["model"]);
  EXPECT_LE(diff, kTolerance) << "max |theta difference| " << diff;
  EXPECT_EQ(c["train_accuracy"].get<double>(), d["train_accuracy"].get<double>());
  EXPECT_EQ(c["test_accuracy"].get<double>(), d["test_accuracy"].get<double>());
  EXPECT_NEAR(c["train_loss"].get<double>(), d["train_loss"].get<double>(), 1e-12);
  EXPECT_NEAR(c["test_loss"].get<double>(), d["test_loss"].get<double>(), 1e-12);
  EXPECT_EQ(c["configuration"].dump(), d["configuration"].dump());
  ::testing::Test::RecordProperty("max_theta_difference", std::to_string(diff));
}

TEST(MpiFederated, UsersTwoProcessesEqualOneProcess) {
  expect_like_one_process(federated("--batch-size 10 --users " + users_file()), 2);
}

TEST(MpiFederated, UsersThreeProcessesEqualOneProcess) {
  expect_like_one_process(federated("--batch-size 10 --users " + users_file()), 3);
}

TEST(MpiFederated, UsersFourProcessesRandomStopClippingEqualOneProcess) {
  expect_like_one_process(
      federated("--batch-size 8 --release random-stop --clip 0.5 --users " + users_file()), 4);
}

// Compact feature storage (docs/data.md "Feature storage"): the clients hold their users'
// records in float32 as read, and the job is the one-process float32 run; the report is the
// float64 run's (it depends on public quantities only).
TEST(MpiFederated, Float32StorageEqualsOneProcess) {
  const std::string args = federated("--batch-size 10 --feature-storage float32 --users " + users_file());
  expect_like_one_process(args, 3);
  const Result f32 = run(0, args + " --sigma 1");
  const Result f64 = run(0, federated("--batch-size 10 --users " + users_file()) + " --sigma 1");
  ASSERT_EQ(f32.status, 0) << f32.err;
  ASSERT_EQ(f64.status, 0) << f64.err;
  const json a = json::parse(f32.out), b = json::parse(f64.out);
  EXPECT_EQ(a["configuration"]["feature_storage"], "float32");
  EXPECT_EQ(a["report"].dump(), b["report"].dump());
}

TEST(MpiFederated, RecordUsersEqualOneProcess) {
  expect_like_one_process(federated("--batch-size 20"), 3);  // every record its own user
}

TEST(MpiFederated, ReportIsTheAccountOfThePrintedCommand) {
  const Result r = run(3, federated("--batch-size 10 --sigma 1 --users " + users_file()));
  ASSERT_EQ(r.status, 0) << r.err;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc["configuration"]["adjacency"]["unit"], "user");
  const std::string account = doc["account_command"].get<std::string>();
  ASSERT_EQ(account.rfind("hsdp ", 0), 0u);
  const Result a = run(0, account.substr(5));
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(json::parse(a.out).dump(), doc["report"].dump());
  EXPECT_EQ(doc["report"]["run"]["n"], doc["configuration"]["adjacency"]["users"]);
}

TEST(MpiFederated, SeededJobIsReproducibleAndOnlyRankZeroWrites) {
  const std::string model = ::testing::TempDir() + "hsdp_mpi_fed_model_" + std::to_string(::getpid()) + ".json";
  std::filesystem::remove(model);
  const std::string args = federated("--batch-size 10 --sigma 1 --users " + users_file());
  const Result a = run(3, args + " --output " + model);
  ASSERT_EQ(a.status, 0) << a.err;
  const Result b = run(3, args);
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(json::parse(a.out)["model"].dump(), json::parse(b.out)["model"].dump());
  std::ifstream in(model);
  ASSERT_TRUE(in) << model;
  EXPECT_EQ(json::parse(in)["model"].dump(), json::parse(a.out)["model"].dump());
  std::filesystem::remove(model);
}

TEST(MpiFederated, OneProcessUnderMpirunIsThePlainRun) {
  const std::string args = federated("--batch-size 10 --sigma 1 --users " + users_file());
  const Result one = run(0, args), single = run(1, args);
  ASSERT_EQ(single.status, 0) << single.err;
  EXPECT_EQ(one.out, single.out);
}

TEST(MpiFederated, MalformedFileStopsTheJobNamingTheRank) {
  expect_job_stops_at_line(3, "fed_bad", "+1 1:0.5 2:0.25\n-1 1:0.1 2:0.3\n+1 2:0.3\n-1 1:x\n",
                           "--format libsvm --model logistic --algorithm federated --batch-size 1 --sigma 1"
                           " --seed 1 --json",
                           4);
}

TEST(MpiFederated, BadUsersFileStopsTheJob) {
  const std::string bad = ::testing::TempDir() + "hsdp_mpi_fed_users_" + std::to_string(::getpid()) + ".txt";
  {
    std::ofstream f(bad);
    f << "a\nb\n";
  }
  const Result r = run(2, federated("--batch-size 10 --sigma 1 --users " + bad));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("hsdp: error: rank "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--users = "), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  std::filesystem::remove(bad);
}

}  // namespace
