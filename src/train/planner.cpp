// The trainer's plan (include/hsdp/train/planner.hpp, docs/training.md "The plan").
// Public quantities only: n, d, the model's loss constants, epsilon, delta. The batch
// policies are compared by calibrating each for the target (the library's calibrate, every
// upper-bound analysis): the comparison reads no data, so it costs no privacy.
#include "hsdp/train/planner.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "hsdp/calibrate.hpp"
#include "hsdp/divergence/pld.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/numerics/root.hpp"

namespace hsdp::train {

namespace {

constexpr double kEtaFraction = 1.98;     // eta = 1.98 / beta: contractive (< 2/beta)
constexpr double kPlannedRadius = 100.0;  // a ball that does not bind (Lipschitz losses)
constexpr double kPriceFraction = 4.0;    // l^2 <= T / 4: the cyclic-batch price
constexpr double kMaxEpochs = 100.0;      // compute cap of a planned run

/// Batches per epoch: floor(sqrt(T/4)), raised to keep the epochs <= 100, at most n; then
/// a divisor of n within a factor 2 (below first, never below the epoch cap's floor), so
/// that epochs are whole and cyclic batches partition the records.
std::int64_t batches_per_epoch(std::int64_t T, std::int64_t n) {
  const double Td = static_cast<double>(T);
  std::int64_t l = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::floor(std::sqrt(Td / kPriceFraction))));
  const auto floor_cap = static_cast<std::int64_t>(std::ceil(Td / kMaxEpochs));
  l = std::clamp<std::int64_t>(std::max(l, floor_cap), 1, n);
  if (n % l == 0) return l;
  for (std::int64_t k = l - 1; k >= std::max<std::int64_t>({1, floor_cap, (l + 1) / 2}); --k)
    if (n % k == 0) return k;
  for (std::int64_t k = l + 1; k <= std::min<std::int64_t>(n, 2 * l); ++k)
    if (n % k == 0) return k;
  return l;
}

TrainingPlan::Candidate calibrate_candidate(TrainConfig c, Sampling sampling, std::int64_t n,
                                           std::size_t d, std::size_t outputs, double epsilon) {
  TrainingPlan::Candidate out;
  out.sampling = sampling;
  c.sampling = sampling;
  c.target_epsilon.reset();
  c.sigma.reset();
  c.noise_std = 1.0;  // the start of the search; calibrated below
  const Run run = planned_run(c, n, d, outputs);
  CalibrationOptions options;
  options.noise = NoiseParameter{NoiseUnit::std, Convention::journal, 1.0};
  const CalibrationResult r =
      calibrate(run, CalibrationParameter::noise, epsilon, c.delta, options);
  out.feasible = r.feasible;
  if (r.feasible) {
    out.noise_std = r.value;
    out.analysis = r.achieved_name;
  } else {
    out.reason = r.reason;
  }
  return out;
}

}  // namespace

double gdp_mu_for(double epsilon, double delta) {
  require_positive(opt("epsilon"), epsilon);
  require_open(opt("delta"), delta, 0.0, 1.0);
  const double log_target = std::log(delta);
  // delta(eps; mu) increases with mu: the condition log delta(eps; mu) <= log delta holds
  // below the boundary. mu = 1e-6 meets any target here; mu = 1e3 none below delta = 1.
  auto f = [&](double mu) { return div::gdp_log_delta(epsilon, mu) - log_target; };
  const double lo = 1e-6, hi = 1e3;
  if (f(lo) > 0) return lo;
  return num::monotone_boundary(f, lo, hi, num::Holds::below);
}

