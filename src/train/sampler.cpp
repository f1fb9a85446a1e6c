#include "sampler.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace hsdp::train {

BatchSampler::BatchSampler(Sampling sampling, std::int64_t n, std::int64_t b, std::mt19937_64& rng)
    : sampling_(sampling), n_(n), b_(b), rng_(rng) {
  if (sampling_ == Sampling::fixed || sampling_ == Sampling::shuffle) {
    perm_.resize(static_cast<std::size_t>(n));
    std::iota(perm_.begin(), perm_.end(), 0);
  }
  if (sampling_ == Sampling::poisson && b_ < n_)
    log1m_q_ = std::log1p(-static_cast<double>(b_) / static_cast<double>(n_));
}

void BatchSampler::next(std::int64_t t, std::vector<std::int64_t>& out) {
  out.clear();
  switch (sampling_) {
    case Sampling::full:
      out.resize(static_cast<std::size_t>(n_));
      std::iota(out.begin(), out.end(), 0);
      return;
    case Sampling::poisson: {
      if (b_ >= n_) {
        out.resize(static_cast<std::size_t>(n_));
        std::iota(out.begin(), out.end(), 0);
        return;
      }
      // P(gap = k) = (1-q)^k q, k >= 0: k = floor(log U / log(1-q)), U uniform in (0, 1].
      std::uniform_real_distribution<double> uni(0.0, 1.0);
      double i = -1;
      for (;;) {
        const double u = 1.0 - uni(rng_);
        i += 1.0 + std::floor(std::log(u) / log1m_q_);
        if (!(i < static_cast<double>(n_))) break;
        out.push_back(static_cast<std::int64_t>(i));
      }
      return;
    }
    case Sampling::fixed: {
      for (std::int64_t j = 0; j < b_; ++j) {
        std::uniform_int_distribution<std::int64_t> pick(j, n_ - 1);
        std::swap(perm_[static_cast<std::size_t>(j)], perm_[static_cast<std::size_t>(pick(rng_))]);
      }
      out.assign(perm_.begin(), perm_.begin() + b_);
      return;
    }
    case Sampling::shuffle: {
      const std::int64_t per_epoch = n_ / b_;
      const std::int64_t k = (t - 1) % per_epoch;
      if (k == 0) {
        // Fisher-Yates with the run's generator (a new hidden permutation per epoch).
        for (std::int64_t j = n_ - 1; j > 0; --j) {
          std::uniform_int_distribution<std::int64_t> pick(0, j);
          std::swap(perm_[static_cast<std::size_t>(j)], perm_[static_cast<std::size_t>(pick(rng_))]);
        }
      }
      out.assign(perm_.begin() + k * b_, perm_.begin() + (k + 1) * b_);
      return;
    }
    case Sampling::cyclic: {
      const std::int64_t start = ((t - 1) % n_) * b_ % n_;
      for (std::int64_t j = 0; j < b_; ++j) out.push_back((start + j) % n_);
      return;
    }
  }
}

namespace {

/// How many threads the parallel pass uses. A team pays off only when its threads get a core:
/// on a loaded machine (measured: 2 threads on 2 busy cores 1.8x SLOWER than 1) the waits at
/// the barrier cost more than the split saves. So the pass measures itself: in the first 4
/// calls of every 64 it alternates 1 thread and the full team, then uses whichever was
/// faster per row. The chunked sum below makes the result independent of the choice.
class ThreadTuner {
 public:
  int pick(int team) {
    if (team <= 1) return 1;
    const int phase = calls_ % 64;
    if (phase == 0) sum_one_ = sum_team_ = 0.0;
    if (phase < 4) return phase % 2 == 0 ? 1 : team;
    return sum_one_ <= sum_team_ ? 1 : team;
  }
  void record(int threads, double seconds) {
    const int phase = calls_ % 64;
    if (phase < 4) (threads == 1 ? sum_one_ : sum_team_) += seconds;
    ++calls_;
  }

