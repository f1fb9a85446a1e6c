// The shifted-interpolation lemma for contractive noisy iterations (Bok, Su, Altschuler,
// "Shifted interpolation for differential privacy", ICML 2024), as a program over shift
// allocations, with its closed forms. docs/analyses/shifted-interpolation.md derives each
// statement below; ../shared/notes/last-iterate-fdp.md §2 is the source note.
//
// Lemma (Gaussian noise). Two runs W_{k+1} = Pi_K(phi_{k+1}(W_k) + Z_k),
// W'_{k+1} = Pi_K(phi'_{k+1}(W'_k) + Z'_k), Z_k, Z'_k ~ N(0, s^2 I), every phi_k and phi'_k
// c-Lipschitz (c <= 1), sup_w ||phi_k(w) - phi'_k(w)|| <= s_k, and ||W_tau - W'_tau|| <= b_0.
// For any a_{tau+1..t} >= 0 with gaps b_k = c b_{k-1} + s_k - a_k >= 0 and b_t = 0, the
// trade-off function of (W_t, W'_t) is at least G_mu, mu = sqrt(sum_k a_k^2) / s: each step's
// Gaussian noise "absorbs" a shift a_k of the interpolating process towards W', and the
// Gaussian shifts compose as G_{a_1/s} (x) G_{a_2/s} (x) ... = G_{sqrt(sum a_k^2)/s}.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace hsdp::div {

/// The smallest sum_k a_k^2 of the lemma over k = 1..S (S = shifts.size()), with initial gap
/// `initial_gap` (b_0 >= 0), contraction c in [0, 1] and per-step shifts s_k = shifts[k-1]
/// >= 0. Exact: in discounted units (y_k = a_k c^{S-k}, weights c^{2(S-k)}) the constraints
/// b_k >= 0 say that the cumulative removed shift stays below the cumulative shift added, and
/// the optimum is the greatest convex minorant of those cumulative points (a taut string), so
/// the energy is a sum over the minorant's edges of rise^2 / run. O(S) time. +inf when no
/// allocation exists (never: a_k = c b_{k-1} + s_k is always feasible).
double shift_energy(double c, double initial_gap, std::span<const double> shifts);

/// (Q1) every step shifts by h (full batch), b_0 = 0, t steps:
/// h^2 (1 + c)(1 - c^t) / ((1 - c)(1 + c^t)); h^2 t at c = 1.
double shift_energy_uniform(double c, double h, std::int64_t t);

/// Every step shifts by h, initial gap D, S steps (b_0 = D, constrained set of diameter D):
/// (c^S D + h (1 - c^S)/(1 - c))^2 (1 - c^2) / (1 - c^{2S}); (D + S h)^2 / S at c = 1 (Q3).
/// The unconstrained optimum of the chain is feasible here (the cumulative shift is concave
/// in the discounted weights), so this is the program's exact value.
double shift_energy_uniform_from_gap(double c, double h, double D, std::int64_t S);

/// (Q2) cyclic batches: l batches per epoch, E epochs, the record shifts by h once per epoch,
/// in the LAST batch of each epoch (the worst position), b_0 = 0:
/// h^2 [1 + c^{2l-2} (1 - c^2)(1 - q) / ((1 - c^l)^2 (1 + q))], q = c^{l(E-1)};
/// h^2 (1 + (E - 1)/l) at c = 1.
double shift_energy_cyclic_last(double c, double h, std::int64_t l, std::int64_t E);

/// Epoch-structured shifts, the worst case of cyclic and shuffled batches over the earlier
/// epochs: S = J l + r steps (J >= 0 whole epochs of l >= 1 steps, then 1 <= r <= l more),
/// initial gap b_0 >= 0, a shift of h at steps l, 2l, ..., Jl (the last step of each whole
/// epoch) and, when final_position is given (1..r), one more shift of h at step
/// J l + final_position. The value is shift_energy of that dense sequence, computed in O(1)
/// from closed-form geometric sums: the greatest convex minorant of the program's points
/// only touches the point before a shift and the last point, and the points before the
/// shifts of epochs 2..J lie on a concave chain (equal shifts whose discounted rise per
/// discounted weight falls towards the end), so only its two ends can be vertices
/// (docs/analyses/shifted-interpolation.md, "Shuffled batches"). Rounded up by 1e-12
/// relative (the long-double sums).
double shift_energy_epochs(double c, double h, std::int64_t l, std::int64_t J, std::int64_t r,
                           std::optional<std::int64_t> final_position, double initial_gap);

