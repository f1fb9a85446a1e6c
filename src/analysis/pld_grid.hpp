// The PLD discretisation of the analyses that compose privacy loss distributions
// (composition-pld, shifted-interpolation): the default grid, the run's stated knobs
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

/// The grid of `run`: by default the automatic grid of div::compose_steps (spacing = std of
/// one step's loss / 16 cells: eps about 3e-4 relative above its converged value; DP-SGD at
/// q = 0.01, z = 1, T = 10^4 in ~5 ms), FFTs up to 2^20 points. A stated pld_cells sets the
/// cells of that grid; a stated pld_interval fixes the spacing instead (with pld_cells, or
/// 40, as the target of the refinement of a fixed grid). Throws InvalidArgument naming the
/// run field (pld_interval, pld_cells) when one is outside div::validate's range.
inline div::PldOptions pld_grid(const Run& run) {
  div::PldOptions o;
  o.max_length = std::int64_t{1} << 20;
  if (run.pld_interval) {
    o.fixed_interval = true;
    o.interval = *run.pld_interval;
    o.cells = 40.0;
  }
  if (run.pld_cells) o.cells = *run.pld_cells;
  div::validate(o, [](std::string_view member) { return Param(fmt::format("pld_{}", member)); });
  return o;
}

/// build(options) on `grid` or, when the losses of the whole run span more points than
/// grid.max_length (tiny noise, huge T), on grids 4, 16, ... times coarser (a fixed grid's
/// interval up to 0.5; the automatic grid's cells down to 1) -- still pessimistic, less
/// tight; nullopt when even that does not fit (the caller then answers by a looser route).
/// The grid used is build's result's own.
template <typename Build>
auto on_a_grid_that_fits(div::PldOptions grid, const Build& build)
    -> std::optional<decltype(build(grid))> {
  for (;;) {
    try {
      return build(grid);
    } catch (const InvalidArgument&) {
      // grid limits, not bad input
      if (grid.fixed_interval) {
        if (grid.interval >= 0.5) return std::nullopt;
        grid.interval = std::min(0.5, 4 * grid.interval);
      } else {
        if (grid.cells <= 1.0) return std::nullopt;
        grid.cells = std::max(1.0, grid.cells / 4);
      }
    }
  }
}

/// composition-pld's composed PLD of `run` (its per-step mechanisms on pld_grid(run), or a
/// coarser grid; nullopt when none fits), shared with the analyses whose candidates include
/// the plain composition (shifted-interpolation's NoisySGD from W_0). The last few are kept.
std::shared_ptr<const std::optional<div::Pld>> composition_pld_of(const Run& run);

}  // namespace hsdp::detail
