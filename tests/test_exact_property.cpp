// Property test: on random small runs, every last-iterate UPPER bound hsdp reports (every
// analysis of kind upper that applies, as the accountant returns them) is >= the exact privacy
// of a worst-case 1-D instance of the same run (docs/analyses/exact-property.md).
//
// The instance (include/hsdp/audit/gaussian_mixture.hpp, exact.hpp): every record's loss is
// (lambda/2) w^2 plus a linear term, zero except for the differing record.
//  - Unbounded domain: the last iterate is a Gaussian mixture, exact in closed form with a
//    proven error bound (~1e-18 relative). Pairs of the record's gradient (batch-mean term
//    +-Delta/2 or Delta vs 0, Delta = 2L/b): "opposite" (+L vs -L) and "one-sided" (2L vs 0).
//    One-sided needs a gradient of norm 2L, outside the class ||grad|| <= L, but every
//    argument that uses only the sensitivity ||g_B - g'_B|| <= Delta covers it; for Poisson
//    batches hsdp's replace-one pair is the symmetric one ((1-q)N(0)+qN(+1) vs (1-q)N(0)+qN(-1),
//    docs/pld.md), which this pair is not dominated by, so Poisson runs use the one-sided pair
//    inside the class, L vs 0.
//  - Bounded domain: the laws propagated on a grid (src/audit/exact.cpp), pairs opposite and
//    sec4; the exact value carries the grid's error (an estimate from halving h, plus proven
//    round-off bounds).
// Every run is also accounted on the trainer's noise grid (Run::grid, slack 1e-7): each upper
// bound that applies to the continuous run applies there too (pabi-feldman excepted, with its
// reason), is >= the continuous bound, within 1% of it (langevin: unless its continuous value
// came from the LSI bounds, not derived on the grid), and >= exact - error.
// Assertion: bound >= exact - error. The bounds are rounded up (relative 1e-9, then 10
// significant digits) and the exact values are rounded to nearest with their error bound, so
// no other tolerance is needed; a bound below exact - error is a violation of the analysis (or
// of the audit), reported with the run.
// The strongly convex full-batch shifted-interpolation bound without projection is EXACT for
// this instance (note (Q1) = the instance's mu): there bound / exact must be 1 up to the bound's
// rounding up (1e-9) and root finding (1e-12), asserted as <= 1 + 1e-8.
// The declared class's other members (docs/analyses/exact-property.md, "The class's other
// members"): when beta > lambda, every record's loss (kappa/2) w^2 plus the same linear terms is
// kappa-strongly convex (>= lambda) and kappa-smooth (<= beta) for every kappa in [lambda, beta],
// so it is in the declared class and every upper bound of the declared run must be >= its exact
// value too. Audited: kappa = beta, kappa = 1/eta when lambda < 1/eta < beta (the step
// w -> (1 - eta kappa) w erases all noise added before it), one kappa uniform in (lambda, beta)
// (unbounded runs: all three, every query and pair, up to 64 mixture atoms; bounded: 1/eta if
// inside, else beta, eps at delta = 1e-3, the opposite pair).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "hsdp/accountant.hpp"
#include "hsdp/audit/exact.hpp"
#include "hsdp/audit/gaussian_mixture.hpp"

