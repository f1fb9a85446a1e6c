// Privacy loss distributions: see include/hsdp/divergence/pld.hpp and docs/pld.md.
//
// The parts (grid, composition, profile) and the error accounting: pld_internal.hpp. Here:
// the options, the neighbouring relation (Pld: both ordered pairs) and compose_steps, which
// chooses the grid of a sequence of steps.
#include "hsdp/divergence/pld.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "hsdp/errors.hpp"
#include "pld_internal.hpp"

namespace hsdp::div {

using namespace pld_detail;

// ------------------------------------------------------------------ options

void validate(const PldOptions& o, const std::function<Param(std::string_view member)>& field) {
  auto name = [&](std::string_view member) {
    return field ? field(member) : Param(fmt::format("pld.{}", member));
  };
  // A stated grid is in [1e-6, 0.5]; the spacings compose_steps chooses for itself (and
  // passes to the factories) span whatever the losses need.
  if (o.fixed_interval) require_closed(name("interval"), o.interval, 1e-6, 0.5);
  else require_closed(name("interval"), o.interval, 1e-12, 1e6);
  require_closed(name("tail_mass"), o.tail_mass, 1e-300, 1e-6);
  require_closed(name("truncation_mass"), o.truncation_mass, 1e-300, 1e-6);
  require_range(name("max_length"), o.max_length, std::int64_t{1} << 10, std::int64_t{1} << 28);
  require_range(name("refinement"), o.refinement, 0, 64);
  require_range(name("block"), o.block, 0, 1000000);
  require_closed(name("cells"), o.cells, 1.0, 1000.0);
}

// ------------------------------------------------------------------ Pld

Pld Pld::gaussian(double mu, const PldOptions& options) {
  auto p = std::make_shared<const PrivacyLoss>(PrivacyLoss::gaussian(mu, options));
  return Pld(p, p);
}

Pld Pld::laplace(double r, const PldOptions& options) {
  auto p = std::make_shared<const PrivacyLoss>(PrivacyLoss::laplace(r, options));
  return Pld(p, p);
}

Pld Pld::sampled_gaussian(double q, double sigma, Subsampling scheme, Neighbours neighbours,
                          const PldOptions& options) {
  require_closed("q", q, 0.0, 1.0);
  require_positive("sigma", sigma);
  const bool replace = neighbours == Neighbours::replace;
  if (q == 1.0 || (scheme == Subsampling::fixed && !replace)) {
    // q = 1: the Gaussian mechanism, sensitivity 1 (add/remove) or 2 (replace).
    // Fixed-size batches under add/remove: no amplification claimed, as div/rdp.cpp (the
    // coupling that replaces the added record by a uniformly chosen other one makes every
    // pair of batches differ by one replacement, and joint convexity gives the Gaussian
    // mechanism at sensitivity 2).
    const double shift = (replace || scheme == Subsampling::fixed) ? 2.0 : 1.0;
    return gaussian(shift / sigma, options);
  }
  if (scheme == Subsampling::poisson && replace) {
    // Replace-one under Poisson sampling: the replaced record keeps its inclusion coin, so
    // the sums are S + B g and S + B g' with B ~ Bernoulli(q) shared; with g = +1, g' = -1
    // (the worst case at clip norm 1) the pair is the symmetric mixture pair (the tight
    // modelling dp_accounting uses for REPLACE_ONE), not "remove then add".
    auto p = std::make_shared<const PrivacyLoss>(PrivacyLoss::mixture_vs_mixture(q, sigma, options));
    return Pld(p, p);
  }
  if (scheme == Subsampling::fixed) {
    // Fixed-size (without replacement) replace-one, q = b/n. Zhu, Dong, Wang 2022
    // ("Optimal accounting of differential privacy via characteristic function", Table 1;
    // Balle-Barthe-Gaboardi 2018 Thm 10): for sampling without replacement under
    // substitution, (A, B) = (q P + (1-q) Q, Q) dominates every ordered neighbouring pair
    // for eps >= 0 when (P, Q) dominates the base mechanism; for the noisy sum that is
    // (N(2, s^2), N(0, s^2)) (||g - g'|| <= 2 at clip norm 1) -- the pair behind the WBK
    // Thm 9 RDP bound div/rdp.cpp uses. Here the two orders are NOT the exact output pairs
    // of a fixed (D, D') (the batch without the record is not independent of whether it
    // is in), so (A, B) alone is not known to dominate at eps < 0, which composition needs;
    // by H_g(X||Y) = 1 - g + g H_{1/g}(Y||X) the reverse order (B, A) does there. One law
    // whose profile is max(delta_{A||B}, delta_{B||A}) at every eps dominates both
    // (the symmetrised trade-off function) and is composed once.
    auto p = std::make_shared<const PrivacyLoss>(
        PrivacyLoss::mixture_vs_gaussian_symmetrised(q, sigma, 2.0, options));
    return Pld(p, p);
  }
  // Poisson add/remove: ((1-q)N(0) + qN(1), N(0)) and the reverse order: for D = D' + x
  // the output pair IS (the image of) the first at every eps (Mironov-Talwar-Zhang 2019,
  // Koskela et al. 2020), for D' = D + x the second. One discretisation gives both.
  auto [first, second] = PrivacyLoss::mixture_and_reversed(q, sigma, 1.0, options);
  return Pld(std::make_shared<const PrivacyLoss>(std::move(first)),
             std::make_shared<const PrivacyLoss>(std::move(second)));
}

Pld Pld::compose(const Pld& other, const PldOptions& options) const {
  const std::pair<const Pld*, std::int64_t> pieces[] = {{this, 1}, {&other, 1}};
  return compose(pieces, options);
}

Pld Pld::self_compose(std::int64_t times, const PldOptions& options) const {
  if (times < 0) fail("steps", static_cast<double>(times), ">= 0");
  const std::pair<const Pld*, std::int64_t> pieces[] = {{this, times}};
  return compose(pieces, options);
}

Pld Pld::compose_gaussian(double mu, const PldOptions& options) const {
  if (std::isnan(mu) || mu < 0) fail("mu", mu, ">= 0");
  // On this PLD's grid, or on one 2, 4, ... times coarser (coarsen: pessimistic) when the
  // Gaussian's losses (N(mu^2/2, mu^2), about 19 mu wide) would not fit in max_length points
  // next to the stored ones.
  const double h = first_->interval();
  const double span = static_cast<double>(std::max(first_->pmf().size(), second_->pmf().size())) * h +
                      20.0 * mu + 1.0 * h;
  std::int64_t factor = 1;
  while (span / (h * static_cast<double>(factor)) > 0.5 * static_cast<double>(options.max_length) &&
         factor < (std::int64_t{1} << 20))
    factor *= 2;
  const Pld base = factor > 1 ? coarsen(factor) : *this;
  PldOptions o = options;
  o.fixed_interval = false;  // the grid of the stored law, whatever it is
  o.interval = base.first().interval();
  return base.compose(gaussian(mu, o), o);
}

Pld Pld::coarsen(std::int64_t factor) const {
  auto a = std::make_shared<const PrivacyLoss>(first_->coarsen(factor));
  if (symmetric()) return Pld(a, a);
  return Pld(a, std::make_shared<const PrivacyLoss>(second_->coarsen(factor)));
}

namespace {

// Standard deviation of the stored finite part of a law (normalised).
double loss_std(const PrivacyLoss& p) { return std::sqrt(moments(p.pmf()).var) * p.interval(); }

// The steps on a fixed grid (PldOptions::fixed_interval): each mechanism on `interval`, or
// on a grid `refinement` times finer composed in blocks and coarsened.
Pld compose_steps_fixed(std::span<const PldSteps> steps, const PldOptions& options) {
  std::vector<Pld> parts;
  std::vector<std::int64_t> counts;
  for (const auto& step : steps) {
    if (step.count < 0) fail("count", static_cast<double>(step.count), ">= 0");
    if (step.count == 0) continue;
    if (step.gaussian > 0) {  // exact: one Gaussian of mu sqrt(count)
      parts.push_back(Pld::gaussian(step.gaussian * std::sqrt(static_cast<double>(step.count)), options));
      counts.push_back(1);
      continue;
    }
    std::int64_t r = options.refinement;
    std::optional<Pld> coarse;
    if (r == 0) {
      coarse = step.mechanism(options);
      const double sd = std::min(loss_std(coarse->first()), loss_std(coarse->second()));
      r = 1;
      while (r < 64 && static_cast<double>(r) * sd < options.cells * options.interval) r *= 2;
      if (step.count == 1) r = 1;
    }
    if (r == 1) {
      parts.push_back(coarse ? *coarse : step.mechanism(options));
      counts.push_back(step.count);
      continue;
    }
    PldOptions fine = options;
    fine.interval = options.interval / static_cast<double>(r);
    if (fine.interval < 1e-7)
      fail("pld.refinement", static_cast<double>(r), "at most pld.interval / 1e-7");
    const Pld law = step.mechanism(fine);
    const std::int64_t k = std::min(options.block > 0 ? options.block : r * r, step.count);
    const std::int64_t full = step.count / k, rest = step.count % k;
    parts.push_back(law.self_compose(k, fine).coarsen(r));
    counts.push_back(full);
    if (rest > 0) {
      parts.push_back(law.self_compose(rest, fine).coarsen(r));
      counts.push_back(1);
    }
  }
  std::vector<std::pair<const Pld*, std::int64_t>> pieces;
  for (std::size_t i = 0; i < parts.size(); ++i) pieces.emplace_back(&parts[i], counts[i]);
  return Pld::compose(pieces, options);
}

// The std of one step's loss under P (the smaller of the two orders), from discretisations
// on grids coarse enough to be cheap (and without the far tails): from 0.1, each next grid
// 1/4 of the std measured on the previous one, until the grid is at most half the std
// (connect-the-dots adds about h^2/6 to the variance: removed).
double step_std(const PldSteps& step, PldOptions o) {
  double hp = 0.1;
  o.tail_mass = 1e-6;  // the std does not see the far tails; the grids stay short
  for (int round = 0; round < 24; ++round) {
    o.interval = hp;
    std::optional<Pld> law;
    try {
      law = step.mechanism(o);
    } catch (const InvalidArgument&) {  // losses too wide for this grid
      hp *= 64;
      if (hp > 1e6) throw;
      continue;
    }
    const double s = std::min(loss_std(law->first()), loss_std(law->second()));
    if (!(s > 0)) return 0.0;
    if (s >= 2 * hp) return std::sqrt(s * s - hp * hp / 6);
    hp = std::max(s / 4, 1e-12);
  }
  return hp;
}

// The Chernoff window [lo, hi] (loss units) of a sum of laws with counts, each on its own
// grid: each tail beyond it has mass <= truncation (log-mgfs of the stored laws, which bound
// the true ones from above).
std::pair<double, double> window_of(std::span<const std::pair<const PrivacyLoss*, double>> laws,
                                    double truncation) {
  double lo = 0, hi = 0, var = 0, widest = 0;
  for (const auto& [p, c] : laws) {
    lo += c * static_cast<double>(p->offset()) * p->interval();
    hi += c * static_cast<double>(p->offset() + static_cast<std::int64_t>(p->pmf().size()) - 1) * p->interval();
    var += c * moments(p->pmf()).var * p->interval() * p->interval();
    widest = std::max(widest, static_cast<double>(p->pmf().size()) * p->interval());
  }
  const double sd = std::sqrt(var), log_tol = std::log(truncation);
  if (!(sd > 0)) return {lo, hi};
  double up = hi, down = lo;
  std::vector<double> pos = chernoff_lambdas(sd, widest), neg, kp, kn, one;
  for (const double l : pos) neg.push_back(-l);
  kp.assign(pos.size(), 0.0);
  kn.assign(pos.size(), 0.0);
  for (const auto& [p, c] : laws) {
    log_mgfs(*p, pos, one);
    for (std::size_t i = 0; i < one.size(); ++i) kp[i] += c * one[i];
    log_mgfs(*p, neg, one);
    for (std::size_t i = 0; i < one.size(); ++i) kn[i] += c * one[i];
  }
  for (std::size_t i = 0; i < pos.size(); ++i) {
    if (std::isfinite(kp[i])) up = std::min(up, (kp[i] - log_tol) / pos[i]);
    if (std::isfinite(kn[i])) down = std::max(down, (log_tol - kn[i]) / pos[i]);
  }
  return {std::min(down, up), up};
}

// The automatic grid (PldOptions::fixed_interval = false): Gaussian steps composed exactly
// into one Gaussian; the other mechanisms on a spacing h = (rms over the steps of the std of
// one step's loss) / cells, the composition's connect-the-dots error then being about
// sum_t h_t^2 (lambda + 1) / 12 in eps -- relative to eps about 1/(12 cells^2) whatever T
// and q (docs/pld.md) -- coarser only when the composed window would not fit in max_length
// points. A mechanism much wider than the others (a noise schedule's low-noise steps) is
// discretised on a multiple 2^p h <= its std / cells of that grid: its steps then pay at most
// their share of sum_t std_t^2 / cells^2, so with cells sqrt(2) times larger the total stays
// within the single-grid error, and its far tails are not resolved finer than needed.
//
// Long sequences of narrow steps compose in two stages when that shortens the FFTs at least
// threefold: blocks of about T / 64 steps on a grid sqrt(1.25) times finer, each block
// coarsened by r (connect-the-dots again), then the blocks. With r^2 <= T / (4 * 64 * kinds)
// the coarse stage pays its connect-the-dots error (T / k) (r h)^2 at most a quarter of the
// fine stage's T h^2, so the total stays that of one stage at h; few blocks keep the
// floating-point error of the stored blocks (the inverse transform's, absolute) from being
// multiplied by more than ~64.
constexpr double kBlocks = 64;

Pld compose_steps_automatic(std::span<const PldSteps> steps, const PldOptions& options) {
  double mu2 = 0, weighted_var = 0, count = 0;
  std::vector<const PldSteps*> others;
  std::vector<double> sds;
  PldOptions probe = options;
  probe.fixed_interval = false;
  for (const auto& step : steps) {
    if (step.count < 0) fail("count", static_cast<double>(step.count), ">= 0");
    if (step.count == 0) continue;
    if (step.gaussian > 0) {
      if (!std::isfinite(step.gaussian)) fail("gaussian", step.gaussian, "finite");
      mu2 += static_cast<double>(step.count) * step.gaussian * step.gaussian;
      continue;
    }
    others.push_back(&step);
    sds.push_back(step_std(step, probe));
    weighted_var += static_cast<double>(step.count) * sds.back() * sds.back();
    count += static_cast<double>(step.count);
  }
  const double mu = std::sqrt(mu2);
  const bool spread = count > 0 && weighted_var > 0;
  double cells = options.cells;
  // Gaussian steps alone: one discretisation of N(mu^2/2, mu^2), no composition: 16 cells
  // times finer (eps within ~1e-6 relative) for ~20 x 16 cells knots.
  double h = spread ? std::sqrt(weighted_var / count) / cells : (mu > 0 ? mu / (16 * cells) : 1e-3);
  // Each mechanism's grid: 2^p h (p = 0 for all but the much wider ones).
  std::vector<int> p(others.size(), 0);
  auto powers = [&] {
    bool any = false;
    for (std::size_t i = 0; i < others.size(); ++i) {
      const double ratio = sds[i] / (cells * h);
      p[i] = ratio >= 2 ? std::min(20, static_cast<int>(std::floor(std::log2(ratio)))) : 0;
      any = any || p[i] > 0;
    }
    return any;
  };
  if (spread && powers()) {
    cells *= std::sqrt(2.0);
    h /= std::sqrt(2.0);
    powers();
  }
  int p_gauss = 0;  // the exact Gaussian: one step, on its own multiple of the grid
  if (mu > 0 && spread)
    p_gauss = std::clamp(static_cast<int>(std::floor(std::log2(mu / (4 * cells * h)))), 0, 20);
  h = std::clamp(h, 1e-12, 1e6);
  PldOptions o = options;
  o.fixed_interval = false;
  auto grid_of = [&](int power) {
    PldOptions g = o;
    g.interval = std::ldexp(h, power);
    return g;
  };
  // r = 1: one stage; r > 1: two stages, blocks of `block[i]` steps coarsened to r h.
  std::int64_t r = 1;
  std::vector<std::int64_t> block(others.size(), 1);
  bool decided = others.empty();
  for (int attempt = 0;; ++attempt) {
    o.interval = h;
    try {
      std::vector<Pld> laws;
      for (std::size_t i = 0; i < others.size(); ++i) laws.push_back(others[i]->mechanism(grid_of(p[i])));
      if (!decided) {
        decided = true;
        std::vector<std::pair<const PrivacyLoss*, double>> all;
        for (std::size_t i = 0; i < laws.size(); ++i)
          all.emplace_back(&laws[i].first(), static_cast<double>(others[i]->count));
        const auto [lo, hi] = window_of(all, options.truncation_mass);
        const double one_stage = (hi - lo) / h;
        const auto kinds = static_cast<double>(others.size());
        const double rr = std::sqrt(count / (4 * kBlocks * kinds));
        if (one_stage > 65536 && rr >= 4) {
          const auto r2 = static_cast<std::int64_t>(1) << static_cast<int>(std::floor(std::log2(rr)));
          std::vector<std::pair<const PrivacyLoss*, double>> blocks;
          std::vector<std::int64_t> k(others.size());
          for (std::size_t i = 0; i < others.size(); ++i) {
            k[i] = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(static_cast<double>(others[i]->count) / kBlocks)));
            blocks.emplace_back(&laws[i].first(), static_cast<double>(k[i]));
          }
          const auto [blo, bhi] = window_of(blocks, options.truncation_mass);
          const double fine = h / std::sqrt(1.25);
          if ((bhi - blo) / fine + (hi - lo) / (fine * static_cast<double>(r2)) < one_stage / 3) {
            r = r2;
            block = k;
            h = fine;
            for (auto& pi : p) pi = std::min<int>(pi, static_cast<int>(std::log2(static_cast<double>(r))));
            continue;  // the laws again, on the finer grid
          }
        }
      }
      const PldOptions coarse = grid_of(r == 1 ? 0 : static_cast<int>(std::log2(static_cast<double>(r))));
      std::vector<Pld> parts;
      std::vector<std::int64_t> counts;
      for (std::size_t i = 0; i < others.size(); ++i) {
        const std::int64_t c = others[i]->count;
        if (r == 1) {
          parts.push_back(laws[i]);
          counts.push_back(c);
          continue;
        }
        const std::int64_t factor = r >> p[i];  // from 2^p h to r h
        const PldOptions own = grid_of(p[i]);
        const std::int64_t k = std::min(block[i], c), full = c / k, rest = c % k;
        parts.push_back(k == 1 ? laws[i].coarsen(factor) : laws[i].self_compose(k, own).coarsen(factor));
        counts.push_back(full);
        if (rest > 0) {
          parts.push_back(rest == 1 ? laws[i].coarsen(factor) : laws[i].self_compose(rest, own).coarsen(factor));
          counts.push_back(1);
        }
      }
      if (mu > 0) {
        parts.push_back(Pld::gaussian(mu, r == 1 ? grid_of(p_gauss) : coarse));
        counts.push_back(1);
      }
      // The composed window must fit: estimated from the laws themselves, the spacing
      // widened at once to what fits (instead of failing in the composition).
      std::vector<std::pair<const PrivacyLoss*, double>> pieces_laws;
      for (std::size_t i = 0; i < parts.size(); ++i)
        pieces_laws.emplace_back(&parts[i].first(), static_cast<double>(counts[i]));
      const auto [lo, hi] = window_of(pieces_laws, options.truncation_mass);
      const double fits = 0.9 * static_cast<double>(options.max_length) * coarse.interval;
      if (hi - lo > fits && attempt < 8) {
        h = std::min(1e6, h * std::max(1.25, (hi - lo) / fits));
        continue;
      }
      std::vector<std::pair<const Pld*, std::int64_t>> pieces;
      for (std::size_t i = 0; i < parts.size(); ++i) pieces.emplace_back(&parts[i], counts[i]);
      return Pld::compose(pieces, coarse);
    } catch (const InvalidArgument&) {
      // A mechanism's own losses do not fit on the grid (too fine for them): coarser.
      if (attempt >= 8 || h >= 1e6) throw;
      h = std::min(1e6, 4 * h);
    }
  }
}

}  // namespace

Pld compose_steps(std::span<const PldSteps> steps, const PldOptions& options) {
  validate(options);
  // A step is an exact Gaussian (gaussian > 0) or a mechanism; a Gaussian whose mu is not a
  // positive number (mu^2 underflowed under a huge noise) is neither, and must not be called.
  for (const auto& step : steps)
    if (!step.mechanism && !(step.gaussian > 0))
      fail("gaussian", step.gaussian, "> 0: the privacy loss of a Gaussian step (sensitivity / std), or a mechanism");
  return options.fixed_interval ? compose_steps_fixed(steps, options)
                                : compose_steps_automatic(steps, options);
}

double Pld::delta(double eps) const {
  return symmetric() ? first_->delta(eps) : std::max(first_->delta(eps), second_->delta(eps));
}

double Pld::log_delta(double eps) const {
  return symmetric() ? first_->log_delta(eps)
                     : std::max(first_->log_delta(eps), second_->log_delta(eps));
}

double Pld::epsilon(double delta) const {
  return symmetric() ? first_->epsilon(delta)
                     : std::max(first_->epsilon(delta), second_->epsilon(delta));
}

}  // namespace hsdp::div
