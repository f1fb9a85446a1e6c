// hsdp.calibrate (include/hsdp/calibrate.hpp): the smallest noise, the largest number of
// steps or the largest batch meeting a target (epsilon, delta), set up from the run's
// keywords exactly as `hsdp calibrate` sets it up from its flags (cli/calibrate.cpp).
#include "hsdp/calibrate.hpp"

#include "common.hpp"
#include "hsdp/errors.hpp"

namespace hsdp::python {

namespace {

ScheduleShape shape_of(const std::string& text) {
  if (text == "constant") return ScheduleShape::constant;
  if (text == "inv-sqrt") return ScheduleShape::inv_sqrt;
  if (text == "inv-t") return ScheduleShape::inv_t;
  fail("--eta-schedule", text, "one of constant, inv-sqrt, inv-t");
}

NoiseUnit unit_of(const std::string& text) {
  if (text == "std") return NoiseUnit::std;
  if (text == "sigma") return NoiseUnit::sigma;
  if (text == "multiplier") return NoiseUnit::multiplier;
  fail("--noise-unit", text, "one of std, sigma, multiplier");
}

CalibrationResult calibrate_like_cli(const PyRun& pyrun, const std::string& for_, double epsilon_in,
                                     double delta_in, const std::optional<std::string>& unit_text,
                                     std::int64_t max_steps) {
  const CalibrationParameter which = parse_calibration_parameter(for_, "--for");
  const double epsilon = require_nonnegative("--epsilon", epsilon_in);
  const double delta = require_open("--delta", delta_in, 0.0, 1.0);
  CalibrationOptions options;
  options.max_steps = require_range("--max-steps", max_steps, 1, std::int64_t{1} << 53);
  if (!pyrun.flags) {
    // A run not described with keywords (from calibrate, plan or train): its noise is a
    // parameter-space std, its step sizes are kept.
    if (unit_text && *unit_text != "std")
      fail("--noise-unit", *unit_text, "std for a run not described with keywords (hsdp.Run(...))");
    py::gil_scoped_release release;
    return calibrate(pyrun.run, which, epsilon, delta, options);
  }
  cli::RunFlags f = *pyrun.flags;
  options.eta_shape = shape_of(f.eta_schedule);
  NoiseParameter noise;
  if (which == CalibrationParameter::noise) {
    NoiseUnit unit = NoiseUnit::std;
    if (unit_text) {
      unit = unit_of(*unit_text);
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
        fail("--convention", "(missing)",
             "given when calibrating a paper's sigma: journal|isit|federated|chourasia|altschuler");
      f.sigma = start;
    } else if (unit == NoiseUnit::multiplier) {
      f.noise_multiplier = start;
    } else {
      if (f.convention) fail("--convention", *f.convention, "used with --noise-unit sigma");
      f.noise_std = start;
    }
    noise.unit = unit;
    noise.value = start;
    if (f.convention) noise.convention = parse_convention(*f.convention, "--convention");
  } else {
    if (which == CalibrationParameter::sampling_rate && !f.steps)
      fail("--steps", "(missing)",
           "given with --for sampling-rate: the number of steps stays fixed while b changes");
    if (unit_text) fail("--noise-unit", *unit_text, "used with --for noise");
    if (f.noise_multiplier) {
      noise = {NoiseUnit::multiplier, Convention::journal, *f.noise_multiplier};
    } else if (f.sigma) {
      noise.unit = NoiseUnit::sigma;
      noise.value = *f.sigma;
      if (f.convention) noise.convention = parse_convention(*f.convention, "--convention");
    } else if (f.noise_std) {
      noise = {NoiseUnit::std, Convention::journal, *f.noise_std};
    }
  }
  const Run base = f.to_run();
  options.noise = noise;
  py::gil_scoped_release release;
  return calibrate(base, which, epsilon, delta, options);
}

}  // namespace

void bind_calibrate(py::module_& m) {
  py::class_<CalibrationResult>(m, "CalibrationResult", "The solution of hsdp.calibrate.")
      .def_property_readonly("parameter", [](const CalibrationResult& r) { return std::string(to_string(r.parameter)); })
      .def_readonly("name", &CalibrationResult::name,
                    "\"noise_std\", \"sigma\", \"noise_multiplier\", \"steps\" or \"batch_size\".")
      .def_readonly("convention", &CalibrationResult::convention)
      .def_readonly("feasible", &CalibrationResult::feasible)
      .def_readonly("reason", &CalibrationResult::reason, "Why the target cannot be met ('' when feasible).")
      .def_readonly("value", &CalibrationResult::value, "The noise in its units, or T or b.")
      .def_readonly("unbounded", &CalibrationResult::unbounded)
      .def_readonly("sampling_rate", &CalibrationResult::sampling_rate)
      .def_property_readonly("run", [](const CalibrationResult& r) { return PyRun{r.run, std::nullopt}; },
                             "The run with the solution substituted.")
      .def_readonly("report", &CalibrationResult::report, "The accountant at `run` (epsilon at the target delta).")
      .def_readonly("achieved_name", &CalibrationResult::achieved_name)
      .def_readonly("achieved_epsilon", &CalibrationResult::achieved_epsilon)
      .def_readonly("achieved_delta", &CalibrationResult::achieved_delta)
      .def_readonly("evaluations", &CalibrationResult::evaluations)
      .def_readonly("note", &CalibrationResult::note)
      .def("to_json", [](const CalibrationResult& r, int indent) { return to_json(r).dump(indent); },
           py::arg("indent") = 2, "The JSON `hsdp calibrate --json` prints (without the final newline).")
      .def("to_dict", [](const CalibrationResult& r) { return to_python(to_json(r)); })
      .def("__repr__", [](const CalibrationResult& r) {
        if (!r.feasible) return "<hsdp.CalibrationResult infeasible: " + r.reason + ">";
        return "<hsdp.CalibrationResult " + r.name + "=" + show(r.value) + " achieved epsilon=" +
               show(r.achieved_epsilon) + " (" + r.achieved_name + ")>";
      });

  m.def("calibrate", &calibrate_like_cli, py::arg("run"), py::arg("parameter") = "noise", py::kw_only(),
        py::arg("epsilon"), py::arg("delta"), py::arg("noise_unit") = py::none(),
        py::arg("max_steps") = std::int64_t{1} << 40,
        R"doc(Solve for one parameter of `run` so that it meets (epsilon, delta) (`hsdp calibrate`).

parameter: "noise" (smallest noise), "steps" (largest T) or "sampling-rate" (largest batch b;
the run must give steps). For noise, the units are `noise_unit` ("std" | "sigma" |
"multiplier") or those of the run's noise keyword (noise_std, sigma with convention,
noise_multiplier with clip), whose value is only the starting point. An unreachable target
is a result with feasible == False and a reason (not an exception).)doc");
}

}  // namespace hsdp::python
