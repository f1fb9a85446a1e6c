// How a user states a training run (the request of `hsdp train`, `hsdp audit mia`,
// hsdp.train and hsdp.audit_mia), and its resolution into the trainer's configuration with
// the trainer's defaults: one translation, so the front ends cannot drift apart.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "hsdp/train/trainer.hpp"

namespace hsdp::train {

struct TrainSpec {
  std::string model;  ///< logistic | squared | huber | softmax
  double l2 = 0, huber_smoothing = 0.5, label_bound = 1, record_norm = 1;
  /// Default 10; with a target epsilon the plan may choose it (docs/training.md).
  std::optional<double> radius;
  bool no_bias = false;
  std::string constraint = "ball", algorithm = "noisy-sgd", noise = "gaussian";
  std::optional<std::string> sampling, release, eta_schedule;
  std::optional<std::int64_t> batch_size, steps;
  std::optional<double> epochs, eta, sigma, noise_std, clip;

  /// The model, constraint set, algorithm, batches, step sizes and noise of the run, with
  /// the trainer's defaults (batch 1 for pnsgd/online, 10 users per round for federated, 256
  /// otherwise; 100 epochs for noisy-gd; random stop for online). The noise target (epsilon,
  /// delta, no-noise), the seed and progress are left to the caller. Throws InvalidArgument
  /// naming the field.
  TrainConfig resolve() const;
};

}  // namespace hsdp::train