 private:
  int calls_ = 0;
  double sum_one_ = 0.0, sum_team_ = 0.0;
};

template <typename RowOf>
std::int64_t gradient_sum(const LinearModel& model, const data::Dataset& data, std::int64_t count,
                          RowOf row_of, double clip, std::vector<double>& grad) {
  const std::size_t P = grad.size();
  // Rows of a sampled batch are scattered over memory: prefetch the cache lines of the row
  // kAhead positions on while this one is processed (the hardware prefetcher cannot guess
  // the jumps), so several DRAM fetches are in flight at once.
  constexpr std::int64_t kAhead = 4;
  const std::size_t row_bytes = data.d * sizeof(double);
  auto prefetch = [&](std::int64_t k) {
    const char* p = reinterpret_cast<const char*>(data.row(row_of(k)));
    for (std::size_t off = 0; off < row_bytes; off += 64) __builtin_prefetch(p + off);
  };
  // Adds the gradients of rows [begin, end) to g; returns how many were clipped.
  auto sum_rows = [&](std::int64_t begin, std::int64_t end, double* g) {
    std::int64_t clipped = 0;
    for (std::int64_t k = begin; k < std::min(begin + kAhead, end); ++k) prefetch(k);
    for (std::int64_t k = begin; k < end; ++k) {
      if (k + kAhead < end) prefetch(k + kAhead);
      const std::size_t i = row_of(k);
      if (add_example_gradient(model, data.row(i), data.y[i], clip, g) < 1.0) ++clipped;
    }
    return clipped;
  };
  // Threads only pay off when the pass is long: a mini-batch (256 rows of 784) takes about
  // 0.1 ms, comparable to waking a team and its barrier on a busy machine. The choice depends
  // on the pass's size only, never on the number of threads, so the summation order (and the
  // result) is the same on every machine.
  if (static_cast<double>(count) * static_cast<double>(P) < 1048576.0)
    return sum_rows(0, count, grad.data());
  // A fixed number of chunks, each summed into its own buffer and handed out dynamically:
  // a thread stalled behind a busy neighbour no longer holds the barrier (with a static
  // split, 2 threads on a loaded 2-core machine were slower than 1), and the buffers are
  // added in chunk order, so the result is the same for any number of threads and any
  // scheduling (bit-for-bit reproducible with a seed).
  constexpr std::int64_t kChunks = 16;
  thread_local ThreadTuner tuner;
  const int threads = tuner.pick(static_cast<int>(std::min<std::int64_t>(omp_get_max_threads(), kChunks)));
  const double start = omp_get_wtime();
  std::vector<double> partial(static_cast<std::size_t>(kChunks) * P, 0.0);
  std::vector<std::int64_t> clipped(static_cast<std::size_t>(kChunks), 0);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (std::int64_t chunk = 0; chunk < kChunks; ++chunk) {
    clipped[static_cast<std::size_t>(chunk)] =
        sum_rows(count * chunk / kChunks, count * (chunk + 1) / kChunks,
                 partial.data() + static_cast<std::size_t>(chunk) * P);
  }
  tuner.record(threads, omp_get_wtime() - start);
  std::int64_t total = 0;
  for (std::int64_t chunk = 0; chunk < kChunks; ++chunk) {
    const double* g = partial.data() + static_cast<std::size_t>(chunk) * P;
    for (std::size_t j = 0; j < P; ++j) grad[j] += g[j];
    total += clipped[static_cast<std::size_t>(chunk)];
  }
  return total;
}

}  // namespace

std::int64_t full_gradient_sum(const LinearModel& model, const data::Dataset& data, double clip,
                               std::vector<double>& grad) {
  return gradient_sum(model, data, static_cast<std::int64_t>(data.n),
                      [](std::int64_t k) { return static_cast<std::size_t>(k); }, clip, grad);
}

std::int64_t batch_gradient_sum(const LinearModel& model, const data::Dataset& data,
                                const std::vector<std::int64_t>& batch, double clip,
                                std::vector<double>& grad) {
  return gradient_sum(model, data, static_cast<std::int64_t>(batch.size()),
                      [&](std::int64_t k) { return static_cast<std::size_t>(batch[static_cast<std::size_t>(k)]); },
                      clip, grad);
}

}  // namespace hsdp::train
