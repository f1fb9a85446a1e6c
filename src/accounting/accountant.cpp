#include "hsdp/accountant.hpp"
#include "hsdp/field_use.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "hsdp/errors.hpp"

namespace hsdp {

Report account(const Run& run, const Query& query) { return account(run, query, all_analyses()); }

Report account(const Run& run, const Query& query, std::span<const AnalysisPtr> analyses) {
  run.validate();
  Report report{run, query, {}, std::nullopt, std::nullopt, {}, std::nullopt};
  report.analyses.reserve(analyses.size());
  for (const auto& a : analyses) report.analyses.push_back(a->evaluate(run, query));
  report.best = best_upper(report.analyses, query);
  return report;
}

std::optional<std::size_t> best_upper(const std::vector<AnalysisResult>& results, const Query& query) {
  // The tightest valid guarantee: minimum of the queried-for quantity over applicable
  // upper bounds. A lower bound (e.g. langevin Thm 3) or a heuristic is never "best".
  auto value = [&](const AnalysisResult& r) { return query.delta ? *r.epsilon : *r.delta; };
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    if (!r.applicable || r.kind != BoundKind::upper) continue;
    if (!best || value(r) < value(results[*best])) best = i;
  }
  return best;
}

void add_add_remove(Report& report, std::span<const AnalysisPtr> analyses) {
  report.add_remove.clear();
  report.add_remove_best.reset();
  report.add_remove_reason.clear();
  if (report.run.adjacency != Adjacency::replace) return;
  Run other = report.run;
  other.adjacency = Adjacency::remove;
  std::string first_reason;
  for (const auto& a : analyses) {
    const bool applies = std::any_of(report.analyses.begin(), report.analyses.end(), [&](const AnalysisResult& r) {
      return r.name == a->name() && r.applicable;
    });
    if (!applies) continue;
    AnalysisResult r = a->evaluate(other, report.query);
    if (r.applicable) report.add_remove.push_back(std::move(r));
    // The reason to show: the baseline's, which names the batch order (what a neighbour
    // changes in it, docs/analyses/neighbours.md), else the first one.
    else if (first_reason.empty() || r.name == "composition-pld") first_reason = r.reason;
  }
  report.add_remove_best = best_upper(report.add_remove, report.query);
  if (!report.add_remove_best) report.add_remove_reason = first_reason;
}

bool is_per_index(const Analysis& analysis, const Run& run) {
  if (analysis.not_applicable(run)) return false;
  for (const std::int64_t i : {std::int64_t{1}, run.n}) {
    Run probe = run;
    probe.index = i;
    if (analysis.not_applicable(probe)) return false;
    const auto reported = analysis.index(probe);
    if (!reported || *reported != i) return false;
  }
  return true;
}

