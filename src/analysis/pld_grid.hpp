// The PLD discretisation of the analyses that compose privacy loss distributions
// (composition-pld, shifted-interpolation): one default grid, the run's stated knobs
// (Run::pld_interval, Run::pld_cells) and the retry on coarser grids when the losses of a
// run do not fit. Implementation detail, not a public header.
#pragma once

#include <fmt/format.h>

#include <memory>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>

#include "hsdp/divergence/pld.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/run.hpp"

namespace hsdp::detail {

/// The grid of `run`: interval 1e-3 and 40 grid cells per std of one step's loss (the
/// library default is 10: DP-SGD at q = 0.01, z = 1, T = 10^4 gives 6.1882 in ~12 ms
/// instead of 6.1910 in ~3 ms; dp_accounting: 6.1877 in 523 ms), FFTs up to 2^20 points;
/// the run's pld_interval / pld_cells when stated. Throws InvalidArgument naming the run
/// field (pld_interval, pld_cells) when one is outside div::validate's range.
inline div::PldOptions pld_grid(const Run& run) {
  div::PldOptions o;
  o.max_length = std::int64_t{1} << 20;
  o.cells = 40.0;
  if (run.pld_interval) o.interval = *run.pld_interval;
  if (run.pld_cells) o.cells = *run.pld_cells;
  div::validate(o, [](std::string_view member) { return Param(fmt::format("pld_{}", member)); });
  return o;
}

/// build(options) on `grid` or, when the losses of the whole run span more points than
/// grid.max_length (tiny noise, huge T), on grids 4, 16, ... times coarser (still
/// pessimistic, less tight), up to 0.5; nullopt when even that does not fit (the caller
/// then answers by a looser route). The grid used is build's result's own.
template <typename Build>
auto on_a_grid_that_fits(div::PldOptions grid, const Build& build)
    -> std::optional<decltype(build(grid))> {
  for (;;) {
    try {
      return build(grid);
    } catch (const InvalidArgument&) {
      if (grid.interval >= 0.5) return std::nullopt;  // grid limits, not bad input
      grid.interval = std::min(0.5, 4 * grid.interval);
    }
  }
}

/// composition-pld's composed PLD of `run` (its per-step mechanisms on pld_grid(run), or a
/// coarser grid; nullopt when none fits), shared with the analyses whose candidates include
/// the plain composition (shifted-interpolation's NoisySGD from W_0). The last few are kept.
std::shared_ptr<const std::optional<div::Pld>> composition_pld_of(const Run& run);

}  // namespace hsdp::detail
