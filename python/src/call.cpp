// The wrapper of every call into the module (python/src/call.hpp).
#include "call.hpp"

#include <fmt/format.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include "hsdp/errors.hpp"

namespace hsdp::python {

namespace {

namespace detail = pybind11::detail;

// One parameter of a bound function: its name and the type pybind11 shows for it.
struct Parameter {
  std::string name;
  std::string type;  // "int", "Optional[float]", "List[str]", ...
  bool has_default = false;
  bool keyword_only = false;
};

// What a wrapper knows of the function it wraps.
struct Signature {
  std::string name;  // "train", "Model.predict"
  bool method = false;
  std::vector<Parameter> parameters;  // without self
  bool has_kwargs = false;
};

// The parts of pybind11's signature text "(a: int, *, b: Optional[float] = None) -> R" at the
// commas outside brackets and quotes.
std::vector<std::string> split_top(std::string_view text) {
  std::vector<std::string> parts;
  std::string current;
  int depth = 0;
  char quote = 0;
  for (const char ch : text) {
    if (quote) {
      if (ch == quote) quote = 0;
    } else if (ch == '\'' || ch == '"') {
      quote = ch;
    } else if (ch == '[' || ch == '(' || ch == '{') {
      ++depth;
    } else if (ch == ']' || ch == ')' || ch == '}') {
      --depth;
    } else if (ch == ',' && depth == 0) {
      parts.push_back(current);
      current.clear();
      continue;
    }
    current += ch;
  }
  if (!current.empty()) parts.push_back(current);
  for (auto& p : parts) {
    const auto a = p.find_first_not_of(' '), b = p.find_last_not_of(' ');
    p = a == std::string::npos ? std::string() : p.substr(a, b - a + 1);
  }
  return parts;
}

Signature signature_of(const detail::function_record& rec, const std::string& name) {
  Signature s;
  s.name = name;
  s.method = rec.is_method;
  s.has_kwargs = rec.has_kwargs;
  std::string_view text = rec.signature ? rec.signature : "";
  if (!text.empty() && text.front() == '(') text.remove_prefix(1);
  // The parameter list ends at the ')' that closes the first '('.
  int depth = 0;
  std::size_t end = 0;
  for (; end < text.size(); ++end) {
    if (text[end] == '[' || text[end] == '(') ++depth;
    if (text[end] == ']' || (text[end] == ')' && depth > 0)) --depth;
    else if (text[end] == ')' && depth == 0) break;
  }
  bool keyword_only = false;
  bool first = true;
  for (const std::string& part : split_top(text.substr(0, end))) {
    if (part == "*") {
      keyword_only = true;
      continue;
    }
    if (part.starts_with("*")) continue;  // *args, **kwargs
    if (first && rec.is_method) {  // self
      first = false;
      continue;
    }
    first = false;
    Parameter p;
    const auto colon = part.find(": ");
    const auto equals = part.find(" = ");
    p.name = part.substr(0, colon == std::string::npos ? part.find(' ') : colon);
    if (colon != std::string::npos)
      p.type = part.substr(colon + 2, equals == std::string::npos ? std::string::npos : equals - colon - 2);
    p.has_default = equals != std::string::npos;
    p.keyword_only = keyword_only;
    s.parameters.push_back(std::move(p));
  }
  return s;
}

// The current call (nested calls restore the outer one).
struct Call {
  const Signature* signature = nullptr;
  std::map<std::string, py::object> given;
};
thread_local Call* current = nullptr;

std::string type_name(py::handle v) { return py::str(py::type::handle_of(v).attr("__name__")).cast<std::string>(); }

bool is_numpy_type(py::handle v, const char* abstract) {
  // A handle kept for the life of the process (a static py::object would be released after the
  // interpreter has finalized, at exit: a crash).
  static const py::handle numpy = [] {
    try {
      return py::module_::import("numpy").release();
    } catch (const py::error_already_set&) {
      return py::handle(Py_None);
    }
  }();
  return !numpy.is_none() && py::isinstance(v, numpy.attr(abstract));
}
// A numpy array, without importing numpy where it is not installed (py::isinstance<py::array>
// imports numpy's C API and raises ModuleNotFoundError: accounting needs no numpy).
bool is_numpy_array(py::handle v) { return is_numpy_type(v, "ndarray"); }
bool is_bool(py::handle v) { return py::isinstance<py::bool_>(v) || is_numpy_type(v, "bool_"); }
bool is_integer(py::handle v) { return !is_bool(v) && (py::isinstance<py::int_>(v) || is_numpy_type(v, "integer")); }
bool is_real(py::handle v) {
  return !is_bool(v) && (is_integer(v) || py::isinstance<py::float_>(v) || is_numpy_type(v, "floating"));
}

// The type without Optional[...] (None is accepted where it is optional).
std::string base_type(const std::string& type, bool* optional = nullptr) {
  if (type.starts_with("Optional[") && type.ends_with("]")) {
    if (optional) *optional = true;
    return type.substr(9, type.size() - 10);
  }
  if (optional) *optional = false;
  return type;
}

[[noreturn]] void type_error(const Signature& s, const std::string& keyword, const std::string& expected, py::handle v) {
  std::string shown = py::repr(v).cast<std::string>();
  if (shown.size() > 40) shown = shown.substr(0, 40) + "...";
  throw py::type_error(escape_controls(
      fmt::format("{}(): keyword '{}' expects {}, got {} ({})", s.name, keyword, expected, type_name(v), shown)));
}

// A 0-d numpy array (np.array(1.0), what reductions such as x.sum() of an array can give) as
// the scalar it holds: accepted wherever that scalar is.
py::object scalar_of(py::handle v) {
  if (is_numpy_array(v) && py::reinterpret_borrow<py::array>(v).ndim() == 0) return v.attr("item")();
  return py::reinterpret_borrow<py::object>(v);
}

std::string shown_value(py::handle v) {
  std::string shown = py::repr(v).cast<std::string>();
  if (shown.size() > 40) shown = shown.substr(0, 40) + "...";
  return shown;
}

// An integer beyond the 64-bit range (signed or unsigned) that no int keyword of the module takes.
bool beyond_64_bits(py::handle v) {
  int overflow = 0;
  PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow == 0) return false;
  if (overflow < 0) return true;
  PyLong_AsUnsignedLongLong(v.ptr());
  const bool beyond = PyErr_Occurred() != nullptr;
  PyErr_Clear();
  return beyond;
}

// Checks one argument against its declared type; returns the value to pass (a numpy integer of
// any width as an int, a numpy real of any width as a float, a 0-d array as its scalar).
// Throws TypeError for a bool given as a number, a float given as an int; ValueError naming
// the keyword for a number beyond what its type holds (int: 64 bits; float: float64).
py::object checked(const Signature& s, const Parameter& p, py::handle given) {
  bool optional = false;
  const std::string type = base_type(p.type, &optional);
  if (given.is_none()) return py::reinterpret_borrow<py::object>(given);
  const py::object scalar = type == "int" || type == "float" || type == "bool" ? scalar_of(given)
                                                                               : py::reinterpret_borrow<py::object>(given);
  const py::handle v = scalar;
  if (type == "int") {
    if (!is_integer(v)) type_error(s, p.name, "int", v);
    // numpy integers as int (operator.index). Its range is the binding's: a seed names its own
    // ([0, 2**64 - 1], unsigned_keyword); a value an int64 cannot hold fails pybind11's
    // conversion and is named below (call_through).
    return py::int_(py::reinterpret_borrow<py::object>(v));
  }
  if (type == "float") {
    if (!is_real(v)) type_error(s, p.name, "float", v);
    PyObject* out = PyNumber_Float(v.ptr());  // float16 .. longdouble, and ints, as float64
    if (!out) {
      if (!PyErr_ExceptionMatches(PyExc_OverflowError)) throw py::error_already_set();
      PyErr_Clear();
      throw py::value_error(
          escape_controls(fmt::format("{} = {}: must be a number in the float64 range", p.name, shown_value(v))));
    }
    return py::reinterpret_steal<py::object>(out);
  }
  if (type == "bool") {
    if (!is_bool(v)) type_error(s, p.name, "bool", v);
    return py::bool_(v.cast<bool>());
  }
  if (type == "str") {
    if (!py::isinstance<py::str>(v)) type_error(s, p.name, "str", v);
  }
  if (type.find("os.PathLike") != std::string::npos && !py::isinstance<py::str>(v) && !py::isinstance<py::bytes>(v) && !py::hasattr(v, "__fspath__") &&
      type.find("List[") == std::string::npos)
    type_error(s, p.name, "a path (str, bytes or os.PathLike)", v);
  if ((type == "List[float]" || type == "List[int]") && !py::isinstance<py::str>(v) && py::hasattr(v, "__iter__") &&
      !is_numpy_array(v)) {
    // Numbers one by one: a bool in a list of numbers is refused too; numpy scalars of any
    // width and 0-d arrays become Python numbers.
    py::list items;
    for (const py::handle given_item : v) {
      const py::object item = scalar_of(given_item);
      if (type == "List[int]" ? !is_integer(item) : !is_real(item))
        type_error(s, p.name, fmt::format("a list of {}", type == "List[int]" ? "int" : "float"), item);
      if (type == "List[int]") {
        py::int_ out(item);
        if (beyond_64_bits(out))
          throw py::value_error(escape_controls(fmt::format("{} = {}: must be integers in the 64-bit range", p.name,
                                                            py::repr(out).cast<std::string>())));
        items.append(out);
      } else {
        PyObject* out = PyNumber_Float(item.ptr());
        if (!out) {
          if (!PyErr_ExceptionMatches(PyExc_OverflowError)) throw py::error_already_set();
          PyErr_Clear();
          throw py::value_error(escape_controls(
              fmt::format("{} = {}: must be numbers in the float64 range", p.name, shown_value(item))));
        }
        items.append(py::reinterpret_steal<py::object>(out));
      }
    }
    return items;
  }
  return py::reinterpret_borrow<py::object>(v);
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string keywords_of(const Signature& s) {
  std::string out;
  for (const auto& p : s.parameters) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

// The arguments of a call matched to the parameters, as Python matches them; TypeError naming
// what does not match (never pybind11's list of overloads).
std::map<std::string, py::object> match(const Signature& s, const py::args& args, const py::kwargs& kwargs) {
  std::map<std::string, py::object> given;
  const std::size_t skip = s.method ? 1 : 0;  // self
  std::size_t positional = 0;
  for (const auto& p : s.parameters) positional += p.keyword_only ? 0 : 1;
  if (args.size() - skip > positional) {
    std::string only;
    for (const auto& p : s.parameters)
      if (p.keyword_only) only += (only.empty() ? "" : ", ") + p.name;
    std::string names;
    for (std::size_t k = 0; k < positional; ++k) names += (names.empty() ? "" : ", ") + s.parameters[k].name;
    throw py::type_error(fmt::format("{}() takes {} positional argument{}{} but {} were given{}", s.name, positional,
                                     positional == 1 ? "" : "s", names.empty() ? "" : " (" + names + ")",
                                     args.size() - skip,
                                     only.empty() ? "" : fmt::format("; these are keyword-only: {}", only)));
  }
  for (std::size_t k = skip; k < args.size(); ++k) given[s.parameters[k - skip].name] = args[k];
  for (const auto& [key, value] : kwargs) {
    const std::string name = py::str(key).cast<std::string>();
    const auto it = std::find_if(s.parameters.begin(), s.parameters.end(), [&](const Parameter& p) { return p.name == name; });
    if (it == s.parameters.end()) {
      if (s.has_kwargs) {
        given[name] = py::reinterpret_borrow<py::object>(value);
        continue;
      }
      std::string nearest;
      std::size_t best = std::string::npos;
      for (const auto& p : s.parameters) {
        const std::size_t d = edit_distance(name, p.name);
        if (d < best) {
          best = d;
          nearest = p.name;
        }
      }
      const bool close = !nearest.empty() && best <= std::max<std::size_t>(2, name.size() / 3);
      throw py::type_error(escape_controls(fmt::format("{}() got an unexpected keyword argument '{}' ({})", s.name, name,
                                                       close ? fmt::format("did you mean '{}'?", nearest)
                                                             : fmt::format("its keywords: {}", keywords_of(s)))));
    }
    if (given.count(name)) throw py::type_error(fmt::format("{}() got multiple values for argument '{}'", s.name, name));
    given[name] = py::reinterpret_borrow<py::object>(value);
  }
  for (const auto& p : s.parameters)
    if (!p.has_default && !given.count(p.name))
      throw py::type_error(fmt::format("{}() missing required argument '{}'", s.name, p.name));
  return given;
}

// Calls `original` as the caller called the wrapper, with the arguments checked.
py::object call_through(const py::object& original, const Signature& s, const py::args& args, const py::kwargs& kwargs) {
  Call call;
  call.signature = &s;
  call.given = match(s, args, kwargs);
  const std::size_t skip = s.method ? 1 : 0;
  py::list positional;
  if (s.method) positional.append(args[0]);
  py::dict named;
  for (auto& [name, value] : call.given) {
    const auto it = std::find_if(s.parameters.begin(), s.parameters.end(), [&](const Parameter& p) { return p.name == name; });
    if (it != s.parameters.end()) value = checked(s, *it, value);
  }
  for (std::size_t k = skip; k < args.size(); ++k) positional.append(call.given[s.parameters[k - skip].name]);
  for (const auto& [key, value] : kwargs) {
    const std::string name = py::str(key).cast<std::string>();
    named[py::str(name)] = call.given[name];
  }
  Call* outer = current;
  current = &call;
  try {
    py::object out = original(*py::tuple(positional), **named);
    current = outer;
    return out;
  } catch (py::error_already_set& e) {
    current = outer;
    // Arguments that match every parameter's declared type can still fail pybind11's own
    // conversion (a value beyond 64 bits, a list where a number is expected): named here.
    // (checked() refused every int beyond 64 bits and every float beyond float64 already: the
    // keyword blamed here is one whose value does not fit, never the first int keyword given.)
    if (e.matches(PyExc_TypeError) && std::string(e.what()).find("incompatible") != std::string::npos) {
      // The first argument whose value is plainly not of its parameter's type.
      for (const auto& p : s.parameters) {
        const auto it = call.given.find(p.name);
        if (it == call.given.end() || it->second.is_none()) continue;
        const std::string type = base_type(p.type);
        const py::handle v = it->second;
        bool plausible = true;
        if (type == "List[str]")
          plausible = !py::isinstance<py::str>(v) && py::hasattr(v, "__iter__") && [&] {
            for (const py::handle item : v)
              if (!py::isinstance<py::str>(item)) return false;
            return true;
          }();
        else if (type.starts_with("List[")) plausible = !py::isinstance<py::str>(v) && py::hasattr(v, "__iter__");
        else if (type.starts_with("hsdp."))
          plausible = type_name(v) == type.substr(5);
        if (!plausible) type_error(s, p.name, p.type, v);
      }
      // Then an int the library's 64-bit integer cannot hold: its range.
      for (const auto& p : s.parameters) {
        const auto it = call.given.find(p.name);
        if (it == call.given.end() || base_type(p.type) != "int" || !py::isinstance<py::int_>(it->second)) continue;
        int overflow = 0;
        PyLong_AsLongLongAndOverflow(it->second.ptr(), &overflow);
        if (overflow != 0)
          throw py::value_error(escape_controls(fmt::format(
              "{} = {}: must be an integer in {}", p.name, py::repr(it->second).cast<std::string>(),
              beyond_64_bits(it->second) ? "the 64-bit range" : "[-2**63, 2**63 - 1]")));
      }
      std::string got;
      for (const auto& [name, value] : call.given)
        got += fmt::format("{}{}: {}", got.empty() ? "" : ", ", name, type_name(value));
      throw py::type_error(fmt::format("{}() cannot take these arguments ({}); its keywords and their types: {}", s.name,
                                       got, [&] {
                                         std::string all;
                                         for (const auto& p : s.parameters)
                                           all += (all.empty() ? "" : ", ") + p.name + ": " + p.type;
                                         return all;
                                       }()));
    }
    throw;
  } catch (...) {
    current = outer;
    throw;
  }
}

// Replaces the function `name` of `owner` (a module or a class) by a wrapper.
void wrap(py::handle owner, const std::string& name, const std::string& shown, bool is_class) {
  py::object original = owner.attr(name.c_str());
  if (is_class) {
    const py::dict members = owner.attr("__dict__");
    if (!members.contains(name.c_str())) return;
    original = members[name.c_str()];
  }
  detail::function_record* rec = record_of(original);
  if (!rec || rec->next) return;  // not a pybind11 function, or overloaded
  auto signature = std::make_shared<Signature>(signature_of(*rec, shown));
  const std::string doc = rec->def && rec->def->ml_doc ? rec->def->ml_doc : "";
  py::options options;
  options.disable_function_signatures();
  options.disable_user_defined_docstrings();
  py::cpp_function wrapper;
  auto body = [original, signature](const py::args& args, const py::kwargs& kwargs) {
    return call_through(original, *signature, args, kwargs);
  };
  if (is_class)
    wrapper = py::cpp_function(body, py::name(name.c_str()), py::is_method(owner));
  else
    wrapper = py::cpp_function(body, py::name(name.c_str()), py::scope(owner));
  // The wrapped function's docstring (with its text signature: inspect and the stubs read it).
  detail::function_record* wrec = record_of(wrapper);
  if (wrec && wrec->def) {
    std::free(const_cast<char*>(wrec->def->ml_doc));
    wrec->def->ml_doc = strdup(doc.c_str());
  }
  owner.attr(name.c_str()) = wrapper;
}

}  // namespace

py::object numeric_scalar(py::handle v) { return scalar_of(v); }
bool is_bool_value(py::handle v) { return is_bool(v); }
bool is_integer_value(py::handle v) { return is_integer(v); }
bool is_real_value(py::handle v) { return is_real(v); }

bool given(const char* keyword) { return !current || current->given.count(keyword) > 0; }

py::object given_value(const char* keyword) {
  if (!current) return py::object();
  const auto it = current->given.find(keyword);
  return it == current->given.end() ? py::object() : it->second;
}

std::string current_call() { return current ? current->signature->name + "()" : std::string("hsdp"); }

void install_calls(py::module_& m) {
  const py::object name = m.attr("__name__");
  const py::list keys = m.attr("__dict__").attr("keys")();
  for (const py::handle key : keys) {
    const std::string k = py::str(key).cast<std::string>();
    const py::object value = m.attr(k.c_str());
    if (!PyType_Check(value.ptr())) {
      if (!k.starts_with("__")) wrap(m, k, "hsdp." + k, false);
      continue;
    }
    if (!py::object(value.attr("__module__")).equal(name)) continue;
    const std::string cls = py::str(value.attr("__name__")).cast<std::string>();
    const py::list members = value.attr("__dict__").attr("keys")();
    for (const py::handle member : members) {
      const std::string mk = py::str(member).cast<std::string>();
      if (mk.starts_with("__") && mk != "__init__") continue;
      wrap(value, mk, mk == "__init__" ? "hsdp." + cls : cls + "." + mk, true);
    }
  }
}

}  // namespace hsdp::python
