// The accountant: evaluates every analysis on one run, keeps each value or its reason,
// and names the tightest valid upper bound (lower bounds are never "best").
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "hsdp/analysis/analysis.hpp"
#include "hsdp/run.hpp"

namespace hsdp {

/// The guarantee of one per-index analysis for the record at position `index`.
struct IndexPoint {
  std::int64_t index;
  double epsilon;  ///< rounded up like AnalysisResult (the query's eps for an eps query)
  double delta;    ///< rounded up (the query's delta for a delta query)
};

/// Per-individual view: the guarantee of each per-index analysis (one whose bound depends
/// on the position of the differing record, e.g. contraction-per-index: journal Thm 4
/// eq. (16), records processed late are amplified by fewer steps) at positions i = 1..n,
/// or at a stated subsample of them when n is large.
struct PerIndexView {
  std::vector<std::int64_t> indices;  ///< positions evaluated, increasing
  bool subsampled = false;            ///< true when indices is not all of 1..n
  struct Curve {
    std::string name;                 ///< the analysis
    std::vector<IndexPoint> points;   ///< one per entry of `indices`
    /// The worst position over ALL of 1..n as the analysis itself reports it (its result
    /// without an index: AnalysisResult::index or its worst_index detail), when known.
    std::optional<std::int64_t> worst_index;
  };
  std::vector<Curve> curves;
};

struct Report {
  Run run;
  Query query;
  std::vector<AnalysisResult> analyses;
  /// Index into `analyses` of the tightest applicable upper bound (smallest epsilon for a
  /// delta query, smallest delta for an epsilon query); nullopt when none applies.
  std::optional<std::size_t> best;
  /// Filled by add_per_index (`hsdp account --per-index`); absent otherwise.
  std::optional<PerIndexView> per_index;
  /// The same run under add/remove-one adjacency (one record added or removed: the adjacency
  /// of Opacus and dp_accounting), for a replace-one run: the result of each analysis that
  /// applies under both, in report order. Filled by add_add_remove (`hsdp account`); empty
  /// otherwise.
  std::vector<AnalysisResult> add_remove;
  /// Index into `add_remove` of its tightest upper bound; nullopt when none.
  std::optional<std::size_t> add_remove_best;
  /// Why no analysis that applies to the replace-one run applies under add/remove (e.g. the
  /// batch order's reason, docs/analyses/neighbours.md); empty when one does, or when the
  /// add/remove values were not asked for.
  std::string add_remove_reason;
};

/// Validates the run, evaluates each analysis (all of them by default) and picks the best.
Report account(const Run& run, const Query& query);
Report account(const Run& run, const Query& query, std::span<const AnalysisPtr> analyses);

/// True when `analysis` applies to `run` and its guarantee refers to the record position
/// given in Run::index: probed at i = 1 and i = n, it must apply and report exactly that
/// position (Analysis::index). Analyses that bound the worst position whatever index is
/// given (random stop, shuffled orders) are not per-index.
bool is_per_index(const Analysis& analysis, const Run& run);

/// The positions a per-index view evaluates: all of 1..n when n <= max_points, otherwise
/// about max_points of them (>= 16): a linear grid over 1..n and, since late records get the
/// least privacy, positions n - k for k on a geometric grid, always with 1 and n.
std::vector<std::int64_t> per_index_positions(std::int64_t n, std::int64_t max_points);

/// Adds the per-index view of every per-index analysis in `report` (evaluated with
/// `analyses`, in the report's order) at per_index_positions(n, max_points). The report's
/// run must not fix Run::index (the view covers every index).
void add_per_index(Report& report, std::span<const AnalysisPtr> analyses,
                   std::int64_t max_points = 1000);

/// The index of the tightest applicable upper bound among `results` for `query` (smallest
/// epsilon for a delta query, smallest delta for an epsilon query); nullopt when none.
std::optional<std::size_t> best_upper(const std::vector<AnalysisResult>& results, const Query& query);

/// For a replace-one run, evaluates each analysis of `analyses` that applies to it again on
/// the same run under add/remove-one adjacency (Report::add_remove), so that the number can
/// be read next to the accountants that assume add/remove (Opacus, dp_accounting). Nothing
/// for an add/remove run.
void add_add_remove(Report& report, std::span<const AnalysisPtr> analyses);

/// The `account` request (`hsdp account`, hsdp.account): every analysis, or only `chosen`;
/// with per_index, the per-index view at up to per_index_points positions (>= 16; the run
/// must not fix Run::index); with add_remove, the add/remove-one values of a replace-one run
/// (add_add_remove). An analysis chosen by name that does not apply is an input error:
/// InvalidArgument "<analyses name>: not applicable: <reason>".
/// per_index_points (default 1000, in [16, 2^16]) is read by the per-index view only: stated
/// without per_index it is refused (field_use.hpp); an analysis chosen twice is refused too.
Report account_request(const Run& run, const Query& query, std::span<const AnalysisPtr> chosen = {},
                       bool per_index = false, std::optional<std::int64_t> per_index_points = std::nullopt,
                       bool add_remove = true);

/// {"run":{...},"query":{...},"analyses":[{"name","citation","applicable","reason",
///  "kind","epsilon","delta","index","details","note"}],"best":{"name","epsilon","delta"},
///  "per_index" (when present): {"indices_evaluated","subsampled","analyses":[{"name",
///  "worst_index","points":[{"index","epsilon","delta"}]}]},
///  "adjacency": "replace" | "remove", and with add/remove values (Report::add_remove):
///  "add_remove": {"epsilon","delta"} in each analysis covered, "best_add_remove": {"name",
///  "epsilon","delta"} or null}
/// Numbers are absent when an analysis is not applicable; an infinite epsilon is the
/// string "inf".
nlohmann::json to_json(const Report& report);
nlohmann::json to_json(const Run& run);

/// The readable table printed by `hsdp account`.
std::string to_table(const Report& report);

}  // namespace hsdp