namespace {

namespace audit = hsdp::audit;
using hsdp::Query;
using hsdp::Run;
using hsdp::Sampling;
constexpr double kInf = std::numeric_limits<double>::infinity();

// The analyses that bound only a release of every iterate (valid for the last one by
// post-processing, but not last-iterate analyses in the sense of the shuffle expectation).
bool release_every(const std::string& name) { return name.rfind("composition-", 0) == 0; }

struct Instance {
  Run run;
  std::string policy;
  bool exact_si = false;  // full batch, unbounded, the analysis' contraction factor is the instance's
};

// A random small run of the given policy. eta in [0.1, 1], L = 1, noise s = eta Delta / rho with
// rho in [0.15, 1.5]; c = 1 (lambda = 0) or c in [0.5, 0.98] with beta = lambda (the analyses'
// c equals the instance's) or beta up to 2/eta; bounded (D in [1, 6] eta Delta) or not.
Instance draw(std::mt19937_64& rng, Sampling sampling, bool bounded) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  Run r;
  r.sampling = sampling;
  r.loss.lipschitz = 1.0;
  const double eta = 0.1 + 0.9 * u(rng);
  std::int64_t n = 1, b = 1, T = 1;
  switch (sampling) {
    case Sampling::full:
      n = b = pick(1, 8);
      T = pick(1, bounded ? 12 : 30);
      break;
    case Sampling::cyclic: {
      const std::int64_t l = pick(1, 5);
      b = pick(1, 3);
      n = l * b + (u(rng) < 0.2 ? pick(1, b) : 0);  // sometimes b does not divide n
      T = u(rng) < 0.3 ? pick(1, l) : pick(1, 3 * l + 2);
      break;
    }
    case Sampling::shuffle: {
      // l <= 5 batches, at most 4 epochs: at most 6^4 sequences of positions.
      const std::int64_t l = pick(1, 5);
      b = pick(1, 3);
      n = l * b + (u(rng) < 0.4 ? pick(1, b) - 1 : 0);  // drop-last leftovers
      // Sometimes the leftovers form a partial last batch (PyTorch's drop_last=False).
      r.drop_last = n % b == 0 || u(rng) < 0.5;
      const std::int64_t epoch = r.drop_last ? l : l + 1;
      T = u(rng) < 0.3 ? pick(1, epoch) : pick(1, 4 * epoch);
      break;
    }
    case Sampling::fixed:
    case Sampling::poisson:
      n = pick(2, 10);
      b = pick(1, n - 1);
      T = pick(1, bounded ? 4 : 8);
      break;
  }
  r.n = n;
  r.batch_size = b;
  r.steps = T;
  r.eta = hsdp::Schedule(eta);
  const double delta_grad = 2.0 / static_cast<double>(b);
  const double rho = 0.15 + 1.35 * u(rng);
  r.noise_std = hsdp::Schedule(eta * delta_grad / rho);
  const bool convex_only = u(rng) < 0.4;
  double lambda = 0, beta = 0;
  if (convex_only) {
    beta = (0.2 + 1.8 * u(rng)) / eta;  // eta beta in [0.2, 2]
  } else {
    const double c = 0.5 + 0.48 * u(rng);
    lambda = (1 - c) / eta;
    beta = u(rng) < 0.6 ? lambda : lambda + (2.0 / eta - 2 * lambda) * u(rng);
  }
  r.loss.strong_convexity = lambda;
  r.loss.smoothness = std::max(beta, lambda);
  r.diameter = bounded ? eta * delta_grad * (1 + 5 * u(rng)) : kInf;
  Instance in{r, std::string(hsdp::to_string(sampling)), false};
  in.exact_si = sampling == Sampling::full && !bounded && (beta == lambda || (lambda == 0 && eta * beta <= 2));
  return in;
}

struct Ratio {
  double min = kInf;
  double min_multi = kInf;  // over runs of >= 2 steps (at one step most bounds are exact)
  std::int64_t count = 0;
  std::string where;  // the query, pair and run of the smallest ratio
  std::string where_multi;  // the same for runs of >= 2 steps (kappa-instances)
};

struct Summary {
  std::int64_t instances = 0, comparisons = 0;
  std::map<std::pair<std::string, std::string>, Ratio> ratios;  // (analysis, policy)
  // The class's other members (kappa-instances): comparisons, bound / exact(kappa) per (analysis,
  // policy), and per policy the largest exact(kappa) / exact(lambda) (epsilon at delta, same pair).
  std::int64_t kappa_instances = 0, kappa_comparisons = 0, kappa_skipped = 0;
  std::map<std::pair<std::string, std::string>, Ratio> kappa_ratios;
  std::map<std::string, std::pair<double, std::string>> kappa_gain;
  std::vector<std::string> violations;
  std::vector<std::string> si_not_exact;
  double si_full_worst = 1.0;  // largest bound/exact of the exact full-batch case
  // The same runs on the trainer's noise grid (docs/security.md): per analysis the largest
  // bound(grid) / bound(continuous), and the number of comparisons.
  std::map<std::string, std::pair<double, std::int64_t>> grid_ratio;
};

// The trainer's grid at a slack of 1e-7 (2^-31 sqrt(P) for P ~ 2e5 parameters) and its charges.
constexpr double kGridSlack = 1e-7;
Run gridded(Run r) {
  r.grid = hsdp::NoiseGrid{kGridSlack, 1e-10, -10000.0, ""};
  return r;
}
// The analyses not derived on a grid (their reason says which step fails; docs/security.md).
bool not_derived_on_grid(const std::string& name) { return name == "pabi-feldman"; }

