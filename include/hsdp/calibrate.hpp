// Calibration: solve for one free parameter of a run given the rest and a target
// (epsilon, delta) -- the smallest noise, the largest number of steps, or the largest
// batch (sampling rate b/n) -- using, at every candidate, the tightest valid upper bound
// among the analyses that apply (the accountant's envelope).
//
// The solver does not assume that this envelope is monotone in the free parameter
// (last-iterate bounds plateau in the number of steps; analyses switch on and off, e.g.
// the one-pass contraction bounds stop applying once steps x batch > n). It scans a
// geometric grid with the applicability boundaries added, brackets the last change from
// "meets the target" to "does not", bisects that bracket, and re-evaluates the returned
// value with the full accountant: the value returned always meets the target (it is
// never rounded to the infeasible side). Infeasible targets are a result with a reason,
// not an error.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "hsdp/errors.hpp"
#include "hsdp/accountant.hpp"
#include "hsdp/analysis/analysis.hpp"
#include "hsdp/run.hpp"
#include "hsdp/run_spec.hpp"

namespace hsdp {

/// The free parameter.
enum class CalibrationParameter {
  noise,          ///< smallest noise (in the units of NoiseParameter::unit)
  steps,          ///< largest number of steps T
  sampling_rate,  ///< largest batch size b (sampling rate b / n)
};
std::string_view to_string(CalibrationParameter);
/// Parses "noise" | "steps" | "sampling-rate"; throws InvalidArgument naming `parameter`.
CalibrationParameter parse_calibration_parameter(std::string_view text,
                                                 const Param& parameter = opt("for"));

// NoiseUnit, NoiseParameter and noise_schedule (the noise statement): hsdp/run_spec.hpp.

struct CalibrationOptions {
  /// How the base run's noise is stated. When not given: the base run's noise_std must be
  /// constant, and it is the value in NoiseUnit::std.
  std::optional<NoiseParameter> noise;
  /// The shape of the step-size schedule, regenerated from base.eta.at(1) when the number
  /// of steps changes (make_schedule). A non-constant base.eta of another length needs it.
  ScheduleShape eta_shape = ScheduleShape::constant;
  /// The analyses whose envelope is used (all of them when empty).
  std::span<const AnalysisPtr> analyses = {};
  /// Search limits. noise: [noise_min, noise_max] in the noise units (defaults: the base
  /// value times 1e-12 and 1e12). steps: [1, max_steps]. sampling-rate: b in [1, n].
  std::optional<double> noise_min, noise_max;
  std::int64_t max_steps = std::int64_t{1} << 40;
  /// Relative width of the final noise bracket (the returned noise is at most this far
  /// above the boundary); integer parameters are solved exactly (T meets, T + 1 does not).
  double relative_tolerance = 1e-4;
};

struct CalibrationResult {
  CalibrationParameter parameter = CalibrationParameter::noise;
  /// "noise_std", "sigma", "noise_multiplier", "steps" or "batch_size".
  std::string name;
  /// Convention of a "sigma" (journal, isit, ...); empty otherwise.
  std::string convention;
  bool feasible = false;
  std::string reason;  ///< why the target cannot be met (empty when feasible)
  /// The solution: noise in its units, or the integer T or b (as a double).
  double value = 0.0;
  /// steps: the target holds at every T up to options.max_steps (the tightest bound no
  /// longer grows with T); value is then max_steps.
  bool unbounded = false;
  std::optional<double> sampling_rate;  ///< b / n, for sampling-rate
  Run run;                              ///< the base run with the solution substituted
  Report report;                        ///< the accountant at `run`, epsilon at the target delta
  /// The achieved guarantee: the report's best analysis, its epsilon (<= the target) at
  /// the target delta.
  std::string achieved_name;
  double achieved_epsilon = 0.0;
  double achieved_delta = 0.0;
  int evaluations = 0;  ///< envelope evaluations used by the search
  std::string note;     ///< remarks on the search (e.g. the value sits at a search limit)
};

/// Solves for `which` given the rest of `base` and the target (epsilon >= 0, finite;
/// 0 < delta < 1). `base` must validate (for steps/sampling-rate its current T or b is
/// the starting point; for noise its noise is the starting point). Throws InvalidArgument
/// for bad arguments; an unreachable target is a result with feasible = false.
CalibrationResult calibrate(const Run& base, CalibrationParameter which, double epsilon,
                            double delta, const CalibrationOptions& options = {});

/// {"parameter","value","achieved":{"name","epsilon","delta"}} plus "feasible", "reason",
/// "unit"/"convention" (noise), "sampling_rate", "unbounded", "note", "run".
nlohmann::json to_json(const CalibrationResult& result);

/// A calibration request.
struct CalibrationProblem {
  Run base;
  CalibrationParameter which = CalibrationParameter::noise;
  double epsilon = 0;
  double delta = 0;
  CalibrationOptions options;
};

/// Validates the target and builds the base run and options from a run statement (the
/// request of `hsdp calibrate` and hsdp.calibrate). When the noise is the free parameter
/// the units of the answer are `noise_unit` (std | sigma | multiplier) if given, else those
/// in which the spec states its noise (noise_multiplier, sigma with convention, noise_std;
/// std when none), whose value is only the starting point of the search. Throws
/// InvalidArgument naming the field.
CalibrationProblem calibration_problem(RunSpec spec, std::string_view for_parameter,
                                       double epsilon, double delta,
                                       const std::optional<std::string>& noise_unit,
                                       std::int64_t max_steps);


}  // namespace hsdp
