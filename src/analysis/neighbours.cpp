// Neighbouring data sets and the batch orders (neighbours.hpp, docs/analyses/neighbours.md).
#include "neighbours.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "hsdp/errors.hpp"

namespace hsdp::detail {

std::optional<std::string> add_remove_reason(const Run& run) {
  if (run.adjacency == Adjacency::replace) return std::nullopt;
  const std::int64_t n = run.n, b = run.batch_size;
  switch (run.sampling) {
    case Sampling::full:
    case Sampling::poisson:
      return std::nullopt;
    case Sampling::fixed:
      if (b > n - 1)
        return fmt::format(
            "add/remove with fixed-size batches needs the smaller data set to hold a batch: b = {} "
            "exceeds n - 1 = {}",
            b, n - 1);
      return std::nullopt;
    case Sampling::cyclic:
      return std::string(
          "add/remove with cyclic batches is not derived: adding or removing a record moves every "
          "later record by one position, so each later batch can differ in up to 2b records "
          "(state replace-one adjacency, or use shuffled or Poisson batches)");
    case Sampling::shuffle: {
      // The coupling (docs): the larger data set's permutation is the smaller's with the extra
      // record at a uniform slot and the displaced record moved to the last slot. It leaves the
      // batch boundaries in place only when both data sets cut their permutations into the
      // same number of batches: floor(m/b) = floor((m+1)/b), i.e. b does not divide m + 1, when
      // the partial batch is dropped; ceil(m/b) = ceil((m+1)/b), i.e. b does not divide m,
      // when it is kept; for both pairs m = n - 1 and m = n.
      const bool dropped = run.drop_last;
      // (the data set of `fewer` records, the one of `more`): the pair whose cuts differ.
      std::optional<std::pair<std::int64_t, std::int64_t>> bad;
      if (dropped && n % b == 0) bad = {{n - 1, n}};
      else if (dropped && (n + 1) % b == 0) bad = {{n, n + 1}};
      else if (!dropped && (n - 1) % b == 0) bad = {{n - 1, n}};
      else if (!dropped && n % b == 0) bad = {{n, n + 1}};
      if (!bad) return std::nullopt;
      const auto [fewer, more] = *bad;
      auto batches = [&](std::int64_t m) { return dropped ? m / b : m / b + (m % b != 0 ? 1 : 0); };
      return fmt::format(
          "add/remove with shuffled batches (the partial last batch {}) is derived only when both "
          "neighbours cut an epoch into as many batches: with b = {}, {} record{} make{} {} batch{} and {} "
          "make {}, so adding or removing a record moves every later batch (state replace-one adjacency, "
          "or a batch size that divides neither {} nor {})",
          dropped ? "dropped" : "kept", b, fewer, fewer == 1 ? "" : "s", fewer == 1 ? "s" : "", batches(fewer),
          batches(fewer) == 1 ? "" : "es", more,
          batches(more), dropped ? n : n - 1, dropped ? n + 1 : n);
      return std::nullopt;
    }
  }
  return std::string("unknown batch order");
}

double ShuffledEpoch::worst() const { return std::max(full, partial) + (every_last > 0 ? full : 0.0); }

ShuffledEpoch shuffled_epoch(const Run& run) {
  ShuffledEpoch e;
  const double b = static_cast<double>(run.batch_size), n = static_cast<double>(run.n);
  e.l = run.batches_per_epoch();
  e.r = run.partial_batch();
  e.full = 2.0 / b;
  e.partial = e.r > 0 ? 2.0 / static_cast<double>(e.r) : 0.0;
  // Under add/remove (pair n - 1, n: the larger data set has n records and a partial batch of
  // r; pair n, n + 1: r + 1 records and 2/(r + 1) < 2/r) the displaced record joins or leaves
  // the partial batch every epoch.
  if (run.adjacency == Adjacency::remove && e.r > 0) e.every_last = e.partial;
  e.per_position = b / n;
  return e;
}

}  // namespace hsdp::detail
