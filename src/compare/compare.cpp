// Sweeps, evaluation, CSV and plot of a comparison (include/hsdp/compare.hpp).
#include "hsdp/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>

#include "hsdp/errors.hpp"
#include "hsdp/interrupt.hpp"

namespace hsdp {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string format_value(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{}", v);  // shortest form that reads back as the same double
}

std::string format_x(CompareAxis axis, double x) {
  return integer_axis(axis) ? fmt::format("{}", static_cast<std::int64_t>(x)) : format_value(x);
}

// RFC 4180 quoting for a header cell that contains a comma, quote or newline.
std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// A one-line comment: newlines in reasons would break the '#' prefix.
std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\r', ' ');
  return s;
}

std::string default_x_label(CompareAxis axis) {
  switch (axis) {
    case CompareAxis::steps: return "steps T";
    case CompareAxis::noise: return "noise std in parameter space";
    case CompareAxis::n: return "dataset size n";
    case CompareAxis::index: return "position i of the differing record";
    case CompareAxis::epsilon: return "epsilon";
    case CompareAxis::delta: return "delta";
  }
  return "x";
}

std::string default_x_column(CompareAxis axis) {
  return axis == CompareAxis::noise ? "noise_std" : std::string(to_string(axis));
}

std::string x_column(const Comparison& c) { return c.x_name.empty() ? default_x_column(c.axis) : c.x_name; }

// Where a curve is not applicable at some but not all xs: "at x = a, b, c" (or a count).
std::string where(const Comparison& c, const CompareCurve& curve) {
  std::vector<std::string> at;
  for (std::size_t i = 0; i < c.xs.size(); ++i)
    if (!curve.ys[i] && !curve.reasons[i].empty()) at.push_back(format_x(c.axis, c.xs[i]));
  if (at.empty()) return {};
  if (at.size() <= 6) {
    std::string s;
    for (const auto& a : at) s += (s.empty() ? "" : ", ") + a;
    return fmt::format("{} = {}", x_column(c), s);
  }
  return fmt::format("{} of {} points ({} = {} .. {})", at.size(), c.xs.size(), x_column(c),
                     at.front(), at.back());
}

std::string first_reason(const CompareCurve& curve) {
  for (const auto& r : curve.reasons)
    if (!r.empty()) return r;
  return {};
}

std::vector<std::string> curve_notes(const Comparison& c) {
  std::vector<std::string> out;
  for (const auto& curve : c.curves) {
    if (!curve.applicable_somewhere()) {
      out.push_back(fmt::format("{}: not applicable: {}", curve.label, one_line(first_reason(curve))));
      continue;
    }
    const std::string w = where(c, curve);
    if (!w.empty())
      out.push_back(fmt::format("{}: not applicable at {}: {}", curve.label, w,
                                one_line(first_reason(curve))));
    std::size_t infinite = 0;
    for (const auto& y : curve.ys)
      if (y && std::isinf(*y)) ++infinite;
    if (infinite)
      out.push_back(fmt::format("{}: no finite value at {} of {} points (gap in the curve)",
                                curve.label, infinite, c.xs.size()));
    std::size_t zeros = 0;
    for (const auto& y : curve.ys)
      if (y && *y <= 0) ++zeros;
    if (zeros && c.log_y)
      out.push_back(fmt::format("{}: value 0 (below the smallest double) at {} of {} points, not drawn on the log scale",
                                curve.label, zeros, c.xs.size()));
  }
  return out;
}

// The run summary describes the first sweep point; say so on a run axis.
std::string run_at_first(const Comparison& c) {
  if (c.axis == CompareAxis::epsilon || c.axis == CompareAxis::delta || c.xs.empty()) return {};
  return fmt::format(" (at {} = {})", x_column(c), format_x(c.axis, c.xs.front()));
}

}  // namespace

std::string_view to_string(CompareAxis axis) {
  switch (axis) {
    case CompareAxis::steps: return "steps";
    case CompareAxis::noise: return "noise";
    case CompareAxis::n: return "n";
    case CompareAxis::index: return "index";
    case CompareAxis::epsilon: return "epsilon";
    case CompareAxis::delta: return "delta";
  }
  return "?";
}

