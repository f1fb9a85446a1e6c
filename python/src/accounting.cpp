// Accounting (include/hsdp/accountant.hpp, analysis/analysis.hpp): hsdp.account,
// hsdp.Accountant (dp_accounting / Opacus style get_epsilon / get_delta), hsdp.analysis,
// hsdp.analyses, and the Report / AnalysisResult objects. Report.to_json() is the text
// `hsdp account --json` prints for the same run and query.
#include <fmt/format.h>

#include <cmath>
#include <span>

#include "call.hpp"
#include "common.hpp"
#include "hsdp/errors.hpp"

namespace hsdp::python {

namespace {

std::vector<AnalysisPtr> chosen_analyses(const std::optional<std::vector<std::string>>& names) {
  std::vector<AnalysisPtr> chosen;
  if (names)
    for (const auto& name : *names) chosen.push_back(find_analysis(name));
  return chosen;
}

// `hsdp account` (cli/account.cpp), without printing; add_remove: with the add/remove-one
// values of a replace-one run (a report); get_epsilon / get_delta need only the run's own.
Report account_like_cli(const Run& run, const Query& query, const std::vector<AnalysisPtr>& chosen,
                        bool per_index, std::optional<std::int64_t> per_index_points, bool add_remove = true) {
  py::gil_scoped_release release;
  return account_request(run, query, chosen, per_index, per_index_points, add_remove);
}

// per_index_points counts as stated only when the caller typed it (the rule: field_use.hpp).
std::optional<std::int64_t> stated_points(std::int64_t points) {
  return given("per_index_points") ? std::optional<std::int64_t>(points) : std::nullopt;
}

// The best upper bound's value; +inf when no analysis gives one (no guarantee).
double best_value(const Report& report, bool epsilon) {
  if (!report.best) return std::numeric_limits<double>::infinity();
  const auto& b = report.analyses[*report.best];
  return epsilon ? *b.epsilon : *b.delta;
}

struct PyAccountant {
  PyRun run;
  std::vector<AnalysisPtr> chosen;
};

struct PyAnalysis {
  AnalysisPtr analysis;
};

AnalysisResult evaluate_named(const PyAnalysis& a, const PyRun& run, const Query& q) {
  py::gil_scoped_release release;
  return a.analysis->evaluate(run.run, q);
}

// The result, or ValueError with the reason the analysis does not apply, evaluated again with
// the reason spelled as errors are (keywords: "noise='laplace'", not "--noise laplace").
AnalysisResult require_applicable(AnalysisResult r, const PyAnalysis& a, const PyRun& run, const Query& q) {
  if (r.applicable) return r;
  std::string reason = r.reason;
  {
    const ReportsSpelledAsErrors keywords;
    const AnalysisResult again = evaluate_named(a, run, q);
    if (!again.applicable) reason = again.reason;
  }
  throw InvalidArgument(fmt::format("{}: not applicable to this run: {}", error_field("name", r.name), reason));
}

py::dict details_dict(const AnalysisResult& r) {
  py::dict d;
  for (const auto& x : r.details) d[py::str(x.name)] = x.value;
  return d;
}

}  // namespace

void bind_accounting(py::module_& m) {
  py::class_<AnalysisResult>(m, "AnalysisResult",
                             "One analysis on one run: a guarantee, or the reason it does not apply.")
      .def_readonly("name", &AnalysisResult::name, "The analysis' name (hsdp.analyses()).")
      .def_readonly("citation", &AnalysisResult::citation, "Paper, theorem and equation.")
      .def_readonly("applicable", &AnalysisResult::applicable, "True when the analysis applies to the run (then epsilon and delta are set).")
      .def_readonly("reason", &AnalysisResult::reason, "Why not applicable ('' when applicable).")
      .def_property_readonly("kind", [](const AnalysisResult& r) {
        return std::string(to_string(r.kind));
      }, "\"upper\" (a guarantee), \"lower\" (what no analysis can beat), \"heuristic\" (an estimate, not a guarantee) "
         "or \"comparison\" (a published bound hsdp prints but does not certify).")
      .def_property_readonly("epsilon", [](const AnalysisResult& r) { return optional_float(r.epsilon); },
                             "Epsilon (rounded up; may be inf), None when not applicable.")
      .def_property_readonly("delta", [](const AnalysisResult& r) { return optional_float(r.delta); },
                             "Delta (rounded up), None when not applicable.")
      .def_readonly("index", &AnalysisResult::index, "The record position the guarantee refers to.")
      .def_property_readonly("details", &details_dict, "Named side values (closed forms, utility bounds).")
      .def_readonly("note", &AnalysisResult::note, "A remark on the value (e.g. why epsilon is infinite); '' when none.")
      .def_property_readonly("rdp", [](const AnalysisResult& r) {
        py::list out;
        for (const auto& p : r.rdp) out.append(py::make_tuple(p.alpha, p.epsilon));
        return out;
      }, "The RDP curve at the query's alphas: [(alpha, eps_alpha), ...].")
      .def("__repr__", [](const AnalysisResult& r) {
        if (!r.applicable) return fmt::format("<AnalysisResult {}: not applicable: {}>", r.name, r.reason);
        return fmt::format("<AnalysisResult {} ({}): epsilon={} delta={} under {}>", r.name,
                           to_string(r.kind), show(*r.epsilon), show(*r.delta), adjacency_words(r.adjacency));
      });

  py::class_<Report>(m, "Report", "Every analysis on one run and query, and the tightest valid upper bound.")
      .def_property_readonly("run", [](const Report& r) { return PyRun{r.run, std::nullopt}; }, "The run accounted.")
      .def_property_readonly("query", [](const Report& r) {
        py::dict q;
        if (r.query.epsilon) q["epsilon"] = *r.query.epsilon;
        if (r.query.delta) q["delta"] = *r.query.delta;
        if (!r.query.alphas.empty()) q["alphas"] = r.query.alphas;
        return q;
      }, "The query: {'delta': ...} or {'epsilon': ...}, with 'alphas' when RDP orders were asked.")
      .def_readonly("analyses", &Report::analyses, "AnalysisResult of each analysis, in report order.")
      .def_property_readonly("best", [](const Report& r) -> py::object {
        if (!r.best) return py::none();
        return py::cast(r.analyses[*r.best]);
      }, "The tightest applicable upper bound, or None when none applies.")
      .def_property_readonly("epsilon", [](const Report& r) { return best_value(r, true); },
                             "The best epsilon (inf when no analysis applies).")
      .def_property_readonly("delta", [](const Report& r) { return best_value(r, false); },
                             "The best delta (inf when no analysis applies).")
      .def("result", [](const Report& r, const std::string& name) {
        for (const auto& a : r.analyses)
          if (a.name == name) return a;
        find_analysis(name, opt("name"));  // an unknown name: the library's message with the known names
        throw InvalidArgument(fmt::format("{}: not in this report", error_field("name", name)));
      }, py::arg("name"), "The result of the named analysis.")
      .def_property_readonly("adjacency", [](const Report& r) { return std::string(to_string(r.run.adjacency)); },
                             "The run's adjacency: \"replace\" (one record replaced) or \"remove\" (one added or removed).")
      .def_readonly("add_remove", &Report::add_remove,
                    "For a replace-one run (hsdp.account): the AnalysisResult of each applicable analysis "
                    "on the same run under add/remove-one adjacency, the adjacency of Opacus and "
                    "dp_accounting; [] otherwise.")
      .def_property_readonly("add_remove_best", [](const Report& r) -> py::object {
        if (!r.add_remove_best) return py::none();
        return py::cast(r.add_remove[*r.add_remove_best]);
      }, "The tightest upper bound among add_remove, or None.")
      .def_property_readonly("add_remove_epsilon", [](const Report& r) -> py::object {
        if (!r.add_remove_best) return py::none();
        return py::float_(*r.add_remove[*r.add_remove_best].epsilon);
      }, "add_remove_best's epsilon, or None when no analysis covers the run under add/remove-one.")
      .def_readonly("add_remove_reason", &Report::add_remove_reason,
                    "Why no analysis covers this replace-one run under add/remove-one (e.g. cyclic "
                    "batches: a record added or removed moves every later record); \"\" otherwise.")
      .def_property_readonly("per_index", [](const Report& r) -> py::object {
        if (!r.per_index) return py::none();
        return to_python(to_json(r)["per_index"]);
      }, "The per-index view (account(..., per_index=True)) as a dict, else None.")
      .def("to_json", [](const Report& r, int indent) { return to_json(r).dump(indent); },
           py::arg("indent") = 2, "The JSON `hsdp account --json` prints (without the final newline).")
      .def("to_dict", [](const Report& r) { return to_python(to_json(r)); }, "to_json() as a dict.")
      .def("table", [](const Report& r) { return to_table(r); }, "The table `hsdp account` prints.")
      .def("__str__", [](const Report& r) { return to_table(r); })
      .def("__repr__", [](const Report& r) {
        if (!r.best) return fmt::format("<hsdp.Report: no analysis applies under {}>", adjacency_words(r.run.adjacency));
        const auto& b = r.analyses[*r.best];
        return fmt::format("<hsdp.Report best={} epsilon={} delta={} under {}>", b.name, show(*b.epsilon),
                           show(*b.delta), adjacency_words(r.run.adjacency));
      });

  m.def(
      "account",
      [](const PyRun& run, std::optional<double> delta, std::optional<double> epsilon,
         std::optional<std::vector<std::string>> analyses, std::vector<double> alphas, bool per_index,
         std::int64_t per_index_points) {
        const Query q = make_query(delta, epsilon, alphas);
        return account_like_cli(run.run, q, chosen_analyses(analyses), per_index, stated_points(per_index_points));
      },
      py::arg("run"), py::kw_only(), py::arg("delta") = py::none(), py::arg("epsilon") = py::none(),
      py::arg("analyses") = py::none(), py::arg("alphas") = std::vector<double>{},
      py::arg("per_index") = false, py::arg("per_index_points") = 1000,
      R"doc(Every analysis on `run` (`hsdp account`): epsilon at `delta` (default 1e-5) or delta at
`epsilon` (give one). `analyses` restricts to named analyses (each must apply, else ValueError);
`alphas` adds the RDP curve at these orders; `per_index` adds the per-record view.)doc");

  py::class_<PyAccountant>(m, "Accountant", R"doc(
The accountant of one run, in the style of dp_accounting / Opacus: describe, then ask.

  acc = hsdp.Accountant(run)
  acc.get_epsilon(1e-5); acc.get_delta(1.0); acc.report(delta=1e-5)

The answer is the tightest valid upper bound over every analysis that applies (or over the
named `analyses`); inf when none applies.)doc")
      .def(py::init([](const PyRun& run, std::optional<std::vector<std::string>> analyses) {
             return PyAccountant{run, chosen_analyses(analyses)};
           }),
           py::arg("run"), py::arg("analyses") = py::none())
      .def_property_readonly("run", [](const PyAccountant& a) { return a.run; }, "The run this accountant answers for.")
      .def(
          "get_epsilon",
          [](const PyAccountant& a, double delta) {
            return best_value(account_like_cli(a.run.run, make_query(delta, std::nullopt, {}), a.chosen, false, std::nullopt, false), true);
          },
          py::arg("delta"), "Smallest certified epsilon at this delta (rounded up).")
      .def(
          "get_delta",
          [](const PyAccountant& a, double epsilon) {
            return best_value(account_like_cli(a.run.run, make_query(std::nullopt, epsilon, {}), a.chosen, false, std::nullopt, false), false);
          },
          py::arg("epsilon"), "Smallest certified delta at this epsilon (rounded up).")
      .def(
          "report",
          [](const PyAccountant& a, std::optional<double> delta, std::optional<double> epsilon,
             std::vector<double> alphas, bool per_index, std::int64_t per_index_points) {
            return account_like_cli(a.run.run, make_query(delta, epsilon, alphas), a.chosen, per_index,
                                    stated_points(per_index_points));
          },
          py::kw_only(), py::arg("delta") = py::none(), py::arg("epsilon") = py::none(),
          py::arg("alphas") = std::vector<double>{}, py::arg("per_index") = false,
          py::arg("per_index_points") = 1000, "The full Report (like hsdp.account).");

  py::class_<PyAnalysis>(m, "Analysis", "One analysis (a paper's theorem family), by name.")
      .def_property_readonly("name", [](const PyAnalysis& a) { return std::string(a.analysis->name()); }, "The analysis' name.")
      .def_property_readonly("citation", [](const PyAnalysis& a) { return std::string(a.analysis->citation()); }, "Paper, theorem and equation.")
      .def_property_readonly("kind", [](const PyAnalysis& a) {
        return std::string(to_string(a.analysis->kind()));
      }, "\"upper\" (a guarantee), \"lower\" or \"heuristic\" (not a guarantee).")
      .def("check", [](const PyAnalysis& a, const PyRun& run) { return a.analysis->not_applicable(run.run); },
           py::arg("run"), "None when the analysis applies to `run`, else the reason.")
      .def("applies", [](const PyAnalysis& a, const PyRun& run) { return !a.analysis->not_applicable(run.run); },
           py::arg("run"), "True when the analysis applies to `run` (check(run) is None).")
      .def(
          "evaluate",
          [](const PyAnalysis& a, const PyRun& run, std::optional<double> delta, std::optional<double> epsilon,
             std::vector<double> alphas) { return evaluate_named(a, run, make_query(delta, epsilon, alphas)); },
          py::arg("run"), py::kw_only(), py::arg("delta") = py::none(), py::arg("epsilon") = py::none(),
          py::arg("alphas") = std::vector<double>{},
          "The AnalysisResult (a guarantee or the reason it does not apply; never raises for that).")
      .def(
          "get_epsilon",
          [](const PyAnalysis& a, const PyRun& run, double delta) {
            const Query q = make_query(delta, std::nullopt, {});
            return *require_applicable(evaluate_named(a, run, q), a, run, q).epsilon;
          },
          py::arg("run"), py::arg("delta"), "Epsilon at delta (rounded up); ValueError when not applicable.")
      .def(
          "get_delta",
          [](const PyAnalysis& a, const PyRun& run, double epsilon) {
            const Query q = make_query(std::nullopt, epsilon, {});
            return *require_applicable(evaluate_named(a, run, q), a, run, q).delta;
          },
          py::arg("run"), py::arg("epsilon"), "Delta at epsilon (rounded up); ValueError when not applicable.")
      .def(
          "rdp",
          [](const PyAnalysis& a, const PyRun& run, double alpha) -> std::optional<double> {
            if (std::isnan(alpha) || !(alpha > 1.0)) fail(opt("alpha"), alpha, "> 1 (an RDP order)");
            const Query q = make_query(0.5, std::nullopt, {alpha});
            const AnalysisResult r = require_applicable(evaluate_named(a, run, q), a, run, q);
            if (r.rdp.empty()) return std::nullopt;
            return r.rdp.front().epsilon;
          },
          py::arg("run"), py::arg("alpha"), "RDP epsilon at order alpha > 1 (None for non-RDP analyses).")
      .def("__repr__", [](const PyAnalysis& a) { return fmt::format("<hsdp.Analysis {}>", a.analysis->name()); });

  m.def("analysis", [](const std::string& name) { return PyAnalysis{find_analysis(name, opt("name"))}; }, py::arg("name"),
        "The analysis with this name (ValueError listing the known names otherwise).");
  m.def(
      "analyses",
      [] {
        std::vector<std::string> names;
        for (const auto& a : all_analyses()) names.emplace_back(a->name());
        return names;
      },
      "The names of every analysis, in report order.");
}

}  // namespace hsdp::python
