// The exact value next to every upper bound hsdp reports for the same run: how tight each
// analysis is (ratio bound / exact), and whether any bound falls below the exact value
// (which would be a bug in that analysis). Also the eps-vs-steps sweep, as CSV and SVG.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "hsdp/accountant.hpp"
#include "hsdp/audit/exact.hpp"
#include "hsdp/field_use.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/plot.hpp"
#include "../report/format.hpp"

namespace hsdp::audit {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string instance_text(const ExactResult& e, const Run& run) {
  const std::string slope = fmt::format("{}", show(e.gradient));
  const double lambda = run.loss.strong_convexity;
  std::string s;
  if (lambda > 0) {
    // Every record's loss has the regulariser; the differing record's adds its linear term.
    s = fmt::format("losses {}/2 w^2", show(lambda));
    s += e.pair == Pair::sec4 ? fmt::format(", plus {} (D - w) for x'_i", slope)
                              : fmt::format(", plus {0} w for x_i vs -{0} w for x'_i", slope);
  } else {
    s = e.pair == Pair::sec4
            ? fmt::format("losses 0 except f(w; x'_i) = {} (D - w) (altschuler-talwar Sec. 4)", slope)
            : fmt::format("losses 0 except f(w; x_i) = {0} w vs f(w; x'_i) = -{0} w", slope);
  }
  s += std::isfinite(run.diameter)
           ? fmt::format(", projected onto [-{0}, {0}], w_0 = 0", show(run.diameter / 2))
           : std::string(", unprojected, w_0 = 0");
  if (e.index) s += fmt::format(", differing record at position {}", *e.index);
  if (e.method == Method::gaussian)
    s += e.components == 1 ? ": the last iterate is Gaussian (closed form)"
                           : fmt::format(": the last iterate is a mixture of {} Gaussians (closed form)",
                                         e.components);
  return s;
}

}  // namespace

Tightness tightness(const Run& run, const Query& query, const ExactOptions& options) {
  Tightness t{run, query, exact(run, query, options), {}, {}};
  Query q = query;
  q.alphas.clear();
  const Report report = account(run, q);
  const double exact_value = t.exact.value();
  for (const auto& r : report.analyses) {
    if (!r.applicable) {
      t.not_applicable.emplace_back(r.name, r.reason);
      continue;
    }
    if (r.kind != BoundKind::upper) continue;
    BoundRow row;
    row.name = r.name;
    row.citation = r.citation;
    row.value = t.exact.at_delta ? *r.epsilon : *r.delta;
    row.ratio = exact_value > 0 ? row.value / exact_value : (row.value > 0 ? kInf : 1.0);
    // A valid upper bound is >= the true value; the true value is >= exact lo.
    row.consistent = row.value >= t.exact.lo();
    t.bounds.push_back(std::move(row));
  }
  return t;
}

nlohmann::json to_json(const Tightness& t) {
  nlohmann::json j;
  j["run"] = hsdp::to_json(t.run);
  j["query"] = t.exact.at_delta ? nlohmann::json{{"delta", t.exact.delta}}
                                : nlohmann::json{{"epsilon", t.exact.epsilon}};
  const auto& e = t.exact;
  nlohmann::json ex{{"epsilon", report::json_number(e.epsilon)},
                    {"delta", report::json_number(e.delta)},
                    {"error", report::json_number(e.error)},
                    {"interval", {report::json_number(e.lo()), report::json_number(e.hi())}},
                    {"coarse", report::json_number(e.coarse)},
                    {"method", std::string(to_string(e.method))},
                    {"components", e.components},
                    {"grid", e.grid},
                    {"coarse_grid", e.coarse_grid},
                    {"pair", std::string(to_string(e.pair))},
                    {"gradient", e.gradient},
                    {"mass_defect", e.mass_defect},
                    {"instance", instance_text(e, t.run)}};
  ex["index"] = e.index ? nlohmann::json(*e.index) : nlohmann::json(nullptr);
  if (!e.renyi.empty()) {
    auto& rr = ex["renyi"] = nlohmann::json::array();
    for (const auto& r : e.renyi)
      rr.push_back({{"alpha", report::json_number(r.alpha)}, {"value", report::json_number(r.value)}, {"error", report::json_number(r.error)}});
  }
  j["exact"] = std::move(ex);
  auto& bounds = j["bounds"] = nlohmann::json::array();
  for (const auto& b : t.bounds) {
    bounds.push_back({{"name", b.name},
                      {"epsilon", report::json_number(e.at_delta ? b.value : e.epsilon)},
                      {"delta", report::json_number(e.at_delta ? e.delta : b.value)},
                      {"ratio", report::json_number(b.ratio)},
                      {"consistent", b.consistent},
                      {"citation", b.citation}});
  }
  auto& na = j["not_applicable"] = nlohmann::json::array();
  for (const auto& [name, reason] : t.not_applicable) na.push_back({{"name", name}, {"reason", reason}});
  return j;
}

