// Calibration: solve for one free parameter of a run given the rest and a target
// (epsilon, delta), using, at every candidate, the tightest valid upper bound among the
// analyses that apply (the accountant's envelope).
//
// One generic solver, calibrate_parameter, works on any parameter x -> Run described by a
// CalibrationAdapter (its domain, search limits and the direction in which privacy moves);
// the three parameters of `hsdp calibrate` -- the smallest noise, the largest number of
// steps, the largest batch (sampling rate b/n) -- are adapters over it
// (calibration_adapter), and calibrate() adds their texts.
//
// The solver does not assume more than the domain allows. A continuous parameter is
// searched in log scale: the bracket grows by factors of 4 from the starting point, then
// is narrowed, each candidate where the envelope's log delta, interpolated between the
// bracket's ends, crosses the target (regula falsi, Illinois; bisection when that stalls)
// -- the analyses are monotone in the noise, but that is checked at the bracket's ends,
// not assumed. An integer parameter may have a non-monotone envelope
// (last-iterate bounds plateau in the number of steps; analyses switch on and off, e.g.
// the one-pass contraction bounds stop applying once steps x batch > n): the solver scans
// a geometric grid with the given special points added, brackets the last change from
// "meets the target" to "does not", and bisects that bracket to the exact boundary. The
// value found is re-evaluated with the full accountant and moved towards the private side
// until that check passes too: the value returned always meets the target (it is never
// rounded to the infeasible side). Infeasible targets are a result with a reason, not an
// error.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "hsdp/errors.hpp"
#include "hsdp/accountant.hpp"
#include "hsdp/analysis/analysis.hpp"
#include "hsdp/run.hpp"
#include "hsdp/run_spec.hpp"

