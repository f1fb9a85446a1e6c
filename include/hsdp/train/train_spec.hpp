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

#include "hsdp/field_use.hpp"
#include "hsdp/train/trainer.hpp"

namespace hsdp::train {

struct TrainSpec;

/// One field of a TrainSpec: its library name (the CLI flag is `--` with '-' for '_'; the
/// Python keyword is the name, except no_bias, stated in Python as bias=True|False), what it
/// means, what it allows, its default, the member of TrainSpec that holds it (exactly one of
/// the member pointers is set, by the member's type) and when the resolved run reads it.
/// A member holds a value exactly when the field was stated; resolve() applies the default
/// (default_value; none: the trainer picks it, as the help says).
struct TrainField {
  enum class Type { switch_, integer, real, word };
  /// What resolve() requires of a real value (checked from this table).
  enum class Range { any, positive, nonnegative };
  std::string_view name;
  std::string_view help;
  Type type = Type::real;
  Range range = Range::any;
  std::string_view choices = {};  ///< a word: the names resolve() accepts, '|'-separated
  bool required = false;          ///< must be stated (no default)
  std::string_view default_value = {};  ///< the value of an unstated field (empty: none)
  bool TrainSpec::*flag = nullptr;
  std::optional<double> TrainSpec::*real = nullptr;
  std::optional<std::int64_t> TrainSpec::*integer = nullptr;
  std::optional<std::string> TrainSpec::*word = nullptr;
  /// When the resolved configuration does not read the field: why (the rule of field_use.hpp
  /// then refuses it if stated); nullptr: always read.
  ReadCondition<TrainConfig> unread = nullptr;

  bool is_switch() const { return type == Type::switch_; }
  /// Whether an unstated field has a default value here (not required, not left to the trainer).
  bool has_default() const { return !required && (flag || !default_value.empty()); }
  /// That value as text: a number in its shortest round-trip form, a word, "false" for a
  /// switch; empty when !has_default().
  std::string default_text() const;
  /// The allowed values as text: "> 0", ">= 0", "logistic | squared | huber | softmax";
  /// empty when any value of the type is accepted here.
  std::string allowed() const;
};

/// A training run as the user states it: every field optional ("not stated"), resolve()
/// applies the defaults of the table and checks what was given, with errors naming the field.
struct TrainSpec {
  std::optional<std::string> model;  ///< logistic | squared | huber | softmax (required)
  std::optional<double> l2, huber_smoothing, label_bound;
  /// Default 1; with a target epsilon the plan may choose it (docs/training.md).
  std::optional<double> record_norm;
  /// Default 10; with a target epsilon the plan may choose it (docs/training.md).
  std::optional<double> radius;
  bool no_bias = false;
  std::optional<std::string> constraint, algorithm, sampling;
  /// "true" | "false": shuffled batches drop (default) or keep the partial last batch; the
  /// batch order is public (default: true for a seeded run).
  std::optional<std::string> drop_last, order_known;
  /// "replace" | "remove": the neighbouring relation of the target and of the report's main
  /// numbers (default replace; the report shows add/remove-one beside replace-one).
  std::optional<std::string> adjacency;
  std::optional<std::int64_t> batch_size, steps;
  std::optional<double> epochs, eta;
  std::optional<std::string> eta_schedule, noise;
  std::optional<double> sigma, noise_std;
  std::optional<std::string> release;
  std::optional<double> clip;

  /// The model, constraint set, algorithm, batches, step sizes and noise of the run, with
  /// the trainer's defaults (batch 1 for pnsgd/online, 10 users per round for federated, 256
  /// otherwise; 100 epochs for noisy-gd; random stop for online). The noise target (epsilon,
  /// delta, no-noise), the seed and progress are left to the caller. Throws InvalidArgument
  /// naming the field.
  TrainConfig resolve() const;

  /// The rule of field_use.hpp over the configuration `config` the request resolved to
  /// (resolve(), completed by the request: its noise target, no_noise): a stated field that
  /// `config` does not read is refused, naming it and why.
  void require_read(const TrainConfig& config) const;

  /// The stated fields, in the order of fields(): library name -> value as text (numbers in
  /// their shortest round-trip form; a switch has an empty value).
  FieldValues to_map() const;
  /// States one field from its text, as a user types it (the one parse of the command's
  /// flags): an integer, a number, a word, or empty for a switch. Throws InvalidArgument naming
  /// the field for text that is not a value of its type (empty text included).
  void set(std::string_view field, std::string_view text);

  /// Every field, in the order of the command's flags.
  static std::span<const TrainField> fields();
};

}  // namespace hsdp::train
