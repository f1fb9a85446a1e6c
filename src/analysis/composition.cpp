// composition-rdp: the classical baseline that ASSUMES EVERY ITERATE IS RELEASED.
//
// Each step t releases W_t = W_{t-1} - eta_t (g_t + noise), where g_t is the average of the
// batch's per-example gradients (each of norm <= C: the clipping norm --clip, or the
// Lipschitz constant L) and the noise has std noise_std_t in parameter space. In units of
// one record's contribution to the batch SUM, the noise multiplier is
//   z_t = noise_std_t * b / (eta_t * C),
// and step t is the subsampled Gaussian mechanism with rate q and noise z_t (Abadi et al.
// 2016; Mironov 2017 Prop. 1 (adaptive composition): the RDP of the whole sequence of
// iterates is the sum of the per-step RDP, the post-processing of the last iterate
// included). The curve is converted to (eps, delta) by div::best_epsilon / best_delta.
//
// Sampling (docs/analyses/composition.md):
//   poisson : q = b/n, Mironov-Talwar-Zhang 2019 (add/remove, exact), replace via a valid
//             upper bound (div/rdp.cpp);
//   fixed   : q = b/n, Wang-Balle-Kasiviswanathan 2019 Thm 9 (replace-one); add/remove
//             without amplification (conservative);
//   full    : q = 1, the Gaussian mechanism (sensitivity 1 for add/remove, 2 for replace);
//   shuffle, cyclic : treated as q = 1 at every step (conservative: every step is at most
//             the non-subsampled Gaussian mechanism whatever the batching, by joint
//             convexity; no amplification by shuffling is claimed). With replace-one
//             neighbours only the steps that can read a given record are charged: cyclic
//             ceil(T b / n); shuffle ceil(T / l), l = floor(n/b) batches per epoch, since a
//             permutation reads each record at most once per epoch. For shuffled batches
//             this holds for every fixed permutation, and the run's output pair is the
//             mixture over permutations with equal weights for both neighbours (the
//             permutation does not depend on the data): a mixture of pairs that each meet a
//             bound meets it (joint convexity of E_gamma; quasi-convexity of D_alpha).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "hsdp/analysis/rdp_analysis.hpp"
#include "hsdp/divergence/rdp.hpp"
#include "hsdp/errors.hpp"
#include "composition_params.hpp"
#include "registry.hpp"

namespace hsdp::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

using Params = CompositionParams;
Params params(const Run& run) { return composition_params(run); }

class CompositionRdp final : public RdpAnalysis {
 public:
  std::string_view name() const override { return "composition-rdp"; }
  bool charges_grid() const override { return true; }  // via sensitivity / diameter (common.hpp)
  std::string_view citation() const override {
    return "RDP composition (Mironov 2017 Prop. 1), assumes every iterate is released; "
           "subsampled Gaussian of Mironov-Talwar-Zhang 2019 / Wang-Balle-Kasiviswanathan 2019 "
           "Thm 9; converted by CKS 2020 Prop. 12 and journal (23)";
  }

  // The noise multiplier z_t = noise_std_t b / (eta_t C) is all it reads of the step size.
  bool reads_eta() const override { return false; }

  std::optional<std::string> check(const Run& run) const override {
    if (run.noise != NoiseKind::gaussian)
      return fmt::format("needs Gaussian noise ({}): the subsampled Gaussian mechanism",
                         report_field("noise", "gaussian"));
    if (!run.clip && !run.loss.lipschitz)
      return fmt::format("needs a bound on one record's gradient: {} (clipping norm) or {}",
                         report_field("clip", "C"), report_field("lipschitz", "L"));
    return std::nullopt;
  }

  double rdp(const Run& run, double alpha) const override {
    return composition_rdp(params(run), alpha);
  }