namespace hsdp {

// ---- The generic solver: one free parameter x of a run.

/// The values a parameter takes.
enum class ParameterDomain {
  continuous,  ///< real x > 0, searched in log scale to a relative tolerance
  integer,     ///< integer x, solved exactly (the boundary value and its neighbour)
};

/// How privacy moves with the parameter, i.e. which end of the feasible set is wanted.
enum class PrivacyDirection {
  /// A larger x is more private (the noise): the SMALLEST x meeting the target is returned.
  larger_is_more_private,
  /// A larger x is less private (steps, batch size, step size, clip norm): the LARGEST x
  /// meeting the target is returned.
  larger_is_less_private,
};

/// A free parameter x of a run, as the generic solver sees it (the role of dp_accounting's
/// make_event_from_param, bracket and discrete flag in mechanism_calibration).
struct CalibrationAdapter {
  /// How results name x ("noise_std", "steps", "clip", ...).
  std::string name;
  ParameterDomain domain = ParameterDomain::continuous;
  PrivacyDirection direction = PrivacyDirection::larger_is_more_private;
  /// Search limits, both included: continuous 0 < lower < upper < inf; integer
  /// 1 <= lower <= upper <= 2^53 (lower == upper allowed). The answer lies in them.
  double lower = 0.0, upper = 0.0;
  /// Continuous: the first candidate (clamped to the limits; default: the geometric mean of
  /// the limits). make(start) must give a valid run (it is validated). Unused for integers.
  std::optional<double> start;
  /// Integer: points evaluated besides the grid (powers of two from 1, and both limits):
  /// where an analysis starts or stops applying, the current value. Points outside the
  /// limits are ignored. Unused for continuous parameters.
  std::vector<std::int64_t> special_points;
  /// The run at x (for an integer parameter x is a whole number). Called from the calling
  /// thread only.
  std::function<Run(double x)> make;
};

/// How the solver searches.
struct CalibrationSearch {
  /// The analyses whose envelope is used (all of them when empty).
  std::span<const AnalysisPtr> analyses = {};
  /// Continuous: relative width of the final bracket (the returned x is at most this far
  /// from the boundary, on the private side); in (0, 0.5).
  double relative_tolerance = 1e-4;
  /// Called before each evaluation of the envelope with the evaluations so far and the value
  /// tried (a front end's progress line); may be empty.
  std::function<void(int evaluations, double value)> progress = {};
};

/// What the generic solver found.
struct ParameterSolution {
  bool feasible = false;
  /// Why no value is returned (empty when feasible): nothing within the limits meets the
  /// target (then `at_private_limit` holds the accountant at the most private limit), or
  /// the full accountant did not confirm the envelope's boundary.
  std::string reason;
  std::optional<Report> at_private_limit;
  /// x: continuous values are rounded to 10 significant digits towards the private side
  /// (what is printed is what was verified); integers exactly.
  double value = 0.0;
  Run run;        ///< make(value)
  Report report;  ///< the accountant at `run`, epsilon at the target delta
  std::string achieved_name;  ///< the report's best analysis
  double achieved_epsilon = 0.0, achieved_delta = 0.0;
  /// The target holds at the least private search limit (lower for larger_is_more_private,
  /// upper otherwise): the boundary lies beyond the limits, `value` is that limit (or next
  /// to it, if the full accountant disagreed there).
  bool at_limit = false;
  /// Integer, at_limit: the grid point closest to the most private limit from which every
  /// grid point up to the least private limit meets the target.
  std::int64_t holds_from = 0;
  /// Integer, not at_limit: the search bisected to a boundary: `value` meets the target
  /// and its neighbour on the less private side does not.
  bool exact_boundary = false;
  int evaluations = 0;  ///< envelope evaluations used by the search
  std::string note;     ///< a remark in the adapter's terms (the value sits at a limit, ...)
};

/// The generic solver: the least private x within the adapter's limits that meets the
/// target (epsilon >= 0 finite, 0 < delta < 1), on the envelope of `search.analyses`, then
/// re-evaluated by the full accountant. Throws InvalidArgument naming the bad argument
/// (epsilon, delta, relative_tolerance, lower, upper, start, make); an unreachable target
/// is a result with feasible = false.
ParameterSolution calibrate_parameter(const CalibrationAdapter& adapter, double epsilon, double delta,
                                      const CalibrationSearch& search = {});

// ---- The parameters of `hsdp calibrate`: adapters over the generic solver.

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
  /// For a replace-one run, also solve the same problem under add/remove-one (the adjacency
  /// of Opacus and dp_accounting) and return it as CalibrationResult::add_remove, or why no
  /// analysis covers the run's batch order under add/remove (add_remove_reason). What
  /// `hsdp calibrate` and hsdp.calibrate print; off for internal searches (the plan).
  bool with_add_remove = false;
  /// As CalibrationSearch::progress (the evaluations of the search, the value tried).
  std::function<void(int evaluations, double value)> progress = {};
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
  /// The adjacency the value holds for (the run's): replace-one or add/remove-one.
  Adjacency adjacency = Adjacency::replace;
  /// CalibrationOptions::with_add_remove on a replace-one run: the same problem under
  /// add/remove-one, or (null) why it is not derived for the run's order.
  std::shared_ptr<const CalibrationResult> add_remove;
  std::string add_remove_reason;
};

/// The adapter of `which` for `base` (validated as calibrate() validates them): noise
/// (continuous, larger is more private, limits noise_min..noise_max around the base value,
/// in the units of options.noise), steps (integer, larger is less private, 1..max_steps,
/// special points one pass n / b, T = n and the given T), sampling-rate (the batch b,
/// integer, larger is less private, 1..n, special points one pass n / T and the given b).
/// Its make() substitutes x, regenerates the step sizes when T changes and recomputes the
/// noise std from the value in its units (it depends on eta_t and b).
CalibrationAdapter calibration_adapter(const Run& base, CalibrationParameter which,
                                       const CalibrationOptions& options = {});

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
                                       std::optional<std::int64_t> max_steps = std::nullopt);


}  // namespace hsdp
