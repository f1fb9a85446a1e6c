// hsdp.calibrate (include/hsdp/calibrate.hpp): the smallest noise, the largest number of
// steps or the largest batch meeting a target (epsilon, delta), set up from the run's
// keywords exactly as `hsdp calibrate` sets it up from its flags (cli/calibrate.cpp).
#include "hsdp/calibrate.hpp"

#include "common.hpp"
#include "hsdp/errors.hpp"

namespace hsdp::python {

namespace {

CalibrationResult calibrate_like_cli(const PyRun& pyrun, const std::string& for_, double epsilon_in,
                                     double delta_in, const std::optional<std::string>& unit_text,
                                     std::int64_t max_steps) {
  const CalibrationParameter which = parse_calibration_parameter(for_, opt("for"));
  const double epsilon = require_nonnegative(opt("epsilon"), epsilon_in);
  const double delta = require_open(opt("delta"), delta_in, 0.0, 1.0);
  CalibrationOptions options;
  options.max_steps = require_range(opt("max_steps"), max_steps, 1, std::int64_t{1} << 53);
  if (!pyrun.flags) {
    // A run not described with keywords (from calibrate, plan or train): its noise is a
    // parameter-space std, its step sizes are kept.
    if (unit_text && *unit_text != "std")
      fail(opt("noise_unit"), *unit_text, "std for a run not described with keywords (hsdp.Run(...))");
    py::gil_scoped_release release;
    return calibrate(pyrun.run, which, epsilon, delta, options);
  }
  // The same set-up as `hsdp calibrate` (the library request, calibration_problem).
  const CalibrationProblem p =
      calibration_problem(*pyrun.flags, for_, epsilon, delta, unit_text, max_steps);
  py::gil_scoped_release release;
  return calibrate(p.base, p.which, p.epsilon, p.delta, p.options);
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
