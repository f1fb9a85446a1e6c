// hsdp.compare (include/hsdp/compare.hpp): every analysis along a sweep of one run
// parameter or of the query, or a paper's figure, by the same library request as
// `hsdp compare` (CompareRequest); the result holds the data, its CSV and its SVG plot, and
// csv= / svg= write them as the command's --csv / --svg do (all or nothing).
#include "hsdp/compare.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "call.hpp"
#include "common.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/output_files.hpp"
#include "hsdp/plot.hpp"

namespace hsdp::python {

namespace {

Comparison compare_like_cli(const std::optional<PyRun>& run, const std::optional<std::string>& x,
                            std::optional<double> from, std::optional<double> to, std::optional<std::int64_t> points,
                            bool log_x, const std::string& y_scale, std::optional<double> rdp,
                            std::vector<std::string> analyses, std::optional<double> delta,
                            std::optional<double> epsilon, std::optional<std::string> title,
                            std::optional<std::string> figure, std::optional<PathArg> csv,
                            std::optional<PathArg> svg) {
  CompareRequest r;
  if (run) {
    // The sweep rebuilds the run from its statement at each value: a run from calibrate,
    // plan or train is stated as it resolved.
    r.run = run->flags ? *run->flags : RunSpec::stating(run->run);
  } else if (!figure) {
    fail(opt("run"), "(missing)", fmt::format("given: the run to sweep (or use {})", error_field("figure")));
  }
  r.x = x;
  r.from = from;
  r.to = to;
  r.points = points;
  r.log_x = log_x;
  if (given("y_scale")) r.y_scale = y_scale;  // stated only when typed (the rule: field_use.hpp)
  r.rdp = rdp;
  r.analyses = std::move(analyses);
  r.delta = delta;
  r.epsilon = epsilon;
  r.title = std::move(title);
  r.figure = std::move(figure);
  if (r.figure && run) fail(opt("run"), "(given)", fmt::format("absent with {} (the figure sets the run)", error_field("figure", *r.figure)));
  if (delta && epsilon)
    throw InvalidArgument(fmt::format("{} excludes {}", error_field("epsilon"), error_field("delta")));
  Comparison c;
  {
    const CompareSpec spec = compare_spec(r);
    py::gil_scoped_release release;
    c = compare(spec);
  }
  // Render before writing anything, so an error leaves no file behind.
  std::vector<OutputFile> outputs;
  if (csv) outputs.push_back({csv->path, to_csv(c), "csv"});
  if (svg) outputs.push_back({svg->path, svg::render(to_plot(c)), "svg"});
  write_files_atomically(outputs);
  return c;
}

py::object values(const std::vector<std::optional<double>>& ys) {
  py::list out;
  for (const auto& y : ys) out.append(optional_float(y));
  return out;
}

}  // namespace

void bind_compare(py::module_& m) {
  py::class_<CompareCurve>(m, "CompareCurve", "One analysis along the sweep of hsdp.compare.")
      .def_readonly("analysis", &CompareCurve::analysis, "The analysis' name.")
      .def_readonly("label", &CompareCurve::label, "The legend text (lower bounds end in \" (lower)\").")
      .def_property_readonly("kind", [](const CompareCurve& c) { return std::string(to_string(c.kind)); },
                             "\"upper\", \"lower\" or \"heuristic\" (as AnalysisResult.kind).")
      .def_property_readonly("ys", [](const CompareCurve& c) { return values(c.ys); },
                             "y at each x: a float (inf: no finite guarantee), None where the analysis does not apply.")
      .def_readonly("reasons", &CompareCurve::reasons, "Per x: why the analysis does not apply there ('' where it does).")
      .def_property_readonly("applicable", &CompareCurve::applicable_somewhere,
                             "True when the analysis applies at some x (the curve is drawn).")
      .def("__repr__", [](const CompareCurve& c) {
        return fmt::format("<hsdp.CompareCurve {} under {}{}>", c.label, adjacency_words(c.adjacency),
                           c.applicable_somewhere() ? "" : " (not applicable)");
      });

  py::class_<Comparison>(m, "Comparison", "The result of hsdp.compare: every curve along the sweep, its CSV and its plot.")
      .def_readonly("title", &Comparison::title, "The plot's title.")
      .def_property_readonly("axis", [](const Comparison& c) { return std::string(to_string(c.axis)); },
                             "What was swept: steps, noise, n, index, epsilon or delta.")
      .def_readonly("x_label", &Comparison::x_label, "The x axis' label.")
      .def_readonly("x_name", &Comparison::x_name, "The CSV's x column (e.g. noise_multiplier).")
      .def_readonly("y_label", &Comparison::y_label, "\"epsilon\", \"delta\" or \"RDP epsilon\".")
      .def_readonly("xs", &Comparison::xs, "The sweep values.")
      .def_readonly("query", &Comparison::query, "The fixed query of a run sweep (e.g. \"delta = 1e-05\"); '' on a query axis.")
      .def_readonly("run", &Comparison::run, "Summary of the run at the first x.")
      .def_readonly("curves", &Comparison::curves, "Every CompareCurve, applicable or not, in report order.")
      .def_readonly("notes", &Comparison::notes, "Extra lines under the plot and in the CSV header.")
      .def("curve", [](const Comparison& c, const std::string& analysis) {
        for (const auto& curve : c.curves)
          if (curve.analysis == analysis) return curve;
        find_analysis(analysis);  // an unknown name: the library's message with the known names
        throw InvalidArgument(fmt::format("{}: not in this comparison", error_field("analyses", analysis)));
      }, py::arg("analysis"), "The curve of the named analysis.")
      .def("to_csv", [](const Comparison& c) { return to_csv(c); },
           "The CSV `hsdp compare` prints (or writes with --csv) for the same request.")
      .def("to_svg", [](const Comparison& c) { return svg::render(to_plot(c)); },
           "The SVG plot `hsdp compare --svg` writes for the same request.")
      .def("__repr__", [](const Comparison& c) {
        // The curves' neighbouring relations (a figure's variants may differ).
        std::vector<std::string> relations;
        for (const auto& curve : c.curves) {
          const std::string words = adjacency_words(curve.adjacency);
          if (std::find(relations.begin(), relations.end(), words) == relations.end()) relations.push_back(words);
        }
        std::string under;
        for (const auto& r : relations) under += (under.empty() ? "" : " and ") + r;
        return fmt::format("<hsdp.Comparison {}: {} points, {} curves under {}>", c.title, c.xs.size(), c.curves.size(),
                           under.empty() ? adjacency_words(Adjacency::replace) : under);
      });

  m.def("compare", &compare_like_cli, py::arg("run") = py::none(), py::kw_only(), py::arg("x") = py::none(),
        py::arg("from_") = py::none(), py::arg("to") = py::none(), py::arg("points") = py::none(),
        py::arg("log_x") = false, py::arg("y_scale") = "auto", py::arg("rdp") = py::none(),
        py::arg("analyses") = std::vector<std::string>{}, py::arg("delta") = py::none(),
        py::arg("epsilon") = py::none(), py::arg("title") = py::none(), py::arg("figure") = py::none(),
        py::arg("csv") = py::none(), py::arg("svg") = py::none(),
        R"doc(Every analysis along a sweep (`hsdp compare`): x = "steps" | "noise" | "n" | "index" (the run
changes; y = epsilon at `delta`, default 1e-5, or delta at `epsilon`) or "epsilon" | "delta" (the
query is swept), from `from_` to `to` at `points` values (default 20; geometric with log_x). At
each value the run is rebuilt from its keywords with that one changed, as hsdp.account would
build it. rdp=ALPHA plots the RDP epsilon at that order; analyses restricts the curves; y_scale:
auto | log | linear. figure=NAME reproduces a paper's figure instead (no run; names in
docs/compare.md). csv= and svg= write the table and the plot to files, all or nothing, as the
command's --csv and --svg; the returned Comparison holds the data, to_csv() and to_svg().)doc");
}

}  // namespace hsdp::python
