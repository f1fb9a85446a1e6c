// The accountant: evaluates every analysis on one run, keeps each value or its reason,
// and names the tightest valid upper bound (lower bounds are never "best").
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "hsdp/analysis/analysis.hpp"
#include "hsdp/run.hpp"

namespace hsdp {

struct Report {
  Run run;
  Query query;
  std::vector<AnalysisResult> analyses;
  /// Index into `analyses` of the tightest applicable upper bound (smallest epsilon for a
  /// delta query, smallest delta for an epsilon query); nullopt when none applies.
  std::optional<std::size_t> best;
};

/// Validates the run, evaluates each analysis (all of them by default) and picks the best.
Report account(const Run& run, const Query& query);
Report account(const Run& run, const Query& query, std::span<const AnalysisPtr> analyses);

/// {"run":{...},"query":{...},"analyses":[{"name","citation","applicable","reason",
///  "kind","epsilon","delta","index","details","note"}],"best":{"name","epsilon","delta"}}
/// Numbers are absent when an analysis is not applicable; an infinite epsilon is the
/// string "inf".
nlohmann::json to_json(const Report& report);
nlohmann::json to_json(const Run& run);

/// The readable table printed by `hsdp account`.
std::string to_table(const Report& report);

}  // namespace hsdp
