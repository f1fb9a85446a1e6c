// `hsdp compare`: every analysis along a sweep of steps, noise, n, index, epsilon or delta,
// written as CSV and as an SVG plot; `--figure NAME` reproduces a paper's figure.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "commands.hpp"
#include "hsdp/compare.hpp"
#include "hsdp/output_files.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/plot.hpp"
#include "outputs.hpp"
#include "progress.hpp"
#include "run_flags.hpp"

namespace hsdp::cli {

namespace {

struct Options {
  RunFlags run;
  CompareRequest request;  ///< every field but the run statement and its query
  std::optional<std::string> csv, svg;
};

std::function<int()> add_compare(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "compare", "Every analysis along a sweep (CSV and SVG plot), or a paper's figure");
  auto opt = std::make_shared<Options>();
  opt->run.add_to(*sub);
  CompareRequest& r = opt->request;
  sub->add_option("--x", r.x, "What to sweep: steps|noise|n|index|epsilon|delta");
  sub->add_option("--from", r.from, "First value of the sweep");
  sub->add_option("--to", r.to, "Last value of the sweep");
  sub->add_option("--points", r.points, "Number of sweep points (2..10000; default 20, a figure's own)");
  sub->add_flag("--log-x", r.log_x, "Geometric spacing and a log-scale x axis");
  sub->add_option("--y-scale", r.y_scale,
                  "y axis of the --svg plot: auto (log for delta or a range over two decades)|log|linear")
      ->default_str("auto");
  sub->add_option("--rdp", r.rdp,
                  "Plot the RDP epsilon at this order alpha > 1 (RDP analyses only) instead of "
                  "(epsilon, delta)");
  sub->add_option("--analysis", r.analyses, "Restrict to the named analysis (repeatable)");
  sub->add_option("--csv", opt->csv, "Write the table to this file (default: stdout)");
  sub->add_option("--svg", opt->svg, "Write the plot to this SVG file");
  sub->add_option("--title", r.title, "Title of the --svg plot");
  std::string figures;
  for (const auto& n : figure_names()) figures += (figures.empty() ? "" : "|") + n;
  sub->add_option("--figure", r.figure,
                  "Reproduce a paper's figure (sets the run, sweep and axes): " + figures);
  return [sub, opt]() -> int {
    if (!sub->parsed()) return -1;
    // The library request: the run statement and its query from the run flags.
    CompareRequest request = opt->request;
    request.plot = opt->svg.has_value();  // the command draws a plot only into --svg
    request.run = opt->run;
    request.epsilon = opt->run.epsilon;
    request.delta = opt->run.delta;
    request.alphas = opt->run.alphas;
    {
      std::vector<FileUse> outputs;
      if (opt->csv) outputs.push_back({*opt->csv, "csv"});
      if (opt->svg) outputs.push_back({*opt->svg, "svg"});
      refuse_outputs_over(outputs, {});
    }
    CompareSpec spec = compare_spec(request);
    // A sweep that runs longer than a few seconds shows where it is (stderr, a terminal only).
    ProgressLine progress;
    if (progress.possible())
      spec.progress = [&progress](std::size_t done, std::size_t total) {
        progress.show([&] { return fmt::format("compare: point {} of {}", done, total); });
      };
    const Comparison c = compare(spec);
    progress.end();
    const Options& o = *opt;
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
