// Privacy loss distributions (PLD): pessimistic discretisation, FFT composition,
// delta(eps) and eps(delta); and the mu-GDP helpers. Method and pessimism argument:
// docs/pld.md.
//
// A mechanism M is compared on a neighbouring pair through an ordered pair of laws (P, Q);
// its privacy profile is delta(eps) = E_P[(1 - e^{eps - L})_+] with L = log dP/dQ the
// privacy loss. Adaptive composition adds independent losses, so the profile of T steps is
// the same expectation under the convolution of the per-step laws of L under P (Dong-Roth-Su
// 2019 / Koskela et al. 2020 / Doroshenko et al. 2022).
//
// Pessimism (the rule "never under-report privacy loss"): every law stored here
// DOMINATES the true one in profile, i.e. its delta(c) >= the true delta(c) for every real
// c (negative c included). Profile domination survives convolution (for a fixed value of
// the other summands the inner expectation is a profile at a shifted c), so composing
// dominating laws dominates the composition. The stored laws are built by
//  * connect-the-dots (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022, "Connect the
//    dots: tighter discrete approximations of privacy loss distributions", PETS):
//    the loss mass in each cell between two knots of the grid is split between the two
//    ends so that both its P-mass and its Q-mass (E_P[e^{-L}]) are preserved; the profile
//    of the result is the chord of the true profile in the variable e^eps between knots,
//    which lies above the true profile because that profile is convex in e^eps;
//  * loss mass below the grid pushed up to the lowest grid point; loss mass above the grid
//    put at +inf (delta gets all of it);
//  * FFT composition on a window whose tails are bounded by a Chernoff bound computed
//    from the stored law's own moment generating function; the bound is added to delta
//    (wrap-around only adds non-negative mass inside the window);
//  * stated bounds on floating-point error (discretisation: relative to the law's own
//    tail; FFT: a-priori, with the dominant low frequencies recomputed accurately), added
//    to delta.
// compose_steps chooses the grid from the steps themselves (spacing = std of one step's
// loss / PldOptions::cells) unless told a fixed one.
// delta(eps) additionally takes the minimum with the RDP route (the sum of the steps'
// Renyi curves converted by div::best_log_delta), valid for the same mechanisms; it is
// what makes delta ~ 1e-300 answerable.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "hsdp/divergence/rdp.hpp"
#include "hsdp/errors.hpp"

