// The training-run options shared by `hsdp train`, `hsdp audit mia` and the Python module's
// hsdp.train: one translation of the flags into a train::TrainConfig, so the three cannot
// drift apart (defaults, checks and messages are the command's).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "hsdp/train/trainer.hpp"

namespace hsdp::cli {

struct TrainFlags {
  std::string model;
  double l2 = 0, huber_smoothing = 0.5, label_bound = 1, record_norm = 1, radius = 10;
  bool no_bias = false;
  std::string constraint = "ball", algorithm = "noisy-sgd", noise = "gaussian";
  std::optional<std::string> sampling, release, eta_schedule;
  std::optional<std::int64_t> batch_size, steps;
  std::optional<double> epochs, eta, sigma, noise_std, clip;
};

/// Adds the flags of TrainFlags (--model, --l2, ..., --release, --clip) to a subcommand.
void add_train_flags(CLI::App& app, TrainFlags& flags);

/// The model, constraint set, algorithm, batches, step sizes and noise of the run, with the
/// trainer's defaults (batch 1 for pnsgd/online, 10 users per round for federated, 256
/// otherwise; 100 epochs for noisy-gd; random stop for online). The noise target (epsilon,
/// delta, no-noise), the seed and progress are left to the caller. Throws InvalidArgument
/// naming the flag.
train::TrainConfig train_config(const TrainFlags& flags);

}  // namespace hsdp::cli
