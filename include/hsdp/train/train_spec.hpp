// How a user states a training run (the request of `hsdp train`, `hsdp audit mia`,
// hsdp.train and hsdp.audit_mia), and its resolution into the trainer's configuration with
// the trainer's defaults: one translation, so the front ends cannot drift apart. The fields
// are one table (TrainSpec::fields()): the CLI registers a flag per field from it, and the
// Python docstrings list the keywords from it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "hsdp/train/trainer.hpp"

namespace hsdp::train {

struct TrainSpec;

/// One field of a TrainSpec: its library name (the CLI flag is `--` with '-' for '_'; the
/// Python keyword is the name, except no_bias, stated in Python as bias=True|False), what it
/// means, what it allows, and the member of TrainSpec that holds it (exactly one of the
/// member pointers is set, by the member's type). Its default is the value of a
/// default-constructed TrainSpec (default_text()); an optional member has none: the trainer
/// picks it, as the help says.
struct TrainField {
  enum class Type { switch_, integer, real, word };
  /// What resolve() requires of a real value (checked from this table).
  enum class Range { any, positive, nonnegative };
  std::string_view name;
  std::string_view help;
  Type type = Type::real;
  Range range = Range::any;
  std::string_view choices = {};  ///< a word: the names resolve() accepts, '|'-separated
  bool required = false;     ///< must be stated (no default)
  bool TrainSpec::*flag = nullptr;
  double TrainSpec::*real = nullptr;
  std::string TrainSpec::*word = nullptr;
  std::optional<double> TrainSpec::*optional_real = nullptr;
  std::optional<std::int64_t> TrainSpec::*optional_integer = nullptr;
  std::optional<std::string> TrainSpec::*optional_word = nullptr;

  bool is_switch() const { return type == Type::switch_; }
  /// Whether a default-constructed TrainSpec holds a value for it (not required, not optional).
  bool has_default() const { return !required && (flag || real || word); }
  /// That value as text: a number in its shortest round-trip form, a word, "false" for a
  /// switch; empty when !has_default().
  std::string default_text() const;
  /// The allowed values as text: "> 0", ">= 0", "logistic | squared | huber | softmax";
  /// empty when any value of the type is accepted here.
  std::string allowed() const;
};

struct TrainSpec {
  std::string model;  ///< logistic | squared | huber | softmax
  double l2 = 0, huber_smoothing = 0.5, label_bound = 1;
  /// Default 1; with a target epsilon the plan may choose it (docs/training.md).
  std::optional<double> record_norm;
  /// Default 10; with a target epsilon the plan may choose it (docs/training.md).
  std::optional<double> radius;
  bool no_bias = false;
  std::string constraint = "ball", algorithm = "noisy-sgd", noise = "gaussian";
  std::optional<std::string> sampling, release, eta_schedule;
  /// "true" | "false": shuffled batches drop (default) or keep the partial last batch; the
  /// batch order is public (default: true for a seeded run).
  std::optional<std::string> drop_last, order_known;
  /// "replace" | "remove": the neighbouring relation of the target and of the report's main
  /// numbers (default replace; the report shows add/remove-one beside replace-one).
  std::optional<std::string> adjacency;
  std::optional<std::int64_t> batch_size, steps;
  std::optional<double> epochs, eta, sigma, noise_std, clip;

  /// The model, constraint set, algorithm, batches, step sizes and noise of the run, with
  /// the trainer's defaults (batch 1 for pnsgd/online, 10 users per round for federated, 256
  /// otherwise; 100 epochs for noisy-gd; random stop for online). The noise target (epsilon,
  /// delta, no-noise), the seed and progress are left to the caller. Throws InvalidArgument
  /// naming the field.
  TrainConfig resolve() const;

  /// Every field, in the order of the command's flags.
  static std::span<const TrainField> fields();
};

}  // namespace hsdp::train