std::optional<TrainingPlan> plan_training(const TrainConfig& config, std::int64_t n,
                                          std::size_t d, std::size_t outputs) {
  if (!config.target_epsilon) return std::nullopt;
  if (config.algorithm != Algorithm::noisy_sgd && config.algorithm != Algorithm::noisy_gd)
    return std::nullopt;
  const TrainConfig::Unstated& u = config.unstated;
  const bool sgd = config.algorithm == Algorithm::noisy_sgd;
  if (!(u.length || u.eta || u.radius || (sgd && (u.batch_size || u.sampling)))) return std::nullopt;
  const double epsilon = require_positive(opt("epsilon"), *config.target_epsilon);
  const double delta = require_open(opt("delta"), config.delta, 0.0, 1.0);

  TrainingPlan p;
  p.config = config;
  TrainConfig& k = p.config;
  if (u.radius && k.loss.kind != LossKind::squared && k.constraint.kind != ConstraintKind::none) {
    k.constraint.radius = kPlannedRadius;
    p.chosen.emplace_back("radius");
  }
  const std::size_t parameters = outputs * (d + (k.bias ? 1 : 0));
  const LossConstants lc = derive_constants(k.loss, k.record_norm, k.bias, k.constraint, parameters);
  if (!lc.lipschitz_data) return std::nullopt;  // squared loss without a bounded domain
  p.smoothness = lc.smoothness();
  p.lipschitz = *lc.lipschitz_data;
  if (k.clip) p.lipschitz = std::min(p.lipschitz, *k.clip);
  // The step size is planned with the length (T is chosen for that eta); a stated length
  // keeps the trainer's default 1/beta.
  if (u.eta && u.length) {
    k.eta = kEtaFraction / p.smoothness;
    p.chosen.emplace_back("eta");
  }
  const double eta = k.eta.value_or(1.0 / p.smoothness);  // the trainer's default when stated nowhere
  p.mu = gdp_mu_for(epsilon, delta);
  const double Td = std::round(static_cast<double>(n) * p.mu / (2 * p.lipschitz * eta));
  p.target_steps = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::min(Td, 1e12)));
  const std::int64_t T = p.target_steps;

  std::string batches;
  if (!sgd) {
    p.batches_per_epoch = 1;
    if (u.length) {
      k.epochs = static_cast<double>(T);
      k.steps.reset();
      p.chosen.emplace_back("epochs");
    }
  } else {
    std::int64_t b = k.batch_size;
    if (u.batch_size) {
      p.batches_per_epoch = batches_per_epoch(T, n);
      b = std::max<std::int64_t>(1, n / p.batches_per_epoch);
      k.batch_size = b;
      k.batch_size_is_default = false;
      p.chosen.emplace_back("batch_size");
    } else {
      p.batches_per_epoch = std::max<std::int64_t>(1, n / std::max<std::int64_t>(1, b));
    }
    const std::int64_t l = p.batches_per_epoch;
    if (u.length) {
      // Whole epochs when the batches partition the records (the cyclic analyses' fast path).
      const std::int64_t epochs = (T + l - 1) / l;
      k.epochs = static_cast<double>(epochs);
      k.steps = (n % b == 0 && n / b == l) ? epochs * l : T;
      p.chosen.emplace_back("epochs");
    }
    if (u.sampling) {
      p.chosen.emplace_back("sampling");
      if (b >= n) {
        k.sampling = Sampling::full;
        batches = "b = n: full batches";
      } else {
        std::vector<Sampling> options{Sampling::poisson};
        if (k.release != Release::every) options.insert(options.begin(), Sampling::cyclic);
        for (Sampling s : options) p.candidates.push_back(calibrate_candidate(k, s, n, d, outputs, epsilon));
        const TrainingPlan::Candidate* best = nullptr;
        for (const auto& c : p.candidates)
          if (c.feasible && (!best || c.noise_std < best->noise_std)) best = &c;
        if (best) k.sampling = best->sampling;  // else the first candidate: train() explains
        else k.sampling = p.candidates.front().sampling;
        std::vector<std::string> parts;
        for (const auto& c : p.candidates)
          parts.push_back(c.feasible ? fmt::format("{} needs noise std {} ({})", to_string(c.sampling),
                                                   show(c.noise_std), c.analysis)
                                     : fmt::format("{} cannot meet it", to_string(c.sampling)));
        batches = fmt::format("{}: {} chosen (least noise)", fmt::join(parts, ", "), to_string(k.sampling));
        if (k.release == Release::every)
          batches += " (release every: composition only, which cannot amplify deterministic batches)";
      }
    }
  }

  std::string chosen_text = fmt::format("eta = {}{}", show(eta), !u.eta ? " (stated)" : u.length ? " (1.98/beta)" : " (1/beta: the length is stated)");
  if (sgd) {
    chosen_text += fmt::format(", b = {} ({} batch{} per epoch), {} epoch{}", k.batch_size, p.batches_per_epoch,
                               p.batches_per_epoch == 1 ? "" : "es", show(k.epochs), k.epochs == 1 ? "" : "s");
    if (k.steps && *k.steps != T) chosen_text += fmt::format(" ({} steps: whole epochs)", *k.steps);
  }
  if (k.constraint.kind != ConstraintKind::none) chosen_text += fmt::format(", radius {}", show(k.constraint.radius));
  p.summary = fmt::format(
      "planned from public quantities (n = {}, L = {}, beta = {}, epsilon = {}, delta = {}; "
      "docs/training.md): mu = {:.4g}, T = round(n mu / (2 L eta)) = {}; {}{}{}; chose {} "
      "(stated fields kept)",
      n, show(p.lipschitz), show(p.smoothness), show(epsilon), show(delta), p.mu, T, chosen_text,
      batches.empty() ? "" : "; batches: ", batches, fmt::join(p.chosen, ", "));
  return p;
}

}  // namespace hsdp::train
