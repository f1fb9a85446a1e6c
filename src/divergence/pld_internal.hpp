// Internals shared by the parts of the privacy-loss-distribution code (the public interface
// is include/hsdp/divergence/pld.hpp, the method docs/pld.md):
//   pld_grid.cpp     the loss laws of the mechanisms and their pessimistic discretisation
//                    (connect-the-dots) on a grid; the PrivacyLoss factories; coarsen
//   pld_compose.cpp  FFT composition (Composer): Chernoff windows, round-off bounds, the
//                    low frequencies recomputed accurately
//   pld_profile.cpp  what a stored law answers: delta(eps), eps(delta), its error bound, the
//                    RDP route; the mu-GDP helpers
//   pld.cpp          options, the neighbouring relation (Pld), compose_steps (the grid)
//
// Error accounting (every term is added to delta, never subtracted):
//  * connect-the-dots (Doroshenko et al. 2022): the profile of the stored law is the chord
//    of the true profile (in e^eps) between knots: an upper bound, no error term;
//  * floating point in the discretisation: a cell's P- and Q-masses are differences of
//    normal tails, each with relative error <= kTailRel (num::q is ~1e-15, docs/numerics.md);
//    the cell sum telescopes at every eps, so the error of the profile at x is a few
//    kTailRel times the tail P(L > x - w) at the knot below x (w the cell width), not a sum
//    over cells: PrivacyLoss::rel_slack_ (what clamping moved, and the cells wider than 4h,
//    which lie where the tail is < 1e-10, are absolute: slack_);
//  * composition: a perturbation of one factor by a signed measure whose profile effect
//    is <= e(x) at every x changes the composed profile at eps by <= E[e(eps - S')] over the
//    other factors' sum S' (mass of the others <= 1): absolute bounds add (times the counts),
//    and a bound c P(L > x - w) becomes c P(L + S' > eps - w) <= c delta(eps - w - t) /
//    (1 - e^{-t}) of the composition, for every t > 0 (error_bound(eps));
//  * FFT round-off: Higham, Accuracy and Stability of Numerical Algorithms (2nd ed.),
//    ch. 24: each output of a radix-2 transform is within log2(N) eta ||x||_1 with eta ~ 5
//    eps_mach; we use eta = 8 eps_mach. Powers z^n by repeated squaring: relative error <=
//    3 n eps_mach. Propagated through the product of transforms and the inverse, and to the
//    profile by ||.||_1 <= sqrt(N) ||.||_2; where the result is large (long sequences) the
//    dominant frequencies are recomputed with a bound relative to their distance from 1
//    (Composer::recompute_low_frequencies);
//  * wrap-around of the circular convolution: a sum of losses above the window lands
//    inside it at a smaller loss; its mass is bounded by a Chernoff bound from the pieces'
//    own moment generating functions and added. Sums below the window land at larger losses
//    (pessimistic, nothing to add).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "hsdp/divergence/pld.hpp"

namespace hsdp::div::pld_detail {

// Sums of grid offsets times counts up to 10^18 need more than 64 bits.
__extension__ typedef __int128 i128;

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kEps = std::numeric_limits<double>::epsilon();
// Relative error of a normal tail from num::q, with margin (test_numerics measures ~1e-15).
inline constexpr double kTailRel = 4e-15;
// Mass trimmed from the ends of a stored law after a composition (moved to +inf at the top,
// pushed up at the bottom: both pessimistic).
inline constexpr double kTrimMass = 1e-300;
// log of a spectral magnitude treated as 0 (its contribution is bounded by 1e-300 instead).
inline constexpr double kNegligibleLog = -690.0;

// Fails (InvalidArgument naming pld.interval) when a loss range of width `span` does not fit
// in o.max_length grid points (pld_grid.cpp).
void check_grid_size(double span, const PldOptions& o);

// Moments and Chernoff bounds of stored laws (pld_compose.cpp; also used to size grids):
// log E[e^{lambda_i L}] over the stored finite part for several lambda_i of one sign;
void log_mgfs(const PrivacyLoss& p, const std::vector<double>& lambdas, std::vector<double>& out);
// the tilts at which the Chernoff windows of a sum are evaluated;
std::vector<double> chernoff_lambdas(double sd, double widest);
// mass, mean and variance of the positions 0, 1, ... of a stored law (grid units).
struct Moments {
  double mass = 0, mean = 0, var = 0;
};
Moments moments(const std::vector<double>& v);

}  // namespace hsdp::div::pld_detail