CompareAxis parse_compare_axis(std::string_view text, const Param& parameter) {
  for (auto a : {CompareAxis::steps, CompareAxis::noise, CompareAxis::n, CompareAxis::index,
                 CompareAxis::epsilon, CompareAxis::delta})
    if (text == to_string(a)) return a;
  fail(parameter, text, "one of steps, noise, n, index, epsilon, delta");
}

bool integer_axis(CompareAxis axis) {
  return axis == CompareAxis::steps || axis == CompareAxis::n || axis == CompareAxis::index;
}

std::vector<double> sweep_points(CompareAxis axis, double from, double to, int points,
                                 bool log_spacing) {
  require_finite(opt("from"), from);
  require_finite(opt("to"), to);
  require_range(opt("points"), points, 2, 10000);
  switch (axis) {
    case CompareAxis::steps:
    case CompareAxis::n:
    case CompareAxis::index:
      if (from < 1) fail(opt("from"), from, fmt::format(">= 1 (an integer {})", to_string(axis)));
      if (to > 9007199254740992.0) fail(opt("to"), to, "<= 2^53");
      break;
    case CompareAxis::noise:
      require_positive(opt("from"), from);
      break;
    case CompareAxis::epsilon:
      require_nonnegative(opt("from"), from);
      break;
    case CompareAxis::delta:
      require_open(opt("from"), from, 0.0, 1.0);
      require_open(opt("to"), to, 0.0, 1.0);
      break;
  }
  if (!(from < to)) fail(opt("to"), to, fmt::format("> {} = {}", error_field("from"), show(from)));
  if (log_spacing && !(from > 0)) fail(opt("from"), from, fmt::format("> 0 with {} (geometric spacing)", error_field("log_x")));
  std::vector<double> xs;
  xs.reserve(static_cast<std::size_t>(points));
  for (int k = 0; k < points; ++k) {
    const double f = static_cast<double>(k) / (points - 1);
    double x = log_spacing ? std::exp(std::log(from) + f * (std::log(to) - std::log(from)))
                           : from + f * (to - from);
    if (k == 0) x = from;  // exact ends, no rounding drift
    if (k == points - 1) x = to;
    if (integer_axis(axis)) {
      x = std::round(x);
    } else if (k != 0 && k != points - 1) {
      // 12 significant digits: the decimal a user would type (0.3, not 0.30000000000000004),
      // so that `hsdp account` at that value reproduces the row exactly.
      // fmt and from_chars: the C locale (a decimal comma) must not cut 1.5 to 1.
      const std::string decimal = fmt::format("{:.12g}", x);
      std::from_chars(decimal.data(), decimal.data() + decimal.size(), x);
    }
    if (xs.empty() || x != xs.back()) xs.push_back(x);
  }
  return xs;
}

Run vary(const Run& base, CompareAxis axis, double x) {
  Run run = base;
  switch (axis) {
    case CompareAxis::steps:
      if (!run.eta.is_constant() || !run.noise_std.is_constant())
        fail(opt("x"), "steps",
             "a run with a constant step size and noise (a schedule has one value per step)");
      run.steps = static_cast<std::int64_t>(x);
      break;
    case CompareAxis::n:
      // A full-batch run stays full-batch.
      if (run.sampling == Sampling::full) run.batch_size = static_cast<std::int64_t>(x);
      run.n = static_cast<std::int64_t>(x);
      break;
    case CompareAxis::index:
      run.index = static_cast<std::int64_t>(x);
      break;
    case CompareAxis::noise:
      if (!run.noise_std.is_constant())
        fail(opt("x"), "noise", "a run with constant noise (not a per-step schedule)");
      run.noise_std = Schedule(x);
      break;
    case CompareAxis::epsilon:
    case CompareAxis::delta:
      break;
  }
  run.validate();
  return run;
}

bool CompareCurve::applicable_somewhere() const {
  return std::any_of(ys.begin(), ys.end(), [](const auto& y) { return y.has_value(); });
}

