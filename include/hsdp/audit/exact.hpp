// Exact audit: the true privacy loss of the last (or randomly stopped) iterate of a
// one-dimensional worst-case instance, computed by propagating the exact law of the iterate,
// set next to every upper bound hsdp reports for the same run (docs/architecture.md, audit/).
//
// The instance is the lower-bound construction of altschuler-talwar-2022 Sec. 4 (Thm 4.1):
// projected noisy SGD on K = [-D/2, D/2] started at w_0 = 0, every loss zero except the
// differing record's, which is linear with slope g (|g| <= L); with strong convexity lambda > 0
// every loss also has the regulariser (lambda/2) w^2. One step is
//     w_{t+1} = Pi_K( c_t w_t - (eta_t / b) * g * [record in batch t] + Z_t ),  Z_t ~ N(0, s_t^2),
// c_t = 1 - eta_t lambda, so the two datasets give random walks that differ only by a drift of
// eta_t g / b on the steps that use the record (with probability b/n under random batches; in
// one of floor(n/b) batches per epoch, or none, under shuffling). Unprojected, the last
// iterate is a Gaussian mixture, computed in closed form (gaussian_mixture.hpp). The law of w_t
// is propagated as a density on a grid plus point masses at the two ends: gradient shift,
// Gaussian convolution, projection (the mass past an end collapses onto it, through the
// exact Gaussian tail). From the two final laws we compute E_{e^eps} in both directions,
// eps(delta) (or delta(eps)) and D_alpha, each on two grids (N and (N+1)/2 points) whose
// difference is the stated discretisation error.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "hsdp/errors.hpp"
#include "hsdp/analysis/analysis.hpp"
#include "hsdp/run.hpp"

namespace hsdp::audit {

/// The neighbouring pair of linear losses for the differing record.
///  sec4     : f(w; x_n) = 0 and f(w; x'_n) = L (D - w) (altschuler-talwar Sec. 4): one walk
///             is symmetric, the other drifts right by eta L / b when the record is used.
///  opposite : f(w; x_n) = L w and f(w; x'_n) = -L w: the walks drift apart by 2 eta L / b,
///             the largest change one replaced L-Lipschitz record can make to a step (the
///             sensitivity every analysis assumes).
enum class Pair { sec4, opposite };
std::string_view to_string(Pair);
/// Parses "sec4" or "opposite"; throws InvalidArgument naming `parameter`.
Pair parse_pair(std::string_view text, const Param& parameter = opt("pair"));

/// The fine grid's points when none is stated.
inline constexpr std::int64_t kDefaultGrid = 4001;

/// The work an audit on a grid may do: steps x (grid x log2 grid) for the FFT convolutions
/// (steps x grid^2 / 12 for the dense sums of a run with --strong-convexity), twice that for
/// shuffled batches (two laws per step): at most 2^29 (about a minute and a half on one core),
/// and a fine grid of at most 2^22 points (~1 GiB of laws). Checked before anything is
/// allocated, with an error naming --grid (or --steps) and the estimate.
inline constexpr double kMaxGridWork = 536870912.0;
inline constexpr std::int64_t kMaxGridPoints = std::int64_t{1} << 22;

struct ExactOptions {
  /// Points of the fine grid over [-D/2, D/2] (rounded up to odd so the coarse grid of
  /// (grid + 1) / 2 points is a subset), in [65, 2^22]; unstated: kDefaultGrid. The closed
  /// form (unprojected last iterate) has no grid: a stated grid is then refused
  /// (field_use.hpp).
  std::optional<std::int64_t> grid;
  Pair pair = Pair::opposite;
};

/// The law of an iterate: density values at x_j = lo + j h (j = 0..N-1, h = (hi-lo)/(N-1)),
/// point masses at lo and hi (the projection's atoms) and at interior points (only the
/// start w_0), and, for an unprojected run, the mass that left the finite window.
struct Law {
  double lo = 0.0;
  double hi = 0.0;
  bool projected = true;
  std::vector<double> density;
  double left = 0.0;   ///< mass at lo (projected)
  double right = 0.0;  ///< mass at hi (projected)
  std::vector<std::pair<double, double>> points;  ///< interior point masses (position, mass)
  double lost = 0.0;   ///< unprojected: mass that left [lo, hi] (never propagated)
  /// Bounds on the floating-point error of each density value and atom: |computed - value of
  /// the same discrete scheme in exact arithmetic|, from a proven bound on each step's FFT
  /// round-off carried through the steps (docs/audit.md, "The stated error"). Empty: 0.
  std::vector<double> density_error;
  double left_error = 0.0;
  double right_error = 0.0;
  double lost_error = 0.0;

