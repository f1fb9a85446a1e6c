// hsdp.audit_exact (include/hsdp/audit/exact.hpp): the exact privacy loss of the run's 1-D
// worst-case instance next to every applicable upper bound (`hsdp audit exact`).
#include "hsdp/audit/exact.hpp"

#include <fmt/format.h>

#include "call.hpp"
#include "common.hpp"
#include "hsdp/errors.hpp"

namespace hsdp::python {

void bind_audit(py::module_& m) {
  using namespace hsdp::audit;
  py::class_<ExactResult>(m, "ExactResult", "The exact eps(delta) or delta(eps) of the worst-case instance.")
      .def_readonly("at_delta", &ExactResult::at_delta, "True: epsilon was computed at the given delta.")
      .def_readonly("epsilon", &ExactResult::epsilon, "The given or the computed epsilon (fine grid).")
      .def_readonly("delta", &ExactResult::delta, "The given or the computed delta (fine grid).")
      .def_readonly("error", &ExactResult::error, "Discretisation error bound of the computed value.")
      .def_readonly("coarse", &ExactResult::coarse, "The computed quantity on the coarse grid (half the points).")
      .def_readonly("grid", &ExactResult::grid, "Points of the fine grid.")
      .def_readonly("coarse_grid", &ExactResult::coarse_grid, "Points of the coarse grid.")
      .def_readonly("index", &ExactResult::index, "The position of the differing record, if the run gives one.")
      .def_property_readonly("pair", [](const ExactResult& r) { return std::string(to_string(r.pair)); }, "The neighbouring pair: opposite or sec4.")
      .def_readonly("gradient", &ExactResult::gradient, "The slope g of the differing record's linear loss in the worst-case instance.")
      .def_readonly("mass_defect", &ExactResult::mass_defect, "max |1 - total mass| of the fine laws (a quadrature check).")
      .def_property_readonly("renyi", [](const ExactResult& r) {
        py::list out;
        for (const auto& e : r.renyi) out.append(py::make_tuple(e.alpha, e.value, e.error));
        return out;
      }, "[(alpha, D_alpha, error), ...] at the query's alphas.")
      .def_property_readonly("value", &ExactResult::value, "epsilon when at_delta, else delta.")
      .def_property_readonly("lo", &ExactResult::lo, "max(0, value - error).")
      .def_property_readonly("hi", &ExactResult::hi, "value + error.")
      .def("__repr__", [](const ExactResult& r) {
        // The exact audit refuses any other adjacency (src/audit/exact.cpp).
        return fmt::format("<hsdp.ExactResult {}={} +- {} at {}={} under {}>", r.at_delta ? "epsilon" : "delta",
                           show(r.value()), show(r.error), r.at_delta ? "delta" : "epsilon",
                           show(r.at_delta ? r.delta : r.epsilon), adjacency_words(Adjacency::replace));
      });

  py::class_<BoundRow>(m, "BoundRow", "One upper bound next to the exact value.")
      .def_readonly("name", &BoundRow::name, "The analysis.")
      .def_readonly("citation", &BoundRow::citation, "Paper, theorem and equation.")
      .def_readonly("value", &BoundRow::value, "The bound's epsilon (delta query) or delta (epsilon query).")
      .def_readonly("ratio", &BoundRow::ratio, "value / the exact value (inf when that is 0).")
      .def_readonly("consistent", &BoundRow::consistent, "value >= the exact value's lower end.")
      .def("__repr__", [](const BoundRow& b) {
        return fmt::format("<hsdp.BoundRow {} value={} ratio={} under {}>", b.name, show(b.value), show(b.ratio),
                           adjacency_words(Adjacency::replace));
      });

  py::class_<Tightness>(m, "Tightness", "The result of hsdp.audit_exact.")
      .def_property_readonly("run", [](const Tightness& t) { return PyRun{t.run, std::nullopt}; }, "The run audited.")
      .def_readonly("exact", &Tightness::exact, "The ExactResult of the worst-case instance.")
      .def_readonly("bounds", &Tightness::bounds, "A BoundRow per applicable upper bound.")
      .def_readonly("not_applicable", &Tightness::not_applicable, "[(name, reason), ...]")
      .def("to_json", [](const Tightness& t, int indent) { return to_json(t).dump(indent); },
           py::arg("indent") = 2, "The JSON `hsdp audit exact --json` prints (without the final newline).")
      .def("to_dict", [](const Tightness& t) { return to_python(to_json(t)); }, "to_json() as a dict.")
      .def("table", [](const Tightness& t) { return to_table(t); }, "The table `hsdp audit exact` prints.")
      .def("__str__", [](const Tightness& t) { return to_table(t); })
      .def("__repr__", [](const Tightness& t) {
        return fmt::format("<hsdp.Tightness exact {}={} with {} upper bounds under {}>", t.exact.at_delta ? "epsilon" : "delta",
                           show(t.exact.value()), t.bounds.size(), adjacency_words(t.run.adjacency));
      });

  m.def(
      "audit_exact",
      [](const PyRun& run, std::optional<double> delta, std::optional<double> epsilon, std::vector<double> alphas,
         std::int64_t grid, const std::string& pair) {
        const Query query = make_query(delta, epsilon, alphas);
        ExactOptions options;
        if (given("grid")) options.grid = grid;  // stated only when typed: the closed form refuses it
        options.pair = parse_pair(pair, opt("pair"));
        py::gil_scoped_release release;
        return tightness(run.run, query, options);
      },
      py::arg("run"), py::kw_only(), py::arg("delta") = py::none(), py::arg("epsilon") = py::none(),
      py::arg("alphas") = std::vector<double>{}, py::arg("grid") = kDefaultGrid,
      py::arg("pair") = std::string(to_string(ExactOptions{}.pair)),
      R"doc(Exact privacy loss of the run's 1-D worst-case instance (altschuler-talwar Sec. 4) with its
discretisation error, next to every applicable upper bound (`hsdp audit exact`). Query as in
hsdp.account (default delta = 1e-5); pair: "opposite" or "sec4".)doc");
}

}  // namespace hsdp::python