  std::vector<Detail> details(const Run& run, const Query& query) const override {
    const Params p = params(run);
    std::vector<Detail> out{{"q", p.q}};
    if (p.z_counts.size() == 1) out.push_back({"noise_multiplier", p.z_counts.begin()->first});
    else out.push_back({"noise_multiplier_min", p.z_counts.begin()->first});
    const auto c = curve(run);
    const auto r = query.delta ? div::best_epsilon(c, *query.delta)
                               : div::best_log_delta(c, *query.epsilon);
    if (!std::isnan(r.alpha)) out.push_back({"alpha", r.alpha});
    return out;
  }
};

// RdpAnalysis keeps the run by reference inside the curve; params() is recomputed per order
// (cheap next to the divergence itself for constant schedules).

}  // namespace

double composition_rdp(const CompositionParams& p, double alpha) {
  double total = 0;
  for (const auto& [z, count] : p.z_counts) {
    const double v = div::sampled_gaussian_rdp(alpha, p.q, z, p.scheme, p.neighbours);
    if (std::isinf(v)) return kInf;
    total += static_cast<double>(count) * v;
  }
  return total;
}

CompositionParams composition_params(const Run& run) {
  CompositionParams p;
  p.clip = run.clip ? *run.clip : *run.loss.lipschitz;
  p.neighbours =
      run.adjacency == Adjacency::replace ? div::Neighbours::replace : div::Neighbours::remove;
  const double b = static_cast<double>(run.batch_size), n = static_cast<double>(run.n);
  switch (run.sampling) {
    case Sampling::poisson: p.q = std::min(1.0, b / n); p.scheme = div::Subsampling::poisson; break;
    case Sampling::fixed: p.q = std::min(1.0, b / n); p.scheme = div::Subsampling::fixed; break;
    default: p.q = 1.0; p.scheme = div::Subsampling::poisson; break;
  }
  // Noise on a grid (docs/security.md): a reading step's sensitivity grows by one rounding,
  // at most grid->slack s_t in parameter space, i.e. C grows by grid->slack s_t b / eta_t.
  auto z_at = [&](std::int64_t t) {
    const double s = run.noise_std.at(t);
    const double extra = run.grid ? run.grid->slack * s * b : 0.0;
    return s * b / (run.eta.at(t) * p.clip + extra);
  };
  if (run.eta.is_constant() && run.noise_std.is_constant()) {
    p.z_counts[z_at(1)] = run.steps;
  } else {
    for (std::int64_t t = 1; t <= run.steps; ++t) ++p.z_counts[z_at(t)];
  }
  if ((run.sampling == Sampling::cyclic || run.sampling == Sampling::shuffle) &&
      run.adjacency == Adjacency::replace) {
    // Cyclic batches over a fixed order, replace-one: positions do not move, and the record
    // at position p (0-based) is in the batch of exactly ceil((T b - p)/n) steps, at most
    // k = ceil(T b / n). Shuffled batches: at most once per epoch of l = floor(n/b) steps,
    // k = ceil(T / l). The other steps do not read it, so (every iterate released,
    // adaptive composition) they add no privacy loss. Charge the k steps with the smallest
    // noise multiplier (a superset of any record's steps in the worst case). Under
    // add/remove the positions shift, so no such count is used there.
    std::int64_t k = run.steps;
    if (run.sampling == Sampling::cyclic) {
      const double tb = static_cast<double>(run.steps) * static_cast<double>(run.batch_size);
      k = std::min<std::int64_t>(run.steps, static_cast<std::int64_t>(std::ceil(tb / static_cast<double>(run.n))));
    } else {
      const std::int64_t l = std::max<std::int64_t>(1, run.n / run.batch_size);
      k = run.steps / l + (run.steps % l != 0 ? 1 : 0);
    }
    std::map<double, std::int64_t> kept;
    for (const auto& [z, count] : p.z_counts) {
      if (k <= 0) break;
      kept[z] = std::min(count, k);
      k -= kept[z];
    }
    p.z_counts = std::move(kept);
  }
  return p;
}

AnalysisPtr make_composition_rdp() { return std::make_shared<CompositionRdp>(); }

}  // namespace hsdp::detail
