// Flags that describe a run, shared by every `hsdp` subcommand that takes a run.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "hsdp/analysis/analysis.hpp"
#include "hsdp/run.hpp"

namespace hsdp::cli {

struct RunFlags {
  std::optional<std::int64_t> n, steps, index, dimension;
  std::int64_t batch_size = 1;
  std::optional<std::string> sampling;
  std::optional<double> eta;
  std::string eta_schedule = "constant";
  std::string noise = "gaussian";
  std::optional<double> noise_std, sigma;
  std::optional<double> lsi;  ///< --lsi: asserted log-Sobolev constant (langevin Thm 2)
  std::optional<double> noise_multiplier, clip;  ///< DP-SGD convention (--noise-multiplier, --clip)
  std::vector<double> alphas;                    ///< --alpha (repeatable): RDP orders to report
  std::optional<std::string> convention;
  std::optional<double> lipschitz, smoothness;
  double strong_convexity = 0.0;
  bool non_convex = false;
  double diameter = std::numeric_limits<double>::infinity();
  std::string release = "last";
  std::string adjacency = "replace";
  std::optional<double> epsilon, delta;
  bool example = false;

  /// Registers the flags on a subcommand.
  void add_to(CLI::App& app);
  /// Builds and validates the Run (throws InvalidArgument naming the flag).
  Run to_run() const;
  /// The query: --epsilon or --delta (default delta = 1e-5, stated in the output).
  Query to_query() const;
};

}  // namespace hsdp::cli
