// Factories of the built-in analyses; all_analyses() lists them in report order.
#pragma once

#include "hsdp/analysis/analysis.hpp"

namespace hsdp::detail {

AnalysisPtr make_contraction_per_index();    // contraction.cpp
AnalysisPtr make_contraction_laplace();      // contraction.cpp
AnalysisPtr make_contraction_random_stop();  // contraction.cpp
AnalysisPtr make_federated();                // federated.cpp
AnalysisPtr make_federated_random_stop();    // federated.cpp
AnalysisPtr make_online_gd();                // online_gd.cpp
AnalysisPtr make_pabi_feldman();             // rdp_comparisons.cpp
AnalysisPtr make_balle_mixing();             // rdp_comparisons.cpp
AnalysisPtr make_composition_rdp();          // composition.cpp
AnalysisPtr make_composition_pld();          // composition_pld.cpp
AnalysisPtr make_langevin();                 // langevin.cpp
AnalysisPtr make_langevin_lower();           // langevin.cpp (Thm 3, a lower bound)
AnalysisPtr make_shifted_renyi();            // shifted_renyi.cpp
AnalysisPtr make_shifted_interpolation();    // shifted_interpolation.cpp
AnalysisPtr make_ye_shokri();                // ye_shokri.cpp (kind comparison)
AnalysisPtr make_last_iterate_heuristic();   // last_iterate_heuristic.cpp (kind heuristic)

}  // namespace hsdp::detail
