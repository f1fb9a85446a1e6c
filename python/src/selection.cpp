// hsdp.rdp_curve: the Renyi-DP curve of a run (the smallest RDP epsilon over the applicable
// upper-bound analyses stated in RDP), what a private hyperparameter search needs of its base
// runs (Papernot & Steinke 2022, ICLR, Theorems 2 and 6; python/hsdp/sklearn.py,
// PrivateHyperparameterSearch; docs/python.md "Private hyperparameter search").
//
// A run whose noise was drawn on a grid (the trainer's runs) reports no RDP curve in its
// AnalysisResult: the grid's charge (E, beta) is stated for (epsilon, delta) only. Here the
// curve of a gridded run is the curve of its comparison run -- the continuous run with the
// grid's slack added to each step's shift, sensitivity and image diameter, which is what an
// analysis with charges_grid() evaluates -- and the caller charges (E, beta) itself
// (run.grid_epsilon, run.grid_log_beta; docs/security.md).
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "hsdp/analysis/rdp_analysis.hpp"
#include "hsdp/errors.hpp"

namespace hsdp::python {

void bind_selection(py::module_& m) {
  m.def(
      "rdp_curve",
      [](const PyRun& run, const std::vector<double>& alphas)
          -> std::pair<std::vector<double>, std::vector<std::string>> {
        for (const double alpha : alphas)
          if (!(alpha > 1.0) || !std::isfinite(alpha)) fail(opt("alphas"), alpha, "finite RDP orders > 1");
        std::vector<double> best(alphas.size(), std::numeric_limits<double>::infinity());
        std::vector<std::string> names(alphas.size());
        {
          py::gil_scoped_release release;
          for (const auto& a : all_analyses()) {
            // Only guarantees for every record: no lower bounds, heuristics or comparisons, no
            // per-index analysis (its bound is one record position's), none that does not apply
            // (a gridded run: only analyses that derive the grid's cost).
            if (a->kind() != BoundKind::upper || a->not_applicable(run.run) || a->index(run.run)) continue;
            const auto* rdp = dynamic_cast<const RdpAnalysis*>(a.get());
            for (std::size_t i = 0; i < alphas.size(); ++i) {
              if (rdp != nullptr && alphas[i] > rdp->alpha_max(run.run)) continue;
              std::optional<double> v;
              try {
                v = a->rdp_at(run.run, alphas[i]);
              } catch (const InvalidArgument&) {
                continue;  // the run's numbers leave this analysis' range: no bound from it
              }
              if (!v || std::isnan(*v)) continue;
              const double up = round_up(*v);
              if (up < best[i]) {
                best[i] = up;
                names[i] = std::string(a->name());
              }
            }
          }
        }
        return {best, names};
      },
      py::arg("run"), py::arg("alphas"),
      R"doc((eps, names): at each order alpha > 1 the smallest RDP epsilon (rounded up; inf where no
analysis states one) over the applicable upper-bound analyses of every record that are stated
in Renyi DP, and the analysis that gave it. The adjacency is the run's. On a run whose noise was
drawn on a grid this is the curve of its comparison run (the grid's slack included); the grid's
charge (run.grid_epsilon, run.grid_log_beta) is not in it and must be charged by the caller
(docs/python.md "Private hyperparameter search").)doc");
}

}  // namespace hsdp::python
