// The Python module `hsdp` (docs/python.md): the same library as the `hsdp` command, with
// the same validation and messages. hsdp::InvalidArgument becomes ValueError, any other
// C++ exception RuntimeError (pybind11 maps std::bad_alloc to MemoryError); the GIL is
// released around accounting, calibration, planning, training and audits.
#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "call.hpp"
#include "common.hpp"
#include "field_names.hpp"  // cli/: reports read the same as the command's (flags)
#include "hsdp/errors.hpp"
#include "hsdp/interrupt.hpp"
#include "hsdp/version.hpp"

namespace hsdp::python {

py::object to_python(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null:
    case nlohmann::json::value_t::discarded: return py::none();
    case nlohmann::json::value_t::boolean: return py::bool_(j.get<bool>());
    case nlohmann::json::value_t::number_integer: return py::int_(j.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned: return py::int_(j.get<std::uint64_t>());
    case nlohmann::json::value_t::number_float: return py::float_(j.get<double>());
    case nlohmann::json::value_t::string: return py::str(j.get_ref<const std::string&>());
    case nlohmann::json::value_t::array: {
      py::list out;
      for (const auto& v : j) out.append(to_python(v));
      return out;
    }
    case nlohmann::json::value_t::object: {
      py::dict out;
      for (const auto& [k, v] : j.items()) out[py::str(k)] = to_python(v);
      return out;
    }
    case nlohmann::json::value_t::binary: break;
  }
  throw std::runtime_error("hsdp: unexpected JSON value");
}

namespace {

// The keyword of a library field where it differs from the field's name.
std::string keyword(std::string_view field) {
  if (field == "for") return "parameter";  // hsdp.calibrate(run, parameter, ...): `for` is reserved
  if (field == "from") return "from_";     // hsdp.compare(run, x=..., from_=..., to=...): reserved
  return std::string(field);
}

// A value as Python source: numbers and one-letter placeholders ("E") bare, words quoted.
std::string python_value(std::string_view value) {
  const std::string text(value);
  const bool number = read_real(text).has_value() || text == "inf" || text == "-inf" || text == "nan";
  if (number || (text.size() == 1 && text[0] >= 'A' && text[0] <= 'Z')) return text;
  return fmt::format("'{}'", text);
}

// Errors name keywords (`ValueError: n = -1: must be ...`).
FieldNames keyword_names() {
  FieldNames f;
  f.option = [](std::string_view field) { return keyword(field); };
  f.option_value = [](std::string_view field, std::string_view value) {
    return value.empty() ? keyword(field) : fmt::format("{}={}", keyword(field), python_value(value));
  };
  f.parameter = [](std::string_view name) {
    std::string out(name);
    for (char& c : out)
      if (c == '-') c = '_';
    return out;
  };
  return f;
}

// Ctrl-C during a long call (include/hsdp/interrupt.hpp): the library's loops poll this check
// (every few ms per thread, the GIL released around the call); on the main thread it takes the
// GIL and runs Python's signal handlers. When one raises (KeyboardInterrupt from SIGINT, or
// what the user's handler raises), its exception is kept for the translator, which raises it
// once the call has unwound. Other threads (the audit's workers) never run Python's handlers
// (Python runs them on the main thread only); they stop at their next poll once the main
// thread's check said stop.
struct PendingSignal {
  PyObject* type = nullptr;
  PyObject* value = nullptr;
  PyObject* traceback = nullptr;
};
PendingSignal pending_signal;  // touched with the GIL held only
unsigned long main_thread_ident = 0;

bool check_signals() {
  if (PyThread_get_thread_ident() != main_thread_ident) return false;
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() == 0) return false;
  Py_CLEAR(pending_signal.type);
  Py_CLEAR(pending_signal.value);
  Py_CLEAR(pending_signal.traceback);
  PyErr_Fetch(&pending_signal.type, &pending_signal.value, &pending_signal.traceback);
  return true;
}

// The exception a signal handler raised during the call, as the call's error.
void raise_pending_signal() {
  hsdp::stop_handled();
  if (pending_signal.type) {
    PyErr_Restore(pending_signal.type, pending_signal.value, pending_signal.traceback);
    pending_signal = {};
  } else {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
  }
}

}  // namespace

