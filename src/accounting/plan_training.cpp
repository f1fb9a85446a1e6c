// The training plan (include/hsdp/plan.hpp, docs/training.md "The plan", docs/plan.md
// "noisy-sgd"): the rule that `hsdp train --epsilon` applies to unstated fields, and the
// `hsdp plan --setting noisy-sgd` request that proposes the same run from the loss
// constants. Public quantities only (n, L, beta, epsilon, delta): no data is read.
//
// The rule is a heuristic plan, not a utility bound: mu is the GDP parameter of the target,
// T = n mu / (2 L eta) holds the released iterate's accumulated noise in the logit of a
// unit-norm record at about 1 (docs/privacy-utility.md measures it on Fashion-MNIST), and
// l = floor(sqrt(T/4)) batches per epoch keeps the price of cyclic batches (about l^2/T in
// noise variance, the shifted-interpolation bound of docs/analyses/shifted-interpolation.md)
// below 1/4. The batch policy is then chosen by the noise each needs for the target under
// every upper-bound analysis: that is what the plan optimises (less noise at the same T, b,
// eta), and it is exact, not a proxy of a bound.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "hsdp/calibrate.hpp"
#include "hsdp/divergence/pld.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/numerics/root.hpp"
#include "hsdp/plan.hpp"
#include "hsdp/random/noise_grid.hpp"

namespace hsdp {

namespace {

constexpr double kPriceFraction = 4.0;  // l^2 <= T / 4: the cyclic-batch price
constexpr double kMaxEpochs = 100.0;    // compute cap of a planned run
constexpr double kEtaFraction = 1.98;   // eta = 1.98 / beta: contractive (< 2/beta)

std::int64_t batches_per_epoch(std::int64_t T, std::int64_t n) {
  const double Td = static_cast<double>(T);
  std::int64_t l = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(std::floor(std::sqrt(Td / kPriceFraction))));
  const auto floor_cap = static_cast<std::int64_t>(std::ceil(Td / kMaxEpochs));
  l = std::clamp<std::int64_t>(std::max(l, floor_cap), 1, n);
  if (n % l == 0) return l;
  for (std::int64_t k = l - 1; k >= std::max<std::int64_t>({1, floor_cap, (l + 1) / 2}); --k)
    if (n % k == 0) return k;
  for (std::int64_t k = l + 1; k <= std::min<std::int64_t>(n, 2 * l); ++k)
    if (n % k == 0) return k;
  return l;
}

}  // namespace

double gdp_mu_for(double epsilon, double delta) {
  require_positive(opt("epsilon"), epsilon);
  require_open(opt("delta"), delta, 0.0, 1.0);
  const double log_target = std::log(delta);
  // delta(eps; mu) increases with mu: log delta(eps; mu) <= log delta holds below the
  // boundary. mu = 1e-6 meets any target here. The upper end grows until it fails the target
  // (at large eps the boundary is about sqrt(2 eps)); beyond mu = 1e150 (eps ~ 1e300) every
  // plan is the same (the rule caps T at 100 n), so a target that 1e150 still meets gets 1e150,
  // a mu that meets it (conservative).
  auto f = [&](double mu) { return div::gdp_log_delta(epsilon, mu) - log_target; };
  const double lo = 1e-6, cap = 1e150;
  if (f(lo) > 0) return lo;
  double hi = 1e3;
  while (!(f(hi) > 0)) {
    if (hi >= cap) return cap;
    hi = std::min(cap, hi * 1e3);
  }
  return num::monotone_boundary(f, lo, hi, num::Holds::below);
}

TrainingRule training_rule(std::int64_t n, double lipschitz, double eta, double epsilon, double delta,
                           std::optional<std::int64_t> batch_size, double record_norm_with_bias) {
  require_range(opt("n"), n, 1, std::int64_t{1} << 53);
  require_positive(opt("lipschitz"), lipschitz);
  require_positive(opt("eta"), eta);
  require_positive("record_norm_with_bias", record_norm_with_bias);
  TrainingRule r;
  r.mu = gdp_mu_for(epsilon, delta);
  // The released iterate's noise per coordinate, 2 L eta T / (n mu) for T full-batch steps
  // (T + l^2 for cyclic batches, about T for Poisson), times the record's norm X: sqrt(2).
  const double Td = std::round(static_cast<double>(n) * r.mu / (2 * lipschitz * eta) *
                               (std::numbers::sqrt2 / record_norm_with_bias));
  // At most kMaxEpochs epochs even of single-record batches (T <= 100 n): the compute cap
  // that step 5 keeps for l <= n needs T itself bounded (a loose target, epsilon = 1e6, would
  // otherwise plan 10^12 steps).
  r.target_steps = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(std::min({Td, 1e12, kMaxEpochs * static_cast<double>(n)})));
  if (batch_size) {
    r.batch_size = require_range(opt("batch_size"), *batch_size, 1, n);
    r.batches_per_epoch = std::max<std::int64_t>(1, n / r.batch_size);
  } else {
    r.batches_per_epoch = batches_per_epoch(r.target_steps, n);
    r.batch_size = std::max<std::int64_t>(1, n / r.batches_per_epoch);
  }
  const std::int64_t l = r.batches_per_epoch;
  r.epochs = (r.target_steps + l - 1) / l;
  // Whole epochs when the batches partition the records (the cyclic analyses' fast path).
  r.steps = (n % r.batch_size == 0 && n / r.batch_size == l) ? r.epochs * l : r.target_steps;
  return r;
}

std::vector<Sampling> batch_policy_candidates(Release release) {
  // Deterministic and shuffled orders are certified by the last-iterate analyses only; with
  // release = every, composition cannot amplify them, so Poisson alone.
  if (release == Release::every) return {Sampling::poisson};
  return {Sampling::cyclic, Sampling::shuffle, Sampling::poisson};
}