std::string to_table(const Tightness& t) {
  const auto& e = t.exact;
  const char* what = e.at_delta ? "epsilon" : "delta";
  std::string out = fmt::format("run: {}\n", t.run.summary());
  out += fmt::format("instance: {}\n", instance_text(e, t.run));
  out += e.at_delta ? fmt::format("query: epsilon at delta = {}\n", show(e.delta))
                    : fmt::format("query: delta at epsilon = {}\n", show(e.epsilon));
  if (e.method == Method::gaussian)
    out += fmt::format("exact {} = {} +- {}  (closed form; the error is a proven bound)\n", what,
                       report::show6(e.value()), report::show6(e.error));
  else
    out += fmt::format("exact {} = {} +- {}  (grid {} points; {} on {} points)\n", what,
                       report::show6(e.value()), report::show6(e.error), e.grid, report::show6(e.coarse),
                       e.coarse_grid);
  for (const auto& r : e.renyi)
    out += fmt::format("exact D_{} = {} +- {}\n", show(r.alpha), report::show6(r.value), report::show6(r.error));
  out += fmt::format("\n{:<26} {:>14} {:>12}\n", "upper bound", what, "bound/exact");
  for (const auto& b : t.bounds)
    out += fmt::format("{:<26} {:>14} {:>12}{}\n", b.name, report::show6(b.value), report::show6(b.ratio),
                       b.consistent ? "" : "  BELOW THE EXACT VALUE");
  if (t.bounds.empty()) out += "  (no upper bound applies to this run)\n";
  for (const auto& [name, reason] : t.not_applicable)
    out += fmt::format("{:<26} not applicable: {}\n", name, reason);
  return out;
}

Run with_steps(const Run& run, std::int64_t steps) {
  require_range("steps", steps, 1, run.steps);
  Run r = run;
  r.steps = steps;
  auto cut = [steps](const Schedule& s) {
    if (s.is_constant()) return s;
    return Schedule(std::vector<double>(s.values().begin(), s.values().begin() + steps));
  };
  r.eta = cut(run.eta);
  r.noise_std = cut(run.noise_std);
  return r;
}

std::vector<std::int64_t> sweep_steps(std::int64_t max_steps, int points) {
  require_range("steps", max_steps, 1, std::int64_t{1} << 53);
  require_range("points", points, 1, 10000);
  std::set<std::int64_t> s{max_steps};
  const double lmax = std::log(static_cast<double>(max_steps));
  for (int i = 0; i < points - 1; ++i) {
    const double f = points == 1 ? 1.0 : static_cast<double>(i) / (points - 1);
    s.insert(std::clamp<std::int64_t>(std::llround(std::exp(f * lmax)), 1, max_steps));
  }
  return {s.begin(), s.end()};
}

std::vector<std::int64_t> stated_sweep(std::int64_t max_steps, std::optional<std::int64_t> points, bool written) {
  if (!written) {
    if (points)
      refuse_unread("points", std::to_string(*points),
                    fmt::format("only the sweep written by {} or {} reads it", error_field("plot"), error_field("csv")));
    return {};
  }
  const std::int64_t k = require_range(opt("points"), points.value_or(12), 1, 1000);
  return sweep_steps(max_steps, static_cast<int>(k));
}