// The exact value of one query for one pair, as audit::ExactResult-like (value, error), of the
// lambda-instance (kappa empty) or of the kappa-instance.
struct Exact {
  double value, error;
  std::optional<double> kappa = std::nullopt;
  double lo() const { return std::isinf(error) ? 0.0 : std::max(0.0, value - error); }
};

// The kappa-instance: the same run with every record's loss (kappa/2) w^2 plus its linear term.
Run with_curvature(Run r, double kappa) {
  r.loss.strong_convexity = kappa;
  r.loss.smoothness = kappa;
  return r;
}

// The curvatures of the class's other members audited for a run with beta > lambda (none
// otherwise): beta, 1/eta when strictly inside (lambda, beta), one uniform in (lambda, beta)
// drawn from `rng` (a generator of its own, so the runs drawn stay the same). Constant eta.
std::vector<double> class_kappas(const Run& run, std::mt19937_64& rng) {
  const double lambda = run.loss.strong_convexity, beta = run.loss.smoothness.value_or(lambda);
  const double eta = run.eta.max();
  if (!(beta > lambda)) return {};
  std::vector<double> k{beta};
  if (lambda < 1.0 / eta && 1.0 / eta < beta) k.push_back(1.0 / eta);
  k.push_back(lambda + (beta - lambda) * std::uniform_real_distribution<double>(0.0, 1.0)(rng));
  return k;
}

// Every upper bound that applies to the continuous run applies to the run on the grid (or is not
// derived there and says so), is >= the continuous bound, within 1% of it, and >= the exact value.
void compare_grid(const Instance& in, const Query& query, const hsdp::Report& report,
                  const std::vector<std::pair<std::string, Exact>>& exacts, Summary& sum) {
  const auto on_grid = hsdp::account(gridded(in.run), query);
  for (std::size_t k = 0; k < report.analyses.size(); ++k) {
    const auto& c = report.analyses[k];
    const auto& g = on_grid.analyses[k];
    // Upper bounds and comparisons (ye-shokri: the grid check only, it is not a guarantee).
    if (!c.applicable || (c.kind != hsdp::BoundKind::upper && c.kind != hsdp::BoundKind::comparison)) continue;
    if (!g.applicable) {
      if (!not_derived_on_grid(g.name) || g.reason.find("grid") == std::string::npos)
        sum.violations.push_back(fmt::format("{} ({}) applies to the continuous run but not on the grid: {}: {}",
                                             g.name, in.policy, g.reason, in.run.summary()));
      continue;
    }
    const double bc = query.delta ? *c.epsilon : *c.delta, bg = query.delta ? *g.epsilon : *g.delta;
    // langevin's LSI bounds (Cor. 1, Cor. 2) are not derived on the grid (its note says why):
    // there the grid's value is Thm 1's, above the continuous Cor. 1 by more than 1%.
    const bool lsi_dropped = g.note.find("log-Sobolev") != std::string::npos && c.note.rfind("Thm 1", 0) != 0;
    // shifted-interpolation's exact value of affine steps (strong convexity = smoothness) is not
    // derived for rounded noise: there the grid's value is the lemma's bound (its note says so).
    const bool affine_dropped = g.note.find("not derived for rounded noise") != std::string::npos;
    if (!(bg >= bc) || (!lsi_dropped && !affine_dropped && !(bg <= 1.01 * bc + 1e-300)))
      sum.violations.push_back(fmt::format("{} ({}) on the grid {:.10g} vs continuous {:.10g}: {}", g.name, in.policy,
                                           bg, bc, in.run.summary()));
    for (const auto& [pair, ex] : exacts)
      if (c.kind == hsdp::BoundKind::upper && std::isfinite(ex.value) && !(bg >= ex.lo()))
        sum.violations.push_back(fmt::format("{} ({}) on the grid {:.10g} < exact {:.10g}, pair {}: {}", g.name,
                                             in.policy, bg, ex.value, pair, in.run.summary()));
    auto& r = sum.grid_ratio[g.name];
    if (bc > 0) r.first = std::max(r.first, bg / bc);
    ++r.second;
  }
}

