// Pieces shared by the contraction analyses (journal, isit, federated): the diameter of
// the image of the update map, the sensitivity of one step, and the applicability
// checks they have in common. Implementation detail, not a public header.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "hsdp/analysis/analysis.hpp"
#include "hsdp/errors.hpp"  // report_field: the reasons name run fields
#include "hsdp/run.hpp"

namespace hsdp::detail {

/// Which property of the loss bounds dia(Psi_t(W)).
enum class PsiRule {
  lipschitz,        ///< ||Psi(w) - Psi(w')|| <= ||w - w'|| + 2 eta L  ->  D + 2 eta L
  smooth,           ///< convex, beta-smooth, eta <= 2/beta: Psi is 1-Lipschitz -> D
  strongly_convex,  ///< lambda-strongly convex, beta-smooth, eta < 2/(beta+lambda) -> M D
};

struct PsiDiameter {
  double value;  ///< dia(Psi_t(W)); +inf when W is unbounded
  PsiRule rule;
};

/// dia(Psi_t(W)) for the update Psi_t(w) = w - eta_t * (average gradient of the batch),
/// the smallest of the bounds whose assumptions hold (journal Cor. 1 and App. H; isit
/// Lemma 4 with M = sqrt(1 - 2 eta beta lambda / (beta + lambda))). Returns the reason
/// when no rule applies (neither L nor a usable beta is known).
std::variant<PsiDiameter, std::string> psi_diameter(const Run& run, std::int64_t t);

/// Largest dia(Psi_t(W)) over t = 1..steps (the D of journal Thm 5 / (18)).
std::variant<PsiDiameter, std::string> max_psi_diameter(const Run& run);

/// psi_t = sup ||Psi_f(w) - Psi_f'(w)|| for one replaced record in a batch of b:
/// 2 eta_t L / b (journal Thm 4, psi with ||grad|| <= L), plus grid_extra. Requires L.
double sensitivity(const Run& run, std::int64_t t);

/// Noise on a grid (Run::grid, docs/security.md): the extra distance the roundings can add to
/// step t's sensitivity, image diameter or shift, grid->slack * noise_std_t; 0 without a grid.
/// psi_diameter and sensitivity include it.
double grid_extra(const Run& run, std::int64_t t);

/// Common checks of the one-pass contraction analyses: Gaussian noise (unless
/// `allow_laplace`), replace adjacency, L known, every record used at most once (one pass
/// over cyclic or shuffled batches, or one full-batch step), and a usable psi diameter.
std::optional<std::string> check_one_pass(const Run& run, bool allow_laplace = false);

/// The batch (step) at which record `index` (1-based) is processed in a one-pass run
/// with batches of size b in the given order; 0 when it is never processed.
std::int64_t step_of_index(const Run& run, std::int64_t index);

// ---- Sums shared by contraction-per-index, contraction-random-stop and online-gd.
// Implemented in contraction.cpp. `step` is the step t_i at which the differing record
// is processed (1..steps); all values are logs of delta at eps = log gamma.

/// journal Thm 4 (16) / isit Thm 4: log[ theta(psi_t/s_t) prod_{j=t+1}^{T} theta(D_j/s_j) ].
double log_per_index_delta(const Run& run, double epsilon, std::int64_t step);

/// journal Thm 5 (17) at one position:
/// log[ (1/T) sum_{tau=t}^{T} theta(psi_t/s_t) prod_{j=t+1}^{tau} theta(D_j/s_j) ].
double log_random_stop_delta(const Run& run, double epsilon, std::int64_t step);

/// The maximum over steps t = 1..T of log_random_stop_delta (DP needs the worst index;
/// ERRATA 1: the journal prints "min"). Writes the maximising step to *worst_step.
double log_random_stop_delta_worst(const Run& run, double epsilon, std::int64_t* worst_step);

}  // namespace hsdp::detail
