// What drawing the trainer's noise on a grid costs the analyses (run.hpp NoiseGrid,
// docs/security.md). It lives with the samplers (its constants are theirs), so that the
// accounting layer can charge a planned run without depending on the trainer: the one formula `hsdp train` charges its runs with, which the training
// plan (`hsdp plan --setting noisy-sgd`, plan_training.cpp) and the Python module
// (hsdp.grid_charges) reuse, so that a planned run is accounted as the trained model is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "hsdp/run.hpp"

namespace hsdp::random {

/// The noise grid of a run adding `kind` noise to `parameters` coordinates at each of `steps`
/// steps (docs/security.md): each step's map gains at most two roundings,
/// 2 lambda sqrt(P) <= 2 2^-32 sqrt(P) s_t (slack), and every draw's law is within e^(+-eta)
/// of the rounded continuous law outside probability beta (epsilon = 2 eta per draw, log_beta
/// = log(draws) + log beta of one draw; Laplace: beta = 0). `federated_users` is m, the users
/// per round of a federated run (docs/security.md, "Federated runs on the grid"): Gaussian
/// users' draws sum to one discrete Gaussian per coordinate and round, with at most m + 2
/// roundings of size lambda sqrt(P) / 2 in message units per step, i.e. a slack of
/// (m + 2) / sqrt(m) 2^-32 sqrt(P); with Laplace noise no law of the sum is derived
/// (log_beta = 0 and `reason` says so).
NoiseGrid noise_grid(std::size_t parameters, std::int64_t steps, NoiseKind kind,
                     std::optional<std::int64_t> federated_users = std::nullopt);

}  // namespace hsdp::random
