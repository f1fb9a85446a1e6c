// Shared pieces of the Python bindings (docs/python.md): the Run wrapper that remembers
// the keywords it was described with (they are the CLI's run flags), JSON -> Python
// conversion, and the registration functions of each part of the module.
#pragma once

#include <pybind11/numpy.h>
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

/// The neighbouring relation a privacy number holds for, as every repr() names it.
inline std::string adjacency_words(Adjacency a, bool user_level = false) {
  return std::string(user_level ? "user-level " : "") +
         (a == Adjacency::replace ? "replace-one adjacency" : "add/remove-one adjacency");
}

/// "delta" / "epsilon" query of the CLI's run flags (--delta, --epsilon, --alpha), with the
/// CLI's validation and messages: at most one of the two, default delta = 1e-5.
Query make_query(std::optional<double> delta, std::optional<double> epsilon,
                 const std::vector<double>& alphas);

/// An array argument as float64 (any array-like of booleans, integers or floats); anything else
/// (complex numbers, whose imaginary part numpy would drop silently; text; objects; ragged
/// lists) is an InvalidArgument (ValueError) naming the keyword `name`.
py::array_t<double, py::array::forcecast> numeric_array(py::handle value, const char* name);

/// A numeric array argument (numeric_array) named `Name` in messages, converted when the
/// call's arguments are read, so that a bad value raises ValueError naming the keyword instead
/// of pybind11's "incompatible function arguments" TypeError. Its stub type is an ndarray.
template <const char* Name>
struct NumericArray {
  py::array_t<double, py::array::forcecast> array;
};
inline constexpr char kFeatures[] = "X";
using FeaturesArg = NumericArray<kFeatures>;

/// The labels argument y, converted when the call's arguments are read: numbers (as
/// numeric_array: bool, int or float) or text (a numpy str array, an object array or a list
/// of str), as a file's labels may be numbers or text ("M"/"B"). Anything else (complex
/// numbers, bytes, objects that are neither numbers nor str, a mix of numbers and text,
/// ragged lists) is an InvalidArgument (ValueError) naming y. Checked later, with X
/// (dataset_from): one dimension, one label per row, finite numbers, non-empty text.
struct LabelsArg {
  py::array_t<double, py::array::forcecast> numbers;  ///< numeric labels (when texts is unset)
  std::optional<std::vector<std::string>> texts;      ///< text labels (1-D)
  py::ssize_t ndim() const { return texts ? 1 : numbers.ndim(); }
  py::ssize_t size() const { return texts ? static_cast<py::ssize_t>(texts->size()) : numbers.shape(0); }
};
LabelsArg labels_array(py::handle value, const char* name);

/// A file path argument: a str, bytes or an os.PathLike (pathlib.Path), as its bytes (os.fsencode).
/// Anything else (bytes paths included) does not match: the call wrapper names the keyword.
struct PathArg {
  std::string path;
  operator std::string() const { return path; }  // NOLINT: a path reads as its text
};
/// The text of an optional path.
inline std::optional<std::string> path_of(const std::optional<PathArg>& p) {
  return p ? std::optional<std::string>(p->path) : std::nullopt;
}

/// pybind11's record of a function (a bound method's or a static method's underlying function
/// too); nullptr when `f` is not a pybind11 function (python/src/signatures.cpp).
pybind11::detail::function_record* record_of(py::handle f);

/// An unsigned keyword (a seed, a column index) given as a Python int: the library's
/// sign-checked parse, so seed=-1 or seed=2**64 is a ValueError naming the keyword.
std::optional<std::uint64_t> unsigned_keyword(const char* keyword, const std::optional<py::int_>& value);

void bind_run(py::module_& m);
void bind_accounting(py::module_& m);
void bind_calibrate(py::module_& m);
void bind_plan(py::module_& m);
void bind_train(py::module_& m);
void bind_audit(py::module_& m);
void bind_compare(py::module_& m);
void bind_model(py::module_& m);
void bind_random(py::module_& m);
void bind_selection(py::module_& m);
/// Gives every function and method of `m` a text signature for inspect.signature (names
/// and defaults from its py::arg annotations) and every class with a constructor a
/// __signature__ (signatures.cpp). Called once, after every binding.
void install_signatures(py::module_& m);

}  // namespace hsdp::python

namespace pybind11::detail {
template <const char* Name>
struct type_caster<hsdp::python::NumericArray<Name>> {
  PYBIND11_TYPE_CASTER(hsdp::python::NumericArray<Name>, const_name("numpy.ndarray[numpy.float64]"));
  bool load(handle src, bool) {
    value.array = hsdp::python::numeric_array(src, Name);  // throws: ValueError naming Name
    return true;
  }
  static handle cast(const hsdp::python::NumericArray<Name>& v, return_value_policy, handle) {
    return v.array.inc_ref();
  }
};
// A path is bytes (docs/input.md "File names are bytes"): a str is encoded as os.fsencode does
// (the file system encoding with surrogateescape, so a name Python read from the system, with
// bytes that are not UTF-8, names the same file), bytes are taken as they are, an os.PathLike
// through os.fspath. Given back to Python as os.fsdecode does.
template <>
struct type_caster<hsdp::python::PathArg> {
  PYBIND11_TYPE_CASTER(hsdp::python::PathArg, const_name("Union[str, bytes, os.PathLike]"));
  bool load(handle src, bool) {
    object path = reinterpret_borrow<object>(src);
    if (!PyUnicode_Check(src.ptr()) && !PyBytes_Check(src.ptr())) {
      if (!hasattr(src, "__fspath__")) return false;
      path = module_::import("os").attr("fspath")(src);
    }
    if (PyUnicode_Check(path.ptr())) {
      PyObject* encoded = PyUnicode_EncodeFSDefault(path.ptr());
      if (encoded == nullptr) throw error_already_set();
      path = reinterpret_steal<object>(encoded);
    }
    if (!PyBytes_Check(path.ptr())) return false;
    char* data = nullptr;
    Py_ssize_t size = 0;
    if (PyBytes_AsStringAndSize(path.ptr(), &data, &size) != 0) throw error_already_set();
    value.path.assign(data, static_cast<std::size_t>(size));
    return true;
  }
  static handle cast(const hsdp::python::PathArg& v, return_value_policy, handle) {
    return PyUnicode_DecodeFSDefaultAndSize(v.path.data(), static_cast<Py_ssize_t>(v.path.size()));
  }
};
template <>
struct type_caster<hsdp::python::LabelsArg> {
  PYBIND11_TYPE_CASTER(hsdp::python::LabelsArg, const_name("numpy.ndarray[typing.Any]"));
  bool load(handle src, bool) {
    value = hsdp::python::labels_array(src, "y");  // throws: ValueError naming y
    return true;
  }
};
}  // namespace pybind11::detail
