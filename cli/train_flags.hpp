// The training-run flags shared by `hsdp train` and `hsdp audit mia`: the fields of the
// library's training request (hsdp::train::TrainSpec) as flags.
#pragma once

#include <CLI/CLI.hpp>

#include "hsdp/train/train_spec.hpp"

namespace hsdp::cli {

using TrainFlags = train::TrainSpec;

/// Adds a flag per field of TrainSpec (TrainSpec::fields(), in its order) to a subcommand.
void add_train_flags(CLI::App& app, TrainFlags& flags);

/// The trainer's configuration the flags state (TrainSpec::resolve).
inline train::TrainConfig train_config(const TrainFlags& flags) { return flags.resolve(); }

}  // namespace hsdp::cli
