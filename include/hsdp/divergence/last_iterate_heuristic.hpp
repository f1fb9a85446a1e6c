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

/// log delta(eps) = log max(E_{e^eps}(P || Q), E_{e^eps}(Q || P)) for
/// P = Binomial(T, q) + N(0, T sigma^2), Q = N(0, T sigma^2) (sigma in units of the per-step
/// sensitivity). T >= 1, q in (0, 1], sigma > 0, eps >= 0. Relative accuracy ~1e-10 where delta
/// is above 1e-250; the binomial is truncated where its log weight is 60 below the peak.
double heuristic_log_delta(std::int64_t T, double q, double sigma, double epsilon);

/// The smallest eps >= 0 with heuristic delta(eps) <= delta (the upper end of the root
/// finder's bracket); +inf if none up to 1e4.
double heuristic_epsilon(std::int64_t T, double q, double sigma, double delta);

}  // namespace hsdp::div
