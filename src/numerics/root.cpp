#include "hsdp/numerics/root.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace hsdp::num {

namespace {

// The predicate "the guarantee is met". NaN (e.g. a bound evaluated outside its domain)
// never counts as met: the root finder must not return a point it could not verify.
bool meets(double y) { return y <= 0; }

// Finite doubles mapped to integers in the same order (sign-magnitude -> two's
// complement). Bisecting these integers halves the number of doubles left in the
// bracket, so any finite bracket, whatever its span (1e-300 .. 1e300, or across 0),
// is resolved to adjacent doubles in at most 64 halvings.
std::int64_t to_ordered(double x) {
  const auto bits = std::bit_cast<std::int64_t>(x);
  const std::int64_t magnitude = bits & std::numeric_limits<std::int64_t>::max();
  return bits < 0 ? -magnitude : magnitude;
}
double from_ordered(std::int64_t i) {
  return i < 0 ? -std::bit_cast<double>(-i) : std::bit_cast<double>(i);
}
std::uint64_t ordered_width(double a, double b) {
  return static_cast<std::uint64_t>(to_ordered(b)) - static_cast<std::uint64_t>(to_ordered(a));
}
double ordered_midpoint(double a, double b) {
  const std::int64_t ia = to_ordered(a);
  return from_ordered(ia + static_cast<std::int64_t>(ordered_width(a, b) / 2));
}

}  // namespace

double monotone_boundary(const std::function<double(double)>& f, double lo, double hi,
                         Holds holds, const BoundaryOptions& options) {
  if (!std::isfinite(lo) || !std::isfinite(hi))
    throw std::logic_error("monotone_boundary: the bracket must be finite");
  if (!(lo < hi)) throw std::logic_error("monotone_boundary: empty bracket");
  // Work with h(t), non-increasing, whose condition h(t) <= 0 holds at the right end b
  // and fails at the left end a. For Holds::below (f non-decreasing) reflect x = -t.
  const bool reflect = holds == Holds::below;
  auto h = [&](double t) { return f(reflect ? -t : t); };
  double a = reflect ? -hi : lo;
  double b = reflect ? -lo : hi;
  double fa = h(a), fb = h(b);
  if (meets(fa) || !meets(fb))
    throw std::logic_error("monotone_boundary: the bracket does not straddle the boundary");

  auto converged = [&] {
    return ordered_width(a, b) <= 1 ||
           b - a <= options.rel_tol * std::max(std::abs(a), std::abs(b)) + options.abs_tol;
  };
  // Illinois (modified regula falsi) while both values are finite, safeguarded: if three
  // interpolation steps in a row do not shrink the bracket (counted in doubles) eightfold,
  // a bisection follows. Bisections alternate between the arithmetic midpoint and the
  // midpoint over the ordered doubles (geometric-like: 64 of them resolve any bracket).
  // -inf plateaus (log delta = -inf where delta = 0) and NaN regions make the values
  // non-finite and are bisected. Every point kept as b has been verified to hold.
  int side = 0;  // +1 if b was replaced by the last interpolation, -1 if a was
  int run = 0;   // interpolation steps since the last width check
  std::uint64_t width_mark = ordered_width(a, b);
  bool force_bisection = false, ordered_next = false;
  bool zero_plateau = false;  // a probe met the target too: f = 0 on an interval
  for (int it = 0; it < options.max_iterations && !converged(); ++it) {
    double c;
    const bool interpolate = !force_bisection && std::isfinite(fa) && std::isfinite(fb) &&
                             fa > 0 && fb < 0 && std::isfinite(b - a);
    const bool probe = !interpolate && !force_bisection && fb == 0 && !zero_plateau;
    // Half the tolerance: as the loop runs, b - a > 2 * half_tol.
    const double half_tol =
        0.5 * (options.rel_tol * std::max(std::abs(a), std::abs(b)) + options.abs_tol);
    if (interpolate) {
      c = a + (b - a) * (fa / (fa - fb));  // fa / (fa - fb) in (0, 1): no overflow
      // Stay half a tolerance away from both ends (as Brent does): once one end is
      // within rounding of the boundary, the next point then closes the bracket
      // instead of creeping towards it.
      c = std::clamp(c, a + half_tol, b - half_tol);
    } else if (probe) {
      // An exact zero is usually the boundary itself: probe just inside the tolerance,
      // which either closes the bracket or reveals a plateau of zeros to bisect.
      c = b - half_tol;
    } else {
      c = (ordered_next || !std::isfinite(b - a)) ? ordered_midpoint(a, b) : a + 0.5 * (b - a);
      ordered_next = !ordered_next;
    }
    if (!(c > a && c < b)) c = ordered_midpoint(a, b);
    const double fc = h(c);
    if (meets(fc)) {
      if (probe) zero_plateau = true;
      b = c;
      fb = fc;
      if (interpolate && side == 1) fa *= 0.5;  // Illinois: the stagnant end's value halves
      side = interpolate ? 1 : 0;
    } else {
      a = c;
      fa = std::isnan(fc) ? std::numeric_limits<double>::infinity() : fc;
      if (interpolate && side == -1) fb *= 0.5;
      side = interpolate ? -1 : 0;
    }
    if (interpolate || probe) {
      if (++run == 3) {
        const std::uint64_t width = ordered_width(a, b);
        force_bisection = width > width_mark / 8;
        width_mark = width;
        run = 0;
      }
    } else {
      force_bisection = false;
      width_mark = ordered_width(a, b);
      run = 0;
    }
  }
  // b is the conservative end: f was evaluated there and met the target.
  return reflect ? -b : b;
}

std::optional<double> smallest_meeting(const std::function<double(double)>& f, double x0,
                                       double step, double x_max,
                                       const BoundaryOptions& options) {
  if (!(step > 0) || !std::isfinite(step) || !std::isfinite(x0) || std::isnan(x_max))
    throw std::logic_error("smallest_meeting: needs finite x0, a finite step > 0 and x_max");
  if (meets(f(x0))) return x0;
  double lo = x0, width = step;
  for (;;) {
    const double hi = std::min(x0 + width, x_max);
    if (!(hi > lo) || !std::isfinite(hi)) return std::nullopt;
    if (meets(f(hi))) return monotone_boundary(f, lo, hi, Holds::above, options);
    if (hi >= x_max) return std::nullopt;
    lo = hi;
    width *= 2;
  }
}

}  // namespace hsdp::num
