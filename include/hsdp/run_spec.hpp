// How a user states a run, as opposed to the run itself (docs/architecture.md, "Stating a run vs the
// run"). Users give the noise as a std, a paper's sigma with its convention, or a DP-SGD
// noise multiplier with a clip norm; a step-size shape and base; a batch policy. A RunSpec
// holds what was stated, resolve() turns it into the Run every analysis reads, and
// to_map() / from_map() give the same statement field by field: the one source of the
// CLI's run flags, the Python keywords and the "same report: hsdp account ..." line.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <vector>

#include "hsdp/analysis/analysis.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/run.hpp"

namespace hsdp {

/// The units in which the noise is stated. They matter beyond display: when the batch
/// size or the step-size schedule changes, the parameter-space std is recomputed from the
/// value in these units (e.g. std = eta z C / b for a noise multiplier z).
enum class NoiseUnit {
  std,         ///< noise std in parameter space (Run::noise_std), the same at every step
  sigma,       ///< a paper's sigma in `convention` (run.hpp noise_std_from_sigma)
  multiplier,  ///< DP-SGD noise multiplier z with the clip norm C (noise_std_from_multiplier)
};
std::string_view to_string(NoiseUnit);

/// A noise statement: a value in its units.
struct NoiseParameter {
  NoiseUnit unit = NoiseUnit::std;
  Convention convention = Convention::journal;  ///< used when unit == sigma
  double value = 1.0;                           ///< > 0, in the units above
};

/// The noise std at every step (a constant when the step size is constant) that `noise`
/// gives for step sizes `eta`, batch size b, the noise kind and the clip norm. The one
/// translation of a noise statement: the run flags, calibration and the trainer use it.
/// Throws InvalidArgument when the value is not > 0, or unit == multiplier without a clip.
Schedule noise_std_schedule(const NoiseParameter& noise, const Schedule& eta,
                            std::int64_t batch_size, NoiseKind kind,
                            const std::optional<double>& clip);
/// The same for `run`'s step sizes, batch size, noise kind and clip.
Schedule noise_schedule(const Run& run, const NoiseParameter& noise);

/// One field of a RunSpec: its library name (the CLI flag is `--` with '-' for '_', the
/// Python keyword the name) and what it means.
struct RunField {
  /// boolean: stated as "true" or "false" (a Python bool).
  enum class Type { switch_, integer, real, word, boolean };
  std::string_view name;
  std::string_view help;
  Type type = Type::real;  ///< a switch is stated by its presence alone (no value)
  bool is_switch() const { return type == Type::switch_; }
};

/// A run as the user states it. Every field is optional ("not stated"): resolve() applies
/// the defaults and checks what was given, with errors naming the field. Enumerations are
/// kept as the names the user gave (parsed, with their name tables, by resolve()).
struct RunSpec {
  bool example = false;  ///< fill what is not stated from the built-in example (journal Fig. 2)
  std::optional<std::int64_t> n, steps, batch_size;
  std::optional<std::string> sampling;      ///< default cyclic, or full when b = n
  std::optional<double> eta;                ///< base step size of eta_schedule
  std::optional<std::string> eta_schedule;  ///< constant | inv-sqrt | inv-t
  std::optional<std::string> noise;         ///< gaussian | laplace
  // The noise statement: exactly one of noise_std, sigma with convention, noise_multiplier
  // with clip.
  std::optional<double> sigma;
  std::optional<std::string> convention;
  std::optional<double> noise_std, noise_multiplier;
  std::optional<double> lipschitz, smoothness, strong_convexity;
  bool non_convex = false;
  std::optional<double> diameter;  ///< default inf (unconstrained)
  std::optional<double> clip;      ///< per-example clipping norm C
  std::optional<double> lsi;       ///< asserted log-Sobolev constant (langevin Thm 2)
  std::optional<std::int64_t> dimension, index;
  std::optional<std::string> release;    ///< last | random-stop | every
  std::optional<std::string> adjacency;  ///< replace | remove
  std::optional<bool> drop_last;         ///< shuffled batches: drop the partial last batch (default true)
  std::optional<bool> order_known;       ///< the batch order is public (default false)
  // Accuracy vs speed of the analyses that compose privacy loss distributions
  // (composition-pld, shifted-interpolation): div::PldOptions::interval and ::cells.
  std::optional<double> pld_interval, pld_cells;
  // Noise drawn on a grid (Run::grid, docs/security.md): the trainer states these in its "same
  // report" line; unstated, the run's noise is the papers' continuous noise.
  std::optional<double> grid_slack, grid_epsilon, grid_log_beta;

  /// The Run the analyses read. Throws InvalidArgument naming the first offending field.
  Run resolve() const;
  /// The noise as stated (its units and value); std with value 1 when none is stated.
  NoiseParameter noise_statement() const;

  /// The stated fields, in the order of fields(): library name -> value as text (numbers
  /// in their shortest round-trip form; a switch has an empty value).
  FieldValues to_map() const;
  /// The inverse of to_map(). Throws InvalidArgument naming a field that is unknown or
  /// whose text is not a value of its type.
  static RunSpec from_map(const FieldValues& values);
  /// States one field from its text (as from_map does for each pair).
  void set(std::string_view field, std::string_view text);
  /// Every field, in the order of to_map().
  static std::span<const RunField> fields();
  /// A statement of a resolved run (from calibration, a plan, the trainer): its step sizes
  /// as a base and shape, its noise as `noise` states it (its units: the trainer's sigma in
  /// its paper's convention) or else as a parameter-space std. resolve() gives `run` back.
  /// Throws InvalidArgument when a per-step schedule has no such statement (a noise std
  /// that changes from step to step, or step sizes that are not eta, eta/sqrt(t), eta/t).
  static RunSpec stating(const Run& run, const std::optional<NoiseParameter>& noise = {});
};

/// The query as a user states it: epsilon (report delta) or delta (report epsilon; default
/// 1e-5), and RDP orders > 1 to report. Throws InvalidArgument naming the field.
Query stated_query(const std::optional<double>& epsilon, const std::optional<double>& delta,
                   const std::vector<double>& alphas);

}  // namespace hsdp