PolicyCandidate calibrate_policy(Run base, Sampling sampling, double epsilon, double delta) {
  PolicyCandidate out;
  out.sampling = sampling;
  base.sampling = sampling;
  if (sampling != Sampling::shuffle) base.drop_last = true;  // only a shuffled epoch has a partial batch
  if (sampling == Sampling::full) base.batch_size = base.n;
  base.noise_std = Schedule(1.0);  // the start of the search
  CalibrationOptions options;
  options.noise = NoiseParameter{NoiseUnit::std, Convention::journal, 1.0};
  const CalibrationResult r = calibrate(base, CalibrationParameter::noise, epsilon, delta, options);
  out.feasible = r.feasible;
  if (r.feasible) {
    out.noise_std = r.value;
    out.analysis = r.achieved_name;
    out.run = r.run;
  } else {
    out.reason = r.reason;
  }
  return out;
}

namespace detail {

// hsdp plan --setting noisy-sgd: the trainer's plan for a loss with the given L, beta (and
// strong convexity), batch policy by the least noise. Declared in plan.cpp.
Plan plan_noisy_sgd(const PlanProblem& p) {
  if (!p.lipschitz) fail(opt("lipschitz"), "(missing)", "given: the per-record gradient bound L");
  if (!p.smoothness) fail(opt("smoothness"), "(missing)", "given: beta of the per-record loss");
  const double L = require_positive(opt("lipschitz"), *p.lipschitz);
  const double beta = require_positive(opt("smoothness"), *p.smoothness);
  Plan out;
  out.setting = PlanSetting::noisy_sgd;
  out.target_epsilon = p.epsilon;
  out.target_delta = p.delta;
  out.target_adjacency = p.adjacency;
  const double eta = kEtaFraction / beta;
  const TrainingRule rule = training_rule(p.n, L, eta, p.epsilon, p.delta, p.batch_size);

  Run base;
  base.n = p.n;
  base.steps = rule.steps;
  base.batch_size = rule.batch_size;
  base.eta = Schedule(eta);
  base.loss.lipschitz = L;
  base.loss.smoothness = beta;
  base.loss.strong_convexity = p.strong_convexity;
  base.loss.convex = true;
  base.diameter = p.diameter;
  base.release = Release::last;
  base.adjacency = p.adjacency;
  if (p.dimension) {
    base.dimension = require_range(opt("dimension"), *p.dimension, 1, std::int64_t{1} << 53);
    // The run `hsdp train` performs draws its noise on a grid (docs/security.md): with the
    // model's number of parameters known, every candidate is calibrated and accounted with the
    // trainer's own grid charges, so the epsilon printed is the trained model's.
    base.grid = random::noise_grid(static_cast<std::size_t>(*base.dimension), rule.steps, NoiseKind::gaussian);
  }

  std::vector<PolicyCandidate> candidates;
  if (rule.batch_size >= p.n) {
    candidates.push_back(calibrate_policy(base, Sampling::full, p.epsilon, p.delta));
  } else {
    for (Sampling s : batch_policy_candidates(base.release))
      candidates.push_back(calibrate_policy(base, s, p.epsilon, p.delta));
  }
  const PolicyCandidate* best = nullptr;
  for (const auto& c : candidates)
    if (c.feasible && (!best || c.noise_std < best->noise_std)) best = &c;
  if (!best) {
    out.reason = fmt::format("no noise level meets the target at the plan's T = {}, b = {}: {}",
                             rule.steps, rule.batch_size, candidates.front().reason);
    return out;
  }
  out.feasible = true;
  out.run = best->run;
  out.utility_name = "noise_std";
  out.utility_citation =
      "the per-step noise std the target needs at the plan's T, b and eta (smaller is better); "
      "hsdp's training plan (docs/training.md, \"The plan\"), not a paper's bound";
  out.utility = best->noise_std;
  out.privacy_analysis = best->analysis;
  out.convention = std::string(to_string(Convention::altschuler));
  out.sigma = best->noise_std / eta;  // altschuler: s = eta sigma
  out.eta_schedule = "constant";
  out.eta = eta;
  out.choice = std::string(to_string(best->sampling));
  out.paper_privacy = find_analysis(best->analysis)->evaluate(out.run, Query::at_delta(p.delta));
  out.report = account(out.run, Query::at_delta(p.delta));
  out.details = {{"mu", rule.mu},
                 {"rule_steps", static_cast<double>(rule.target_steps)},
                 {"batches_per_epoch", static_cast<double>(rule.batches_per_epoch)},
                 {"epochs", static_cast<double>(rule.epochs)}};
  for (const auto& c : candidates)
    if (c.feasible) out.details.push_back({fmt::format("noise_std_{}", to_string(c.sampling)), c.noise_std});
  out.notes.push_back(fmt::format(
      "T = round(n mu / (2 L eta)) = {} with mu = {:.4g} (the GDP parameter of the target) and eta "
      "= 1.98/beta; {} batches per epoch (l^2 <= T/4, at most 100 epochs); the batch policy "
      "needing the least noise is proposed",
      rule.target_steps, rule.mu, rule.batches_per_epoch));
  out.notes.push_back(
      "`hsdp train --epsilon` applies the same plan to the fields a command leaves unstated");
  if (!base.grid)
    out.notes.push_back(fmt::format(
        "accounted with continuous noise: a model trained by hsdp draws its noise on a grid and is accounted "
        "with the grid's cost (docs/security.md; typically within 1e-5 relative for the analyses hsdp derives "
        "on the grid): give {} (the model's number of parameters) to plan with it",
        report_field("dimension")));
  return out;
}

}  // namespace detail

}  // namespace hsdp
