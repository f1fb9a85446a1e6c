// Federated training with several records per user (Dataset::users) in one process, and
// across K "processes" (TrainConfig::federation) played by K threads whose hooks broadcast
// from rank 0 and sum to rank 0 through shared memory (what MPI_Bcast / MPI_Reduce do).
// docs/distributed.md "Federated training".
#include <gtest/gtest.h>

#include <barrier>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "fixtures.hpp"
#include "hsdp/accountant.hpp"
#include "hsdp/data/users.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/train/trainer.hpp"

namespace {

using namespace hsdp;
using namespace hsdp::train;

TrainConfig federated_config() {
  TrainConfig c;
  c.algorithm = Algorithm::federated;
  c.loss.kind = LossKind::logistic;
  c.constraint = {ConstraintKind::ball, 5.0};
  c.sigma = 0.8;
  c.seed = 5;
  return c;
}

// Users of 1, 2, 3, 1, 2, 3, ... records, ids "u0", "u1", ... interleaved with their records
// (user ids in order of first appearance are not in record order of their records).
data::Dataset with_users(std::size_t n, std::size_t d, std::uint64_t seed) {
  data::Dataset ds = hsdp::testing::synthetic(n, d, 1.0, seed, LossKind::logistic);
  std::vector<std::string> ids(n);
  std::size_t u = 0, i = 0;
  while (i < n) {
    const std::size_t k = 1 + u % 3;
    for (std::size_t j = 0; j < k && i < n; ++j, ++i) ids[i] = "u" + std::to_string(u);
    ++u;
  }
  // Swap pairs of ids so a user's records are not contiguous.
  for (std::size_t j = 0; j + 3 < n; j += 4) std::swap(ids[j + 1], ids[j + 3]);
  data::assign_users(ds, ids, "users", [](std::size_t i) { return std::to_string(i); });
  return ds;
}

// The K roles on K threads.
std::vector<TrainResult> federate(int K, const data::Dataset& data, const TrainConfig& config) {
  std::barrier sync(K);
  std::vector<std::int64_t> ids;
  std::vector<double> shared;
  std::vector<std::vector<double>> parts(static_cast<std::size_t>(K));
  std::vector<TrainResult> results(static_cast<std::size_t>(K));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < K; ++rank)
    threads.emplace_back([&, rank] {
      TrainConfig c = config;
      TrainConfig::Federation f;
      f.rank = rank;
      f.size = K;
      f.broadcast_ids = [&, rank](std::vector<std::int64_t>& v) {
        if (rank == 0) ids = v;
        sync.arrive_and_wait();
        v = ids;
        sync.arrive_and_wait();
      };
      f.broadcast = [&, rank](std::vector<double>& v) {
        if (rank == 0) shared = v;
        sync.arrive_and_wait();
        v = shared;
        sync.arrive_and_wait();
      };
      f.reduce = [&, rank](std::vector<double>& v) {
        parts[static_cast<std::size_t>(rank)] = v;
        sync.arrive_and_wait();
        if (rank == 0) {
          std::vector<double> total(v.size(), 0.0);
          for (const auto& part : parts)
            for (std::size_t j = 0; j < v.size(); ++j) total[j] += part[j];
          v = total;
        }
        sync.arrive_and_wait();
      };
      c.federation = f;
      results[static_cast<std::size_t>(rank)] = hsdp::train::train(data, c);
    });
  for (auto& t : threads) t.join();
  return results;
}

double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (std::size_t j = 0; j < a.size(); ++j) m = std::max(m, std::abs(a[j] - b[j]));
  return m;
}

double sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }

TEST(FederatedUsers, GroupsInOrderOfFirstAppearance) {
  data::Dataset ds = hsdp::testing::synthetic(6, 2, 1.0, 1, LossKind::logistic);
  data::assign_users(ds, {"b", "a", "b", "c", "a", "b"}, "users", [](std::size_t i) { return std::to_string(i); });
  const auto g = group_users(ds);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0], (std::vector<std::int64_t>{0, 2, 5}));
  EXPECT_EQ(g[1], (std::vector<std::int64_t>{1, 4}));
  EXPECT_EQ(g[2], (std::vector<std::int64_t>{3}));
  ds.users.clear();
  EXPECT_EQ(group_users(ds).size(), 6u);
}