void compare(const Instance& in, const Query& query, const std::vector<std::pair<std::string, Exact>>& exacts,
             Summary& sum) {
  const auto report = hsdp::account(in.run, query);
  compare_grid(in, query, report, exacts, sum);
  for (const auto& res : report.analyses) {
    if (!res.applicable || res.kind != hsdp::BoundKind::upper) continue;
    const double bound = query.delta ? *res.epsilon : *res.delta;
    for (const auto& [pair, ex] : exacts) {
      if (!std::isfinite(ex.value)) continue;
      ++(ex.kappa ? sum.kappa_comparisons : sum.comparisons);
      if (!(bound >= ex.lo())) {
        sum.violations.push_back(fmt::format(
            "{} ({}) = {:.10g} < exact {:.10g} - {:.3g}, pair {}, {}: {}", res.name, in.policy, bound, ex.value,
            ex.error, pair, query.delta ? fmt::format("delta = {}", *query.delta) : fmt::format("epsilon = {}", *query.epsilon),
            in.run.summary()));
      }
      if (ex.kappa) {  // another member of the class: the bound's ratio to it, nothing else
        if (!(ex.value > 0)) continue;
        auto& r = sum.kappa_ratios[{res.name, in.policy}];
        if (bound / ex.value < r.min) {
          r.min = bound / ex.value;
          r.where = fmt::format("{} {} exact {:.6g} bound {:.6g}: {}", pair,
                                query.delta ? fmt::format("delta={}", *query.delta) : fmt::format("eps={}", *query.epsilon),
                                ex.value, bound, in.run.summary());
        }
        if (in.run.steps >= 2 && bound / ex.value < r.min_multi) {
          r.min_multi = bound / ex.value;
          r.where_multi = fmt::format("{} {} exact {:.6g} bound {:.6g}: {}", pair,
                                      query.delta ? fmt::format("delta={}", *query.delta) : fmt::format("eps={}", *query.epsilon),
                                      ex.value, bound, in.run.summary());
        }
        ++r.count;
        continue;
      }
      if (ex.value > 0) {
        auto& r = sum.ratios[{res.name, in.policy}];
        if (bound / ex.value < r.min) {
          r.min = bound / ex.value;
          r.where = fmt::format("{} {} exact {:.6g} bound {:.6g}: {}", pair,
                                query.delta ? fmt::format("delta={}", *query.delta) : fmt::format("eps={}", *query.epsilon),
                                ex.value, bound, in.run.summary());
        }
        if (in.run.steps >= 2) r.min_multi = std::min(r.min_multi, bound / ex.value);
        ++r.count;
        if (in.exact_si && res.name == "shifted-interpolation") {
          const double ratio = bound / ex.value;
          sum.si_full_worst = std::max(sum.si_full_worst, ratio);
          // Equality up to the bound's rounding up (and the exact value's own tiny error).
          if (ratio > 1 + 1e-8 + ex.error / ex.value)
            sum.si_not_exact.push_back(fmt::format("ratio {:.12g}, pair {}: {}", ratio, pair, in.run.summary()));
        }
      }
    }
  }
}

// The queries: delta at two epsilons, epsilon at two deltas.
const std::vector<Query>& queries() {
  static const std::vector<Query> q{Query::at_epsilon(0.5), Query::at_epsilon(2.0), Query::at_delta(1e-3),
                                    Query::at_delta(1e-6)};
  return q;
}

