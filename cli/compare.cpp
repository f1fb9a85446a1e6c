// `hsdp compare`: every analysis along a sweep of steps, noise, n, index, epsilon or delta,
// written as CSV and as an SVG plot; `--figure NAME` reproduces a paper's figure.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <set>

#include "commands.hpp"
#include "hsdp/compare.hpp"
#include "hsdp/output_files.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/plot.hpp"
#include "run_flags.hpp"

namespace hsdp::cli {

namespace {

struct Options {
  RunFlags run;
  std::optional<std::string> x, figure, csv, svg, title;
  std::optional<double> from, to, rdp;
  int points = 20;
  bool points_given = false;
  bool log_x = false;
  std::string y_scale = "auto";
  std::vector<std::string> only;
};

// The run at sweep value x, built from the flags exactly as `hsdp account` builds it with
// that flag set (so every CSV row can be reproduced with `hsdp account`).
Run run_at(const Options& o, CompareAxis axis, double x) {
  RunFlags f = o.run;
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
  return f.to_run();
}

std::string noise_label(const RunFlags& f) {
  if (f.noise_multiplier) return "noise multiplier z (DP-SGD convention)";
  if (f.sigma) return fmt::format("sigma ({} convention)", f.convention.value_or("?"));
  if (f.example && !f.noise_std) return "sigma (journal convention)";
  return "noise std in parameter space";
}

std::function<int()> add_compare(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "compare", "Every analysis along a sweep (CSV and SVG plot), or a paper's figure");
  auto opt = std::make_shared<Options>();
  opt->run.add_to(*sub);
  sub->add_option("--x", opt->x, "What to sweep: steps|noise|n|index|epsilon|delta");
  sub->add_option("--from", opt->from, "First value of the sweep");
  sub->add_option("--to", opt->to, "Last value of the sweep");
  auto* points = sub->add_option("--points", opt->points, "Number of sweep points (2..10000)")
                     ->capture_default_str();
  sub->add_flag("--log-x", opt->log_x, "Geometric spacing and a log-scale x axis");
  sub->add_option("--y-scale", opt->y_scale,
                  "y axis: auto (log for delta or a range over two decades)|log|linear")
      ->capture_default_str();
  sub->add_option("--rdp", opt->rdp,
                  "Plot the RDP epsilon at this order alpha > 1 (RDP analyses only) instead of "
                  "(epsilon, delta)");
  sub->add_option("--analysis", opt->only, "Restrict to the named analysis (repeatable)");
  sub->add_option("--csv", opt->csv, "Write the table to this file (default: stdout)");
  sub->add_option("--svg", opt->svg, "Write the plot to this SVG file");
  sub->add_option("--title", opt->title, "Plot title");
  std::string figures;
  for (const auto& n : figure_names()) figures += (figures.empty() ? "" : "|") + n;
  sub->add_option("--figure", opt->figure,
                  "Reproduce a paper's figure (sets the run, sweep and axes): " + figures);
  return [sub, opt, points]() -> int {
    if (!sub->parsed()) return -1;
    const Options& o = *opt;
    CompareSpec spec;
    if (o.figure) {
      // A figure fixes the run, the sweep and the analyses: any other run or sweep flag
      // would be silently ignored, so it is an error.
      static const std::set<std::string> allowed = {"--figure", "--points", "--csv", "--svg",
                                                    "--title", "--y-scale", "--help"};
      for (const auto* option : sub->get_options())
        if (option->count() > 0 && !allowed.count(option->get_name()))
          fail(option->get_name(), "(given)", fmt::format("absent with --figure {} (the figure sets the run)", *o.figure));
      spec = figure(*o.figure, points->count() ? o.points : 0);
    } else {
      if (!o.x) fail("--x", "(missing)", "given: steps|noise|n|index|epsilon|delta (or use --figure)");
      const CompareAxis axis = parse_compare_axis(*o.x, "--x");
      if (!o.from) fail("--from", "(missing)", "given: the first value of the sweep");
      if (!o.to) fail("--to", "(missing)", "given: the last value of the sweep");
      spec.axis = axis;
      spec.xs = sweep_points(axis, *o.from, *o.to, o.points, o.log_x);
      spec.log_x = o.log_x;
      const bool query_axis = axis == CompareAxis::epsilon || axis == CompareAxis::delta;
      if (query_axis && (o.run.epsilon || o.run.delta))
        fail(o.run.epsilon ? "--epsilon" : "--delta", o.run.epsilon ? *o.run.epsilon : *o.run.delta,
             fmt::format("absent with --x {} (the sweep sets the query)", *o.x));
      if (o.rdp && query_axis)
        fail("--rdp", *o.rdp, fmt::format("absent with --x {} (an RDP curve has no epsilon/delta query)", *o.x));
      if (!o.run.alphas.empty()) fail("--alpha", o.run.alphas.front(), "absent in compare (use --rdp ALPHA)");
      if (o.rdp && !(*o.rdp > 1.0)) fail("--rdp", *o.rdp, "> 1");
      // The base run, validated once with the sweep flag unset (the usual errors first).
      const Run base = o.run.to_run();
      if (axis == CompareAxis::index && spec.xs.back() > static_cast<double>(base.n))
        fail("--to", *o.to, fmt::format("<= n = {} (a record position 1..n)", base.n));
      if (axis == CompareAxis::n && spec.xs.front() < static_cast<double>(base.batch_size) &&
          base.sampling != Sampling::full)
        fail("--from", *o.from, fmt::format(">= --batch-size = {}", base.batch_size));
      if (axis == CompareAxis::n && base.index && spec.xs.front() < static_cast<double>(*base.index))
        fail("--from", *o.from, fmt::format(">= --index = {}", *base.index));
      spec.query = o.run.to_query();
      if (axis == CompareAxis::noise) {
        spec.x_label = noise_label(o.run);
        spec.x_name = o.run.noise_multiplier                   ? "noise_multiplier"
                      : (o.run.sigma || (o.run.example && !o.run.noise_std)) ? "sigma"
                                                                 : "noise_std";
      }
      CompareVariant v;
      v.run_at = [opt, axis](double x) { return run_at(*opt, axis, x); };
      for (const auto& name : o.only) v.analyses.push_back(find_analysis(name));
      v.rdp_order = o.rdp;
      spec.variants.push_back(std::move(v));
      spec.title = o.title ? *o.title
                           : fmt::format("{} vs {}", o.rdp ? "RDP epsilon"
                                                     : axis == CompareAxis::epsilon ? "delta"
                                                     : axis == CompareAxis::delta   ? "epsilon"
                                                     : spec.query.delta ? "epsilon" : "delta",
                                         spec.x_name.empty() ? *o.x : spec.x_name);
    }
    if (o.title) spec.title = *o.title;
    if (o.y_scale == "log") {
      spec.log_y = true;
    } else if (o.y_scale == "linear") {
      spec.log_y = false;
    } else if (o.y_scale != "auto") {
      fail("--y-scale", o.y_scale, "one of auto, log, linear");
    }
    const Comparison c = compare(spec);
    const std::string csv = to_csv(c);
    // Render before writing anything, so an error leaves no file behind.
    const std::string svg = o.svg ? svg::render(to_plot(c)) : std::string();
    std::vector<OutputFile> outputs;
    if (o.csv) outputs.push_back({*o.csv, csv, "csv"});
    if (o.svg) outputs.push_back({*o.svg, svg, "svg"});
    write_files_atomically(outputs);
    if (!o.csv) {
      std::cout << csv;
    } else {
      std::size_t shown = 0;
      for (const auto& curve : c.curves) shown += curve.applicable_somewhere() ? 1 : 0;
      std::cout << fmt::format("{} points, {} curves ({} not applicable: listed in the CSV)\n",
                               c.xs.size(), shown, c.curves.size() - shown);
    }
    return 0;
  };
}

const Register kCompare{"compare", add_compare};

}  // namespace
}  // namespace hsdp::cli
