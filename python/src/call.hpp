// Every call into the module goes through one wrapper (python/src/call.cpp, installed last by
// install_calls): the arguments as the caller gave them, read before pybind11 converts them.
//  - Numbers: a bool (or numpy.bool_) is refused where an int or a float is expected, a float
//    where an int is (TypeError naming the keyword); a numpy integer scalar is an int
//    wherever one is accepted.
//  - A call whose arguments pybind11 cannot match raises TypeError naming what is wrong (an
//    unknown keyword with the nearest one, a keyword-only argument given by position, a missing
//    or repeated one, the argument of the wrong type), never pybind11's "incompatible function
//    arguments" list of overloads.
//  - What the caller stated: given(keyword) says whether a keyword was passed, so that a
//    keyword shown with its default value (huber_smoothing=0.5) counts as stated only when the
//    caller typed it (the rule of include/hsdp/field_use.hpp).
//  - An exception that is not an InvalidArgument (a bug) is RuntimeError naming the call
//    (hsdp::internal_error).
#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace hsdp::python {

namespace py = pybind11;

/// Whether the call being made passed `keyword` (by name or by position). Outside a call (C++
/// code calling a binding directly): true.
bool given(const char* keyword);

/// The value the call passed for `keyword`, or a null handle when it passed none.
py::object given_value(const char* keyword);

/// The name of the call being made ("hsdp.train()", "Model.predict()"), for messages.
std::string current_call();

/// Numbers as the wrapper reads them, for the bindings that take **kwargs (hsdp.Run): a 0-d
/// array as the scalar it holds; whether a value is a bool (Python's or numpy's), an integer
/// (Python's or numpy's of any width, not a bool), a real (an integer or a float of any width).
py::object numeric_scalar(py::handle v);
bool is_bool_value(py::handle v);
bool is_integer_value(py::handle v);
bool is_real_value(py::handle v);

/// Wraps every function of `m` and every method and constructor of its classes (after
/// install_signatures: each wrapper keeps its function's docstring and text signature).
void install_calls(py::module_& m);

}  // namespace hsdp::python