std::vector<Tightness> sweep(const Run& run, const Query& query, const ExactOptions& options,
                             std::span<const std::int64_t> steps) {
  std::vector<Tightness> out;
  out.reserve(steps.size());
  for (const auto t : steps) out.push_back(tightness(with_steps(run, t), query, options));
  return out;
}

namespace {

// Bound names in first-appearance order across the sweep.
std::vector<std::string> bound_names(const std::vector<Tightness>& points) {
  std::vector<std::string> names;
  for (const auto& p : points)
    for (const auto& b : p.bounds)
      if (std::find(names.begin(), names.end(), b.name) == names.end()) names.push_back(b.name);
  return names;
}

const BoundRow* find_row(const Tightness& p, const std::string& name) {
  for (const auto& b : p.bounds)
    if (b.name == name) return &b;
  return nullptr;
}

std::string csv_number(double v) { return std::isinf(v) ? "inf" : fmt::format("{:.17g}", v); }

}  // namespace

std::string sweep_csv(const std::vector<Tightness>& points) {
  if (points.empty()) return "";
  const bool at_delta = points.front().exact.at_delta;
  const auto names = bound_names(points);
  std::string out = fmt::format("# exact audit: {} against steps; run at the last point: {}\n",
                                at_delta ? "epsilon(delta)" : "delta(epsilon)",
                                points.back().run.summary());
  out += fmt::format("# {}\n", at_delta ? fmt::format("delta = {}", show(points.front().exact.delta))
                                        : fmt::format("epsilon = {}", show(points.front().exact.epsilon)));
  out += "steps,exact,exact_lo,exact_hi";
  for (const auto& n : names) {
    out += ',';
    out += n;
  }
  out += "\n";
  for (const auto& p : points) {
    out += fmt::format("{},{},{},{}", p.run.steps, csv_number(p.exact.value()), csv_number(p.exact.lo()),
                       csv_number(p.exact.hi()));
    for (const auto& n : names) {
      const BoundRow* r = find_row(p, n);
      out += ',';
      if (r) out += csv_number(r->value);
    }
    out += "\n";
  }
  return out;
}

std::string sweep_svg(const std::vector<Tightness>& points, const std::string& title) {
  svg::LinePlot plot;
  plot.title = title;
  plot.x_label = "steps T";
  const bool at_delta = points.empty() || points.front().exact.at_delta;
  plot.y_label = at_delta ? "epsilon" : "delta";
  plot.log_x = true;
  plot.log_y = true;
  svg::Series exact{"exact (this audit)", {}, {}, false};
  svg::Series band{"exact + error", {}, {}, true};
  bool visible_error = false;
  for (const auto& p : points) {
    exact.xs.push_back(static_cast<double>(p.run.steps));
    exact.ys.push_back(p.exact.value());
    band.xs.push_back(static_cast<double>(p.run.steps));
    band.ys.push_back(p.exact.hi());
    if (p.exact.error > 1e-3 * std::max(p.exact.value(), 1e-300)) visible_error = true;
  }
  plot.series.push_back(std::move(exact));
  if (visible_error) plot.series.push_back(std::move(band));
  for (const auto& name : bound_names(points)) {
    svg::Series s{name, {}, {}, false};
    for (const auto& p : points) {
      s.xs.push_back(static_cast<double>(p.run.steps));
      const BoundRow* r = find_row(p, name);
      s.ys.push_back(r ? r->value : std::numeric_limits<double>::quiet_NaN());
    }
    plot.series.push_back(std::move(s));
  }
  if (!points.empty()) {
    plot.notes.push_back("run: " + points.back().run.summary());
    for (const auto& [name, reason] : points.back().not_applicable)
      plot.notes.push_back(name + ": not applicable: " + reason);
  }
  return svg::render(plot);
}

}  // namespace hsdp::audit