void check_unbounded(const Instance& in, Summary& sum, std::mt19937_64& kappa_rng) {
  // Poisson: the one-sided pair inside the class (L vs 0); otherwise 2L vs 0 (file comment).
  const double one_sided = in.run.sampling == Sampling::poisson ? 1.0 : 2.0;
  using Laws = std::pair<audit::GaussianMixture, audit::GaussianMixture>;
  struct Member {
    std::optional<double> kappa;
    Laws op, os;
  };
  std::vector<Member> members;
  auto add = [&](const Run& run, std::optional<double> kappa) {
    const auto law = audit::read_law(run);
    // Cost: a member's mixture has up to 2^T atoms on random batches, where the lambda-instance
    // of a convex run has T + 1; with 1 - eta kappa < 0 its E_gamma costs ~4x per step (2^T
    // interleaved atoms: 4 s at T = 8). Members are audited up to 64 atoms (16 when 1 - eta kappa < 0).
    if (kappa && law.atoms.size() > (1 - run.eta.max() * *kappa < 0 ? 16u : 64u)) {
      ++sum.kappa_skipped;
      return;
    }
    members.push_back({kappa, audit::quadratic_laws(run, law, 1.0, -1.0),
                       audit::quadratic_laws(run, law, one_sided, 0.0)});
    if (kappa) ++sum.kappa_instances;
  };
  add(in.run, std::nullopt);
  for (const double kappa : class_kappas(in.run, kappa_rng)) add(with_curvature(in.run, kappa), kappa);
  for (const auto& q : queries()) {
    std::vector<std::pair<std::string, Exact>> ex;
    for (const auto& m : members)
      for (const auto& [name, laws] : {std::pair{"opposite", &m.op}, std::pair{"one-sided", &m.os}}) {
        const auto& [p, qq] = *laws;
        const auto c = q.delta ? audit::mixture_epsilon(p, qq, *q.delta) : audit::mixture_delta(p, qq, *q.epsilon);
        ex.emplace_back(m.kappa ? fmt::format("{}, kappa = {:.6g}", name, *m.kappa) : std::string(name),
                        Exact{c.value, c.error, m.kappa});
        // How much worse the class's worst audited member is than the lambda-instance.
        if (m.kappa && q.delta && ex.front().second.value > 1e-3 && ex.size() % 2 == 1) {
          auto& g = sum.kappa_gain[in.policy];
          const double ratio = c.value / ex.front().second.value;
          if (ratio > g.first)
            g = {ratio, fmt::format("delta={} exact(lambda) {:.6g} exact(kappa = {:.6g}) {:.6g}: {}", *q.delta,
                                    ex.front().second.value, *m.kappa, c.value, in.run.summary())};
        }
      }
    compare(in, q, ex, sum);
  }
}

void check_bounded(const Instance& in, Summary& sum, std::int64_t grid) {
  // One other member of the class when beta > lambda: kappa = 1/eta if inside, else beta.
  std::optional<double> kappa;
  const double lambda = in.run.loss.strong_convexity, beta = in.run.loss.smoothness.value_or(lambda);
  const double eta = in.run.eta.max();
  if (beta > lambda) kappa = lambda < 1.0 / eta && 1.0 / eta < beta ? 1.0 / eta : beta;
  if (kappa) ++sum.kappa_instances;
  // Two of the four queries (each is a propagation on two grids per pair).
  for (const auto& q : {queries()[1], queries()[2]}) {
    std::vector<std::pair<std::string, Exact>> ex;
    for (const auto pair : {audit::Pair::opposite, audit::Pair::sec4}) {
      const auto r = audit::exact(in.run, q, {grid, pair});
      ex.emplace_back(std::string(audit::to_string(pair)), Exact{r.value(), r.error});
      // One query and pair (each member costs two dense propagations).
      if (kappa && q.delta && pair == audit::Pair::opposite) {
        const auto rk = audit::exact(with_curvature(in.run, *kappa), q, {grid, pair});
        ex.emplace_back(fmt::format("{}, kappa = {:.6g}", audit::to_string(pair), *kappa),
                        Exact{rk.value(), rk.error, kappa});
      }
    }
    compare(in, q, ex, sum);
  }
}

std::string table(const Summary& sum) {
  std::string out = fmt::format("{} random instances, {} bound-vs-exact comparisons, {} violations\n",
                                sum.instances, sum.comparisons, sum.violations.size());
  out += fmt::format("{:<24} {:<8} {:>6} {:>13} {:>13}\n", "analysis", "policy", "checks", "min ratio", "T >= 2");
  for (const auto& [key, r] : sum.ratios)
    out += fmt::format("{:<24} {:<8} {:>6} {:>13.10g} {:>13.10g}  at {}\n", key.first, key.second, r.count, r.min,
                       r.min_multi, r.where);
  out += fmt::format("shifted-interpolation, full batch, unbounded (exact): largest bound/exact - 1 = {:.3g}\n",
                     sum.si_full_worst - 1);
  out += fmt::format(
      "the class's other members: {} kappa-instances ({} skipped: > 64 atoms, or > 16 with 1 - eta kappa < 0), {} comparisons; "
      "min bound / exact(kappa)\n",
      sum.kappa_instances, sum.kappa_skipped, sum.kappa_comparisons);
  for (const auto& [key, r] : sum.kappa_ratios)
    out += fmt::format("{:<24} {:<8} {:>6} {:>13.10g} {:>13.10g}  at {}\n{:>24} T >= 2 at {}\n", key.first, key.second,
                       r.count, r.min, r.min_multi, r.where, "", r.where_multi);
  out += "largest exact(kappa) / exact(lambda), epsilon at delta, same pair (unbounded runs)\n";
  for (const auto& [policy, g] : sum.kappa_gain)
    out += fmt::format("  {:<8} {:.4g}  at {}\n", policy, g.first, g.second);
  out += fmt::format("on the noise grid (slack {}): largest bound(grid) / bound(continuous) - 1\n", kGridSlack);
  for (const auto& [name, r] : sum.grid_ratio) out += fmt::format("  {:<24} {:>6} {:.3g}\n", name, r.second, r.first - 1);
  return out;
}

