// `hsdp audit <kind>`: evidence that the numbers are right. Each kind is a nested
// subcommand added by one function in kAuditKinds below (a sibling such as `audit mia`
// adds its own add_* function there).
//
//   hsdp audit exact [run flags] [--delta D | --epsilon E] [--json] [--plot F.svg] [--csv F.csv]
//
// exact: the true eps(delta) of the one-dimensional worst-case instance of the run
// (altschuler-talwar Sec. 4; include/hsdp/audit/exact.hpp) with its discretisation error,
// next to every applicable upper bound and the ratio bound / exact.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "hsdp/audit/exact.hpp"
#include "hsdp/compare.hpp"
#include "hsdp/errors.hpp"
#include "run_flags.hpp"

namespace hsdp::cli {

namespace {

using AddAuditKind = std::function<std::function<int()>(CLI::App& parent)>;

std::function<int()> add_exact(CLI::App& parent) {
  auto* sub = parent.add_subcommand(
      "exact",
      "Exact privacy loss of the 1-D worst-case instance of the run (linear losses, projection "
      "onto [-D/2, D/2]) next to every applicable upper bound");
  struct Options {
    RunFlags run;
    bool json = false;
    std::int64_t grid = audit::ExactOptions{}.grid;
    std::string pair = std::string(audit::to_string(audit::ExactOptions{}.pair));
    std::optional<std::string> plot, csv;
    int points = 12;
  };
  auto opt = std::make_shared<Options>();
  opt->run.add_to(*sub);
  sub->add_flag("--json", opt->json, "Print JSON instead of the table");
  sub->add_option("--grid", opt->grid,
                  "Points of the fine grid (>= 65; the coarse grid has half as many, and the "
                  "difference of the two results is the stated error)")
      ->capture_default_str();
  sub->add_option("--pair", opt->pair,
                  "Linear losses of the differing record: sec4 (0 vs L(D - w), altschuler-talwar "
                  "Sec. 4) or opposite (L w vs -L w, the full sensitivity 2 eta L / b)")
      ->capture_default_str();
  sub->add_option("--plot", opt->plot,
                  "Write an SVG of the exact value and every bound against steps (audits at "
                  "--points step counts from 1 to --steps)");
  sub->add_option("--csv", opt->csv, "Write the same sweep as CSV");
  sub->add_option("--points", opt->points, "Step counts in the --plot/--csv sweep")->capture_default_str();
  return [sub, opt]() -> int {
    if (!sub->parsed()) return -1;
    const Run run = opt->run.to_run();
    const Query query = opt->run.to_query();
    audit::ExactOptions options;
    options.grid = require_range("--grid", opt->grid, 65, std::int64_t{1} << 24);
    options.pair = audit::parse_pair(opt->pair, "--pair");
    audit::Tightness result;
    if (opt->plot || opt->csv) {
      require_range("--points", opt->points, 1, 1000);
      const auto steps = audit::sweep_steps(run.steps, opt->points);
      auto points = audit::sweep(run, query, options, steps);
      // Both files are complete (temp file + rename) or absent.
      if (opt->csv) write_file_atomically(*opt->csv, audit::sweep_csv(points), "--csv");
      if (opt->plot) {
        const std::string title =
            fmt::format("exact audit ({} pair): {} vs steps", audit::to_string(options.pair),
                        query.delta ? fmt::format("epsilon at delta = {}", show(*query.delta))
                                    : fmt::format("delta at epsilon = {}", show(*query.epsilon)));
        write_file_atomically(*opt->plot, audit::sweep_svg(points, title), "--plot");
      }
      result = std::move(points.back());  // the sweep ends at the run's own step count
    } else {
      result = audit::tightness(run, query, options);
    }
    if (opt->json) {
      std::cout << audit::to_json(result).dump(2) << "\n";
    } else {
      std::cout << audit::to_table(result);
    }
    return 0;
  };
}

// The audit kinds, each a nested subcommand of `audit`.
const std::vector<AddAuditKind> kAuditKinds{add_exact};

std::function<int()> add_audit(CLI::App& app) {
  auto* group = app.add_subcommand("audit", "Audits: exact privacy loss of worst-case instances");
  group->require_subcommand(1);
  std::vector<std::function<int()>> kinds;
  for (const auto& add : kAuditKinds) kinds.push_back(add(*group));
  return [group, kinds]() -> int {
    if (!group->parsed()) return -1;
    for (const auto& run : kinds) {
      const int status = run();
      if (status >= 0) return status;
    }
    return 2;  // unreachable: require_subcommand(1)
  };
}

const Register kAudit{"audit", add_audit};

}  // namespace
}  // namespace hsdp::cli
