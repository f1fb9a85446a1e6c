#include "common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace hsdp::detail {

std::variant<PsiDiameter, std::string> psi_diameter(const Run& run, std::int64_t t) {
  const double D = run.diameter;
  const double eta = run.eta.at(t);
  std::optional<PsiDiameter> best;
  auto offer = [&](double value, PsiRule rule) {
    if (!best || value < best->value) best = PsiDiameter{value, rule};
  };
  // ||Psi(w) - Psi(w')|| <= ||w - w'|| + eta ||g(w)|| + eta ||g(w')||: needs only L
  // (journal Cor. 1 proof; federated Sec. III-B "2(rho + eta L)").
  if (run.loss.lipschitz) offer(D + 2.0 * eta * *run.loss.lipschitz, PsiRule::lipschitz);
  if (run.loss.convex && run.loss.smoothness) {
    const double beta = *run.loss.smoothness;
    const double lambda = run.loss.strong_convexity;
    // Convex and beta-smooth with eta <= 2/beta: w -> w - eta grad is 1-Lipschitz
    // (journal App. H), so Psi(W) has diameter <= dia(W).
    if (eta <= 2.0 / beta) offer(D, PsiRule::smooth);
    // lambda-strongly convex, beta-smooth, eta < 2/(beta+lambda): M-Lipschitz with
    // M = sqrt(1 - 2 eta beta lambda / (beta + lambda)) (isit Lemma 4, eq. (14)).
    if (lambda > 0 && eta < 2.0 / (beta + lambda)) {
      const double m2 = 1.0 - 2.0 * eta * beta * lambda / (beta + lambda);
      offer(std::sqrt(std::max(0.0, m2)) * D, PsiRule::strongly_convex);
    }
  }
  if (best) {
    // Noise on a grid: the update's image gains one rounding to the grid (docs/security.md).
    best->value += grid_extra(run, t);
    return *best;
  }
  if (run.loss.smoothness && run.loss.convex)
    return fmt::format("eta = {} exceeds 2/beta = {} and no Lipschitz constant is given",
                       eta, 2.0 / *run.loss.smoothness);
  return fmt::format(
      "the diameter of the update's image needs the Lipschitz constant ({}) or "
      "a convex smooth loss ({}) with eta <= 2/beta",
      report_field("lipschitz"), report_field("smoothness"));
}

std::variant<PsiDiameter, std::string> max_psi_diameter(const Run& run) {
  if (run.eta.is_constant()) return psi_diameter(run, 1);
  std::optional<PsiDiameter> worst;
  for (std::int64_t t = 1; t <= run.steps; ++t) {
    auto d = psi_diameter(run, t);
    if (auto* why = std::get_if<std::string>(&d)) return fmt::format("at step {}: {}", t, *why);
    const auto& v = std::get<PsiDiameter>(d);
    if (!worst || v.value > worst->value) worst = v;
  }
  return *worst;
}

double sensitivity(const Run& run, std::int64_t t) {
  return 2.0 * run.eta.at(t) * run.loss.lipschitz.value() / static_cast<double>(run.batch_size) +
         grid_extra(run, t);
}

double grid_extra(const Run& run, std::int64_t t) {
  return run.grid ? run.grid->slack * run.noise_std.at(t) : 0.0;
}

std::optional<std::string> check_one_pass(const Run& run, bool allow_laplace) {
  if (!allow_laplace && run.noise != NoiseKind::gaussian)
    return fmt::format("needs Gaussian noise ({})", report_field("noise", "gaussian"));
  if (run.adjacency != Adjacency::replace)
    return fmt::format(
        "stated for replace-one neighbours (a record changed in place); under add/remove the {} "
        "order moves later records to other positions",
        to_string(run.sampling));
  if (!run.loss.lipschitz)
    return fmt::format("needs the Lipschitz constant L of the loss ({})", report_field("lipschitz"));
  if (!run.single_pass())
    return fmt::format(
        "each record must be used at most once (one pass over cyclic or shuffled batches): "
        "sampling = {}, steps x batch = {} x {} vs n = {}",
        to_string(run.sampling), run.steps, run.batch_size, run.n);
  if (run.steps > 1) {
    auto d = max_psi_diameter(run);
    if (auto* why = std::get_if<std::string>(&d)) return *why;
  }
  return std::nullopt;
}

std::int64_t step_of_index(const Run& run, std::int64_t index) {
  const std::int64_t step = (index - 1) / run.batch_size + 1;
  return step <= run.steps ? step : 0;
}

}  // namespace hsdp::detail