TEST(FederatedUsers, NoNoiseModelIsProjectedGdOverUserMeans) {
  // 7 records, users of 1, 2, 3 and 1 records; m = 2 users per round, 2 rounds; a small
  // ball so that the projection acts. Recomputed here from the logistic gradient
  // -y x sigma(-y <theta, x>) (x with the bias 1), the batches being the trainer's.
  data::Dataset ds = hsdp::testing::synthetic(7, 3, 1.0, 9, LossKind::logistic);
  data::assign_users(ds, {"p", "q", "q", "r", "r", "r", "s"}, "users",
                     [](std::size_t i) { return std::to_string(i); });
  TrainConfig c = federated_config();
  c.sigma.reset();
  c.no_noise = true;
  c.batch_size = 2;
  c.eta = 1.5;
  c.constraint = {ConstraintKind::ball, 0.3};
  c.record_batches = true;
  const TrainResult r = hsdp::train::train(ds, c);
  EXPECT_EQ(r.run.n, 4);  // users, not records
  EXPECT_EQ(r.run.steps, 2);
  ASSERT_EQ(r.batches.size(), 2u);
  ASSERT_TRUE(r.user_level);
  EXPECT_EQ(r.user_level->users, 4);
  EXPECT_EQ(r.user_level->records, 7);
  const std::vector<std::vector<std::size_t>> users = {{0}, {1, 2}, {3, 4, 5}, {6}};
  std::vector<double> theta(4, 0.0);
  for (const auto& batch : r.batches) {
    ASSERT_EQ(batch.size(), 2u);
    std::vector<double> step(4, 0.0);
    for (const auto u : batch) {
      const auto& recs = users[static_cast<std::size_t>(u)];
      for (const auto i : recs) {
        const double x[4] = {ds.x[i * 3], ds.x[i * 3 + 1], ds.x[i * 3 + 2], 1.0};
        double z = 0;
        for (int j = 0; j < 4; ++j) z += theta[j] * x[j];
        const double y = ds.y[i];
        for (int j = 0; j < 4; ++j) step[j] += -y * x[j] * sigmoid(-y * z) / static_cast<double>(recs.size());
      }
    }
    for (int j = 0; j < 4; ++j) theta[j] -= 1.5 * step[j] / 2.0;
    double nrm = 0;
    for (double v : theta) nrm += v * v;
    nrm = std::sqrt(nrm);
    if (nrm > 0.3)
      for (double& v : theta) v *= 0.3 / nrm;
  }
  double nrm = 0;
  for (double v : theta) nrm += v * v;
  EXPECT_NEAR(std::sqrt(nrm), 0.3, 1e-12);  // the projection acted
  EXPECT_LE(max_difference(r.model.theta, theta), 1e-14);
  // Every user took part once.
  EXPECT_EQ(r.uses, (std::vector<std::int64_t>{1, 1, 1, 1}));
}

TEST(FederatedUsers, SingleRecordUsersAreTheRecordRun) {
  // One record per user: the same run, the same noise draws, the same model as no users.
  data::Dataset ds = hsdp::testing::synthetic(120, 4, 1.0, 3, LossKind::logistic);
  const TrainConfig c = [] {
    TrainConfig t = federated_config();
    t.batch_size = 10;
    return t;
  }();
  const TrainResult plain = hsdp::train::train(ds, c);
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < ds.n; ++i) ids.push_back("id" + std::to_string(i));
  data::assign_users(ds, ids, "users", [](std::size_t i) { return std::to_string(i); });
  const TrainResult users = hsdp::train::train(ds, c);
  EXPECT_LE(max_difference(plain.model.theta, users.model.theta), 1e-13);
  ASSERT_TRUE(plain.report && users.report);
  EXPECT_EQ(to_json(*plain.report).dump(), to_json(*users.report).dump());
  EXPECT_FALSE(plain.user_level);
  ASSERT_TRUE(users.user_level);
  // L = R = sqrt(1 + 1) (bias), beta = R^2 / 4, eta = 1/beta = 2, m = 10: 2 eta L / m.
  EXPECT_NEAR(*users.user_level->sensitivity, 2 * 2 * std::sqrt(2.0) / 10, 1e-12);
}

TEST(FederatedUsers, ReportIsTheAccountOfUsers) {
  const data::Dataset ds = with_users(300, 4, 4);
  TrainConfig c = federated_config();
  c.batch_size = 15;
  const TrainResult r = hsdp::train::train(ds, c);
  const auto users = static_cast<std::int64_t>(group_users(ds).size());
  EXPECT_LT(users, 300);
  EXPECT_EQ(r.run.n, users);
  EXPECT_EQ(r.run.steps, users / 15);
  ASSERT_TRUE(r.report);
  EXPECT_EQ(to_json(*r.report).dump(), to_json(account_request(r.run, Query::at_delta(c.delta))).dump());
  // The stated request names n = users.
  bool found = false;
  for (const auto& [field, value] : r.account_request)
    if (field == "n") found = value == std::to_string(users);
  EXPECT_TRUE(found);
}