Comparison compare(const CompareSpec& spec) {
  if (spec.xs.empty()) fail("sweep", "(empty)", "at least one point");
  if (spec.variants.empty()) fail("variants", "(none)", "at least one run");
  const bool rdp = spec.variants.front().rdp_order.has_value();
  for (const auto& v : spec.variants) {
    if (!v.run_at) fail("variant run", v.label, "a function of the swept value");
    if (v.rdp_order.has_value() != rdp)
      fail("variant rdp order", v.label, "given for every variant or for none (one y quantity per plot)");
    if (v.rdp_order && !(*v.rdp_order > 1.0)) fail("alpha", *v.rdp_order, "> 1");
  }
  const bool query_axis = spec.axis == CompareAxis::epsilon || spec.axis == CompareAxis::delta;

  Comparison c;
  c.title = spec.title;
  c.axis = spec.axis;
  c.x_label = spec.x_label.empty() ? default_x_label(spec.axis) : spec.x_label;
  c.x_name = spec.x_name.empty() ? default_x_column(spec.axis) : spec.x_name;
  c.xs = spec.xs;
  c.log_x = spec.log_x;
  c.notes = spec.notes;
  c.single_run = spec.variants.size() == 1;
  if (!query_axis && !rdp)
    c.query = spec.query.delta ? fmt::format("delta = {}", show(*spec.query.delta))
                               : fmt::format("epsilon = {}", show(*spec.query.epsilon));
  if (rdp) {
    std::set<double> orders;
    for (const auto& v : spec.variants) orders.insert(*v.rdp_order);
    c.y_label = orders.size() == 1 ? fmt::format("RDP epsilon at alpha = {}", show(*orders.begin()))
                                   : "RDP epsilon";
  } else if (spec.axis == CompareAxis::epsilon || (!query_axis && spec.query.epsilon)) {
    c.y_label = query_axis ? "delta" : fmt::format("delta at {}", c.query);
  } else {
    c.y_label = query_axis ? "epsilon" : fmt::format("epsilon at {}", c.query);
  }
  const bool y_is_delta = !rdp && c.y_label.rfind("delta", 0) == 0;

  std::size_t done_points = 0;  // for spec.progress
  for (const auto& v : spec.variants) {
    const auto& list = v.analyses.empty() ? all_analyses() : v.analyses;
    const std::size_t first = c.curves.size();
    for (const auto& a : list) {
      CompareCurve curve;
      curve.analysis = std::string(a->name());
      curve.kind = a->kind();
      curve.dashed = v.dashed || curve.kind != BoundKind::upper;
      curve.label = v.detail ? (v.detail_label.empty() ? curve.analysis + " " + *v.detail : v.detail_label)
                             : curve.analysis;
      if (!v.label.empty()) curve.label += fmt::format(", {}", v.label);
      if (curve.kind == BoundKind::lower) curve.label += " (lower)";
      if (curve.kind == BoundKind::heuristic) curve.label += " (heuristic)";
      if (curve.kind == BoundKind::comparison) curve.label += " (comparison)";
      curve.ys.resize(c.xs.size());
      curve.reasons.resize(c.xs.size());
      c.curves.push_back(std::move(curve));
    }
    for (std::size_t i = 0; i < c.xs.size(); ++i) {
      const double x = c.xs[i];
      const Run run = v.run_at(x);
      run.validate();
      if (c.run.empty()) c.run = run.summary();
      Query q = spec.axis == CompareAxis::epsilon ? Query::at_epsilon(x)
                : spec.axis == CompareAxis::delta ? Query::at_delta(x)
                                                  : spec.query;
      q.alphas.clear();
      for (std::size_t k = 0; k < list.size(); ++k) {
        poll_interrupt();  // one analysis at one point of the sweep (include/hsdp/interrupt.hpp)
        auto& curve = c.curves[first + k];
        curve.adjacency = run.adjacency;
        if (v.rdp_order) {
          // Only the RDP curve at one order: skip evaluate()'s (eps, delta) conversion, which
          // optimises over all orders. Rounded up exactly as evaluate() rounds r.rdp.
          if (auto why = list[k]->not_applicable(run)) {
            curve.reasons[i] = *why;
          } else if (auto e = list[k]->rdp_at(run, *v.rdp_order)) {
            if (std::isnan(*e))
              throw std::logic_error(fmt::format("{}: RDP is NaN at alpha = {}", curve.analysis,
                                                 show(*v.rdp_order)));
            curve.ys[i] = curve.kind == BoundKind::upper ? round_up(*e) : *e;
          } else {
            curve.reasons[i] = "states no Rényi-DP curve (not an RDP analysis)";
          }
          continue;
        }
        const AnalysisResult r = list[k]->evaluate(run, q);
        if (!r.applicable) {
          curve.reasons[i] = r.reason;
          continue;
        }
        if (v.detail) {
          const auto d = std::find_if(r.details.begin(), r.details.end(),
                                      [&](const Detail& e) { return e.name == *v.detail; });
          if (d == r.details.end()) {
            curve.reasons[i] = fmt::format("reports no detail '{}' for this query", *v.detail);
            continue;
          }
          if (std::isnan(d->value)) continue;  // absent, never turned into a number
          // Details are raw values; an upper bound is rounded up like the main result.
          double y = curve.kind == BoundKind::upper ? round_up(d->value) : d->value;
          if (y_is_delta && curve.kind == BoundKind::upper) y = std::min(1.0, y);
          curve.ys[i] = y;
        } else {
          curve.ys[i] = y_is_delta ? *r.delta : *r.epsilon;
        }
      }
      if (spec.progress) spec.progress(done_points += 1, spec.variants.size() * c.xs.size());
    }
  }

  if (spec.log_y) {
    c.log_y = *spec.log_y;
  } else if (y_is_delta) {
    c.log_y = true;
  } else {
    double lo = kInf, hi = 0;
    for (const auto& curve : c.curves)
      for (const auto& y : curve.ys)
        if (y && std::isfinite(*y) && *y > 0) {
          lo = std::min(lo, *y);
          hi = std::max(hi, *y);
        }
    c.log_y = lo < kInf && hi / lo > 100.0;
  }
  return c;
}

