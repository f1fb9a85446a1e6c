// Batch policies and the gradient passes of the trainer (implementation detail).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hsdp/data/dataset.hpp"
#include "hsdp/random/csprng.hpp"
#include "hsdp/run.hpp"
#include "hsdp/train/model.hpp"

namespace hsdp::train {

/// Draws the batch of each step (run.hpp Sampling), in O(batch) time per step:
///  poisson: each record independently with probability q' <= q = b/n, by geometric skips
///           drawn exactly (random::geometric_exp: the gap to the next chosen record has
///           P(gap >= k) = (1 - q')^k with 1 - q' = exp(-r 2^-s) >= 1 - q, r 2^-s within
///           2^-39 of -log(1 - q)), never a pass over n; analyses at q are conservative;
///  fixed:   a uniform b-subset by a partial Fisher-Yates shuffle of a persistent
///           permutation (b swaps);
/// Every draw comes from the run's CSPRNG (random::Csprng), integers without modulo bias.
///  shuffle: a fresh uniform permutation per epoch cut into floor(n/b) batches of b, or,
///           with drop_last false, ceil(n/b) batches whose last holds the n mod b left;
///  cyclic:  records (t-1) b .. t b - 1 modulo n, in the given order.
class BatchSampler {
 public:
  /// n: the records drawn from; rate_n (Poisson only; 0: n): the public size of the
  /// sampling rate q = b / rate_n, a constant of the run that does not follow the data set's
  /// own size (docs/training.md "Public constants of the run").
  BatchSampler(Sampling sampling, std::int64_t n, std::int64_t b, random::Csprng& rng,
               bool drop_last = true, std::int64_t rate_n = 0);
  /// Poisson: the probability q' <= q = b / rate_n with which each record enters a batch,
  /// independently (the exact law of the geometric gaps, rounded to double).
  double inclusion_probability() const;
  /// The record indices (0-based) of step t (1-based, called with t = 1, 2, ...).
  void next(std::int64_t t, std::vector<std::int64_t>& out);

 private:
  Sampling sampling_;
  std::int64_t n_, b_, rate_n_;
  random::Csprng& rng_;
  bool drop_last_ = true;
  std::vector<std::int64_t> perm_;
  std::uint64_t gap_rate_ = 1;  // Poisson: P(gap >= k) = exp(-k gap_rate_ 2^-gap_bits_)
  int gap_bits_ = 0;
};

/// One line describing how BatchSampler draws the batches of `sampling` (n records,
/// batch size b, T steps), for the model file: a user can tell from it which order was run
/// and what a certificate of it assumes.
std::string describe_batch_order(Sampling sampling, std::int64_t n, std::int64_t b, std::int64_t T,
                                 bool seeded, bool drop_last = true);

/// Adds sum_i grad l(theta, x_i) over all records to grad in one fused pass over the rows
/// (score and gradient per row while the row is in cache), OpenMP over rows with one
/// buffer per thread, reduced in thread order (deterministic for a fixed thread count).
/// Returns the number of clipped examples.
std::int64_t full_gradient_sum(const LinearModel& model, const data::Dataset& data, double clip,
                               std::vector<double>& grad);
/// The same over the records in `batch`.
std::int64_t batch_gradient_sum(const LinearModel& model, const data::Dataset& data,
                                const std::vector<std::int64_t>& batch, double clip,
                                std::vector<double>& grad);

}  // namespace hsdp::train