namespace {
// A tensor that records gradients cannot become an array (torch refuses .numpy()): say how.
void refuse_tracked_tensor(py::handle value, const char* name) {
  if (!py::hasattr(value, "requires_grad") || !py::hasattr(value, "detach")) return;
  bool tracked = false;
  try {
    tracked = py::bool_(value.attr("requires_grad")).cast<bool>();
  } catch (const py::error_already_set&) {
    return;
  }
  if (tracked)
    fail(opt(name), fmt::format("a {} that requires grad", std::string(py::str(py::type::handle_of(value).attr("__name__")))),
         fmt::format("an array of numbers: give {0}.detach() (or {0}.detach().cpu().numpy()), the values without "
                     "their gradient graph",
                     name));
}
}  // namespace

py::array_t<double, py::array::forcecast> numeric_array(py::handle value, const char* name) {
  refuse_tracked_tensor(value, name);
  py::array a = py::array::ensure(value);
  if (!a)
    fail(opt(name), fmt::format("a {}", std::string(py::str(py::type::handle_of(value).attr("__name__")))),
         "an array of numbers (n records x d features, or n labels)");
  const char kind = a.dtype().kind();
  if (kind != 'b' && kind != 'i' && kind != 'u' && kind != 'f')
    fail(opt(name), fmt::format("an array of dtype {}", std::string(py::str(a.dtype()))),
         "an array of real numbers (bool, int or float; complex numbers, text and objects are not accepted)");
  return py::array_t<double, py::array::forcecast>::ensure(a);
}

LabelsArg labels_array(py::handle value, const char* name) {
  refuse_tracked_tensor(value, name);
  const std::string wanted = "labels that are all numbers (bool, int or float) or all text (str), one per record";
  LabelsArg out;
  py::array a = py::array::ensure(value);
  if (!a) fail(opt(name), fmt::format("a {}", std::string(py::str(py::type::handle_of(value).attr("__name__")))), wanted);
  char kind = a.dtype().kind();
  // A list or tuple is read element by element (as an object array): numpy would turn
  // [1, "a"] into the text "1", "a" silently, and a ragged list into objects.
  if (!py::isinstance<py::array>(value) && (kind == 'U' || kind == 'O')) {
    a = py::module_::import("numpy").attr("array")(value, py::arg("dtype") = "object");
    kind = 'O';
  }
  if (kind == 'b' || kind == 'i' || kind == 'u' || kind == 'f') {
    out.numbers = py::array_t<double, py::array::forcecast>::ensure(a);
    return out;
  }
  if (kind != 'U' && kind != 'O')
    fail(opt(name), fmt::format("an array of dtype {}", std::string(py::str(a.dtype()))),
         wanted + " (complex numbers, bytes and other objects are not accepted)");
  if (a.ndim() != 1) fail(opt(name), fmt::format("an array with {} dimensions", a.ndim()), "a 1-D array of n labels");
  const py::list items = a.attr("tolist")();
  if (kind == 'O') {
    // All numbers (numbers.Real: Python's and numpy's reals and bools, not complex) or all str.
    const py::object real = py::module_::import("numbers").attr("Real");
    std::size_t texts = 0;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const py::handle item = items[i];
      const bool text = py::isinstance<py::str>(item);
      if (!text && !py::isinstance(item, real))
        fail(fmt::format("{}[{}]", name, i), fmt::format("a {}", std::string(py::str(py::type::handle_of(item).attr("__name__")))),
             wanted);
      texts += text ? 1 : 0;
      if (texts != 0 && texts != i + 1)
        fail(fmt::format("{}[{}]", name, i), std::string(py::repr(item)),
             fmt::format("{} ({}[0] is {})", wanted, name, py::isinstance<py::str>(items[0]) ? "text" : "a number"));
    }
    if (texts == 0) {
      out.numbers = py::array_t<double, py::array::forcecast>::ensure(a);
      if (!out.numbers) fail(opt(name), "an array of objects", wanted);
      return out;
    }
  }
  out.texts.emplace();
  out.texts->reserve(items.size());
  for (const py::handle item : items) out.texts->push_back(item.cast<std::string>());
  return out;
}

