// Comparisons: every analysis evaluated along a sweep of one run parameter (steps, noise,
// n, index) or of the query itself (epsilon, delta), as CSV and as an SVG plot
// (`hsdp compare`), plus presets that reproduce the source papers' figures.
//
// A comparison is a list of variants (a run as a function of the swept value, and the
// analyses to evaluate on it), evaluated at the same xs. Each (variant, analysis) pair is
// one curve. The y value of a curve at x is exactly what `hsdp account` reports for that
// run and query (AnalysisResult::epsilon / delta, already rounded up), or the RDP epsilon at
// a fixed order (AnalysisResult::rdp), or a named detail (a paper's own closed form). A
// curve that is not applicable at any x is left out of the plot and listed with its reason.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hsdp/errors.hpp"
#include "hsdp/analysis/analysis.hpp"
#include "hsdp/plot.hpp"
#include "hsdp/run.hpp"
#include "hsdp/run_spec.hpp"

namespace hsdp {

/// What is swept. steps, noise, n and index change the run; epsilon and delta change the
/// query (x = epsilon: y = delta(epsilon); x = delta: y = epsilon(delta)).
enum class CompareAxis { steps, noise, n, index, epsilon, delta };
std::string_view to_string(CompareAxis axis);
/// Parses "steps" etc.; throws InvalidArgument naming `parameter`.
CompareAxis parse_compare_axis(std::string_view text, const Param& parameter = opt("x"));
/// True for steps, n and index (the swept values are integers).
bool integer_axis(CompareAxis axis);

/// `points` values from `from` to `to` (both included), evenly spaced, or geometrically
/// when `log_spacing` (needs from > 0). On an integer axis the values are rounded to the
/// nearest integer and duplicates dropped. Validates: finite ends, from < to, points in
/// 2..10000, and the axis' own range (steps, n, index >= 1; noise > 0; epsilon >= 0;
/// delta in (0, 1)); messages name the fields `from`, `to`, `points`.
std::vector<double> sweep_points(CompareAxis axis, double from, double to, int points,
                                 bool log_spacing);

/// `base` with the swept parameter set to x (steps, n, index; noise: the std in parameter
/// space, constant). The query axes return `base`. The run is validated. Throws
/// InvalidArgument when the run's schedules are not constant and the axis is steps or noise.
Run vary(const Run& base, CompareAxis axis, double x);

/// One run family of a comparison.
struct CompareVariant {
  std::string label;  ///< appended to the legend entries ("eta=0.05, sigma=3"); may be empty
  /// The run at sweep value x (for the epsilon/delta axes called with x but usually ignoring it).
  std::function<Run(double x)> run_at;
  /// The analyses drawn for this variant (empty: every analysis hsdp knows).
  std::vector<AnalysisPtr> analyses;
  /// Plot the RDP epsilon at this order (RDP analyses only) instead of (eps, delta).
  std::optional<double> rdp_order;
  /// Plot this named detail of the result (e.g. a paper's printed formula) instead of the
  /// analysis' own value; the legend shows `detail_label`.
  std::optional<std::string> detail;
  std::string detail_label;
  /// Draw this variant's curves dashed (e.g. a baseline, as a paper's figure does). Lower
  /// bounds are always dashed.
  bool dashed = false;
};

struct CompareSpec {
  std::string title;
  CompareAxis axis = CompareAxis::steps;
  std::string x_label;  ///< empty: a default name of the axis
  std::string x_name;   ///< the CSV's x column; empty: the axis name ("noise_std" for noise)
  std::vector<double> xs;
  /// For the run axes: the fixed query (delta or epsilon). Ignored on the query axes.
  Query query = Query::at_delta(1e-5);
  std::vector<CompareVariant> variants;
  bool log_x = false;
  std::optional<bool> log_y;  ///< default: log for delta and for y spanning > 2 decades
  std::vector<std::string> notes;  ///< extra lines under the plot and in the CSV header
  /// Called after each point of the sweep with the points done and their number (a front
  /// end's progress line); may be empty.
  std::function<void(std::size_t done, std::size_t total)> progress = {};
};

/// One (variant, analysis) curve.
struct CompareCurve {
  std::string analysis;  ///< analysis name
  std::string label;     ///< legend text; lower bounds end in " (lower)"
  BoundKind kind = BoundKind::upper;
  bool dashed = false;   ///< drawn dashed: a lower bound, or a variant marked dashed
  /// y at each x of the spec; nullopt where the analysis does not apply (see reasons) or
  /// the detail is absent. +inf means "no finite guarantee" (drawn as a gap).
  std::vector<std::optional<double>> ys;
  std::vector<std::string> reasons;  ///< per x: the not-applicable reason, or empty
  Adjacency adjacency = Adjacency::replace;  ///< the neighbouring relation of its variant's runs
  bool applicable_somewhere() const;
};

struct Comparison {
  std::string title;
  CompareAxis axis = CompareAxis::steps;
  std::string x_label;
  std::string x_name;   ///< the CSV's x column
  std::string y_label;  ///< "epsilon", "delta" or "RDP epsilon"
  std::vector<double> xs;
  std::string query;    ///< e.g. "delta = 1e-05" (run axes), "" on the query axes
  std::string run;      ///< summary of the first variant's run at the first x
  bool single_run = true;  ///< one variant: `run` describes every curve (up to the swept value)
  bool log_x = false;
  bool log_y = false;
  std::vector<CompareCurve> curves;  ///< every curve, applicable or not
  std::vector<std::string> notes;
};

/// Evaluates every curve of the spec at every x. Throws InvalidArgument for an empty sweep
/// or a variant without run_at; errors from run_at propagate.
Comparison compare(const CompareSpec& spec);

/// CSV: '#' comment lines (title, run, query, y quantity, each left-out curve with its
/// reason, partly applicable curves, notes), a header "x_label,curve,...", then one row per
/// x. Values are written with 17 significant digits (the exact double `hsdp account`
/// reports); "inf" for +inf; an empty cell where the curve does not apply.
std::string to_csv(const Comparison& comparison);

/// The plot: curves applicable somewhere, lower bounds dashed; a note line for each left-out
/// curve ("<label>: not applicable: <reason>") and each partly applicable one.
svg::LinePlot to_plot(const Comparison& comparison);

/// The names of the paper-figure presets.
const std::vector<std::string>& figure_names();
/// The preset reproducing a paper figure at its parameters (docs/compare.md lists the
/// choices made where a caption leaves something open). `points` overrides the preset's
/// default number of sweep points when > 0. Throws InvalidArgument for an unknown name.
CompareSpec figure(std::string_view name, int points = 0);

/// The `compare` request as a user states it (`hsdp compare`, hsdp.compare): a run
/// statement, its query and a sweep, or a paper's figure (which sets the run, the sweep and
/// the analyses: then only points, title and y_scale may be given).
struct CompareRequest {
  RunSpec run;
  std::optional<double> epsilon, delta;  ///< the query of the run axes (default delta 1e-5)
  std::vector<double> alphas;            ///< must be empty: an RDP curve is asked with rdp
  std::optional<std::string> x;          ///< steps | noise | n | index | epsilon | delta
  std::optional<double> from, to;        ///< the sweep's first and last values
  std::optional<std::int64_t> points;    ///< sweep points, 2..10000 (default 20; a figure's own)
  bool log_x = false;                    ///< geometric spacing, log-scale x axis
  std::optional<std::string> y_scale;    ///< auto (default) | log | linear: the plot's y axis
  std::optional<double> rdp;             ///< plot the RDP epsilon at this order > 1
  std::vector<std::string> analyses;     ///< restrict to these analyses (default all)
  std::optional<std::string> title;
  std::optional<std::string> figure;     ///< a name of figure_names()
  /// Whether a plot is drawn from the comparison (`hsdp compare` without --svg draws none; a
  /// Python Comparison can always draw one): without one, title and y_scale are read by nothing
  /// and refused (field_use.hpp).
  bool plot = true;
};

/// The comparison a request describes, validated (InvalidArgument naming the field): at
/// every sweep value the run is rebuilt from the statement with the swept field set, as
/// `hsdp account` builds it, so each row can be reproduced with `hsdp account`.
CompareSpec compare_spec(const CompareRequest& request);

}  // namespace hsdp