std::vector<std::int64_t> per_index_positions(std::int64_t n, std::int64_t max_points) {
  require_range("n", n, 1, std::int64_t{1} << 53);
  require_range("max_points", max_points, 16, std::int64_t{1} << 30);
  std::vector<std::int64_t> out;
  if (n <= max_points) {
    out.resize(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = i + 1;
    return out;
  }
  // Half the budget on a linear grid over 1..n, half on n - k with k geometric in [1, n):
  // the bounds change fastest for the last records (fewest later steps to amplify them).
  const std::int64_t half = max_points / 2;
  const double nd = static_cast<double>(n);
  for (std::int64_t j = 0; j < half; ++j)
    out.push_back(1 + static_cast<std::int64_t>(std::llround(static_cast<double>(j) * (nd - 1) /
                                                             static_cast<double>(half - 1))));
  for (std::int64_t j = 0; j < half; ++j) {
    const double k = std::floor(std::exp(static_cast<double>(j) * std::log(nd) / static_cast<double>(half)));
    out.push_back(n - static_cast<std::int64_t>(k) + 1);  // k = 1 gives n
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  std::erase_if(out, [&](std::int64_t i) { return i < 1 || i > n; });
  return out;
}

namespace {

// One analysis at one position, rounded as Analysis::evaluate rounds (without its details).
IndexPoint evaluate_at(const Analysis& a, const Run& run, const Query& query) {
  IndexPoint p{*run.index, 0.0, 0.0};
  const bool upper = a.kind() == BoundKind::upper;
  if (query.epsilon) {
    const double ld = a.log_delta(run, *query.epsilon);
    if (std::isnan(ld))
      throw std::logic_error(fmt::format("{}: log delta is NaN at eps = {}, index {}", a.name(),
                                         *query.epsilon, p.index));
    p.epsilon = *query.epsilon;
    p.delta = upper ? delta_upper(ld) : (ld >= 0.0 ? 1.0 : std::exp(ld));
  } else {
    const double eps = a.epsilon(run, *query.delta);
    if (std::isnan(eps))
      throw std::logic_error(fmt::format("{}: epsilon is NaN at delta = {}, index {}", a.name(),
                                         *query.delta, p.index));
    p.delta = *query.delta;
    p.epsilon = upper ? round_up(eps) : eps;
  }
  return p;
}

std::optional<std::int64_t> worst_index_of(const AnalysisResult& r) {
  if (r.index) return r.index;
  for (const auto& d : r.details)
    if (d.name == "worst_index") return static_cast<std::int64_t>(d.value);
  return std::nullopt;
}

}  // namespace

void add_per_index(Report& report, std::span<const AnalysisPtr> analyses, std::int64_t max_points) {
  const Run& run = report.run;
  if (run.index)
    fail("index", static_cast<double>(*run.index),
         "absent for the per-index view (it covers every index 1..n)");
  PerIndexView view;
  view.indices = per_index_positions(run.n, max_points);
  view.subsampled = static_cast<std::int64_t>(view.indices.size()) < run.n;
  for (const auto& a : analyses) {
    if (!is_per_index(*a, run)) continue;
    PerIndexView::Curve curve;
    curve.name = std::string(a->name());
    for (const auto& r : report.analyses)
      if (r.name == curve.name) curve.worst_index = worst_index_of(r);
    curve.points.reserve(view.indices.size());
    Run at = run;
    for (const std::int64_t i : view.indices) {
      at.index = i;
      curve.points.push_back(evaluate_at(*a, at, report.query));
    }
    view.curves.push_back(std::move(curve));
  }
  report.per_index = std::move(view);
}

Report account_request(const Run& run, const Query& query, std::span<const AnalysisPtr> chosen,
                       bool per_index, std::optional<std::int64_t> per_index_points, bool add_remove) {
  // Each analysis named once: a repeated name would be evaluated and listed twice.
  for (std::size_t i = 0; i < chosen.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (chosen[i]->name() == chosen[j]->name())
        fail(opt("analyses"), std::string(chosen[i]->name()), "each analysis named once (it is named twice)");
  if (per_index) {
    if (run.index)
      fail(opt("index"), std::to_string(*run.index),
           fmt::format("absent with {} (the view covers every index 1..n)", error_field("per_index")));
    // At most 2^16 positions: each is an evaluation of every per-index analysis.
    require_range(opt("per_index_points"), per_index_points.value_or(1000), 16, std::int64_t{1} << 16);
  } else if (per_index_points) {
    refuse_unread("per_index_points", std::to_string(*per_index_points),
                  fmt::format("only the per-index view ({}) reads it", error_field("per_index")));
  }
  Report report = chosen.empty() ? account(run, query) : account(run, query, chosen);
  const std::span<const AnalysisPtr> used = chosen.empty() ? std::span<const AnalysisPtr>(all_analyses()) : chosen;
  if (per_index) add_per_index(report, used, per_index_points.value_or(1000));
  // An analysis asked for by name that does not apply is an input error: its reason names
  // the violated assumption (e.g. eta above 2/beta).
  if (!chosen.empty())
    for (const auto& r : report.analyses)
      if (!r.applicable)
        throw InvalidArgument(
            fmt::format("{}: not applicable: {}", error_field("analyses", r.name), r.reason));
  if (add_remove) add_add_remove(report, used);
  return report;
}

}  // namespace hsdp
