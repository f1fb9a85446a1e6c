// The `compare` request (include/hsdp/compare.hpp, CompareRequest): the sweep or the figure
// a user states, turned into a CompareSpec with the same checks for the command and Python.
#include <fmt/format.h>

#include <memory>

#include "hsdp/compare.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/field_use.hpp"

namespace hsdp {

namespace {

// The run at sweep value x, resolved from the statement exactly as `hsdp account` resolves
// it with that field set (so every CSV row can be reproduced with `hsdp account`).
Run run_at(const RunSpec& stated, CompareAxis axis, double x) {
  RunSpec f = stated;
  const auto k = static_cast<std::int64_t>(x);
  switch (axis) {
    case CompareAxis::steps: f.steps = k; break;
    case CompareAxis::n: f.n = k; break;
    case CompareAxis::index: f.index = k; break;
    case CompareAxis::noise:
      if (f.noise_multiplier) {
        f.noise_multiplier = x;
      } else if (f.sigma || (f.example && !f.noise_std)) {
        if (!f.sigma && !f.convention) f.convention = "journal";  // the example's convention
        f.sigma = x;
      } else {
        f.noise_std = x;
      }
      break;
    case CompareAxis::epsilon:
    case CompareAxis::delta: break;
  }
  return f.resolve();
}

std::string noise_label(const RunSpec& f) {
  if (f.noise_multiplier) return "noise multiplier z (DP-SGD convention)";
  if (f.sigma) return fmt::format("sigma ({} convention)", f.convention.value_or("?"));
  if (f.example && !f.noise_std) return "sigma (journal convention)";
  return "noise std in parameter space";
}

// A figure fixes the run, the sweep and the analyses: any other run or sweep field would be
// silently ignored, so it is an error (fields in the order the command lists its flags).
void require_only_figure_fields(const CompareRequest& r) {
  std::optional<std::string> given;
  const FieldValues stated = r.run.to_map();
  if (!stated.empty()) given = stated.front().first;
  else if (!r.alphas.empty()) given = "alphas";
  else if (r.epsilon) given = "epsilon";
  else if (r.delta) given = "delta";
  else if (r.x) given = "x";
  else if (r.from) given = "from";
  else if (r.to) given = "to";
  else if (r.log_x) given = "log_x";
  else if (r.rdp) given = "rdp";
  else if (!r.analyses.empty()) given = "analyses";
  if (given)
    fail(opt(*given), "(given)",
         fmt::format("absent with {} (the figure sets the run)", error_field("figure", *r.figure)));
}

}  // namespace

CompareSpec compare_spec(const CompareRequest& r) {
  CompareSpec spec;
  if (r.figure) {
    require_only_figure_fields(r);
    if (r.points) require_range(opt("points"), *r.points, 2, 10000);
    spec = figure(*r.figure, static_cast<int>(r.points.value_or(0)));
  } else {
    if (!r.x) fail(opt("x"), "(missing)", fmt::format("given: steps|noise|n|index|epsilon|delta (or use {})", error_field("figure")));
    const CompareAxis axis = parse_compare_axis(*r.x, opt("x"));
    if (!r.from) fail(opt("from"), "(missing)", "given: the first value of the sweep");
    if (!r.to) fail(opt("to"), "(missing)", "given: the last value of the sweep");
    spec.axis = axis;
    if (r.points) require_range(opt("points"), *r.points, 2, 10000);
    spec.xs = sweep_points(axis, *r.from, *r.to, static_cast<int>(r.points.value_or(20)), r.log_x);
    spec.log_x = r.log_x;
    const bool query_axis = axis == CompareAxis::epsilon || axis == CompareAxis::delta;
    if (query_axis && (r.epsilon || r.delta))
      fail(opt(r.epsilon ? "epsilon" : "delta"), r.epsilon ? *r.epsilon : *r.delta,
           fmt::format("absent with {} (the sweep sets the query)", error_field("x", *r.x)));
    if (r.rdp && query_axis)
      fail(opt("rdp"), *r.rdp,
           fmt::format("absent with {} (an RDP curve has no epsilon/delta query)", error_field("x", *r.x)));
    if (!r.alphas.empty())
      fail(opt("alphas"), r.alphas.front(), fmt::format("absent in compare (use {})", error_field("rdp", "ALPHA")));
    if (r.rdp && !(*r.rdp > 1.0)) fail(opt("rdp"), *r.rdp, "> 1");
    // The swept field is set at every point: a stated value of it would be read by nothing.
    if (axis == CompareAxis::steps && r.run.steps)
      refuse_unread("steps", std::to_string(*r.run.steps),
                    fmt::format("{} sets the steps of every point of the sweep", error_field("x", "steps")));
    if (axis == CompareAxis::index && r.run.index)
      refuse_unread("index", std::to_string(*r.run.index),
                    fmt::format("{} sets the index of every point of the sweep", error_field("x", "index")));
    // The base run, validated once with the sweep field unset (the usual errors first).
    const Run base = r.run.resolve();
    if (axis == CompareAxis::index && spec.xs.back() > static_cast<double>(base.n))
      fail(opt("to"), *r.to, fmt::format("<= n = {} (a record position 1..n)", base.n));
    if (axis == CompareAxis::n && spec.xs.front() < static_cast<double>(base.batch_size) &&
        base.sampling != Sampling::full)
      fail(opt("from"), *r.from, fmt::format(">= {} = {}", error_field("batch_size"), base.batch_size));
    if (axis == CompareAxis::n && base.index && spec.xs.front() < static_cast<double>(*base.index))
      fail(opt("from"), *r.from, fmt::format(">= {} = {}", error_field("index"), *base.index));
    spec.query = stated_query(r.epsilon, r.delta, r.alphas);
    if (axis == CompareAxis::noise) {
      spec.x_label = noise_label(r.run);
      spec.x_name = r.run.noise_multiplier                                    ? "noise_multiplier"
                    : (r.run.sigma || (r.run.example && !r.run.noise_std)) ? "sigma"
                                                                            : "noise_std";
    }
    CompareVariant v;
    v.run_at = [stated = std::make_shared<const RunSpec>(r.run), axis](double x) { return run_at(*stated, axis, x); };
    for (const auto& name : r.analyses) v.analyses.push_back(find_analysis(name));
    v.rdp_order = r.rdp;
    spec.variants.push_back(std::move(v));
    spec.title = fmt::format("{} vs {}",
                             r.rdp                              ? "RDP epsilon"
                             : axis == CompareAxis::epsilon     ? "delta"
                             : axis == CompareAxis::delta       ? "epsilon"
                             : spec.query.delta                 ? "epsilon"
                                                                : "delta",
                             spec.x_name.empty() ? *r.x : spec.x_name);
  }
  // Read by the plot only.
  for (const auto& [field, value] : {std::pair{"title", r.title}, std::pair{"y_scale", r.y_scale}})
    if (value && !r.plot)
      refuse_unread(field, *value, fmt::format("only the plot ({}) reads it", error_field("svg")));
  if (r.title) spec.title = *r.title;
  const std::string y_scale = r.y_scale.value_or("auto");
  if (y_scale == "log") {
    spec.log_y = true;
  } else if (y_scale == "linear") {
    spec.log_y = false;
  } else if (y_scale != "auto") {
    fail(opt("y_scale"), stated_value(y_scale), "one of auto, log, linear");
  }
  return spec;
}

}  // namespace hsdp
