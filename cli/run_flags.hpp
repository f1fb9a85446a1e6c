// Flags that describe a run, shared by every `hsdp` subcommand that takes a run: the fields
// of hsdp::RunSpec (include/hsdp/run_spec.hpp) as flags, plus the query.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "hsdp/analysis/analysis.hpp"
#include "hsdp/run_spec.hpp"

namespace hsdp::cli {

struct RunFlags : RunSpec {
  std::vector<double> alphas;  ///< --alpha (repeatable): RDP orders to report
  std::optional<double> epsilon, delta;

  /// Registers the flags on a subcommand: one per RunSpec field, then the query's.
  void add_to(CLI::App& app);
  /// Builds and validates the Run (throws InvalidArgument naming the field).
  Run to_run() const { return resolve(); }
  /// The query: --epsilon or --delta (default delta = 1e-5, stated in the output).
  Query to_query() const;
};

}  // namespace hsdp::cli
