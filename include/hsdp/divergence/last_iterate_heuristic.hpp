// The last-iterate heuristic of Steinke, Nasr, Ganesh, Balle, Choquette-Choo, Jagielski,
// Hayes, Thakurta, Smith, Terzis, "The last iterate advantage: empirical auditing and
// principled heuristic analysis of differentially private SGD" (ICLR 2025).
//
// NOT a guarantee. It is the exact privacy of the last iterate when every loss is LINEAR: the
// differing record then moves the sum of the T updates by one sensitivity unit for each step
// that samples it, so the last iterate is (in those units) K + N(0, T sigma^2) with
// K ~ Binomial(T, q) under one dataset, N(0, T sigma^2) under the other. The paper argues it
// predicts the privacy of realistic (non-linear) training; counterexamples exist, so hsdp
// prints it next to the guarantees and never uses it as one.
#pragma once

#include <cstdint>

namespace hsdp::div {

/// At most this many binomial counts enter a sum (the default of `max_terms` below): the cost
/// of one evaluation is bounded whatever T is.
inline constexpr std::int64_t kHeuristicTerms = 2048;

/// log delta(eps) = log max(E_{e^eps}(P || Q), E_{e^eps}(Q || P)) for
/// P = Binomial(T, q) + N(0, T sigma^2), Q = N(0, T sigma^2) (sigma in units of the per-step
/// sensitivity). T >= 1, q in (0, 1], sigma > 0, eps >= 0. Relative accuracy ~1e-10 where delta
/// is above 1e-250; the binomial is truncated where its log weight is 60 below the peak (its
/// ends found by bisection: O(log T)). When more than `max_terms` counts remain (a binomial
/// spread of sqrt(T q (1 - q)) > ~90), every h-th count is summed with weight h times its
/// own: the summands are smooth on the scale of that spread (h <= spread / 40), where the
/// trapezoid rule's error is below e^-3000 (Poisson summation), so the cost is O(max_terms)
/// per evaluation for any T.
double heuristic_log_delta(std::int64_t T, double q, double sigma, double epsilon,
                           std::int64_t max_terms = kHeuristicTerms);

/// The smallest eps >= 0 with heuristic delta(eps) <= delta (the upper end of the root
/// finder's bracket); +inf if none up to 1e4.
double heuristic_epsilon(std::int64_t T, double q, double sigma, double delta,
                         std::int64_t max_terms = kHeuristicTerms);

}  // namespace hsdp::div
