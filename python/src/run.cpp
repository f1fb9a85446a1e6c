// hsdp.Run: the one description of a training run (include/hsdp/run.hpp). Its keywords are
// the fields of the library's run statement (hsdp::RunSpec), read and resolved by the same
// code as the command's flags, so a bad value raises ValueError with the CLI's message,
// naming the keyword (e.g. "eta = -1: ...").
#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "call.hpp"
#include "common.hpp"
#include "field_names.hpp"  // cli/: cli_args() are the command's flags
#include "hsdp/errors.hpp"

namespace hsdp::python {

namespace {


template <typename T>
T cast_keyword(const char* key, py::handle value, const char* expected) {
  try {
    return value.cast<T>();
  } catch (const py::cast_error&) {
    throw py::type_error(fmt::format("Run(): keyword '{}' expects {}, got {}", key, expected,
                                     std::string(py::str(py::type::handle_of(value).attr("__name__")))));
  }
}

// Integers must be Python ints (or numpy integers), not floats: a fractional n is an error.
// A bool (Python's or numpy's) is not a number here: n=True must not be the run of 1 record.
bool is_bool(py::handle v) {
  return py::isinstance<py::bool_>(v) || std::string(py::str(py::type::handle_of(v).attr("__name__"))) == "bool_";
}

// numpy integers and reals of every width, and 0-d arrays, as the Python numbers they hold
// (the call wrapper's reading, python/src/call.hpp).
std::optional<std::int64_t> opt_int(const char* key, py::handle given) {
  if (given.is_none()) return std::nullopt;
  const py::object v = numeric_scalar(given);
  if (is_bool(v) || !is_integer_value(v))
    throw py::type_error(fmt::format("Run(): keyword '{}' expects int, got {}", key,
                                     std::string(py::str(py::type::handle_of(v).attr("__name__")))));
  // An int beyond 64 bits: a range error like the CLI's, not a type error.
  const py::int_ i(v);
  int overflow = 0;
  const long long out = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow != 0) {
    PyLong_AsUnsignedLongLong(i.ptr());
    const bool unsigned64 = !PyErr_Occurred();
    PyErr_Clear();
    fail(opt(key), py::repr(i).cast<std::string>(),
         unsigned64 ? "an integer in [-2**63, 2**63 - 1]" : "an integer in the 64-bit range");
  }
  return static_cast<std::int64_t>(out);
}
std::optional<double> opt_float(const char* key, py::handle given) {
  if (given.is_none()) return std::nullopt;
  const py::object v = numeric_scalar(given);
  if (is_bool(v) || !is_real_value(v))
    throw py::type_error(fmt::format("Run(): keyword '{}' expects float, got {}", key,
                                     std::string(py::str(py::type::handle_of(v).attr("__name__")))));
  PyObject* out = PyNumber_Float(v.ptr());  // float16 .. longdouble, and ints, as float64
  if (!out) {
    if (!PyErr_ExceptionMatches(PyExc_OverflowError)) throw py::error_already_set();
    PyErr_Clear();
    std::string shown = py::repr(v).cast<std::string>();
    if (shown.size() > 40) shown = shown.substr(0, 40) + "...";
    fail(opt(key), shown, "a number in the float64 range");
  }
  return py::reinterpret_steal<py::float_>(out).cast<double>();
}
std::optional<std::string> opt_str(const char* key, py::handle v) {
  if (v.is_none()) return std::nullopt;
  return cast_keyword<std::string>(key, v, "str");
}

// States the run field `key` from a Python value: the value is checked for its type
// (TypeError) and handed to the library as text (RunSpec::set parses and keeps it). None
// leaves the field unstated. `convex=False` states the field non_convex. False when `key`
// is not a keyword of Run.
bool set_keyword(RunSpec& spec, const std::string& key, py::handle value) {
  if (key == "convex") {
    if (!value.is_none()) spec.non_convex = !cast_keyword<bool>("convex", value, "bool");
    return true;
  }
  for (const RunField& field : RunSpec::fields()) {
    if (field.name != key || field.name == "non_convex") continue;
    const char* k = key.c_str();
    switch (field.type) {
      case RunField::Type::switch_:
        if (!value.is_none() && cast_keyword<bool>(k, value, "bool")) spec.set(key, "");
        return true;
      case RunField::Type::integer:
        if (const auto v = opt_int(k, value)) spec.set(key, std::to_string(*v));
        return true;
      case RunField::Type::real:
        if (const auto v = opt_float(k, value)) spec.set(key, show(*v));
        return true;
      case RunField::Type::word:
        if (const auto v = opt_str(k, value)) spec.set(key, *v);
        return true;
      case RunField::Type::boolean:
        if (!value.is_none()) spec.set(key, cast_keyword<bool>(k, value, "bool") ? "true" : "false");
        return true;
    }
  }
  return false;
}

void apply(RunSpec& spec, const py::kwargs& kwargs, const char* where) {
  for (const auto& [key, value] : kwargs) {
    const std::string k = py::cast<std::string>(key);
    if (!set_keyword(spec, k, value))
      throw py::type_error(fmt::format("{} got an unexpected keyword argument '{}'", where, k));
  }
}

PyRun build(const RunSpec& spec) { return PyRun{spec.resolve(), spec}; }

// The command-line flags that describe the same run: the statement, field by field.
std::vector<std::string> cli_args(const RunSpec& spec) {
  std::vector<std::string> a;
  for (const auto& [field, value] : spec.to_map()) {
    a.push_back(cli::flag(field));
    if (!value.empty()) a.push_back(value);
  }
  return a;
}

// The Python type of a run field's value.
const char* python_type(const RunField& field) {
  switch (field.type) {
    case RunField::Type::integer: return "int";
    case RunField::Type::real: return "float";
    case RunField::Type::word: return "str";
    case RunField::Type::boolean:
    case RunField::Type::switch_: break;
  }
  return "bool";
}

py::object schedule(const Schedule& s) {
  if (s.is_constant()) return py::float_(s.at(1));
  return py::cast(s.values());
}

// The keyword of a run field in Python (non_convex is stated as convex=False).
std::string keyword_of(const RunField& field) {
  return field.name == "non_convex" ? "convex" : std::string(field.name);
}

// Run.replace's docstring: a text signature with every run field keyword-only, default None
// ("keep"), for inspect.signature (python/src/signatures.cpp), then the typed line the stubs
// read, then the text. Written here because replace takes **kwargs in C++.
std::string replace_doc() {
  std::string text, typed;
  for (const RunField& field : RunSpec::fields()) {
    const std::string key = keyword_of(field);
    text += fmt::format(", {}=None", key);
    typed += fmt::format(", {}: Optional[{}] = None", key, python_type(field));
  }
  return fmt::format(
      "replace(self, /, *{})\n--\n\nreplace(self: hsdp.Run, *{}) -> hsdp.Run\n\n"
      "A new run with the keywords given changed (validated like Run()); None keeps a field as "
      "it is. Works on every run: one from calibrate, plan or train is stated as it resolved "
      "(its noise as a std).",
      text, typed);
}

}  // namespace

