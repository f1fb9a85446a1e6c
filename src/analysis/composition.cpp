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
// Sampling and adjacency (docs/analyses/composition.md; what a neighbour changes in each
// order: docs/analyses/neighbours.md, src/analysis/neighbours.hpp):
//   poisson : q = b/n, Mironov-Talwar-Zhang 2019 (add/remove, exact), replace via a valid
//             upper bound (div/rdp.cpp);
//   fixed   : q = b/n, Wang-Balle-Kasiviswanathan 2019 Thm 9 (replace-one); add/remove by the
//             swap coupling: the Poisson add/remove pair with sensitivity 2 (z/2), b <= n - 1;
//   full    : the Gaussian mechanism of sensitivity 2C/n (the mean over n or n +- 1 records,
//             both adjacencies);
//   shuffle : at most once per epoch (k = ceil(T/l) epochs), a full batch 2C/b, the kept
//             partial batch 2C/r; add/remove when both neighbours cut an epoch alike (the
//             coupling), plus the partial batch's change every epoch when it is kept;
//   cyclic  : replace-one: the ceil(T b / n) steps that read a record; add/remove refused.
//   An order known to the adversary (Run::order_known): Poisson and fixed-size batches
//   without amplification, the Gaussian at every step.
// Mixtures over the data-independent batch randomness have the same weights for both
// neighbours, so a bound that holds for each fixed draw holds for the run (joint convexity
// of E_gamma; quasi-convexity of D_alpha).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "hsdp/analysis/rdp_analysis.hpp"
#include "hsdp/divergence/rdp.hpp"
#include "hsdp/errors.hpp"
#include "composition_params.hpp"
#include "neighbours.hpp"
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
    return add_remove_reason(run);
  }

  double rdp(const Run& run, double alpha) const override {
    return composition_rdp(params(run), alpha);
  }

  // The RDP conversions, and the total-variation route (docs/rdp.md "Order 1: KL and total
  // variation"): delta(eps) <= delta(0) = TV for every eps >= 0, so eps = 0 whenever TV <= delta.
  double log_delta(const Run& run, double epsilon) const override {
    const double via_rdp = RdpAnalysis::log_delta(run, epsilon);
    const auto tv = composition_tv_bound(params(run));
    return tv ? std::min(via_rdp, std::log(tv->tv)) : via_rdp;
  }
  double epsilon(const Run& run, double delta) const override {
    const auto tv = composition_tv_bound(params(run));
    if (tv && tv->tv <= delta) return 0.0;
    return RdpAnalysis::epsilon(run, delta);
  }

  std::vector<Detail> details(const Run& run, const Query& query) const override {
    const Params p = params(run);
    std::vector<Detail> out = composition_details(p);
    // The total-variation route, when it gives the answer: its KL bound and TV bound instead
    // of an order.
    if (const auto tv = composition_tv_bound(p)) {
      const bool wins = query.delta ? tv->tv <= *query.delta
                                    : std::log(tv->tv) <= RdpAnalysis::log_delta(run, *query.epsilon);
      if (wins) {
        out.push_back({"kl_bound", tv->kl});
        out.push_back({"tv_bound", tv->tv});
        return out;
      }
    }
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
  if (p.gaussian) return alpha * p.gaussian_mu2 / 2.0;  // the Gaussian mechanism's RDP
  double total = 0;
  for (const auto& [z, count] : p.z_counts) {
    const double v = div::sampled_gaussian_rdp(alpha, p.q, z / p.sensitivity, p.scheme, p.neighbours);
    if (std::isinf(v)) return kInf;
    total += static_cast<double>(count) * v;
  }
  return total;
}