std::optional<std::uint64_t> unsigned_keyword(const char* keyword, const std::optional<py::int_>& value) {
  if (!value) return std::nullopt;
  return parse_unsigned(opt(keyword), std::string(py::repr(*value)));
}

Query make_query(std::optional<double> delta, std::optional<double> epsilon,
                 const std::vector<double>& alphas) {
  // Mutually exclusive, as the CLI's flags are declared.
  if (delta && epsilon)
    throw InvalidArgument(fmt::format("{} excludes {}", error_field("epsilon"), error_field("delta")));
  return stated_query(epsilon, delta, alphas);
}

}  // namespace hsdp::python

// The extension is hsdp._hsdp inside the package hsdp (python/hsdp/__init__.py re-exports it
// next to the pure-Python submodules hsdp.sklearn and hsdp.torch). Its classes and functions
// are the package's: named before any is defined, so that their __module__, repr and the
// signatures in their docstrings read hsdp.Run, not hsdp._hsdp.Run.
PYBIND11_MODULE(_hsdp, m) {
  namespace py = pybind11;
  using namespace hsdp::python;
  m.attr("__name__") = "hsdp";
  m.doc() =
      "hsdp: differential privacy of the last iterate of noisy gradient descent.\n\n"
      "Describe a training run (hsdp.Run), then ask for its privacy: "
      "hsdp.Accountant(run).get_epsilon(delta) / .get_delta(epsilon), or the full report of "
      "every analysis (hsdp.account(run, delta=...)). Also: hsdp.analysis(name), "
      "hsdp.analyses(), hsdp.calibrate, hsdp.plan, hsdp.train (numpy arrays), "
      "hsdp.audit_exact. Bad input raises ValueError with the message of the `hsdp` command, "
      "naming keywords where the command names flags.";
  m.attr("__version__") = std::string(hsdp::version());  // CMake's project version

  // Errors name the keywords of this module; the text of results (an analysis's reason,
  // notes) reads as the command's, so that to_json() equals `hsdp ... --json` byte for byte.
  hsdp::use_field_names(keyword_names(), hsdp::cli::flag_names());

  // InvalidArgument derives from std::invalid_argument (pybind11 would map it to ValueError
  // too); stated explicitly because it is the contract with the CLI's messages.
  // Anything else a C++ function throws is a bug, never the caller's input: RuntimeError naming
  // the call (hsdp::internal_error). pybind11's own exceptions (TypeError, ...), Python errors
  // and std::bad_alloc (MemoryError) keep their translation.
  main_thread_ident = py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
  hsdp::set_interrupt_check(check_signals);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const hsdp::Interrupted&) {
      raise_pending_signal();
    } catch (const hsdp::InvalidArgument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const py::error_already_set&) {
      throw;
    } catch (const py::builtin_exception&) {
      throw;
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      PyErr_SetString(PyExc_RuntimeError, hsdp::internal_error(current_call(), e.what()).c_str());
    }
  });
  // The last resort above, for the tests: raises the C++ exception it is given the text of.
  m.def(
      "_raise_internal_error", [](const std::string& what) { throw std::logic_error(what); }, py::arg("what"),
      "Raises a C++ std::logic_error (for the tests of the last resort: RuntimeError naming the call).");

  bind_run(m);
  bind_accounting(m);
  bind_calibrate(m);
  bind_plan(m);
  bind_model(m);  // before train: TrainResult.model returns an hsdp.Model
  bind_train(m);
  bind_audit(m);
  bind_compare(m);
  bind_random(m);
  bind_selection(m);  // hsdp.rdp_curve (python/src/selection.cpp)
  // Last: every function exists now (python/src/signatures.cpp), then each is called through
  // the wrapper of python/src/call.cpp (which keeps the signatures installed).
  install_signatures(m);
  install_calls(m);
}