TEST(ExactProperty, EveryLastIterateUpperBoundIsAtLeastTheExactValue) {
  std::mt19937_64 rng(0x5eed2024);
  std::mt19937_64 kappa_rng(0x6b617070);  // the uniform kappas: the runs drawn stay the same
  Summary sum;
  const Sampling policies[] = {Sampling::full, Sampling::cyclic, Sampling::shuffle, Sampling::fixed, Sampling::poisson};
  // Unbounded: closed form, cheap.
  for (const auto s : policies)
    for (int i = 0; i < 24; ++i) {
      check_unbounded(draw(rng, s, false), sum, kappa_rng);
      ++sum.instances;
    }
  // Bounded: the grid (both pairs, two queries each).
  const int bounded_count[] = {4, 6, 6, 2, 2};
  for (std::size_t k = 0; k < 5; ++k)
    for (int i = 0; i < bounded_count[k]; ++i) {
      check_bounded(draw(rng, policies[k], true), sum, 513);
      ++sum.instances;
    }
  std::cout << table(sum);
  for (const auto& v : sum.violations) ADD_FAILURE() << "bound below the exact value: " << v;
  for (const auto& v : sum.si_not_exact)
    ADD_FAILURE() << "shifted-interpolation, full batch, unbounded, is exact for this instance, but " << v;
  // Every policy was compared with at least one analysis.
  for (const auto s : policies) {
    bool seen = false, seen_kappa = false;
    for (const auto& [key, r] : sum.ratios) seen = seen || key.second == hsdp::to_string(s);
    for (const auto& [key, r] : sum.kappa_ratios) seen_kappa = seen_kappa || key.second == hsdp::to_string(s);
    EXPECT_TRUE(seen) << hsdp::to_string(s);
    EXPECT_TRUE(seen_kappa) << hsdp::to_string(s) << ": no kappa-instance compared";
  }
}

// ---------------------------------------------------------------------------------------------
// EXPECTED TO FAIL UNTIL shifted-interpolation COVERS --sampling shuffle (issue 21, deliverable
// 1; src/analysis/shifted_interpolation.cpp). A shuffled run over several epochs must be
// certified by at least one last-iterate analysis (not only by the release-every
// compositions). Today only composition-rdp / composition-pld apply to such runs.
// ---------------------------------------------------------------------------------------------
TEST(ExactProperty, ShuffledRunsHaveALastIterateBound_NeedsShiftedInterpolationForShuffle) {
  std::mt19937_64 rng(0x5407f1e);
  int checked = 0;
  for (int i = 0; i < 24; ++i) {
    const Instance in = draw(rng, Sampling::shuffle, i % 3 == 0);
    if (in.run.steps * in.run.batch_size <= in.run.n) continue;  // one pass: contraction covers it
    ++checked;
    const auto report = hsdp::account(in.run, Query::at_delta(1e-5));
    std::vector<std::string> last_iterate;
    for (const auto& r : report.analyses)
      if (r.applicable && r.kind == hsdp::BoundKind::upper && !release_every(r.name)) last_iterate.push_back(r.name);
    EXPECT_FALSE(last_iterate.empty())
        << "no last-iterate analysis applies to the shuffled run " << in.run.summary()
        << " (pending: shifted-interpolation for --sampling shuffle)";
  }
  EXPECT_GT(checked, 10);
}

}  // namespace