TEST(FederatedUsers, UsersNeedTheFederatedAlgorithm) {
  const data::Dataset ds = with_users(40, 3, 5);
  TrainConfig c = federated_config();
  c.algorithm = Algorithm::noisy_gd;
  c.steps = 3;
  try {
    hsdp::train::train(ds, c);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.field(), "users");
  }
}

TEST(FederatedUsers, AssignUsersNamesThePlace) {
  data::Dataset ds = hsdp::testing::synthetic(3, 2, 1.0, 1, LossKind::logistic);
  ds.source = "d.csv";
  auto where = [](std::size_t i) { return "u.txt:" + std::to_string(i + 1); };
  try {
    data::assign_users(ds, {"a", "b"}, "users", where);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.field(), "users");
    EXPECT_NE(std::string(e.what()).find("u.txt:3"), std::string::npos) << e.what();
  }
  try {
    data::assign_users(ds, {"a", "b", "c", "d"}, "users", where);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("u.txt:4"), std::string::npos) << e.what();
  }
  try {
    data::assign_users(ds, {"a", " ", "c"}, "users", where);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("u.txt:2"), std::string::npos) << e.what();
  }
  data::assign_users(ds, {"a", "b", "a"}, "users", where);
  EXPECT_EQ(ds.users, (std::vector<std::string>{"a", "b", "a"}));
}

// ---- across processes

void expect_federation_like_one_process(const data::Dataset& data, TrainConfig c, int K) {
  const TrainResult one = hsdp::train::train(data, c);
  const auto many = federate(K, data, c);
  const TrainResult& server = many[0];
  ASSERT_TRUE(one.report && server.report);
  EXPECT_EQ(to_json(*server.report).dump(), to_json(*one.report).dump());
  EXPECT_EQ(server.account_request, one.account_request);
  EXPECT_EQ(server.released_step, one.released_step);  // the server's stop: one process's
  EXPECT_EQ(server.uses, one.uses);                     // and its permutation
  ASSERT_TRUE(server.train_evaluation);
  const Evaluation full = evaluate(server.model, data);
  EXPECT_NEAR(server.train_evaluation->loss, full.loss, 1e-12);
  EXPECT_EQ(server.train_evaluation->accuracy, full.accuracy);
  for (int k = 1; k < K; ++k) EXPECT_EQ(many[static_cast<std::size_t>(k)].model.theta, server.model.theta);
  // Without noise the aggregation alone decides: the one-process model up to rounding.
  c.sigma.reset();
  c.no_noise = true;
  const TrainResult quiet_one = hsdp::train::train(data, c);
  const auto quiet = federate(K, data, c);
  const double diff = max_difference(quiet[0].model.theta, quiet_one.model.theta);
  EXPECT_LE(diff, 1e-12);
  EXPECT_EQ(quiet[0].clipped_examples, quiet_one.clipped_examples);
  double norm = 0;
  for (double v : quiet_one.model.theta) norm += v * v;
  EXPECT_GT(norm, 0.01);  // the model moved
}

TEST(FederatedUsers, ServerAndClientsEqualOneProcess) {
  const data::Dataset ds = with_users(240, 4, 6);
  TrainConfig c = federated_config();
  c.batch_size = 12;
  for (int K : {2, 3, 4}) expect_federation_like_one_process(ds, c, K);
}

TEST(FederatedUsers, RandomStopClippingRecordUsersAcrossProcesses) {
  data::Dataset ds = hsdp::testing::synthetic(150, 3, 1.0, 8, LossKind::logistic);  // no users
  TrainConfig c = federated_config();
  c.batch_size = 10;
  c.release = Release::random_stop;
  c.clip = 0.4;  // acts: the clipped counts travel with the messages
  const TrainResult one = hsdp::train::train(ds, c);
  EXPECT_GT(one.clipped_examples, 0);
  expect_federation_like_one_process(ds, c, 3);
}

TEST(FederatedUsers, ClientNoiseIsSeededAndPerRank) {
  const data::Dataset ds = with_users(200, 3, 7);
  TrainConfig c = federated_config();
  c.batch_size = 10;
  const auto a = federate(3, ds, c), b = federate(3, ds, c);
  EXPECT_EQ(a[0].model.theta, b[0].model.theta);  // --seed: a reproducible job
  const TrainResult one = hsdp::train::train(ds, c);
  EXPECT_GT(max_difference(a[0].model.theta, one.model.theta), 1e-6);  // the clients' own noise
  c.seed.reset();
  const auto e1 = federate(3, ds, c), e2 = federate(3, ds, c);
  EXPECT_FALSE(e1[0].seeded);
  EXPECT_NE(e1[0].model.theta, e2[0].model.theta);
}

}  // namespace