namespace hsdp::div {

// ---------------------------------------------------------------- mu-GDP helpers
// A mechanism is mu-GDP iff its trade-off function is >= G_mu (Dong-Roth-Su 2019); the
// Gaussian mechanism with sensitivity/std = mu is exactly mu-GDP and its privacy loss is
// N(mu^2/2, mu^2) under P.

/// G_mu(alpha) = Phi(Phi^{-1}(1 - alpha) - mu), the type-II error at type-I error alpha.
/// alpha in [0, 1], mu >= 0 (mu = +inf gives 0 for alpha > 0, and G(0) = 1).
double gdp_tradeoff(double alpha, double mu);

/// log delta(eps; mu) = log[Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)] for any real
/// eps (Dong-Roth-Su Cor. 2.13), computed in the log domain (no underflow at 1e-300 or
/// below). mu >= 0; -inf at mu = 0 for eps >= 0.
double gdp_log_delta(double eps, double mu);
double gdp_delta(double eps, double mu);

/// The smallest eps >= 0 with delta(eps; mu) <= delta (conservative end of the bracket).
/// delta in (0, 1).
double gdp_epsilon(double delta, double mu);

// ---------------------------------------------------------------- discretisation knobs

/// Accuracy vs speed. Validated by every factory: bad values throw hsdp::InvalidArgument
/// naming the field ("pld.interval", ...) and its range.
struct PldOptions {
  /// Grid spacing h of the losses. The factories discretise on it; compose_steps uses it
  /// only with `fixed_interval` (otherwise it chooses the spacing itself, below). In
  /// [1e-6, 0.5] with `fixed_interval`, in [1e-12, 1e6] otherwise.
  double interval = 1e-3;
  /// compose_steps: false (default): the grid is sized by the spread of each step's loss --
  /// spacing = (std of one step's loss under P) / `cells`, one grid for the whole sequence,
  /// coarser only when the composed losses would not fit in `max_length` points (docs/pld.md:
  /// the error in eps is then about 1/(12 cells^2) relative, whatever T and q); Gaussian
  /// steps (PldSteps::gaussian) are composed exactly (mu-GDP). true: every mechanism on
  /// `interval`, refined by `refinement` / `block`.
  bool fixed_interval = false;
  /// Mass of a mechanism's loss law left above the grid (put at +inf), in [1e-300, 1e-6].
  double tail_mass = 1e-18;
  /// Mass bound of each tail of a composition cut off by the FFT window (added to delta),
  /// in [1e-300, 1e-6].
  double truncation_mass = 1e-16;
  /// The largest FFT length a composition may use, in [2^10, 2^28].
  std::int64_t max_length = std::int64_t{1} << 25;
  /// compose_steps with `fixed_interval` only: build each mechanism on a grid `refinement`
  /// times finer, compose `block` steps there, and coarsen the block (connect-the-dots) to
  /// `interval` before composing the rest: the coarse grid's error is then paid once per
  /// block instead of once per step, which matters when one step's losses spread over few
  /// grid cells (small q). refinement in [0, 64], block in [0, 10^6]; 0 = automatic:
  /// refinement = the power of 2 >= cells h / (std of one step's loss), capped at 64 (1
  /// when a step already spans >= `cells` grid cells), block = refinement^2.
  std::int64_t refinement = 0;
  std::int64_t block = 0;
  /// Grid cells per standard deviation of one step's loss, in [1, 1000]: the automatic
  /// grid's spacing (16 by default: eps within about 3e-4 relative of the converged value;
  /// DP-SGD at q = 0.01, z = 1, T = 10^4 in a few ms), or with `fixed_interval` the target
  /// of the automatic refinement.
  double cells = 16.0;
};

/// Checks every field (InvalidArgument naming it and its range). `field` names a field for
/// the message from its member name ("interval", "cells", ...); by default "pld.<member>".
/// A front end that lets users state some of these (RunSpec's pld_interval, pld_cells)
/// passes its own names, so the ranges live here only.
void validate(const PldOptions& options,
              const std::function<Param(std::string_view member)>& field = {});

// ---------------------------------------------------------------- one ordered pair

/// The discretised law, under P, of the privacy loss of one ordered pair (P, Q) (or of a
/// composition of such pairs), dominating the true law in profile (see the file comment).
/// Losses sit on the grid l_j = (offset + j) * interval.
class PrivacyLoss {
 public:
  // Factories (one ordered pair each, with sensitivity C = 1 and the given noise):
  /// P = N(mu, 1), Q = N(0, 1): the Gaussian mechanism, mu = sensitivity / std.
  static PrivacyLoss gaussian(double mu, const PldOptions& options = {});
  /// P = Lap(r, 1), Q = Lap(0, 1) (densities e^{-|x - m|}/2), r = sensitivity / scale.
  static PrivacyLoss laplace(double r, const PldOptions& options = {});
  /// P = (1 - q) N(0, s^2) + q N(shift, s^2), Q = N(0, s^2) ("remove" order of the
  /// subsampled Gaussian; shift = 1 for add/remove, 2 for the fixed-size replace pair).
  static PrivacyLoss mixture_vs_gaussian(double q, double s, double shift,
                                         const PldOptions& options = {});
  /// P = N(0, s^2), Q = (1 - q) N(0, s^2) + q N(shift, s^2) (the "add" order).
  static PrivacyLoss gaussian_vs_mixture(double q, double s, double shift,
                                         const PldOptions& options = {});
  /// One law whose profile is, at every eps, the larger of the profiles of the two orders
  /// above (mixture_vs_gaussian and gaussian_vs_mixture): the symmetrised pair, for
  /// relations whose orders are each dominated only for eps >= 0 (fixed-size replace-one).
  static PrivacyLoss mixture_vs_gaussian_symmetrised(double q, double s, double shift,
                                                     const PldOptions& options = {});
  /// P = (1 - q) N(0, s^2) + q N(1, s^2), Q = (1 - q) N(0, s^2) + q N(-1, s^2): Poisson
  /// subsampling, replace-one (a contribution +1 replaced by -1). Symmetric in the order.
  static PrivacyLoss mixture_vs_mixture(double q, double s, const PldOptions& options = {});

