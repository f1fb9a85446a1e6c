// Real signatures for inspect.signature() and help(): CPython reads a builtin function's
// signature from its C docstring when that starts with a text signature,
// "name(a, *, b=None)\n--\n\n" (what Argument Clinic writes for the standard library).
// pybind11 2.10 starts the docstring with a typed line, "name(a: T, *, b: Optional[float] =
// None) -> R", without that marker, so inspect finds no signature. After every binding is
// made, install_signatures() puts a text signature in front of each function's docstring,
// built from pybind11's own record of the function (the py::arg names, the keyword-only
// marker, the defaults); __doc__ still shows pybind11's typed line and the docstring.
// A class with a constructor gets __signature__ (its __init__'s, without self).
#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "common.hpp"

namespace hsdp::python {

namespace {

namespace detail = pybind11::detail;

}  // namespace

detail::function_record* record_of(py::handle f) {
  if (!f) return nullptr;
  if (PyObject_TypeCheck(f.ptr(), &PyStaticMethod_Type)) f = f.attr("__func__");
  const py::handle h = detail::get_function(f);
  if (!h || !PyCFunction_Check(h.ptr())) return nullptr;
  const py::handle self = PyCFunction_GET_SELF(h.ptr());
  if (!self || !py::isinstance<py::capsule>(self)) return nullptr;
  const auto capsule = py::reinterpret_borrow<py::capsule>(self);
  if (!detail::is_function_record_capsule(capsule)) return nullptr;
  return capsule.get_pointer<detail::function_record>();
}

namespace {

// A default value as Python source that inspect can read back (ast.literal_eval): None,
// bools, numbers (+-inf as 1e309, which reads back as inf), strings, lists and tuples of
// them. Anything else is a binding error, found at import by every test.
std::string source_of(py::handle v, const std::string& where) {
  if (v.is_none() || py::isinstance<py::bool_>(v) || py::isinstance<py::int_>(v) || py::isinstance<py::str>(v))
    return py::repr(v).cast<std::string>();
  if (py::isinstance<py::float_>(v)) {
    const double x = v.cast<double>();
    if (std::isnan(x)) throw std::logic_error(where + ": a NaN default has no signature text");
    if (std::isinf(x)) return x > 0 ? "1e309" : "-1e309";
    return py::repr(v).cast<std::string>();
  }
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    std::string out;
    for (const py::handle item : v) out += (out.empty() ? "" : ", ") + source_of(item, where);
    if (py::isinstance<py::list>(v)) return "[" + out + "]";
    return "(" + out + (py::len(v) == 1 ? ",)" : ")");
  }
  throw std::logic_error(fmt::format("{}: a default of type {} has no signature text", where,
                                     py::type::of(v).attr("__name__").cast<std::string>()));
}

// "(a, *, b=None)" ("(self, /, ...)" for a method) from the record, as pybind11 lays out
// the arguments when it writes its typed line: the first of a method is self, positional
// ones up to nargs_pos, then *args or a keyword-only "*", then **kwargs.
std::string text_signature(const detail::function_record& rec) {
  const std::string where = fmt::format("hsdp: {}()", rec.name);
  if (rec.next) throw std::logic_error(where + ": overloaded functions are not supported");
  const std::size_t first = rec.is_method ? 1 : 0;
  if (rec.nargs_pos_only > first) throw std::logic_error(where + ": positional-only arguments are not supported");
  std::string out;
  auto add = [&out](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  // "self", not Argument Clinic's "$self": inspect drops a "$self" whenever __self__ is set,
  // and a pybind11 function's __self__ is its record, so a bound method would lose a parameter.
  if (rec.is_method) add("self, /");
  const std::size_t n = rec.nargs;
  const std::size_t kwargs_at = rec.has_kwargs ? n - 1 : n;
  for (std::size_t i = first; i < n; ++i) {
    const bool named = i < rec.args.size() && rec.args[i].name;
    if (i == kwargs_at) {
      add("**" + std::string(named ? rec.args[i].name : "kwargs"));
      continue;
    }
    if (rec.has_args && i == rec.nargs_pos) {
      add("*" + std::string(named ? rec.args[i].name : "args"));
      continue;
    }
    if (!rec.has_args && i == rec.nargs_pos) add("*");
    std::string part = named ? rec.args[i].name : fmt::format("arg{}", i - first);
    if (i < rec.args.size() && rec.args[i].value)
      part += "=" + source_of(rec.args[i].value, fmt::format("{} argument {}", where, part));
    add(part);
  }
  return "(" + out + ")";
}

// Puts the text signature in front of the function's C docstring (pybind11 allocates the
// docstring with strdup and frees it with free: the same here).
void install(py::handle f) {
  detail::function_record* rec = record_of(f);
  if (!rec || !rec->def) return;
  const char* old = rec->def->ml_doc ? rec->def->ml_doc : "";
  const std::string head = std::string(rec->name) + "(";
  if (std::string_view(old).starts_with(head) && std::string_view(old).find(")\n--\n\n") != std::string_view::npos)
    return;  // already installed
  const std::string doc = fmt::format("{}{}\n--\n\n{}", rec->name, text_signature(*rec), old);
  char* copy = strdup(doc.c_str());
  if (!copy) throw std::bad_alloc();
  std::free(const_cast<char*>(rec->def->ml_doc));
  rec->def->ml_doc = copy;
}

}  // namespace

void install_signatures(py::module_& m) {
  const py::module_ inspect = py::module_::import("inspect");
  const py::object name = m.attr("__name__");
  for (const py::handle key : m.attr("__dict__").cast<py::dict>().attr("keys")()) {
    const py::object value = m.attr(key);
    if (!PyType_Check(value.ptr())) {
      install(value);
      continue;
    }
    if (!py::object(value.attr("__module__")).equal(name)) continue;
    const py::dict members = value.attr("__dict__").cast<py::dict>();
    for (const auto& [member, object] : members) install(object);
    // The class's signature is its constructor's, without self (hsdp.Run sets its own, the
    // run fields). A class without a constructor is made by hsdp only (a result).
    if (members.contains("__init__") && !members.contains("__signature__") && record_of(members["__init__"])) {
      const py::object sig = inspect.attr("signature")(members["__init__"]);
      py::list parameters(sig.attr("parameters").attr("values")());
      if (py::len(parameters) > 0 && py::str(parameters[0].attr("name")).cast<std::string>() == "self")
        parameters = parameters[py::slice(1, py::len(parameters), 1)];
      value.attr("__signature__") = sig.attr("replace")(py::arg("parameters") = parameters);
    }
  }
}

}  // namespace hsdp::python
