// The calibration problem a run statement describes: one set-up for the `hsdp calibrate`
// command and Python's hsdp.calibrate (include/hsdp/calibrate.hpp).
#include <fmt/format.h>

#include "hsdp/calibrate.hpp"
#include "hsdp/field_use.hpp"
#include "hsdp/errors.hpp"

namespace hsdp {

namespace {

NoiseUnit unit_of(const std::string& text) {
  if (text == "std") return NoiseUnit::std;
  if (text == "sigma") return NoiseUnit::sigma;
  if (text == "multiplier") return NoiseUnit::multiplier;
  fail(opt("noise_unit"), text, "one of std, sigma, multiplier");
}

}  // namespace

CalibrationProblem calibration_problem(RunSpec f, std::string_view for_parameter,
                                       double epsilon, double delta,
                                       const std::optional<std::string>& noise_unit,
                                       std::optional<std::int64_t> max_steps) {
  CalibrationProblem p;
  p.which = parse_calibration_parameter(for_parameter, opt("for"));
  p.epsilon = require_nonnegative(opt("epsilon"), epsilon);
  p.delta = require_open(opt("delta"), delta, 0.0, 1.0);
  p.options.eta_shape = parse_name<ScheduleShape>(f.eta_schedule.value_or("constant"), opt("eta_schedule"));
  // The search limit of the steps is read by --for steps only (field_use.hpp).
  if (max_steps && p.which != CalibrationParameter::steps)
    refuse_unread("max_steps", std::to_string(*max_steps),
                  fmt::format("only {} searches the number of steps", error_field("for", "steps")));
  if (max_steps) p.options.max_steps = require_range(opt("max_steps"), *max_steps, 1, std::int64_t{1} << 53);
  // A replace-one statement is answered under add/remove-one too (the adjacency of Opacus and
  // dp_accounting), beside it.
  p.options.with_add_remove = true;

  NoiseParameter noise;
  if (p.which == CalibrationParameter::noise) {
    // The units: noise_unit, else those of the noise flag given; the flag's value (or 1) is
    // only the starting point of the search.
    NoiseUnit unit = NoiseUnit::std;
    if (noise_unit) {
      unit = unit_of(*noise_unit);
    } else if (f.noise_multiplier) {
      unit = NoiseUnit::multiplier;
    } else if (f.sigma || f.convention) {
      unit = NoiseUnit::sigma;
    }
    const double start = f.noise_multiplier ? *f.noise_multiplier
                         : f.sigma          ? *f.sigma
                         : f.noise_std      ? *f.noise_std
                                            : 1.0;
    f.noise_multiplier.reset();
    f.sigma.reset();
    f.noise_std.reset();
    if (unit == NoiseUnit::sigma) {
      if (!f.convention)
        fail(opt("convention"), "(missing)",
             "given when calibrating a paper's sigma: journal|isit|federated|chourasia|altschuler");
      f.sigma = start;
    } else if (unit == NoiseUnit::multiplier) {
      f.noise_multiplier = start;
    } else {
      if (f.convention) fail(opt("convention"), *f.convention, fmt::format("used with {}", error_field("noise_unit", "sigma")));
      f.noise_std = start;
    }
    noise.unit = unit;
    noise.value = start;
    if (f.convention) noise.convention = parse_convention(*f.convention, opt("convention"));
  } else {
    if (p.which == CalibrationParameter::sampling_rate && !f.steps)
      fail(opt("steps"), "(missing)",
           fmt::format("given with {}: the number of steps stays fixed while b changes",
                       error_field("for", "sampling-rate")));
    if (noise_unit)
      refuse_unread("noise_unit", *noise_unit, fmt::format("only {} has units to choose", error_field("for", "noise")));
    if (f.noise_multiplier) {
      noise = {NoiseUnit::multiplier, Convention::journal, *f.noise_multiplier};
    } else if (f.sigma) {
      noise.unit = NoiseUnit::sigma;
      noise.value = *f.sigma;
      if (f.convention) noise.convention = parse_convention(*f.convention, opt("convention"));
    } else if (f.noise_std) {
      noise = {NoiseUnit::std, Convention::journal, *f.noise_std};
    }
  }
  p.base = f.resolve();
  p.options.noise = noise;
  return p;
}

}  // namespace hsdp
