// The calibration problem that a set of run flags describes, set up one way for the
// `hsdp calibrate` command and the Python module's hsdp.calibrate (which must agree).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hsdp/calibrate.hpp"
#include "run_flags.hpp"

namespace hsdp::cli {

struct CalibrationProblem {
  Run base;
  CalibrationParameter which = CalibrationParameter::noise;
  double epsilon = 0;
  double delta = 0;
  CalibrationOptions options;
};

/// Validates the target and builds the base run and options from the flags. For
/// `--for noise` the units of the answer are `noise_unit` if given, else those of the noise
/// flag given (--noise-multiplier, --sigma with --convention, --noise-std; std when none),
/// whose value is only the starting point of the search. Throws InvalidArgument naming the
/// flag.
CalibrationProblem calibration_problem(RunFlags flags, std::string_view for_parameter,
                                       double epsilon, double delta,
                                       const std::optional<std::string>& noise_unit,
                                       std::int64_t max_steps);

}  // namespace hsdp::cli