void bind_run(py::module_& m) {
  // The docstring: the keywords are the fields of the run statement (RunSpec::fields()), with
  // their help, as the command's run flags are.
  static const std::string run_doc = [] {
    std::string doc = R"doc(
The description of one training run (docs/architecture.md, "One run, from flags to report").

Keywords are the run flags of the `hsdp` command, validated by the same code (a bad value
raises ValueError with the CLI's message, naming the keyword); None (the default) means not
stated:

)doc";
    for (const RunField& field : RunSpec::fields()) {
      const bool convex = field.name == "non_convex";  // stated in Python as convex=False
      const std::string head = convex ? "convex (bool, default True)"
                                      : fmt::format("{} ({})", field.name, python_type(field));
      doc += fmt::format("  {:<27} {}\n", head, convex ? std::string_view("The loss is convex (False: it is not)") : field.help);
    }
    return doc + R"doc(
n is required unless example. State one noise parameter: noise_std (std in parameter space),
or sigma with convention, or noise_multiplier with clip (DP-SGD / Opacus: std eta z C / b).
eta may be left out when the noise is stated relative to the step (noise_multiplier, or sigma
in the journal, isit, federated or altschuler convention): the analyses that read eta only
through the noise (composition-rdp, composition-pld) apply, the others say
"not applicable: needs the step size eta".

Example: hsdp.Run(n=1000, eta=0.05, sigma=3, convention="journal", lipschitz=1,
smoothness=1, diameter=1)
)doc";
  }();
  py::class_<PyRun> run_class(m, "Run", run_doc.c_str());
  run_class
      .def(py::init([](const py::kwargs& kwargs) {
             RunSpec f;
             apply(f, kwargs, "Run()");
             return build(f);
           }),
           "Describe a run with the CLI's run flags as keywords (see the class docstring).")
      .def_property_readonly("n", [](const PyRun& r) { return r.run.n; }, "Dataset size (users in the federated setting).")
      .def_property_readonly("steps", [](const PyRun& r) { return r.run.steps; }, "T, the number of noisy updates.")
      .def_property_readonly("batch_size", [](const PyRun& r) { return r.run.batch_size; }, "b, records per step (users per round in the federated setting).")
      .def_property_readonly("sampling", [](const PyRun& r) { return std::string(to_string(r.run.sampling)); }, "How batches are formed: full, poisson, fixed, shuffle or cyclic.")
      .def_property_readonly("eta", [](const PyRun& r) -> py::object {
        if (!r.run.eta_known) return py::none();
        return schedule(r.run.eta);
      }, "Step size: a float when constant, else one value per step; None when not stated.")
      .def_property_readonly("noise", [](const PyRun& r) { return std::string(to_string(r.run.noise)); }, "gaussian or laplace.")
      .def_property_readonly("noise_std", [](const PyRun& r) { return schedule(r.run.noise_std); },
                             "Noise std in parameter space: a float when constant, else one per step "
                             "(per unit of step size when eta is None).")
      .def_property_readonly("lipschitz", [](const PyRun& r) { return r.run.loss.lipschitz; }, "L, the per-example loss' Lipschitz constant (None: unknown).")
      .def_property_readonly("smoothness", [](const PyRun& r) { return r.run.loss.smoothness; }, "beta, the smoothness of the per-example loss (None: unknown).")
      .def_property_readonly("strong_convexity", [](const PyRun& r) { return r.run.loss.strong_convexity; }, "lambda >= 0.")
      .def_property_readonly("convex", [](const PyRun& r) { return r.run.loss.convex; }, "True when the loss is convex.")
      .def_property_readonly("diameter", [](const PyRun& r) { return r.run.diameter; }, "The constraint set's diameter (inf: unconstrained).")
      .def_property_readonly("release", [](const PyRun& r) { return std::string(to_string(r.run.release)); }, "last, random-stop or every.")
      .def_property_readonly("adjacency", [](const PyRun& r) { return std::string(to_string(r.run.adjacency)); }, "replace (one record replaced) or remove (one added or removed).")
      .def_property_readonly("drop_last", [](const PyRun& r) { return r.run.drop_last; }, "Shuffled batches: True drops the partial last batch of each epoch, False keeps it as a smaller batch.")
      .def_property_readonly("order_known", [](const PyRun& r) { return r.run.order_known; }, "True when the batch order is public: no guarantee relies on it being hidden.")
      .def_property_readonly("index", [](const PyRun& r) { return r.run.index; }, "Position 1..n of the differing record, when asked (None otherwise).")
      .def_property_readonly("dimension", [](const PyRun& r) { return r.run.dimension; }, "d, for utility bounds that depend on it (None: not stated).")
      .def_property_readonly("clip", [](const PyRun& r) { return r.run.clip; }, "The per-example clipping norm C, if the trainer clips (None otherwise).")
      .def_property_readonly("lsi", [](const PyRun& r) { return r.run.lsi_constant; }, "An asserted log-Sobolev constant (langevin Thm 2), or None.")
      .def_property_readonly("pld_interval", [](const PyRun& r) { return r.run.pld_interval; }, "The PLD grid spacing of the loss, when stated (None: the analyses' default).")
      .def_property_readonly("pld_cells", [](const PyRun& r) { return r.run.pld_cells; }, "The PLD grid cells per std of one step's loss, when stated (None: the default).")
      .def("summary", [](const PyRun& r) { return r.run.summary(); }, "One-line summary.")
      .def(
          "cli_args",
          [](const PyRun& r) -> py::object {
            if (!r.flags) return py::none();
            return py::cast(cli_args(*r.flags));
          },
          "The `hsdp` command's flags for the same run (None for a run not described with "
          "keywords).")
      .def(
          "to_json", [](const PyRun& r, int indent) { return to_json(r.run).dump(indent); },
          py::arg("indent") = 2, "The run as JSON (the \"run\" object of `hsdp account --json`).")
      .def("to_dict", [](const PyRun& r) { return to_python(to_json(r.run)); }, "to_json() as a dict.")
      .def("__repr__", [](const PyRun& r) { return "hsdp.Run(" + r.run.summary() + ")"; });
  {
    // The docstring states the signature itself (replace_doc): pybind11's would read **kwargs.
    py::options options;
    options.disable_function_signatures();
    static const std::string doc = replace_doc();
    run_class.def(
        "replace",
        [](const PyRun& self, const py::kwargs& kwargs) {
          // A run from calibrate, plan or train is stated as it resolved (its noise as a
          // parameter-space std); one described with keywords keeps its own units.
          RunSpec f = self.flags ? *self.flags : RunSpec::stating(self.run);
          apply(f, kwargs, "Run.replace()");
          return build(f);
        },
        doc.c_str());
  }

  // inspect.signature(hsdp.Run) and help() list the keywords: the fields of the run
  // statement (RunSpec::fields()), keyword-only, None meaning "not stated".
  const py::module_ inspect = py::module_::import("inspect");
  const py::object parameter = inspect.attr("Parameter");
  const py::object keyword_only = parameter.attr("KEYWORD_ONLY");
  const py::object builtins = py::module_::import("builtins");
  py::list parameters;
  for (const RunField& field : RunSpec::fields()) {
    const bool convex = field.name == "non_convex";  // stated in Python as convex=False
    const char* type = python_type(field);
    const py::object annotation =
        field.is_switch() ? builtins.attr("bool")
                          : builtins.attr(type) | py::module_::import("types").attr("NoneType");
    const py::object default_value =
        convex ? py::object(py::bool_(true)) : field.is_switch() ? py::object(py::bool_(false)) : py::none();
    parameters.append(parameter(convex ? "convex" : std::string(field.name), keyword_only,
                                py::arg("default") = default_value, py::arg("annotation") = annotation));
  }
  m.attr("Run").attr("__signature__") = inspect.attr("Signature")(parameters);
}

}  // namespace hsdp::python
