#include "hsdp/numerics/root.hpp"

#include <boost/math/tools/toms748_solve.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace hsdp::num {

namespace {
// TOMS 748 needs finite values: +-inf (delta = 0 gives log delta = -inf) is clamped to
// +-1e300, and NaN counts as "does not hold" (+1e300).
double finite_view(double y) {
  constexpr double big = 1e300;
  return std::isnan(y) ? big : std::clamp(y, -big, big);
}
bool meets(double y) { return !std::isnan(y) && y <= 0; }
}  // namespace

double monotone_boundary(const std::function<double(double)>& f, double lo, double hi,
                         Holds holds, const BoundaryOptions& options) {
  if (!(lo < hi)) throw std::logic_error("monotone_boundary: empty bracket");
  // Work with h(x) such that the condition is h(x) <= 0 and h is non-increasing.
  // For Holds::below (f non-decreasing), reflect x -> -x.
  auto h = [&](double x) {
    return finite_view(f(holds == Holds::above ? x : -x));
  };
  double a = holds == Holds::above ? lo : -hi;
  double b = holds == Holds::above ? hi : -lo;
  double ha = h(a), hb = h(b);
  if (!(ha > 0) || !(hb <= 0))
    throw std::logic_error("monotone_boundary: the bracket does not straddle the boundary");
  auto tol = [&](double x, double y) {
    return std::abs(y - x) <= options.rel_tol * std::max(std::abs(x), std::abs(y)) + options.abs_tol;
  };
  std::uintmax_t iters = static_cast<std::uintmax_t>(options.max_iterations);
  auto bracket = boost::math::tools::toms748_solve(h, a, b, ha, hb, tol, iters);
  // The conservative end is the one where the condition holds; verify it.
  double x = bracket.second;
  if (!meets(f(holds == Holds::above ? x : -x))) x = b;  // fall back to the original good end
  return holds == Holds::above ? x : -x;
}

std::optional<double> smallest_meeting(const std::function<double(double)>& f, double x0,
                                       double step, double x_max,
                                       const BoundaryOptions& options) {
  if (meets(f(x0))) return x0;
  double lo = x0, width = step;
  for (;;) {
    double hi = std::min(x0 + width, x_max);
    if (meets(f(hi))) return monotone_boundary(f, lo, hi, Holds::above, options);
    if (hi >= x_max) return std::nullopt;
    lo = hi;
    width *= 2;
  }
}

}  // namespace hsdp::num
