// Numerical integration (wrapping Boost.Math quadrature, no-promote policy).
#pragma once

#include <functional>

namespace hsdp::num {

/// Integral of f over [a, b] (a, b may be infinite) by adaptive tanh-sinh / exp-sinh /
/// sinh-sinh quadrature, to relative tolerance `rel_tol`. Used for independent checks
/// and for the f-divergence output bound; not on hot paths. a > b gives minus the
/// integral over [b, a]; a == b gives 0; a NaN limit gives NaN. f must be smooth inside
/// the range for full accuracy: split the range at kinks (e.g. of a positive part).
double integrate(const std::function<double(double)>& f, double a, double b,
                 double rel_tol = 1e-12);

}  // namespace hsdp::num