  /// The law of the sum of the losses of the pieces (count copies of each), by one FFT
  /// (products of transforms, powers by repeated squaring: counts up to 10^18).
  static PrivacyLoss compose(std::span<const std::pair<const PrivacyLoss*, std::int64_t>> pieces,
                             const PldOptions& options = {});
  PrivacyLoss compose(const PrivacyLoss& other, const PldOptions& options = {}) const;
  PrivacyLoss self_compose(std::int64_t times, const PldOptions& options = {}) const;
  /// The same law on a grid `factor` times coarser, by connect-the-dots (pessimistic).
  PrivacyLoss coarsen(std::int64_t factor) const;

  /// delta(eps) of the stored law (an upper bound on the true profile), never NaN, in
  /// [0, 1]. Minimum with the RDP route where the pieces carry Renyi curves.
  double delta(double epsilon) const;
  /// log delta(eps) (for deltas below 1e-300 through the RDP route).
  double log_delta(double epsilon) const;
  /// The smallest eps >= 0 with delta(eps) <= delta (the conservative end); +inf when no
  /// eps meets it. delta in (0, 1).
  double epsilon(double delta) const;

  double interval() const { return interval_; }
  std::int64_t offset() const { return offset_; }        ///< grid index of pmf()[0]
  const std::vector<double>& pmf() const { return pmf_; }
  double infinity_mass() const { return inf_mass_; }     ///< loss = +inf (delta gets it)
  /// The largest additive error bound included in delta() (at any eps): floating-point
  /// error bounds and FFT truncation tails. At a given eps the bound used is
  /// error_bound(eps) <= error_bound().
  double error_bound() const { return slack_ + rel_slack_; }
  double error_bound(double epsilon) const;
  /// Sum of the steps' Renyi curves (a valid RDP bound of the same pair), if known.
  double rdp(double alpha) const;

 private:
  // Renyi divergence of one piece (D_alpha(P || Q)) with its multiplicity.
  struct RdpTerm {
    std::function<double(double)> rho;
    double count;
  };
  // One pair's law as discretised (grid, offset, pmf, mass at +inf, error bound) and its
  // Renyi curve (one step).
  static PrivacyLoss from_grid(double interval, std::int64_t offset, std::vector<double> pmf,
                               double inf_mass, double slack, double rel_slack, double shift,
                               std::function<double(double)> rdp);
  friend struct Composer;  // the FFT composition (pld_compose.cpp)
  friend class Pld;
  // Both orders of the subsampled pair (mixture_vs_gaussian, gaussian_vs_mixture) from one
  // discretisation: connect-the-dots keeps each cell's P- and Q-mass, so the law of the
  // reversed pair is the same cells with the roles swapped (an atom at l of mass m becomes
  // one at -l of mass m e^{-l}).
  static std::pair<PrivacyLoss, PrivacyLoss> mixture_and_reversed(double q, double s, double shift,
                                                                  const PldOptions& options);
  double pmf_delta(double epsilon) const;
  double pmf_epsilon(double delta) const;
  double rdp_log_delta(double epsilon) const;
  void trim();

