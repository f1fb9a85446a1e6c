// Data-parallel training (TrainConfig::data_parallel, docs/distributed.md) without MPI: K
// "processes" are K threads calling train() on their contiguous parts of the data (records
// [offsets[r], offsets[r+1])), their hooks adding the
// partial gradient sums through shared memory in rank order (what MPI_Allreduce does) and
// handing out rank 0's seed. Every rank must end with the same model, equal to one process
// up to the order of the additions, with the same report.
#include <gtest/gtest.h>

#include <barrier>
#include <nlohmann/json.hpp>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "hsdp/accountant.hpp"
#include "hsdp/train/trainer.hpp"
#include "fixtures.hpp"

namespace {

using namespace hsdp;
using namespace hsdp::train;

// Binary records of norm 0.999 (tests/fixtures.hpp).
data::Dataset synthetic(std::size_t n, std::size_t d, std::uint64_t seed) {
  return hsdp::testing::synthetic(n, d, 1.0, seed, LossKind::logistic);
}

TrainConfig base_config() {
  TrainConfig c;
  c.loss.kind = LossKind::logistic;
  c.constraint = {ConstraintKind::ball, 5.0};
  c.sigma = 0.5;
  c.seed = 7;
  return c;
}

// Records [begin, end) of `data`.
data::Dataset slice(const data::Dataset& data, std::size_t begin, std::size_t end) {
  data::Dataset s;
  s.d = data.d;
  s.n = end - begin;
  s.x.assign(data.x.begin() + static_cast<std::ptrdiff_t>(begin * data.d),
             data.x.begin() + static_cast<std::ptrdiff_t>(end * data.d));
  s.y.assign(data.y.begin() + static_cast<std::ptrdiff_t>(begin), data.y.begin() + static_cast<std::ptrdiff_t>(end));
  return s;
}

// Even contiguous parts: process r holds [r n / K, (r+1) n / K).
std::vector<std::size_t> even(std::size_t n, int K) {
  std::vector<std::size_t> offsets;
  for (int r = 0; r <= K; ++r) offsets.push_back(n * static_cast<std::size_t>(r) / static_cast<std::size_t>(K));
  return offsets;
}

// The same training on K threads acting as K processes, process r given records
// [offsets[r], offsets[r+1]) (default: even parts).
std::vector<TrainResult> train_on(int K, const data::Dataset& data, const TrainConfig& config,
                                  std::vector<std::size_t> offsets = {}) {
  if (offsets.empty()) offsets = even(data.n, K);
  std::barrier sync(K);
  std::vector<std::vector<double>> parts(static_cast<std::size_t>(K));
  std::vector<std::uint64_t> seeds(static_cast<std::size_t>(K));
  std::vector<TrainResult> results(static_cast<std::size_t>(K));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < K; ++rank)
    threads.emplace_back([&, rank] {
      TrainConfig c = config;
      TrainConfig::DataParallel p;
      p.rank = rank;
      p.size = K;
      p.offsets = offsets;
      p.sum = [&, rank](std::vector<double>& v) {
        parts[static_cast<std::size_t>(rank)] = v;
        sync.arrive_and_wait();
        std::vector<double> total(v.size(), 0.0);
        for (const auto& part : parts)
          for (std::size_t j = 0; j < v.size(); ++j) total[j] += part[j];
        sync.arrive_and_wait();  // every rank has read the parts before they change
        v = total;
      };
      p.share_seed = [&, rank](std::uint64_t seed) {
        seeds[static_cast<std::size_t>(rank)] = seed;
        sync.arrive_and_wait();
        const std::uint64_t shared = seeds[0];
        sync.arrive_and_wait();
        return shared;
      };
      c.data_parallel = p;
      const auto r = static_cast<std::size_t>(rank);
      results[r] = hsdp::train::train(slice(data, offsets[r], offsets[r + 1]), c);
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

void expect_like_one_process(const data::Dataset& data, const TrainConfig& c, int K,
                             std::vector<std::size_t> offsets = {}) {
  const TrainResult one = hsdp::train::train(data, c);
  const auto many = train_on(K, data, c, std::move(offsets));
  for (const auto& r : many) {
    // The same noise and batches on every rank: bit-identical models.
    EXPECT_EQ(r.model.theta, many[0].model.theta);
    EXPECT_EQ(r.uses, one.uses);
    EXPECT_EQ(r.clipped_examples, one.clipped_examples);
    EXPECT_EQ(r.released_step, one.released_step);
    ASSERT_TRUE(r.report && one.report);
    EXPECT_EQ(to_json(*r.report).dump(), to_json(*one.report).dump());
  }
  const double diff = max_difference(many[0].model.theta, one.model.theta);
  EXPECT_LE(diff, 1e-12);
  // Not trivially equal: the model moved away from 0.
  double norm = 0;
  for (double v : one.model.theta) norm += v * v;
  EXPECT_GT(norm, 0.01);
}

TEST(DataParallel, FullBatchEqualsOneProcess) {
  TrainConfig c = base_config();
  c.algorithm = Algorithm::noisy_gd;
  c.steps = 30;
  const auto data = synthetic(301, 6, 1);
  expect_like_one_process(data, c, 2);
  expect_like_one_process(data, c, 3);
}

TEST(DataParallel, PoissonBatchesWithClippingEqualOneProcess) {
  TrainConfig c = base_config();
  c.algorithm = Algorithm::noisy_sgd;
  c.sampling = Sampling::poisson;
  c.batch_size = 40;
  c.steps = 50;
  c.clip = 0.3;  // < L: clipping acts, and the clipped counts are summed over the ranks
  const auto data = synthetic(250, 5, 2);
  const TrainResult one = hsdp::train::train(data, c);
  EXPECT_GT(one.clipped_examples, 0);
  expect_like_one_process(data, c, 3);
}

TEST(DataParallel, RandomStopAndShuffleEqualOneProcess) {
  TrainConfig c = base_config();
  c.algorithm = Algorithm::noisy_sgd;
  c.sampling = Sampling::shuffle;
  c.batch_size = 25;
  c.steps = 40;
  c.release = Release::random_stop;
  expect_like_one_process(synthetic(200, 4, 3), c, 2);
}

TEST(DataParallel, UnevenAndEmptyPartsEqualOneProcess) {
  // Parts as byte ranges give them: of different sizes, one of them empty.
  TrainConfig c = base_config();
  c.algorithm = Algorithm::noisy_sgd;
  c.sampling = Sampling::fixed;
  c.batch_size = 30;
  c.steps = 40;
  const auto data = synthetic(200, 4, 5);
  expect_like_one_process(data, c, 4, {0, 13, 13, 150, 200});
  c.algorithm = Algorithm::noisy_gd;
  c.steps = 20;
  expect_like_one_process(data, c, 3, {0, 0, 199, 200});
}

TEST(DataParallel, LayoutMustMatchThePart) {
  TrainConfig c = base_config();
  c.algorithm = Algorithm::noisy_gd;
  c.steps = 2;
  TrainConfig::DataParallel p;
  p.rank = 1;
  p.size = 2;
  p.offsets = {0, 10, 30};
  p.sum = [](std::vector<double>&) {};
  p.share_seed = [](std::uint64_t s) { return s; };
  c.data_parallel = p;
  const auto data = synthetic(30, 3, 6);
  try {
    hsdp::train::train(slice(data, 0, 10), c);  // process 1 holds 20 records, not 10
    FAIL() << "no error";
  } catch (const hsdp::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("the 20 records of process 1"), std::string::npos) << e.what();
  }
  c.data_parallel->offsets = {0, 10};  // 2 entries for 2 processes
  EXPECT_THROW(hsdp::train::train(slice(data, 10, 30), c), hsdp::InvalidArgument);
}

TEST(DataParallel, EntropySeedIsRankZeros) {
  // Without a seed each rank draws its own entropy; the shared seed makes the models agree.
  TrainConfig c = base_config();
  c.seed.reset();
  c.algorithm = Algorithm::noisy_gd;
  c.steps = 10;
  const auto many = train_on(3, synthetic(90, 3, 4), c);
  for (const auto& r : many) {
    EXPECT_FALSE(r.seeded);
    EXPECT_EQ(r.model.theta, many[0].model.theta);
  }
}

}  // namespace
