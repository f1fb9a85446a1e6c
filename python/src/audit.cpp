// hsdp.audit_exact (include/hsdp/audit/exact.hpp): the exact privacy loss of the run's 1-D
// worst-case instance next to every applicable upper bound (`hsdp audit exact`).
#include "hsdp/audit/exact.hpp"

#include "common.hpp"
#include "hsdp/errors.hpp"

namespace hsdp::python {

void bind_audit(py::module_& m) {
  using namespace hsdp::audit;
  py::class_<ExactResult>(m, "ExactResult", "The exact eps(delta) or delta(eps) of the worst-case instance.")
      .def_readonly("at_delta", &ExactResult::at_delta, "True: epsilon was computed at the given delta.")
      .def_readonly("epsilon", &ExactResult::epsilon)
      .def_readonly("delta", &ExactResult::delta)
      .def_readonly("error", &ExactResult::error, "Discretisation error bound of the computed value.")
      .def_readonly("coarse", &ExactResult::coarse)
      .def_readonly("grid", &ExactResult::grid)
      .def_readonly("coarse_grid", &ExactResult::coarse_grid)
      .def_readonly("index", &ExactResult::index)
      .def_property_readonly("pair", [](const ExactResult& r) { return std::string(to_string(r.pair)); })
      .def_readonly("gradient", &ExactResult::gradient)
      .def_readonly("mass_defect", &ExactResult::mass_defect)
      .def_property_readonly("renyi", [](const ExactResult& r) {
        py::list out;
        for (const auto& e : r.renyi) out.append(py::make_tuple(e.alpha, e.value, e.error));
        return out;
      }, "[(alpha, D_alpha, error), ...] at the query's alphas.")
      .def_property_readonly("value", &ExactResult::value)
      .def_property_readonly("lo", &ExactResult::lo)
      .def_property_readonly("hi", &ExactResult::hi);

  py::class_<BoundRow>(m, "BoundRow", "One upper bound next to the exact value.")
      .def_readonly("name", &BoundRow::name)
      .def_readonly("citation", &BoundRow::citation)
      .def_readonly("value", &BoundRow::value)
      .def_readonly("ratio", &BoundRow::ratio)
      .def_readonly("consistent", &BoundRow::consistent, "value >= the exact value's lower end.");

  py::class_<Tightness>(m, "Tightness", "The result of hsdp.audit_exact.")
      .def_property_readonly("run", [](const Tightness& t) { return PyRun{t.run, std::nullopt}; })
      .def_readonly("exact", &Tightness::exact)
      .def_readonly("bounds", &Tightness::bounds)
      .def_readonly("not_applicable", &Tightness::not_applicable, "[(name, reason), ...]")
      .def("to_json", [](const Tightness& t, int indent) { return to_json(t).dump(indent); },
           py::arg("indent") = 2, "The JSON `hsdp audit exact --json` prints (without the final newline).")
      .def("to_dict", [](const Tightness& t) { return to_python(to_json(t)); })
      .def("table", [](const Tightness& t) { return to_table(t); })
      .def("__str__", [](const Tightness& t) { return to_table(t); });

  m.def(
      "audit_exact",
      [](const PyRun& run, std::optional<double> delta, std::optional<double> epsilon, std::vector<double> alphas,
         std::int64_t grid, const std::string& pair) {
        const Query query = make_query(delta, epsilon, alphas);
        ExactOptions options;
        options.grid = require_range(opt("grid"), grid, 65, std::int64_t{1} << 24);
        options.pair = parse_pair(pair, opt("pair"));
        py::gil_scoped_release release;
        return tightness(run.run, query, options);
      },
      py::arg("run"), py::kw_only(), py::arg("delta") = py::none(), py::arg("epsilon") = py::none(),
      py::arg("alphas") = std::vector<double>{}, py::arg("grid") = ExactOptions{}.grid,
      py::arg("pair") = std::string(to_string(ExactOptions{}.pair)),
      R"doc(Exact privacy loss of the run's 1-D worst-case instance (altschuler-talwar Sec. 4) with its
discretisation error, next to every applicable upper bound (`hsdp audit exact`). Query as in
hsdp.account (default delta = 1e-5); pair: "opposite" or "sec4".)doc");
}

}  // namespace hsdp::python
