// The one monotone root finder used for every inversion (eps(delta), calibration).
//
// It brackets, narrows the bracket (Illinois regula falsi safeguarded by bisection over
// the ordered doubles, so -inf plateaus, NaN regions and brackets spanning 1e-300..1e300
// all converge in a bounded number of steps), and returns the conservative end of the
// final bracket: the end at which the caller's predicate was evaluated and held.
#pragma once

#include <functional>
#include <optional>

namespace hsdp::num {

/// Where the predicate "the guarantee is met" holds relative to the boundary x*.
enum class Holds {
  above,  ///< holds for x >= x* (e.g. eps such that delta(eps) <= target): return the upper end
  below,  ///< holds for x <= x* (e.g. the largest number of steps): return the lower end
};

struct BoundaryOptions {
  double rel_tol = 1e-12;     ///< stop when (hi - lo) <= rel_tol * |hi| + abs_tol
  double abs_tol = 1e-300;
  int max_iterations = 400;
};

/// Finds the boundary of a monotone condition f(x) <= 0 (when `holds == above`, f must be
/// non-increasing; when `holds == below`, non-decreasing) on [lo, hi], where the condition
/// fails at one end and holds at the other. Returns the end of the final bracket at which
/// f(x) <= 0 was evaluated, i.e. a point that meets the target and lies within the
/// tolerance of the exact boundary (or, if max_iterations runs out first, a point that
/// still meets it). NaN values of f are treated as "does not hold"; -inf as "holds".
/// At most ~130 evaluations of f for any finite bracket.
/// Throws std::logic_error if lo or hi is not finite, if !(lo < hi), or if the bracket
/// does not straddle the boundary (the condition must fail at one end, hold at the other).
double monotone_boundary(const std::function<double(double)>& f, double lo, double hi,
                         Holds holds, const BoundaryOptions& options = {});

/// Finds the smallest x >= x0 (holds == above) at which f(x) <= 0, where f is
/// non-increasing, expanding the bracket geometrically from [x0, x0 + step] up to
/// x_max. Returns x0 itself if f(x0) <= 0 and nullopt if f(x_max) > 0 (the target is
/// not reached inside the range, or x_max <= x0). Throws std::logic_error unless x0 and
/// step are finite and step > 0.
std::optional<double> smallest_meeting(const std::function<double(double)>& f, double x0,
                                       double step, double x_max,
                                       const BoundaryOptions& options = {});

}  // namespace hsdp::num
