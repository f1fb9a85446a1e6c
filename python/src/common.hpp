// Shared pieces of the Python bindings (docs/python.md): the Run wrapper that remembers
// the keywords it was described with (they are the CLI's run flags), JSON -> Python
// conversion, and the registration functions of each part of the module.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "hsdp/accountant.hpp"
#include "hsdp/run.hpp"
#include "hsdp/run_spec.hpp"
#include "hsdp/analysis/analysis.hpp"

namespace hsdp::python {

namespace py = pybind11;

/// hsdp.Run: a validated Run, and the run flags it was built from when it was described
/// with keywords (a Run returned by calibrate, plan or train has none). The flags give the
/// same validation and messages as the CLI, the units of the noise for calibration, and
/// the equivalent command line (Run.cli_args()).
struct PyRun {
  Run run;
  std::optional<RunSpec> flags;
};

/// A Python object (dict, list, str, float, int, bool, None) with the JSON's content;
/// object keys keep the JSON's order.
py::object to_python(const nlohmann::json& j);

/// A numeric value of a result as Python sees it: a float (+inf kept) or None.
inline py::object optional_float(const std::optional<double>& v) {
  return v ? py::object(py::float_(*v)) : py::object(py::none());
}

/// "delta" / "epsilon" query of the CLI's run flags (--delta, --epsilon, --alpha), with the
/// CLI's validation and messages: at most one of the two, default delta = 1e-5.
Query make_query(std::optional<double> delta, std::optional<double> epsilon,
                 const std::vector<double>& alphas);

void bind_run(py::module_& m);
void bind_accounting(py::module_& m);
void bind_calibrate(py::module_& m);
void bind_plan(py::module_& m);
void bind_train(py::module_& m);
void bind_audit(py::module_& m);
void bind_compare(py::module_& m);
/// Gives every function and method of `m` a text signature for inspect.signature (names
/// and defaults from its py::arg annotations) and every class with a constructor a
/// __signature__ (signatures.cpp). Called once, after every binding.
void install_signatures(py::module_& m);

}  // namespace hsdp::python
