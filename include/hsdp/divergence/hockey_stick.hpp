// Hockey-stick (E_gamma) divergences of the mechanisms the contraction analyses need.
//
// E_gamma(P || Q) = integral of (dP - gamma dQ)^+ ; a mechanism is (eps, delta)-DP iff
// E_{e^eps}(P || Q) <= delta for every neighbouring pair (journal Thm 2). gamma is
// always passed as log_gamma = eps >= 0 so that e^500 never overflows.
#pragma once

namespace hsdp::div {

/// theta_gamma(r) = E_gamma(N(r,1) || N(0,1))
///               = Q(log(gamma)/r - r/2) - gamma Q(log(gamma)/r + r/2)
/// (journal Thm 1 / Def. 3, isit Lemma 2). It is also the E_gamma contraction
/// coefficient of the projected Gaussian kernel with input diameter r*sigma and noise
/// sigma (journal Prop. 1). Domain: log_gamma >= 0, r >= 0 (r = +inf gives 1 when
/// log_gamma is finite; log_gamma = +inf gives 0). Increasing in r, decreasing in gamma.
/// Relative accuracy ~2e-14 (measured against 100-digit references for log_gamma in
/// [0, 500], r in [1e-8, 1e4]); never NaN for valid input, NaN for log_gamma < 0, r < 0
/// or NaN. Computed without cancellation from theta = phi(u) [M(u) - M(v)], M the Mills
/// ratio, or 1 - theta = Q(-u) + phi(u) M(v) when theta >= 1/2 (docs/numerics.md).
double theta(double log_gamma, double r);

/// log theta_gamma(r): absolute error <= 1e-13 (one ulp of |log theta| ~ 700) while
/// theta >= 1e-300, relative error ~1e-16 of log theta below (down to -1e21 and
/// beyond). -inf at r = 0 and where log theta itself is below -DBL_MAX.
double log_theta(double log_gamma, double r);

/// log(1 - theta_gamma(r)), accurate where theta is close to 1 (a contraction
/// coefficient 1 - 1e-20, or 1 - 1e-500, whose complement the products and geometric
/// sums of the contraction analyses need). For theta >= 1/2 it is formed in the log
/// domain from 1 - theta = Q(-u) + gamma Q(v), u = eps/r - r/2, v = eps/r + r/2, a sum
/// of positive terms; otherwise log1mexp(log theta). -inf at r = inf, 0 at r = 0.
double log_one_minus_theta(double log_gamma, double r);

/// E_gamma(Lap(m1, b) || Lap(m2, b)) for Laplace laws with scale b (variance 2 b^2) and
/// shift_over_scale = |m1 - m2| / b: [1 - exp((log_gamma - shift_over_scale) / 2)]^+
/// (isit Lemma 1, eq. (9)). Exactly 0 when log_gamma >= shift_over_scale.
double laplace_e_gamma(double log_gamma, double shift_over_scale);

/// log of laplace_e_gamma (-inf when it is 0).
double log_laplace_e_gamma(double log_gamma, double shift_over_scale);

}  // namespace hsdp::div
