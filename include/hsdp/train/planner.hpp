// The trainer's plan (docs/training.md, "The plan"): when a run states a privacy target
// (epsilon, delta) and leaves the batch policy, batch size, length, step size or radius
// unstated, the trainer chooses them from public quantities only -- n, the model's loss
// constants (which follow from the model, the record norm and the bias), epsilon and
// delta -- never from the data, so the plan costs no privacy. Stated fields are kept.
// The record norm is planned too, but before the records are prepared (planned_record_norm).
//
// The rule (docs/privacy-utility.md measures it on Fashion-MNIST, docs/training.md
// "Defaults on small data" on six data sets):
//   R      the record-norm bound: 2 for a model with a bias (planned_record_norm), applied when
//          the records are prepared, so that the bias feature weighs half of a record;
//   mu     the Gaussian-DP parameter whose exact (eps, delta) curve meets the target;
//   eta    1.98 / beta (beta of the loss including the L2 term): the largest step that
//          keeps the update contractive (eta < 2/beta), which the last-iterate analyses need;
//          planned only with the length (T below is chosen for it), else the default 1/beta;
//   radius 100 for losses whose Lipschitz constant does not grow with the radius
//          (logistic, huber, softmax): a ball that does not bind; squared keeps 10;
//   T      round(n mu / (2 L eta R)), at least 1: the released iterate's accumulated noise
//          in the features' part of the logit of a record at the norm bound is then about 1;
//   l      batches per epoch floor(sqrt(T / 4)) (the cyclic-batch price l^2 stays below T/4),
//          raised so that an epoch count stays <= 100 (compute), then moved to a divisor of
//          n when one lies within a factor 2 below; b = n / l, epochs = ceil(T / l);
//   policy noisy-sgd: the candidates -- cyclic and shuffled batches (certified by the
//          last-iterate analyses) and Poisson batches of the same expected size (composition
//          and the subsampling analyses) -- are calibrated for the target at the same
//          (b, T, eta) and the one needing the least noise is chosen (ties: the earlier in
//          that order; with release = every, Poisson only: composition cannot amplify
//          deterministic or shuffled batches); l = 1 is a full batch.
//          noisy-gd: T full-batch steps.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hsdp/plan.hpp"
#include "hsdp/train/trainer.hpp"

namespace hsdp::train {

struct TrainingPlan {
  double mu = 0;         ///< the GDP parameter of the target (planning only, not a bound)
  double lipschitz = 0;  ///< L of the data part of the loss, as the rule reads it
  double smoothness = 0; ///< beta (including L2)
  std::int64_t target_steps = 0;        ///< the rule's T
  std::int64_t batches_per_epoch = 0;   ///< the rule's l
  /// The configuration with the planned fields filled in (stated fields unchanged).
  TrainConfig config;
  /// The fields the plan chose, by their request names (sampling, batch_size, epochs, eta,
  /// radius); the other fields were stated.
  std::vector<std::string> chosen;
  /// The batch policies compared by the noise each needs for the target at the plan's
  /// (b, T, eta) (plan.hpp calibrate_policy).
  std::vector<PolicyCandidate> candidates;
  /// One paragraph: what was chosen and why (printed by the CLI, stored in the model file).
  std::string summary;
};

/// The plan for `config` on n records of dimension d with `outputs` model outputs, or
/// nullopt when no plan applies: no target epsilon, an algorithm other than noisy-sgd and
/// noisy-gd, or every plannable field stated. Throws InvalidArgument for a bad target.
std::optional<TrainingPlan> plan_training(const TrainConfig& config, std::int64_t n,
                                          std::size_t d, std::size_t outputs);

/// The record-norm bound R the plan chooses, applied when the records are prepared (before
/// training, train/request.hpp): 2 when a plan applies (a target epsilon, noisy-sgd or
/// noisy-gd), the record norm is unstated, the model has a bias and its loss is not the
/// squared loss (whose L grows with R); nullopt otherwise. The constant bias feature then
/// weighs half of a record at the bound instead of as much: L^2 = R^2 + 1 is spent mostly on
/// the features, which carry the signal (docs/training.md, "The plan").
std::optional<double> planned_record_norm(const TrainConfig& config);

}  // namespace hsdp::train
