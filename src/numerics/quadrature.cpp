#include "hsdp/numerics/quadrature.hpp"

#include <boost/math/quadrature/exp_sinh.hpp>
#include <boost/math/quadrature/sinh_sinh.hpp>
#include <boost/math/quadrature/tanh_sinh.hpp>

#include <cmath>
#include <limits>

namespace hsdp::num {

double integrate(const std::function<double(double)>& f, double a, double b, double rel_tol) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (a == b) return 0.0;
  if (a > b) return -integrate(f, b, a, rel_tol);
  const bool a_inf = std::isinf(a), b_inf = std::isinf(b);
  // The integrators precompute their abscissa/weight tables when constructed (about a
  // millisecond each), so each thread builds them once (integrate() may refine the tables,
  // so they are not shared between threads).
  if (a_inf && b_inf) {
    thread_local boost::math::quadrature::sinh_sinh<double> q;
    return q.integrate(f, rel_tol);
  }
  if (a_inf || b_inf) {
    thread_local boost::math::quadrature::exp_sinh<double> q;
    return q.integrate(f, a, b, rel_tol);
  }
  thread_local boost::math::quadrature::tanh_sinh<double> q;
  return q.integrate(f, a, b, rel_tol);
}

}  // namespace hsdp::num