  double interval_ = 1e-3;
  std::int64_t offset_ = 0;
  std::vector<double> pmf_;
  double inf_mass_ = 0.0;
  // Error bounds of the stored profile (docs/pld.md): at every eps, |stored - ideal| <=
  // slack_ + rel_slack_ * T(eps) where T(eps) <= delta_ideal(eps - shift_ - t) / (1 - e^{-t})
  // for every t > 0 -- the floating-point errors of the discretisation are relative to the
  // law's own tail, so that T = 10^7 steps do not add up to an absolute 1e-7.
  double slack_ = 0.0;
  double rel_slack_ = 0.0;
  double shift_ = 0.0;
  std::vector<RdpTerm> rdp_;
};

// ---------------------------------------------------------------- a neighbouring relation

/// A mechanism under a neighbouring relation: both ordered pairs (D, D') and (D', D).
/// Composition keeps the orders apart: the datasets of an adjacent pair are the same at
/// every step, so T steps give either (P_1 x ... x P_T, Q_1 x ... x Q_T) or the reverse,
/// never a mix; delta(eps) is the larger of the two composed profiles and eps(delta) the
/// larger eps (dp_accounting does the same). This needs each order's pair to dominate at
/// EVERY eps (negative ones included); where that is only known for eps >= 0 (fixed-size
/// replace-one) both orders hold one law with the larger profile of the two.
/// Symmetric pairs store one law.
class Pld {
 public:
  /// The Gaussian mechanism, mu = sensitivity / std (both orders equal).
  static Pld gaussian(double mu, const PldOptions& options = {});
  /// The Laplace mechanism, r = sensitivity / scale (both orders equal).
  static Pld laplace(double r, const PldOptions& options = {});
  /// One step of the subsampled Gaussian sum (noise multiplier sigma = std / C, rate q in
  /// (0, 1]) under the scheme and relation (pairs: docs/pld.md):
  ///  poisson, remove : (1-q)N(0,s^2)+qN(1,s^2) vs N(0,s^2), both orders;
  ///  poisson, replace: (1-q)N(0,s^2)+qN(1,s^2) vs (1-q)N(0,s^2)+qN(-1,s^2) (symmetric);
  ///  fixed,   replace: (1-q)N(0,s^2)+qN(2,s^2) vs N(0,s^2), one law with the larger
  ///                    profile of the two orders at every eps (symmetrised);
  ///  fixed,   remove : N(2, s^2) vs N(0, s^2), no amplification (as div/rdp.cpp);
  ///  q = 1           : N(1 or 2, s^2) vs N(0, s^2).
  static Pld sampled_gaussian(double q, double sigma, Subsampling scheme,
                              Neighbours neighbours, const PldOptions& options = {});

  static Pld compose(std::span<const std::pair<const Pld*, std::int64_t>> pieces,
                     const PldOptions& options = {});
  Pld compose(const Pld& other, const PldOptions& options = {}) const;
  Pld self_compose(std::int64_t times, const PldOptions& options = {}) const;
  /// Composition with a mu-GDP Gaussian mechanism (privacy loss N(mu^2/2, mu^2)).
  Pld compose_gaussian(double mu, const PldOptions& options = {}) const;
  /// Both orders coarsened to a grid `factor` times coarser (connect-the-dots).
  Pld coarsen(std::int64_t factor) const;

  double delta(double epsilon) const;
  double log_delta(double epsilon) const;
  double epsilon(double delta) const;

  const PrivacyLoss& first() const { return *first_; }   ///< order (D, D')
  const PrivacyLoss& second() const { return *second_; } ///< order (D', D)
  bool symmetric() const { return first_ == second_; }

 private:
  Pld(std::shared_ptr<const PrivacyLoss> a, std::shared_ptr<const PrivacyLoss> b)
      : first_(std::move(a)), second_(std::move(b)) {}
  std::shared_ptr<const PrivacyLoss> first_, second_;
};

/// One kind of step of a sequence (a heterogeneous sequence is several): the mechanism as a
/// factory of its PLD on a given grid, and how many steps use it.
struct PldSteps {
  std::function<Pld(const PldOptions&)> mechanism;
  std::int64_t count = 1;
  /// > 0: the step is the Gaussian mechanism with sensitivity / std = `gaussian` (mu), and
  /// `mechanism` may be empty. Gaussian steps compose exactly (mu-GDP: one Gaussian of
  /// mu = sqrt(sum of count mu_t^2)) instead of by FFT.
  double gaussian = 0.0;
};

/// The composition of all the steps (in any order: composition commutes). By default on a
/// grid sized by the steps' losses (PldOptions::fixed_interval, cells); one FFT for the
/// whole sequence.
Pld compose_steps(std::span<const PldSteps> steps, const PldOptions& options = {});

}  // namespace hsdp::div
