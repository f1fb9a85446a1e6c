// The trainer's plan (include/hsdp/train/planner.hpp, docs/training.md "The plan").
// Public quantities only: n, d, the model's loss constants, epsilon, delta. The batch
// policies are compared by calibrating each for the target (the library's calibrate, every
// upper-bound analysis): the comparison reads no data, so it costs no privacy.
#include "hsdp/train/planner.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "hsdp/errors.hpp"
#include "hsdp/plan.hpp"

namespace hsdp::train {

namespace {

constexpr double kEtaFraction = 1.98;     // eta = 1.98 / beta: contractive (< 2/beta)
constexpr double kPlannedRadius = 100.0;  // a ball that does not bind (Lipschitz losses)
// The bias feature weighs 1/R of a record at the bound (docs/training.md "Defaults on small
// data": 1/2 beat 1 and 1/3 on heart_scale, breast_cancer, wine and digits at eps = 1).
constexpr double kPlannedRecordNorm = 2.0;

// Whether a plan applies to `config` at all (a target, an algorithm with a plan).
bool planned(const TrainConfig& config) {
  return config.target_epsilon &&
         (config.algorithm == Algorithm::noisy_sgd || config.algorithm == Algorithm::noisy_gd);
}

}  // namespace

std::optional<double> planned_record_norm(const TrainConfig& config) {
  if (!planned(config) || !config.unstated.record_norm || !config.bias || config.loss.kind == LossKind::squared)
    return std::nullopt;
  return kPlannedRecordNorm;
}

std::optional<TrainingPlan> plan_training(const TrainConfig& config, std::int64_t n,
                                          std::size_t d, std::size_t outputs) {
  if (!planned(config)) return std::nullopt;
  const TrainConfig::Unstated& u = config.unstated;
  const bool sgd = config.algorithm == Algorithm::noisy_sgd;
  // The record norm was planned when the records were prepared with the planned bound (a
  // caller that prepared them otherwise keeps its own).
  const bool record_norm = planned_record_norm(config) == config.record_norm;
  if (!(u.length || u.eta || u.radius || record_norm || (sgd && (u.batch_size || u.sampling)))) return std::nullopt;
  const double epsilon = require_positive(opt("epsilon"), *config.target_epsilon);
  const double delta = require_open(opt("delta"), config.delta, 0.0, 1.0);

  TrainingPlan p;
  p.config = config;
  TrainConfig& k = p.config;
  if (record_norm) p.chosen.emplace_back("record_norm");
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
  const TrainingRule rule = training_rule(
      n, p.lipschitz, eta, epsilon, delta,
      sgd && !u.batch_size ? std::optional<std::int64_t>(k.batch_size) : std::nullopt, lc.record_norm);
  p.mu = rule.mu;
  p.target_steps = rule.target_steps;
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
    p.batches_per_epoch = rule.batches_per_epoch;
    if (u.batch_size) {
      k.batch_size = rule.batch_size;
      k.batch_size_is_default = false;
      p.chosen.emplace_back("batch_size");
    }
    const std::int64_t b = k.batch_size;
    if (u.length) {
      k.epochs = static_cast<double>(rule.epochs);
      k.steps = rule.steps;
      p.chosen.emplace_back("epochs");
    }
    if (u.sampling) {
      p.chosen.emplace_back("sampling");
      if (b >= n) {
        k.sampling = Sampling::full;
        batches = "b = n: full batches";
      } else {
        TrainConfig probe = k;  // the run as planned, noise stated only to describe it
        probe.target_epsilon.reset();
        probe.sigma.reset();
        probe.noise_std = 1.0;
        if (!k.drop_last) probe.sampling = Sampling::shuffle;
        const Run base = planned_run(probe, n, d, outputs);
        // A stated drop_last = false keeps a partial batch, which only the shuffled order has.
        for (Sampling s : batch_policy_candidates(k.release))
          if (k.drop_last || s == Sampling::shuffle) p.candidates.push_back(calibrate_policy(base, s, epsilon, delta));
        if (p.candidates.empty())
          fail(opt("drop_last"), "false",
               fmt::format("absent with {}: its batches are Poisson only", error_field("release", "every")));
        const PolicyCandidate* best = nullptr;
        for (const auto& c : p.candidates)
          if (c.feasible && (!best || c.noise_std < best->noise_std)) best = &c;
        k.sampling = best ? best->sampling : p.candidates.front().sampling;  // else train() explains
        std::vector<std::string> parts;
        for (const auto& c : p.candidates)
          parts.push_back(c.feasible ? fmt::format("{} needs noise std {} ({})", to_string(c.sampling),
                                                   show(c.noise_std), c.analysis)
                                     : fmt::format("{} cannot meet it", to_string(c.sampling)));
        batches = fmt::format("{}: {} chosen (least noise)", fmt::join(parts, ", "), to_string(k.sampling));
        if (k.release == Release::every)
          batches += " (release every: composition only, which cannot amplify deterministic or shuffled batches)";
      }
    }
  }

  if (p.chosen.empty()) return std::nullopt;  // every plannable field was stated (or kept)
  std::string chosen_text = fmt::format("eta = {}{}", show(eta), !u.eta ? " (stated)" : u.length ? " (1.98/beta)" : " (1/beta: the length is stated)");
  if (sgd) {
    chosen_text += fmt::format(", b = {} ({} batch{} per epoch), {} epoch{}", k.batch_size, p.batches_per_epoch,
                               p.batches_per_epoch == 1 ? "" : "es", show(k.epochs), k.epochs == 1 ? "" : "s");
    if (k.steps && *k.steps != T) chosen_text += fmt::format(" ({} steps: whole epochs)", *k.steps);
  }
  if (k.constraint.kind != ConstraintKind::none) chosen_text += fmt::format(", radius {}", show(k.constraint.radius));
  // The record norm R: planned (listed with the choices), or stated. With R = 1 and a bias
  // (X = sqrt(2)) the rule reads T = round(n mu / (2 L eta)).
  if (record_norm)
    chosen_text = fmt::format("R = {} (the bias feature weighs 1/R of a record at the bound), ", show(k.record_norm)) +
                  chosen_text;
  const bool unit = lc.record_norm == std::numbers::sqrt2;
  p.summary = fmt::format(
      "planned from public quantities (n = {}, {}L = {}, beta = {}, epsilon = {}, delta = {}; "
      "docs/training.md): mu = {:.4g}, T = round({}) = {}; {}{}{}; chose {} (stated fields kept)",
      n, unit ? "" : fmt::format("X = {} (a record at the bound with its bias feature), ", show(lc.record_norm)),
      show(p.lipschitz), show(p.smoothness), show(epsilon), show(delta), p.mu,
      unit ? "n mu / (2 L eta)" : "sqrt(2) n mu / (2 L eta X)", T, chosen_text,
      batches.empty() ? "" : "; batches: ", batches, fmt::join(p.chosen, ", "));
  return p;
}

}  // namespace hsdp::train