std::string to_csv(const Comparison& c) {
  std::string out;
  if (!c.title.empty()) out += fmt::format("# hsdp compare: {}\n", one_line(c.title));
  if (!c.run.empty())
    out += fmt::format("# run{}{}: {}\n", c.single_run ? "" : " of the first variant", run_at_first(c),
                       one_line(c.run));
  if (!c.query.empty()) out += fmt::format("# query: {}\n", c.query);
  out += fmt::format("# x: {}; y: {} (upper bounds rounded up, as hsdp account reports them)\n",
                     one_line(c.x_label), one_line(c.y_label));
  for (const auto& n : curve_notes(c)) out += fmt::format("# {}\n", n);
  for (const auto& n : c.notes) out += fmt::format("# note: {}\n", one_line(n));
  out += csv_cell(x_column(c));
  std::vector<const CompareCurve*> shown;
  for (const auto& curve : c.curves)
    if (curve.applicable_somewhere()) shown.push_back(&curve);
  for (const auto* curve : shown) {
    out += ',';
    out += csv_cell(curve->label);
  }
  out += "\n";
  for (std::size_t i = 0; i < c.xs.size(); ++i) {
    out += format_x(c.axis, c.xs[i]);
    for (const auto* curve : shown) {
      out += ",";
      if (curve->ys[i]) out += format_value(*curve->ys[i]);
    }
    out += "\n";
  }
  return out;
}

svg::LinePlot to_plot(const Comparison& c) {
  svg::LinePlot p;
  p.title = c.title;
  p.x_label = c.x_label;
  p.y_label = c.y_label;
  p.log_x = c.log_x;
  p.log_y = c.log_y;
  for (const auto& curve : c.curves) {
    if (!curve.applicable_somewhere()) continue;
    svg::Series s;
    s.name = curve.label;
    s.dashed = curve.dashed;
    s.xs = c.xs;
    s.ys.reserve(c.xs.size());
    // Not applicable at a point: a gap (the writer never draws a non-finite value).
    for (const auto& y : curve.ys) s.ys.push_back(y ? *y : std::numeric_limits<double>::quiet_NaN());
    p.series.push_back(std::move(s));
  }
  // One run line only when it describes every curve (a figure's variants are in its notes).
  if (!c.run.empty() && c.single_run) p.notes.push_back(fmt::format("run{}: {}", run_at_first(c), c.run));
  for (auto& n : curve_notes(c)) p.notes.push_back(std::move(n));
  for (const auto& n : c.notes) p.notes.push_back(n);
  return p;
}

}  // namespace hsdp
