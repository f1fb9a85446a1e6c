// What one neighbouring data set changes in a run's batches, for every batch order and both
// adjacencies: the one place the analyses read it from (derivations:
// docs/analyses/neighbours.md). Implementation detail, not a public header.
//
// The convention (docs/analyses/neighbours.md, "The run a neighbour trains"): a neighbouring
// data set is trained by the same algorithm with the same public constants -- T steps,
// batch size b, step sizes, noise -- on its own records. Full batches average over the data
// set's own records (n for yours, n - 1 or n + 1 for a neighbour's); Poisson batches divide
// their sum by the fixed b = q n; fixed-size and shuffled batches hold b records (a shuffled
// run's partial last batch, when kept, averages over its own records).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "hsdp/run.hpp"

namespace hsdp::detail {

/// Why the add/remove relation is not derived for `run`'s batch order (nullopt: it is).
/// Replace-one runs always give nullopt. The reasons name the order:
///  cyclic   adding or removing a record moves every later record by one position, so each
///           later batch can differ in up to 2b records;
///  shuffle  the neighbours must have the same number of batches per epoch (b divides
///           neither n nor n + 1 when the partial batch is dropped, neither n - 1 nor n when
///           it is kept);
///  fixed    the smaller data set must still hold a batch (b <= n - 1).
std::optional<std::string> add_remove_reason(const Run& run);

/// One epoch of a shuffled run as a neighbouring pair sees it. Shifts are changes of the
/// batch-mean gradient in units of one record's gradient bound (L or C): a record in a
/// full batch of b changes the mean by at most 2/b, in a partial batch of r by at most 2/r.
struct ShuffledEpoch {
  std::int64_t l = 1;      ///< batches per epoch, the same for both data sets
  std::int64_t r = 0;      ///< records of the partial last batch (0: none, or dropped)
  double full = 0.0;       ///< the shift of the record's step when its batch is full: 2/b
  double partial = 0.0;    ///< when its batch is the partial one: 2/r (0 when r = 0)
  /// add/remove with the partial batch kept: the last batch changes in EVERY epoch by up to
  /// 2/r (it gains or loses the record that the coupling displaces), on top of the record's
  /// own step; 0 otherwise.
  double every_last = 0.0;
  /// Probability of each position of a full batch (b/n; the partial batch: r/n), the
  /// position being uniform and hidden (the larger data set's size in the coupling, at most
  /// n, so b/n bounds it for both neighbours).
  double per_position = 0.0;
  /// The largest total shift one epoch can carry, put at its last step (the worst position
  /// sequence, delay lemma): full, partial, or partial + full with every_last.
  double worst() const;
};

/// The epoch structure of a shuffled run under its adjacency; requires
/// run.sampling == shuffle and !add_remove_reason(run).
ShuffledEpoch shuffled_epoch(const Run& run);

}  // namespace hsdp::detail
