// The parts of the 1-D audit instance that the grid propagation (exact.cpp) and the Gaussian
// closed form (gaussian_mixture.cpp) share: when the differing record is read, and the
// contraction of the regulariser's gradient step (implementation detail).
#pragma once

#include <cstdint>
#include <optional>

#include "hsdp/run.hpp"

namespace hsdp::audit::detail {

/// Is record `index` (1-based) in cyclic batch t (1-based)? Batch t holds positions
/// ((t-1) b + j) mod n, j = 0..b-1 (run.hpp: "batches of size b, wrapping around").
bool in_cyclic_batch(const Run& run, std::int64_t index, std::int64_t t);

/// The differing record's position in cyclic order: the one given, or the one whose use is
/// most recent (the last record of batch T) for the last iterate, or the first record (used
/// in every prefix) for a random stop: where the per-index analyses put their worst case.
/// nullopt for the other batch policies.
std::optional<std::int64_t> record_index(const Run& run);

/// Batches per epoch of shuffled order: floor(n/b) (the sampler drops the last partial one).
std::int64_t shuffled_batches(const Run& run);

/// The gradient step of the regulariser (lambda/2) w^2 at step t: w -> c_t w with
/// c_t = 1 - eta_t lambda (1 for lambda = 0).
double contraction(const Run& run, std::int64_t t);

/// Checks the instance's own conditions on lambda: eta_t lambda <= 2 at every step (the
/// gradient step of the quadratic is then |c_t| <= 1, a contraction). Throws InvalidArgument
/// naming strong_convexity.
void check_contraction(const Run& run);

}  // namespace hsdp::audit::detail
