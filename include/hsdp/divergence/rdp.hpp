// Rényi divergences of the mechanisms the Rényi analyses need, and the conversions from
// Rényi DP to (eps, delta)-DP. Orders alpha are real numbers > 1.
#pragma once

#include <functional>
#include <limits>
#include <string_view>

namespace hsdp::div {

/// How the batch of one step is drawn, for privacy amplification by subsampling.
enum class Subsampling {
  poisson,  ///< each record independently with probability q
  fixed,    ///< a uniformly random subset of size b = q n, without replacement
};

/// The neighbouring relation the divergence is taken under.
enum class Neighbours {
  remove,   ///< add/remove one record
  replace,  ///< replace one record
};

/// D_alpha(N(mu, s^2) || N(0, s^2)) = alpha mu^2 / (2 s^2): the Gaussian mechanism.
double gaussian_rdp(double alpha, double sensitivity_over_std);

/// RDP at order alpha of one step of the subsampled Gaussian mechanism with sampling
/// rate q in (0, 1], noise std sigma (in units of the bound C on one record's contribution
/// to the noisy sum: add/remove moves the sum by <= 1, replace by <= 2), for the given
/// sampling scheme and neighbouring relation (formulas and their validity: docs/rdp.md;
/// Poisson/remove is exact (MTZ 2019), the others are valid upper bounds). The value is the maximum over the two
/// orders of the neighbouring pair (docs/errata.md: altschuler-talwar Def. 2.10 taken
/// literally gives the smaller direction). Any real alpha > 1; computed in the log domain
/// (no overflow at alpha = 1024 or sigma = 0.3). Returns +inf where the divergence is
/// infinite; never NaN for valid input.
double sampled_gaussian_rdp(double alpha, double q, double sigma, Subsampling scheme,
                            Neighbours neighbours);

/// S_alpha(q, sigma) of altschuler-talwar Def. 2.10, in the direction that upper-bounds
/// both orders: D_alpha((1-q) N(0, sigma^2) + q N(1, sigma^2) || N(0, sigma^2)) (Poisson,
/// add/remove; Mironov-Talwar-Zhang).
double s_alpha(double alpha, double q, double sigma);

/// An RDP guarantee as a curve: eps(alpha) for alpha in (1, alpha_max]. eps may be +inf
/// where the bound says nothing; it must be valid at every order it is evaluated at.
struct RdpCurve {
  std::function<double(double)> epsilon;
  double alpha_max = std::numeric_limits<double>::infinity();
};

/// RDP -> (eps, delta) conversions at one order alpha for an (alpha, rho)-RDP guarantee.
enum class RdpConversion {
  mironov,  ///< Mironov 2017 Prop. 3: delta = exp(-(alpha-1)(eps-rho))
  cks,      ///< Canonne-Kamath-Steinke 2020 Prop. 12 = Balle et al. 2020 Thm 21:
            ///< delta = kappa e^{-(alpha-1)(eps-rho)}, kappa = (1/alpha)(1-1/alpha)^(alpha-1)
  optimal,  ///< journal (23) ([57, Lemma 2]): min{kappa e^{-(alpha-1)(eps-rho)},
            ///< (e^{(alpha-1) rho} - 1) / (alpha (e^{(alpha-1) eps} - 1))}
};
std::string_view to_string(RdpConversion);

/// The same conversions with u = alpha - 1 > 0 given directly (full precision for orders
/// near 1) and without clamping: log delta may be > 0 (delta > 1, vacuous), eps may be < 0
/// (delta(0) already meets the target). Used by the minimisers over alpha of the analyses.
double log_delta_at_order(double u, double rho, double epsilon, RdpConversion conversion);
double epsilon_at_order(double u, double rho, double log_delta, RdpConversion conversion);

/// log delta at eps from (alpha, rho)-RDP by the given conversion (-inf when delta = 0).
double log_delta_from_rdp(double alpha, double rho, double epsilon, RdpConversion conversion);
/// eps at delta from (alpha, rho)-RDP by the given conversion (conservative).
double epsilon_from_rdp(double alpha, double rho, double delta, RdpConversion conversion);

/// The best conversion of a whole curve: minimised over every conversion and over alpha
/// continuously (a grid, then local refinement). The value reported is attained at a
/// reported order, so it is never below the true minimum of the conversion used; orders
/// near 1 never produce eps = 0 by underflow.
struct ConvertedDp {
  double value;   ///< eps (for a delta target) or delta (for an eps target)
  double alpha;   ///< the order that attains it
  RdpConversion conversion;
};
ConvertedDp best_epsilon(const RdpCurve& curve, double delta);
ConvertedDp best_delta(const RdpCurve& curve, double epsilon);
/// As best_delta, with value = log delta (<= 0; no underflow for delta < 1e-308).
ConvertedDp best_log_delta(const RdpCurve& curve, double epsilon);

}  // namespace hsdp::div
