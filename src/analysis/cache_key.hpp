// Keys of the analyses' memo caches (shifted-interpolation's bounds, composition-pld's
// compositions and per-step discretisations). A cached value may be returned for a later
// run only when every input it depends on is equal, so the keys are built from whole values
// (every field of the Run, every field of the grid options), never from hand-picked fields:
// a field missed in a key makes whichever run is asked first set the number for the others
// (issue 38: the adjacency was missing from a key). Implementation detail, not a public header.
#pragma once

#include <string>

#include "hsdp/divergence/pld.hpp"
#include "hsdp/run.hpp"

namespace hsdp::detail {

/// What a key leaves out because the cached value provably does not depend on it.
enum class KeyOmits {
  nothing,
  noise_std,  ///< the per-step noise std (shift energies: calibrating the noise reuses them)
};

/// Every field of `run` (exact: doubles in hexadecimal, schedules value by value, optional
/// fields marked unset), except what `omits` names. Two runs get the same key iff they are
/// equal in every field kept.
std::string cache_key(const Run& run, KeyOmits omits = KeyOmits::nothing);

/// Every field of the PLD options.
std::string cache_key(const div::PldOptions& options);

}  // namespace hsdp::detail
