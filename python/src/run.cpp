// hsdp.Run: the one description of a training run (include/hsdp/run.hpp). Its keywords are
// the run flags of the `hsdp` command (cli/run_flags.cpp), validated by the same code, so a
// bad value raises ValueError with the CLI's message, naming the keyword (e.g. "eta = -1: ...").
#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "common.hpp"
#include "hsdp/errors.hpp"

namespace hsdp::python {

namespace {

using Setter = std::function<void(cli::RunFlags&, py::handle)>;

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
std::optional<std::int64_t> opt_int(const char* key, py::handle v) {
  if (v.is_none()) return std::nullopt;
  if (py::isinstance<py::bool_>(v) || py::isinstance<py::float_>(v))
    throw py::type_error(fmt::format("Run(): keyword '{}' expects int, got {}", key,
                                     std::string(py::str(py::type::handle_of(v).attr("__name__")))));
  if (py::isinstance<py::int_>(v)) {
    // A Python int beyond 64 bits: a range error like the CLI's, not a type error.
    try {
      return v.cast<std::int64_t>();
    } catch (const py::cast_error&) {
      fail(opt(key), std::string(py::str(v)), "an integer in the 64-bit range");
    }
  }
  return cast_keyword<std::int64_t>(key, v, "int");
}
std::optional<double> opt_float(const char* key, py::handle v) {
  if (v.is_none()) return std::nullopt;
  return cast_keyword<double>(key, v, "float");
}
std::optional<std::string> opt_str(const char* key, py::handle v) {
  if (v.is_none()) return std::nullopt;
  return cast_keyword<std::string>(key, v, "str");
}

// keyword -> how it sets the run flags. The order is the order of Run.cli_args().
const std::vector<std::pair<std::string, Setter>>& setters() {
  static const std::vector<std::pair<std::string, Setter>> table = {
      {"example", [](cli::RunFlags& f, py::handle v) { f.example = cast_keyword<bool>("example", v, "bool"); }},
      {"n", [](cli::RunFlags& f, py::handle v) { f.n = opt_int("n", v); }},
      {"steps", [](cli::RunFlags& f, py::handle v) { f.steps = opt_int("steps", v); }},
      {"batch_size", [](cli::RunFlags& f, py::handle v) { f.batch_size = opt_int("batch_size", v).value_or(1); }},
      {"sampling", [](cli::RunFlags& f, py::handle v) { f.sampling = opt_str("sampling", v); }},
      {"eta", [](cli::RunFlags& f, py::handle v) { f.eta = opt_float("eta", v); }},
      {"eta_schedule", [](cli::RunFlags& f, py::handle v) { f.eta_schedule = opt_str("eta_schedule", v).value_or("constant"); }},
      {"noise", [](cli::RunFlags& f, py::handle v) { f.noise = opt_str("noise", v).value_or("gaussian"); }},
      {"noise_std", [](cli::RunFlags& f, py::handle v) { f.noise_std = opt_float("noise_std", v); }},
      {"sigma", [](cli::RunFlags& f, py::handle v) { f.sigma = opt_float("sigma", v); }},
      {"convention", [](cli::RunFlags& f, py::handle v) { f.convention = opt_str("convention", v); }},
      {"noise_multiplier", [](cli::RunFlags& f, py::handle v) { f.noise_multiplier = opt_float("noise_multiplier", v); }},
      {"clip", [](cli::RunFlags& f, py::handle v) { f.clip = opt_float("clip", v); }},
      {"lsi", [](cli::RunFlags& f, py::handle v) { f.lsi = opt_float("lsi", v); }},
      {"lipschitz", [](cli::RunFlags& f, py::handle v) { f.lipschitz = opt_float("lipschitz", v); }},
      {"smoothness", [](cli::RunFlags& f, py::handle v) { f.smoothness = opt_float("smoothness", v); }},
      {"strong_convexity", [](cli::RunFlags& f, py::handle v) { f.strong_convexity = opt_float("strong_convexity", v).value_or(0.0); }},
      {"convex", [](cli::RunFlags& f, py::handle v) { f.non_convex = !cast_keyword<bool>("convex", v, "bool"); }},
      {"diameter", [](cli::RunFlags& f, py::handle v) {
         f.diameter = opt_float("diameter", v).value_or(std::numeric_limits<double>::infinity());
       }},
      {"release", [](cli::RunFlags& f, py::handle v) { f.release = opt_str("release", v).value_or("last"); }},
      {"adjacency", [](cli::RunFlags& f, py::handle v) { f.adjacency = opt_str("adjacency", v).value_or("replace"); }},
      {"index", [](cli::RunFlags& f, py::handle v) { f.index = opt_int("index", v); }},
      {"dimension", [](cli::RunFlags& f, py::handle v) { f.dimension = opt_int("dimension", v); }},
  };
  return table;
}

void apply(cli::RunFlags& f, const py::kwargs& kwargs, const char* where) {
  for (const auto& [key, value] : kwargs) {
    const std::string k = py::cast<std::string>(key);
    bool found = false;
    for (const auto& [name, set] : setters()) {
      if (name != k) continue;
      set(f, value);
      found = true;
      break;
    }
    if (!found) throw py::type_error(fmt::format("{} got an unexpected keyword argument '{}'", where, k));
  }
}

PyRun build(const cli::RunFlags& f) {
  cli::RunFlags clean = f;
  clean.epsilon.reset();  // the query is not part of a run
  clean.delta.reset();
  clean.alphas.clear();
  Run run = clean.to_run();
  return PyRun{std::move(run), clean};
}

// The command-line flags that describe the same run (shortest round-trip numbers).
std::vector<std::string> cli_args(const cli::RunFlags& f) {
  std::vector<std::string> a;
  auto add = [&](const char* flag, const std::string& value) {
    a.push_back(flag);
    a.push_back(value);
  };
  if (f.example) a.push_back("--example");
  if (f.n) add("--n", std::to_string(*f.n));
  if (f.steps) add("--steps", std::to_string(*f.steps));
  if (f.batch_size != 1) add("--batch-size", std::to_string(f.batch_size));
  if (f.sampling) add("--sampling", *f.sampling);
  if (f.eta) add("--eta", show(*f.eta));
  if (f.eta_schedule != "constant") add("--eta-schedule", f.eta_schedule);
  if (f.noise != "gaussian") add("--noise", f.noise);
  if (f.noise_std) add("--noise-std", show(*f.noise_std));
  if (f.sigma) add("--sigma", show(*f.sigma));
  if (f.convention) add("--convention", *f.convention);
  if (f.noise_multiplier) add("--noise-multiplier", show(*f.noise_multiplier));
  if (f.clip) add("--clip", show(*f.clip));
  if (f.lsi) add("--lsi", show(*f.lsi));
  if (f.lipschitz) add("--lipschitz", show(*f.lipschitz));
  if (f.smoothness) add("--smoothness", show(*f.smoothness));
  if (f.strong_convexity != 0.0) add("--strong-convexity", show(f.strong_convexity));
  if (f.non_convex) a.push_back("--non-convex");
  if (!std::isinf(f.diameter) || f.diameter < 0) add("--diameter", show(f.diameter));
  if (f.release != "last") add("--release", f.release);
  if (f.adjacency != "replace") add("--adjacency", f.adjacency);
  if (f.index) add("--index", std::to_string(*f.index));
  if (f.dimension) add("--dimension", std::to_string(*f.dimension));
  return a;
}

py::object schedule(const Schedule& s) {
  if (s.is_constant()) return py::float_(s.at(1));
  return py::cast(s.values());
}

}  // namespace

void bind_run(py::module_& m) {
  py::class_<PyRun>(m, "Run", R"doc(
The description of one training run (DESIGN.md "One description of a run").

Keywords are the run flags of the `hsdp` command, validated by the same code (a bad value
raises ValueError with the CLI's message, naming the keyword):

  n (int, required unless example)   dataset size
  steps (int)          number of noisy updates T (default: one pass, n // batch_size)
  batch_size (int)     b (default 1)
  sampling (str)       "full" | "poisson" | "fixed" | "shuffle" | "cyclic"
                       (default: cyclic, or full when batch_size == n)
  eta (float)          step size (the base value of eta_schedule); required
  eta_schedule (str)   "constant" | "inv-sqrt" | "inv-t"
  noise (str)          "gaussian" | "laplace"
  one noise parameter: noise_std (std in parameter space), or sigma with convention
                       ("journal" | "isit" | "federated" | "chourasia" | "altschuler"),
                       or noise_multiplier with clip (DP-SGD / Opacus: std eta z C / b)
  clip (float)         per-example clipping norm C
  lsi (float)          asserted log-Sobolev constant (langevin Thm 2)
  lipschitz, smoothness, strong_convexity (float), convex (bool, default True)
  diameter (float)     of the constraint set (default inf: unconstrained)
  release (str)        "last" | "random-stop" | "every"
  adjacency (str)      "replace" | "remove"
  index (int)          position 1..n of the differing record (per-index analyses)
  dimension (int)      model dimension d (utility bounds)
  example (bool)       fill unset keywords with the built-in example (journal Fig. 2)

Example: hsdp.Run(n=1000, eta=0.05, sigma=3, convention="journal", lipschitz=1,
smoothness=1, diameter=1)
)doc")
      .def(py::init([](const py::kwargs& kwargs) {
             cli::RunFlags f;
             apply(f, kwargs, "Run()");
             return build(f);
           }),
           "Describe a run with the CLI's run flags as keywords (see the class docstring).")
      .def(
          "replace",
          [](const PyRun& self, const py::kwargs& kwargs) {
            if (!self.flags)
              throw py::type_error(
                  "Run.replace(): this run was not described with keywords (it came from "
                  "calibrate, plan or train); describe it with hsdp.Run(...)");
            cli::RunFlags f = *self.flags;
            apply(f, kwargs, "Run.replace()");
            return build(f);
          },
          "A new run with some keywords changed (validated like Run()).")
      .def_property_readonly("n", [](const PyRun& r) { return r.run.n; })
      .def_property_readonly("steps", [](const PyRun& r) { return r.run.steps; })
      .def_property_readonly("batch_size", [](const PyRun& r) { return r.run.batch_size; })
      .def_property_readonly("sampling", [](const PyRun& r) { return std::string(to_string(r.run.sampling)); })
      .def_property_readonly("eta", [](const PyRun& r) { return schedule(r.run.eta); },
                             "Step size: a float when constant, else one value per step.")
      .def_property_readonly("noise", [](const PyRun& r) { return std::string(to_string(r.run.noise)); })
      .def_property_readonly("noise_std", [](const PyRun& r) { return schedule(r.run.noise_std); },
                             "Noise std in parameter space: a float when constant, else one per step.")
      .def_property_readonly("lipschitz", [](const PyRun& r) { return r.run.loss.lipschitz; })
      .def_property_readonly("smoothness", [](const PyRun& r) { return r.run.loss.smoothness; })
      .def_property_readonly("strong_convexity", [](const PyRun& r) { return r.run.loss.strong_convexity; })
      .def_property_readonly("convex", [](const PyRun& r) { return r.run.loss.convex; })
      .def_property_readonly("diameter", [](const PyRun& r) { return r.run.diameter; })
      .def_property_readonly("release", [](const PyRun& r) { return std::string(to_string(r.run.release)); })
      .def_property_readonly("adjacency", [](const PyRun& r) { return std::string(to_string(r.run.adjacency)); })
      .def_property_readonly("index", [](const PyRun& r) { return r.run.index; })
      .def_property_readonly("dimension", [](const PyRun& r) { return r.run.dimension; })
      .def_property_readonly("clip", [](const PyRun& r) { return r.run.clip; })
      .def_property_readonly("lsi", [](const PyRun& r) { return r.run.lsi_constant; })
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
      .def("to_dict", [](const PyRun& r) { return to_python(to_json(r.run)); })
      .def("__repr__", [](const PyRun& r) { return "hsdp.Run(" + r.run.summary() + ")"; });
}

}  // namespace hsdp::python