// KL and total variation of the whole run (docs/rdp.md "Order 1: KL and total variation").
// Per step, the add/remove pair of the subsampled Gaussian is dominated (joint convexity over
// the data-independent batch of the other records; for fixed-size batches the swap coupling of
// docs/analyses/neighbours.md) by P = (1 - q) N(0, I) + q N(a e, I) against Q = N(0, I) with
// a = shift / z, shift = 1 (Poisson) or 2 (fixed-size: a swapped member); chi^2(P || Q) =
// q^2 (e^{a^2} - 1) exactly and KL(P || Q) <= log(1 + chi^2) (Jensen). KL adds up over adaptively
// composed steps (chain rule), TV <= min(sqrt(KL/2) (Pinsker), sqrt(1 - e^{-KL})
// (Bretagnolle-Huber)), TV is symmetric (both orders of the pair) and never grows under
// post-processing (the last iterate). Replace-one: D -> D minus the record -> D' (an add/remove
// pair each, q <= b/n), so TV <= 2 x the add/remove bound (triangle inequality). A Gaussian
// run (mu-GDP): TV = 2 Phi(mu/2) - 1 exactly. nullopt when a term underflows (no number
// smaller than its true value is ever used) or the bound is vacuous.
std::optional<TvBound> composition_tv_bound(const CompositionParams& p) {
  constexpr double kUp = 1 + 1e-12;  // rounding of the few operations below, upwards
  TvBound out;
  if (p.gaussian) {
    const double mu = std::sqrt(p.gaussian_mu2);
    if (!(mu > 1e-150) || !std::isfinite(mu)) return std::nullopt;
    out.kl = p.gaussian_mu2 / 2 * kUp;
    out.tv = std::erf(mu / (2 * std::sqrt(2.0))) * kUp;
  } else {
    const bool fixed = p.scheme == div::Subsampling::fixed;
    const double shift = fixed ? 2.0 : p.sensitivity;
    double kl = 0.0;
    for (const auto& [z, count] : p.z_counts) {
      const double a = shift / z;
      const double chi2 = p.q * p.q * std::expm1(a * a);
      if (!(chi2 >= 1e-290)) return std::nullopt;  // underflow: no bound below the truth
      kl += static_cast<double>(count) * std::log1p(chi2) * kUp;
    }
    kl *= kUp;
    if (!std::isfinite(kl)) return std::nullopt;
    out.kl = kl;
    const double tv = std::min(std::sqrt(kl / 2), std::sqrt(-std::expm1(-kl))) * kUp;
    out.tv = p.neighbours == div::Neighbours::replace ? 2 * tv * kUp : tv;
  }
  if (!(out.tv < 1.0)) return std::nullopt;
  return out;
}

std::vector<Detail> composition_details(const CompositionParams& p) {
  std::vector<Detail> out{{"q", p.q}};
  if (p.z_counts.size() == 1) out.push_back({"noise_multiplier", p.z_counts.begin()->first});
  else out.push_back({"noise_multiplier_min", p.z_counts.begin()->first});
  if (p.gaussian) out.push_back({"mu", round_up(std::sqrt(p.gaussian_mu2))});
  if (p.sensitivity != 1.0) out.push_back({"sensitivity", p.sensitivity});
  return out;
}

namespace {

// A Gaussian run's charges: `count` steps whose batch-mean gradients differ by at most
// `sensitivity` (in units of C/b) between the neighbours.
struct Charge {
  double sensitivity;
  std::int64_t count;
};

// mu^2 = sum over the charges of count (sensitivity / z)^2, the largest sensitivities on the
// smallest noise multipliers, at most T steps in all (a superset of any record's steps in
// the worst case; capping at T keeps the largest charges).
double gaussian_mu2(std::vector<Charge> charges, const std::map<double, std::int64_t>& z_counts) {
  std::sort(charges.begin(), charges.end(),
            [](const Charge& a, const Charge& b) { return a.sensitivity > b.sensitivity; });
  auto z = z_counts.begin();
  std::int64_t left = z == z_counts.end() ? 0 : z->second;
  double mu2 = 0.0;
  for (const auto& c : charges) {
    std::int64_t need = c.count;
    while (need > 0 && z != z_counts.end()) {
      const std::int64_t take = std::min(need, left);
      mu2 += static_cast<double>(take) * (c.sensitivity / z->first) * (c.sensitivity / z->first);
      need -= take;
      left -= take;
      if (left == 0 && ++z != z_counts.end()) left = z->second;
    }
  }
  return mu2;
}

}  // namespace

