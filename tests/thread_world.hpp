// K threads acting as the K processes of a job: the collectives of a sharded read
// (data/shard.hpp) and the hooks of a data-parallel training request (train/request.hpp
// Layout) go through shared memory, as MPI would carry them. A thread that throws
// InvalidArgument leaves the barrier (arrive_and_drop), so the others are not stuck in their
// next collective (under MPI the job would stop).
#pragma once

#include <gtest/gtest.h>

#include <barrier>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "hsdp/data/shard.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/train/request.hpp"

namespace hsdp::testing {

class ThreadWorld {
 public:
  explicit ThreadWorld(int K)
      : K_(K), sync_(K), values_(static_cast<std::size_t>(K)), texts_(static_cast<std::size_t>(K)),
        sums_(static_cast<std::size_t>(K)) {}

  data::Collectives world(int rank) {
    data::Collectives c;
    c.rank = rank;
    c.size = K_;
    const auto r = static_cast<std::size_t>(rank);
    c.allgather = [this, r](std::uint64_t v) {
      values_[r] = v;
      sync_.arrive_and_wait();
      auto all = values_;
      sync_.arrive_and_wait();
      return all;
    };
    c.allgather_text = [this, r](const std::string& s) {
      texts_[r] = s;
      sync_.arrive_and_wait();
      auto all = texts_;
      sync_.arrive_and_wait();
      return all;
    };
    c.sum = [this, r](std::vector<double>& v) {
      sums_[r] = v;
      sync_.arrive_and_wait();
      std::vector<double> total(v.size(), 0.0);
      for (const auto& part : sums_)
        for (std::size_t j = 0; j < v.size() && j < part.size(); ++j) total[j] += part[j];
      sync_.arrive_and_wait();
      v = total;
    };
    return c;
  }

  /// A data-parallel layout for process `rank`: the collectives above, the gradient sum
  /// through them and rank 0's seed (the offsets are the request's).
  train::Layout layout(int rank) {
    train::Layout l;
    l.rank = rank;
    l.size = K_;
    l.collectives = world(rank);
    l.data_parallel.rank = rank;
    l.data_parallel.size = K_;
    l.data_parallel.sum = l.collectives.sum;
    const auto gather = l.collectives.allgather;
    l.data_parallel.share_seed = [gather](std::uint64_t seed) { return gather(seed)[0]; };
    return l;
  }

  /// Runs f(world(r)) on every rank; the results, or the error messages.
  template <class T>
  std::vector<std::optional<T>> run(const std::function<T(const data::Collectives&)>& f,
                                    std::vector<std::string>* errors = nullptr) {
    return on_ranks<T>([&](int rank) { return f(world(rank)); }, errors);
  }

  /// Runs f(layout(r)) on every rank.
  template <class T>
  std::vector<std::optional<T>> run_layout(const std::function<T(const train::Layout&)>& f,
                                           std::vector<std::string>* errors = nullptr) {
    return on_ranks<T>([&](int rank) { return f(layout(rank)); }, errors);
  }

 private:
  template <class T>
  std::vector<std::optional<T>> on_ranks(const std::function<T(int)>& f, std::vector<std::string>* errors) {
    std::vector<std::optional<T>> out(static_cast<std::size_t>(K_));
    std::vector<std::string> messages(static_cast<std::size_t>(K_));
    std::vector<std::thread> threads;
    for (int rank = 0; rank < K_; ++rank)
      threads.emplace_back([&, rank] {
        const auto r = static_cast<std::size_t>(rank);
        try {
          out[r] = f(rank);
        } catch (const InvalidArgument& e) {
          messages[r] = e.what();
          sync_.arrive_and_drop();
        }
      });
    for (auto& t : threads) t.join();
    if (errors) *errors = messages;
    else
      for (const auto& m : messages) EXPECT_EQ(m, "");
    return out;
  }

  int K_;
  std::barrier<> sync_;
  std::vector<std::uint64_t> values_;
  std::vector<std::string> texts_;
  std::vector<std::vector<double>> sums_;
};

}  // namespace hsdp::testing
