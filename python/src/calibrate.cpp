// hsdp.calibrate (include/hsdp/calibrate.hpp): the smallest noise, the largest number of
// steps or the largest batch meeting a target (epsilon, delta), set up from the run's
// keywords exactly as `hsdp calibrate` sets it up from its flags (cli/calibrate.cpp).
#include "hsdp/calibrate.hpp"

#include <fmt/format.h>

#include "call.hpp"
#include "common.hpp"
#include "hsdp/field_use.hpp"
#include "hsdp/errors.hpp"

namespace hsdp::python {

namespace {

CalibrationResult calibrate_like_cli(const PyRun& pyrun, const std::string& for_, double epsilon_in,
                                     double delta_in, const std::optional<std::string>& unit_text,
                                     std::int64_t max_steps) {
  const CalibrationParameter which = parse_calibration_parameter(for_, opt("for"));
  const double epsilon = require_nonnegative(opt("epsilon"), epsilon_in);
  const double delta = require_open(opt("delta"), delta_in, 0.0, 1.0);
  // max_steps counts as stated only when the caller typed it (the rule: field_use.hpp).
  const std::optional<std::int64_t> stated_max = given("max_steps") ? std::optional(max_steps) : std::nullopt;
  CalibrationOptions options;
  if (stated_max && which != CalibrationParameter::steps)
    refuse_unread("max_steps", std::to_string(max_steps),
                  fmt::format("only {} searches the number of steps", error_field("for", "steps")));
  options.max_steps = require_range(opt("max_steps"), max_steps, 1, std::int64_t{1} << 53);
  options.with_add_remove = true;
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
      calibration_problem(*pyrun.flags, for_, epsilon, delta, unit_text, stated_max);
  py::gil_scoped_release release;
  return calibrate(p.base, p.which, p.epsilon, p.delta, p.options);
}

// hsdp.calibrate_parameter: the generic solver on a Python function x -> hsdp.Run. The
// function is called with the GIL held (the search is serial).
ParameterSolution calibrate_parameter_py(const py::function& make, double epsilon, double delta, double lower,
                                         double upper, const std::string& domain_text,
                                         const std::string& direction_text, std::optional<double> start,
                                         std::vector<std::int64_t> special_points, const std::string& name,
                                         const std::optional<std::vector<std::string>>& analyses,
                                         double relative_tolerance) {
  CalibrationAdapter a;
  a.name = name;
  a.domain = pick_choice<ParameterDomain>(opt("domain"), domain_text,
                                          {{"continuous", ParameterDomain::continuous},
                                           {"integer", ParameterDomain::integer}});
  a.direction = pick_choice<PrivacyDirection>(
      opt("direction"), direction_text,
      {{"larger-is-more-private", PrivacyDirection::larger_is_more_private},
       {"larger-is-less-private", PrivacyDirection::larger_is_less_private}});
  a.lower = lower;
  a.upper = upper;
  a.start = start;
  a.special_points = std::move(special_points);
  const bool integer = a.domain == ParameterDomain::integer;
  a.make = [make, integer](double x) -> Run {
    const py::object r = integer ? make(py::int_(static_cast<std::int64_t>(x))) : make(py::float_(x));
    if (!py::isinstance<PyRun>(r))
      fail(opt("make"), std::string(py::str(py::type::of(r).attr("__name__"))), "a function returning an hsdp.Run");
    return r.cast<const PyRun&>().run;
  };
  std::vector<AnalysisPtr> chosen;
  if (analyses)
    for (const auto& n : *analyses) chosen.push_back(find_analysis(n));
  return calibrate_parameter(a, epsilon, delta, {chosen, relative_tolerance});
}

}  // namespace

void bind_calibrate(py::module_& m) {
  py::class_<CalibrationResult>(m, "CalibrationResult", "The solution of hsdp.calibrate.")
      .def_property_readonly("parameter", [](const CalibrationResult& r) { return std::string(to_string(r.parameter)); }, "What was solved for: noise, steps or sampling-rate.")
      .def_readonly("name", &CalibrationResult::name,
                    "\"noise_std\", \"sigma\", \"noise_multiplier\", \"steps\" or \"batch_size\".")
      .def_readonly("convention", &CalibrationResult::convention, "The paper convention of a sigma (journal, isit, ...); '' otherwise.")
      .def_readonly("feasible", &CalibrationResult::feasible, "False when no value in the search range meets the target (see reason).")
      .def_readonly("reason", &CalibrationResult::reason, "Why the target cannot be met ('' when feasible).")
      .def_readonly("value", &CalibrationResult::value, "The noise in its units, or T or b.")
      .def_readonly("unbounded", &CalibrationResult::unbounded, "steps: the target holds at every T up to max_steps (value is then max_steps).")
      .def_readonly("sampling_rate", &CalibrationResult::sampling_rate, "b / n for parameter='sampling-rate', else None.")
      .def_property_readonly("run", [](const CalibrationResult& r) { return PyRun{r.run, std::nullopt}; },
                             "The run with the solution substituted.")
      .def_readonly("report", &CalibrationResult::report, "The accountant at `run` (epsilon at the target delta).")
      .def_readonly("achieved_name", &CalibrationResult::achieved_name, "The analysis that certifies the solution (the report's best).")
      .def_readonly("achieved_epsilon", &CalibrationResult::achieved_epsilon, "Its epsilon at the target delta (<= the target epsilon).")
      .def_readonly("achieved_delta", &CalibrationResult::achieved_delta, "The target delta.")
      .def_readonly("evaluations", &CalibrationResult::evaluations, "Accountant evaluations the search used.")
      .def_readonly("note", &CalibrationResult::note, "Remarks on the search (e.g. the value sits at a search limit).")
      .def_property_readonly("adjacency", [](const CalibrationResult& r) { return std::string(to_string(r.adjacency)); },
                             "The adjacency the value holds for: \"replace\" (one record replaced) or \"remove\" "
                             "(one added or removed).")
      .def_property_readonly("add_remove", [](const CalibrationResult& r) -> py::object {
        if (!r.add_remove) return py::none();
        return py::cast(*r.add_remove);
      }, "For a replace-one run: the same calibration under add/remove-one (the adjacency of Opacus and "
         "dp_accounting), a CalibrationResult; None when that is not derived for the run's batch order "
         "(add_remove_reason says why) or the run is already add/remove.")
      .def_readonly("add_remove_reason", &CalibrationResult::add_remove_reason,
                    "Why no analysis covers the run's order under add/remove-one ('' otherwise).")
      .def("to_json", [](const CalibrationResult& r, int indent) { return to_json(r).dump(indent); },
           py::arg("indent") = 2, "The JSON `hsdp calibrate --json` prints (without the final newline).")
      .def("to_dict", [](const CalibrationResult& r) { return to_python(to_json(r)); }, "to_json() as a dict.")
      .def("__repr__", [](const CalibrationResult& r) {
        if (!r.feasible) return "<hsdp.CalibrationResult infeasible: " + r.reason + ">";
        return "<hsdp.CalibrationResult " + r.name + "=" + show(r.value) + " achieved epsilon=" +
               show(r.achieved_epsilon) + " (" + r.achieved_name + ", " + adjacency_words(r.adjacency) + ")>";
      });

  py::class_<ParameterSolution>(m, "ParameterSolution", "The solution of hsdp.calibrate_parameter.")
      .def_readonly("feasible", &ParameterSolution::feasible, "False when no x in [lower, upper] meets the target (see reason).")
      .def_readonly("reason", &ParameterSolution::reason, "Why no value is returned ('' when feasible).")
      .def_readonly("value", &ParameterSolution::value,
                    "x: continuous values rounded to 10 significant digits towards the private side.")
      .def_property_readonly("run", [](const ParameterSolution& r) { return PyRun{r.run, std::nullopt}; },
                             "make(value).")
      .def_readonly("report", &ParameterSolution::report, "The accountant at `run` (epsilon at the target delta).")
      .def_readonly("achieved_name", &ParameterSolution::achieved_name, "The analysis that certifies the solution.")
      .def_readonly("achieved_epsilon", &ParameterSolution::achieved_epsilon, "Its epsilon at the target delta (<= the target epsilon).")
      .def_readonly("achieved_delta", &ParameterSolution::achieved_delta, "The target delta.")
      .def_readonly("at_limit", &ParameterSolution::at_limit,
                    "The target holds at the least private search limit (the boundary lies beyond it).")
      .def_readonly("exact_boundary", &ParameterSolution::exact_boundary,
                    "Integer: value meets the target and its less private neighbour does not.")
      .def_readonly("evaluations", &ParameterSolution::evaluations, "Runs accounted by the search.")
      .def_readonly("note", &ParameterSolution::note, "Remarks on the search.")
      .def("__repr__", [](const ParameterSolution& r) {
        if (!r.feasible)
          return "<hsdp.ParameterSolution infeasible under " + adjacency_words(r.run.adjacency) + ": " + r.reason + ">";
        return "<hsdp.ParameterSolution value=" + show(r.value) + " achieved epsilon=" + show(r.achieved_epsilon) +
               " (" + r.achieved_name + ", " + adjacency_words(r.run.adjacency) + ")>";
      });

  m.def("calibrate_parameter", &calibrate_parameter_py, py::arg("make"), py::kw_only(), py::arg("epsilon"),
        py::arg("delta"), py::arg("lower"), py::arg("upper"), py::arg("domain") = "continuous",
        py::arg("direction") = "larger-is-more-private", py::arg("start") = py::none(),
        py::arg("special_points") = std::vector<std::int64_t>{}, py::arg("name") = "x",
        py::arg("analyses") = py::none(), py::arg("relative_tolerance") = 1e-4,
        R"doc(Calibrate any parameter x of a run: `make(x)` returns the hsdp.Run at x (x a float, or an
int when domain="integer"). Returns the least private x in [lower, upper] whose run meets
(epsilon, delta) on the tightest applicable analysis (of `analyses`, default all), re-checked by
the full accountant: the smallest x when direction="larger-is-more-private" (like the noise),
the largest when "larger-is-less-private" (like steps, batch size, step size or clip norm).
continuous: log-scale bracket and bisection to `relative_tolerance`, the value rounded to 10
significant digits towards the private side; integer: a grid of powers of two plus
`special_points` (the feasible set need not be an interval), then an exact boundary. An
unreachable target is a result with feasible == False and a reason.)doc");

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