  double spacing() const;
  /// Quadrature weights of the grid (Gregory end corrections: exact for cubics; order h^4
  /// for a smooth density), times h.
  std::vector<double> weights() const;
  /// Total mass: weighted density + atoms + points (+ lost).
  double mass() const;
};

/// The two final laws: p for the dataset X (record x_n), q for X' (record x'_n).
struct LawPair {
  Law p;
  Law q;
  std::optional<std::int64_t> index;  ///< position of the differing record (cyclic order)
  double gradient = 0.0;              ///< slope g of the record's linear loss
};

/// The instance's slope: min(L, clip) (clip alone if L is unknown). Throws InvalidArgument
/// when the run cannot be audited exactly: Laplace noise, release of every iterate, remove
/// adjacency, no L and no clip, eta_t lambda > 2 (the regulariser's step would expand).
double instance_gradient(const Run& run);

/// Propagates both laws of the run's last iterate (or, for a random stop, the uniform
/// mixture of the laws of w_1..w_T) on a grid of `grid_points` points (FFT convolutions, or
/// dense Nystrom sums when lambda > 0), with a bound on the
/// round-off of every value (Law::density_error). `tilted`: values whose bound from the plain
/// FFT exceeds 1e-10 of them (the tails) are recomputed by exponentially tilted FFTs, which
/// makes them accurate to a bound relative to themselves (up to ~e^-256 of the peak); without
/// it one FFT pair per step (plus one for the bounds), accurate to ~1e-16 of the peak.
LawPair propagate(const Run& run, Pair pair, std::int64_t grid_points, bool tilted = true);

/// E_{e^eps}(P || Q) = sum_j w_j (p_j - e^eps q_j)^+ + atom terms (journal Thm 2).
double e_gamma(const Law& p, const Law& q, double epsilon);
/// max(E_{e^eps}(P||Q), E_{e^eps}(Q||P)): the delta(eps) of this pair.
double delta_at(const LawPair& laws, double epsilon);
/// Smallest eps >= 0 with delta_at(eps) <= delta (monotone root finding, upper end of the
/// bracket); +inf when no eps up to 1e4 reaches it.
double epsilon_at(const LawPair& laws, double delta);
/// D_alpha(P || Q) = log(sum w_j p_j^alpha q_j^(1-alpha) + atom terms) / (alpha - 1); +inf
/// where P has mass and Q none.
double renyi(const Law& p, const Law& q, double alpha);
/// max of the two directions.
double renyi_at(const LawPair& laws, double alpha);

struct RenyiEstimate {
  double alpha;
  double value;  ///< fine grid
  double error;  ///< |fine - coarse|
};

/// How the exact value was computed.
///  grid     : the laws propagated on a grid (projected runs, random stops): the error is the
///             grid's discretisation estimate plus proven round-off bounds;
///  gaussian : unprojected last iterate: a Gaussian mixture in closed form
///             (include/hsdp/audit/gaussian_mixture.hpp), the error a proven bound.
enum class Method { grid, gaussian };
std::string_view to_string(Method);

struct ExactResult {
  Method method = Method::grid;
  std::size_t components = 0;  ///< gaussian: components of each last-iterate mixture
  bool at_delta = true;   ///< the query gave delta (and epsilon is computed), or epsilon
  double epsilon = 0.0;   ///< the given or the computed epsilon (fine grid)
  double delta = 0.0;     ///< the given or the computed delta (fine grid)
  /// Error of the computed quantity: |fine - coarse| (the discretisation error measured by
  /// halving h) plus the width of the round-off band (every density value and atom moved by
  /// its propagated round-off bound, Law::density_error, and the mass an unprojected window
  /// lost), plus the root finder's tolerance. Rounded up; +inf when the grid cannot resolve
  /// the answer (e.g. eps so large that delta(eps) depends on values below ~e^-256 of the
  /// peak, beyond the reach of the tilted FFTs).
  double error = 0.0;
  double coarse = 0.0;    ///< the computed quantity on the coarse grid
  std::int64_t grid = 0, coarse_grid = 0;
  std::optional<std::int64_t> index;
  Pair pair = Pair::opposite;
  double gradient = 0.0;
  double mass_defect = 0.0;  ///< max |1 - total mass| of the fine laws (quadrature check)
  std::vector<RenyiEstimate> renyi;