/// The same with a final shift of its own size `final_shift` >= 0 (the record in a partial
/// last batch, or a different batch class, in the last epoch). The vertex argument is
/// unchanged: the equal shifts of epochs 1..J still form a concave chain, and the final shift
/// is one more candidate vertex.
double shift_energy_epochs(double c, double h, std::int64_t l, std::int64_t J, std::int64_t r,
                           std::optional<std::int64_t> final_position, double final_shift,
                           double initial_gap);

/// Two chains of epochs (docs/analyses/shifted-interpolation.md, "Shuffled batches", section
/// 7: the earlier epochs averaged by type): S = (J1 + J2) l + r steps, initial gap b_0 >= 0, a
/// shift of h1 at the last step of each of the first J1 whole epochs, h2 at the last step of
/// each of the next J2, then (when final_position is given, 1..r) final_shift at step
/// (J1 + J2) l + final_position. The value is shift_energy of that dense sequence, in O(1):
/// the same vertex argument as shift_energy_epochs, per chain (each chain's points before its
/// shifts are concave, so only the chain's end points can be vertices). h1 = 0 is allowed
/// (epochs that do not read the record). Rounded up by 1e-12 relative.
double shift_energy_two_chains(double c, std::int64_t l, std::int64_t J1, double h1, std::int64_t J2,
                               double h2, std::int64_t r, std::optional<std::int64_t> final_position,
                               double final_shift, double initial_gap);

/// Affine steps (docs/analyses/shifted-interpolation.md, "Affine steps"): when every record's
/// loss is lambda-strongly convex and lambda-smooth (Hessian lambda I: a quadratic
/// (lambda/2)||w||^2 plus a linear term) and nothing projects, every step is
/// w -> (1 - eta lambda) w - (a data-dependent constant) + noise, so for a fixed order the two
/// last iterates are Gaussians with the same covariance s^2 sum_{i<S} c^{2i} I and means at
/// most sum_k c^{S-k} s_k apart (c = |1 - eta lambda|). Their trade-off is G_mu with
/// mu^2 s^2 = (sum_k c^{S-k} s_k)^2 / sum_k c^{2(S-k)}: the value returned (the lemma's
/// program without its gap constraints b_k >= 0, so never above shift_energy). Exact for
/// shifts in one direction at 1 - eta lambda >= 0. Dense form, O(S).
double shift_energy_affine(double c, std::span<const double> shifts);

/// The affine energy of the epoch structure of shift_energy_epochs (no initial gap: an
/// unbounded domain), O(1): (h c^{S - J l} sum_{e<J} c^{e l} + final_shift
/// c^{S - J l - final_position})^2 / sum_{i<S} c^{2i}. Rounded up by 1e-12 relative.
double shift_energy_epochs_affine(double c, double h, std::int64_t l, std::int64_t J, std::int64_t r,
                                  std::optional<std::int64_t> final_position, double final_shift);

/// The affine energy of the two-chain structure of shift_energy_two_chains (no initial gap),
/// O(1): (sum_k c^{S-k} s_k)^2 / sum_{i<S} c^{2i}. Rounded up by 1e-12 relative.
double shift_energy_two_chains_affine(double c, std::int64_t l, std::int64_t J1, double h1, std::int64_t J2,
                                      double h2, std::int64_t r, std::optional<std::int64_t> final_position,
                                      double final_shift);

/// The affine energy of cyclic batches at the worst position (the record read at the last
/// step S and every l steps before it: N = (S - 1)/l + 1 reads), O(1):
/// h^2 (sum_{e<N} c^{e l})^2 / sum_{i<S} c^{2i}. Rounded up by 1e-12 relative.
double shift_energy_cyclic_affine(double c, double h, std::int64_t l, std::int64_t S);

}  // namespace hsdp::div