CompositionParams composition_params(const Run& run) {
  CompositionParams p;
  p.clip = run.clip ? *run.clip : *run.loss.lipschitz;
  const bool remove = run.adjacency == Adjacency::remove;
  p.neighbours = remove ? div::Neighbours::remove : div::Neighbours::replace;
  const double b = static_cast<double>(run.batch_size), n = static_cast<double>(run.n);
  // Noise on a grid (docs/security.md): a reading step's sensitivity grows by one rounding,
  // at most grid->slack s_t in parameter space, i.e. C grows by grid->slack s_t b / eta_t.
  auto z_at = [&](std::int64_t t) {
    const double s = run.noise_std.at(t);
    const double extra = run.grid ? run.grid->slack * s * b : 0.0;
    const double z = s * b / (run.eta.at(t) * p.clip + extra);
    // A noise so large that z overflows: rounding z up to inf would report mu = 0, below the
    // run's (tiny but positive) loss; no number (Analysis::evaluate: "not applicable").
    if (!std::isfinite(z))
      fail("noise_multiplier", z, "finite: noise std x batch / (eta x clip) overflows a double");
    return z;
  };
  if (run.eta.is_constant() && run.noise_std.is_constant()) {
    p.z_counts[z_at(1)] = run.steps;
  } else {
    for (std::int64_t t = 1; t <= run.steps; ++t) ++p.z_counts[z_at(t)];
  }
  // Subsampled steps: a hidden Poisson or fixed-size draw with b < n.
  const bool sampled = (run.sampling == Sampling::poisson || run.sampling == Sampling::fixed) &&
                       !run.order_known && run.batch_size < run.n;
  if (sampled && run.sampling == Sampling::poisson) {
    p.q = b / n;
    p.scheme = div::Subsampling::poisson;
    return p;
  }
  if (sampled && !remove) {
    p.q = b / n;
    p.scheme = div::Subsampling::fixed;
    return p;
  }
  if (sampled) {
    // Fixed-size batches, add/remove: the larger data set's batch is the smaller's with, with
    // probability q = b/(its size) <= b/n, one member swapped for the extra record
    // (docs/analyses/neighbours.md). Each step is then the add/remove pair of the Poisson
    // subsampled Gaussian with sensitivity 2C: the noise multiplier z/2.
    p.q = b / n;
    p.scheme = div::Subsampling::poisson;
    p.sensitivity = 2.0;
    return p;
  }
  // The Gaussian mechanism at the steps that can read a record (docs/analyses/composition.md).
  p.q = 1.0;
  p.gaussian = true;
  std::vector<Charge> charges;
  switch (run.sampling) {
    case Sampling::full:
      // Mean over the data set: 2C/n for a replaced record and for one added or removed (the
      // mean over n +- 1 records moves by at most 2C/(larger size)): 2 in units of C/b.
      charges.push_back({2.0, run.steps});
      break;
    case Sampling::poisson:
    case Sampling::fixed:
      // q = 1, or an order known to the adversary: the record may be in every batch. The
      // Poisson sum is divided by the fixed b (add/remove: C/b); fixed-size batches swap a
      // member (2C/b).
      charges.push_back({run.sampling == Sampling::poisson && remove ? 1.0 : 2.0, run.steps});
      break;
    case Sampling::cyclic: {
      // Replace-one (add/remove is refused by check()): the record at position p (0-based) is
      // in the batch of ceil((T b - p)/n) <= ceil(T b / n) steps.
      const double tb = static_cast<double>(run.steps) * b;
      charges.push_back({2.0, std::min<std::int64_t>(
                                  run.steps, static_cast<std::int64_t>(std::ceil(tb / n)))});
      break;
    }
    case Sampling::shuffle: {
      // At most once per epoch (l steps): ceil(T / l) epochs; per epoch the worst class of the
      // record's position (neighbours.hpp): a full batch (2), the partial batch (2b/r), and
      // under add/remove with the partial batch kept also the last batch's change (2b/r).
      const ShuffledEpoch e = shuffled_epoch(run);
      const std::int64_t epochs = run.steps / e.l + (run.steps % e.l != 0 ? 1 : 0);
      charges.push_back({b * std::max(e.full, e.partial), epochs});
      if (e.every_last > 0) charges.push_back({b * e.full, epochs});
      break;
    }
  }
  p.gaussian_mu2 = gaussian_mu2(std::move(charges), p.z_counts);
  return p;
}

AnalysisPtr make_composition_rdp() { return std::make_shared<CompositionRdp>(); }

}  // namespace hsdp::detail