  double value() const { return at_delta ? epsilon : delta; }
  double lo() const;  ///< max(0, value - error)
  double hi() const;  ///< value + error
};

/// Exact eps(delta) (query.delta) or delta(eps) (query.epsilon) of the run's instance, with
/// D_alpha at query.alphas: Method::gaussian for the unprojected last iterate (diameter inf,
/// release last), Method::grid otherwise.
ExactResult exact(const Run& run, const Query& query, const ExactOptions& options = {});

/// One upper bound next to the exact value.
struct BoundRow {
  std::string name;
  std::string citation;
  double value = 0.0;  ///< the bound's epsilon (delta query) or delta (epsilon query)
  double ratio = 0.0;  ///< value / exact value (+inf when the exact value is 0)
  bool consistent = true;  ///< value >= exact lo (a bound below it is a bug in the bound)
};

struct Tightness {
  Run run;
  Query query;
  ExactResult exact;
  std::vector<BoundRow> bounds;  ///< every applicable upper bound
  std::vector<std::pair<std::string, std::string>> not_applicable;  ///< (name, reason)
};

/// The exact value and every analysis of `account(run, query)` that applies.
Tightness tightness(const Run& run, const Query& query, const ExactOptions& options = {});

/// {"run", "query", "exact":{"epsilon","delta","error","interval","grid","coarse",...},
///  "bounds":[{"name","epsilon","delta","ratio","consistent","citation"}],
///  "not_applicable":[{"name","reason"}]}. +inf is the string "inf".
nlohmann::json to_json(const Tightness& t);
std::string to_table(const Tightness& t);

/// The run with `steps` steps (schedules truncated to their first `steps` values).
Run with_steps(const Run& run, std::int64_t steps);
/// About `points` step counts from 1 to max_steps, log-spaced, distinct, ending at max_steps.
std::vector<std::int64_t> sweep_steps(std::int64_t max_steps, int points);
/// The sweep a user states (`hsdp audit exact --plot/--csv --points K`): sweep_steps(max_steps,
/// points, default 12) when a sweep is written (`written`), else none; `points` in [1, 1000],
/// and refused when no sweep is written (it is read by the sweep only: field_use.hpp).
std::vector<std::int64_t> stated_sweep(std::int64_t max_steps, std::optional<std::int64_t> points, bool written);
/// tightness() at each step count (each an independent audit of the run with that many steps).
std::vector<Tightness> sweep(const Run& run, const Query& query, const ExactOptions& options,
                             std::span<const std::int64_t> steps);
/// CSV: "steps,exact,exact_lo,exact_hi,<bound>,..." (empty cell: not applicable at that T).
std::string sweep_csv(const std::vector<Tightness>& points);
/// SVG plot of the sweep: the exact value (with its error band as two dashed curves) and
/// every bound, against steps.
std::string sweep_svg(const std::vector<Tightness>& points, const std::string& title);

}  // namespace hsdp::audit
