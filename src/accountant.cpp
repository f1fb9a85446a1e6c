#include "hsdp/accountant.hpp"

#include <cmath>

namespace hsdp {

Report account(const Run& run, const Query& query) { return account(run, query, all_analyses()); }

Report account(const Run& run, const Query& query, std::span<const AnalysisPtr> analyses) {
  run.validate();
  Report report{run, query, {}, std::nullopt};
  report.analyses.reserve(analyses.size());
  for (const auto& a : analyses) report.analyses.push_back(a->evaluate(run, query));
  // The tightest valid guarantee: minimum of the queried-for quantity over applicable
  // upper bounds.
  auto value = [&](const AnalysisResult& r) { return query.delta ? *r.epsilon : *r.delta; };
  for (std::size_t i = 0; i < report.analyses.size(); ++i) {
    const auto& r = report.analyses[i];
    if (!r.applicable || r.kind != BoundKind::upper) continue;
    if (!report.best || value(r) < value(report.analyses[*report.best])) report.best = i;
  }
  return report;
}

}  // namespace hsdp
