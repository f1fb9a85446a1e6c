// shifted-renyi: Altschuler & Talwar 2022, "Privacy of Noisy Stochastic Gradient Descent:
// More Iterations without More Privacy Loss" (papers/altschuler-talwar-2022-noisy-sgd.txt).
//
// The last iterate of projected noisy (S)GD on a convex, L-Lipschitz, M-smooth loss over a
// convex set of diameter D is (alpha, eps)-RDP with eps that stops growing after
// T-bar ~ D n / (L eta) steps (Thm 3.1). hsdp evaluates the non-asymptotic forms of
// Appendix B (valid for every alpha > 1 and sigma > 0, Remark B.1):
//
//  poisson / fixed  (B.2) = (3.7) minimised over the noise split sigma1^2 + sigma2^2 = sigma^2
//                   and over T~ = T - tau - 1, together with its first branch T * S_alpha;
//                   non-constant eta_t / noise: (5.7) (Sec. 5.3) with the optimal a_t;
//                   lambda-strongly convex: (B.3) (Thm 5.1, footnote 11's optimal a_t).
//  full             (B.1) (Thm 5.6 with b = n) and (B.2) with q = 1; the smaller.
//  cyclic           Thm 5.6 through (5.6) with the a_t of its proof, bounded for every
//                   position of the differing record (any b <= n, see cyclic()).
//  shuffle          not covered by any theorem of the paper.
//
// Units: the paper writes the update w <- P(w - eta (G + Z)), Z ~ N(0, sigma^2 I), so the
// noise std in parameter space is s = eta sigma (Run::noise_std). Every formula below is
// written in parameter space: the sensitivity of one step is k eta L / b (k = 2 replace,
// k = 1 remove, Remark B.2), Q = S_alpha(q, s2 / (k eta L / b)) = S_alpha(b/n, b sigma2/(kL)),
// and the PABI term alpha D^2 / (2 eta^2 sigma1^2 T~) = alpha D^2 / (2 s1^2 T~).
//
// Conservative decisions (docs/analyses/shifted-renyi.md):
//  * S_alpha is used in the direction that upper-bounds both orders of the neighbouring pair
//    (ERRATA 2: Def. 2.10 taken literally is violated by an exact one-step instance), via
//    div::s_alpha.
//  * Non-constant schedules: Q_t is evaluated at the smallest ratio s_t / (k eta_t L / b)
//    over all steps (S_alpha decreases in sigma, so this bounds every Q_t from above).
//  * Remove adjacency (Remark B.2, 2L -> L) only for Poisson sampling, whose batch average
//    is the sum over the batch divided by the fixed b; for fixed-size, full and cyclic
//    batches the dataset size changes with the neighbour and no theorem covers it.
//  * Strong convexity: the paper states c = (kappa-1)/(kappa+1) for eta = 2/(M+m) (Lemma 5.3);
//    hsdp uses c = sqrt(1 - 2 eta M m / (M + m)) for any eta <= 2/(M+m) (the same value at
//    eta = 2/(M+m); Bubeck [7] Thm 3.12, isit Lemma 4), constant schedules only.
//  * Every returned value is the formula evaluated at explicit feasible parameters
//    (a split sigma1 in (0, sigma) and an integer T~), so it is a valid bound even when the
//    numerical minimisation does not find the exact minimum.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "hsdp/analysis/rdp_analysis.hpp"
#include "hsdp/divergence/rdp.hpp"
#include "hsdp/errors.hpp"
#include "registry.hpp"

namespace hsdp::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Which bound of the paper produced a value.
enum class Branch {
  composition,      ///< (B.2) first branch: T * S_alpha(b/n, b sigma/(kL)) (tau = 0, no split)
  split,            ///< (B.2) second branch = (3.7) / (5.7): noise split and T~
  strongly_convex,  ///< (B.3) second branch: (5.3) with footnote 11's a_t
  full_batch,       ///< (B.1) second branch: (5.6) with tau = T - T~, a_t = D~/T~ + 2 eta L/n
  full_composition, ///< (B.1) first branch: T (2 eta L/n)^2 alpha/(2 eta^2 sigma^2)
  cyclic,           ///< Thm 5.6 via (5.6), a_t of its proof, worst position of the record
};

const char* label(Branch b) {
  switch (b) {
    case Branch::composition: return "B.2 T*S_alpha";
    case Branch::split: return "B.2/(3.7)/(5.7) split";
    case Branch::strongly_convex: return "B.3";
    case Branch::full_batch: return "B.1";
    case Branch::full_composition: return "B.1 T*gaussian";
    case Branch::cyclic: return "Thm 5.6/(5.6)";
  }
  return "?";
}

struct Optimum {
  double epsilon = kInf;
  Branch branch = Branch::composition;
  std::int64_t t_tilde = 0;    ///< T~ (steps of the PABI window); 0 for the composition branch
  double split = 0.0;          ///< f = sigma1^2 / sigma^2 (0: no split)
  void offer(double value, Branch b, std::int64_t tt, double f) {
    if (std::isnan(value)) value = kInf;
    if (value < epsilon) *this = Optimum{value, b, tt, f};
  }
};

/// The run-dependent, alpha-independent quantities of the bounds.
struct Setup {
  std::int64_t T = 0;
  double q = 1.0;             ///< P(i* in B_t) = b/n (3.1)
  double k = 2.0;             ///< 2 for replace, 1 for remove (Remark B.2)
  double D = kInf;
  double L = 0.0;
  bool constant = true;       ///< constant eta and noise
  double s = 0.0;             ///< noise std (constant case)
  double eta = 0.0;           ///< step size (constant case)
  double ratio = kInf;        ///< min_t s_t / (k eta_t L / b): Q's sigma argument
  std::vector<double> tail;   ///< tail[m] = sum of s_t^2 over the last m steps (non-constant)
  double c = 1.0;             ///< contraction factor (< 1: strongly convex, B.3)
  Sampling sampling = Sampling::poisson;
  std::int64_t n = 0, b = 0;
  /// Noise on a grid (Run::grid, docs/security.md "shifted-renyi on the grid"): the extra
  /// distance per step relative to s_t (0 without a grid). Each step's map moves two coupled
  /// points at most slack s_t further apart than the continuous map, and the sampled Gaussian's
  /// bias grows by at most slack s_t; both are paid below.
  double slack = 0.0;
  double s_max = 0.0;         ///< max_t s_t (the window's first step, non-constant case)
};

Setup make_setup(const Run& run) {
  Setup st;
  st.T = run.steps;
  st.n = run.n;
  st.b = run.batch_size;
  st.sampling = run.sampling;
  // An order known to the adversary gives no amplification by sampling: q = 1 (the record may
  // be in every batch).
  st.q = run.sampling == Sampling::full || run.order_known
             ? 1.0
             : std::min(1.0, static_cast<double>(run.batch_size) / static_cast<double>(run.n));
  st.k = run.adjacency == Adjacency::remove ? 1.0 : 2.0;
  st.D = run.diameter;
  st.L = *run.loss.lipschitz;
  st.constant = run.eta.is_constant() && run.noise_std.is_constant();
  if (run.grid) st.slack = run.grid->slack;
  st.s_max = run.noise_std.max();
  const double bb = run.sampling == Sampling::full ? static_cast<double>(run.n)
                                                   : static_cast<double>(run.batch_size);
  if (st.constant) {
    st.s = run.noise_std.at(1);
    st.eta = run.eta.at(1);
    // With a grid the bias of the sampled Gaussian is the difference of two roundings of points
    // k eta L / b apart: at most k eta L / b + slack s (docs/security.md).
    st.ratio = st.s / (st.k * st.eta * st.L / bb + st.slack * st.s);
  } else {
    st.tail.assign(static_cast<std::size_t>(st.T) + 1, 0.0);
    for (std::int64_t m = 1; m <= st.T; ++m) {
      const std::int64_t t = st.T - m + 1;
      const double s = run.noise_std.at(t);
      st.tail[static_cast<std::size_t>(m)] = st.tail[static_cast<std::size_t>(m - 1)] + s * s;
    }
    for (std::int64_t t = 1; t <= st.T; ++t) {
      const double s = run.noise_std.at(t);
      st.ratio = std::min(st.ratio, s / (st.k * run.eta.at(t) * st.L / bb + st.slack * s));
    }
  }
  // Thm 5.1 / (B.3): c-contractive gradient steps (constant schedules only).
  const double lambda = run.loss.strong_convexity;
  if (st.constant && lambda > 0 && run.loss.smoothness) {
    const double M = *run.loss.smoothness;
    if (lambda <= M && st.eta <= 2.0 / (M + lambda)) {
      const double c2 = 1.0 - 2.0 * st.eta * M * lambda / (M + lambda);
      // Rounded up (two ulps cover the rounding of c2 and of the square root): the bound of
      // (B.3) increases with c, so a factor below the true one would understate it.
      st.c = std::min(1.0, std::nextafter(std::nextafter(std::sqrt(std::clamp(c2, 0.0, 1.0)), 2.0), 2.0));
    }
  }
  return st;
}

/// Q = S_alpha(q, ratio): RDP of one subsampled step (Lemma 2.11), in the ERRATA-2 direction.
/// q = 1 is the Gaussian mechanism (footnote 8).
double step_rdp(double alpha, double q, double ratio) {
  if (!(ratio > 0)) return kInf;
  if (std::isinf(ratio)) return 0.0;
  if (q >= 1.0) return div::gaussian_rdp(alpha, 1.0 / ratio);
  auto at = [&](double a) {
    const double v = div::s_alpha(a, q, ratio);
    return std::isnan(v) ? kInf : std::max(0.0, v);
  };
  const double k = std::floor(alpha);
  // Which route for which order (docs/analyses/shifted-renyi.md, decision 3): integer alpha
  // and every alpha <= 10 exactly (div::s_alpha: Gauss-Hermite 5-20 us, the series a few
  // us where it converges fast, else the quadrature of A - 1, 0.1-0.3 ms); fractional
  // alpha > 10 by the chord below. Until issue 11 the chord was also used at alpha <= 10 off
  // the Gauss-Hermite route, where it is far from tight: below alpha = 2 it is D_2 itself
  // (52.7 instead of 12.1 at alpha = 1.1 in ShiftedRenyi.FractionalBelowTwoIsExact), and at
  // alpha = 2.5, sigma = 0.3, q = 1e-4 it is 26x the exact value.
  if (alpha == k || alpha <= 10.0) return at(alpha);
  // (alpha - 1) D_alpha is convex in alpha (van Erven & Harremoes 2014, Thm 11), so the chord
  // between the neighbouring integer orders bounds it from above. The integer orders use the
  // binomial sum; the chord is above the exact value by < 0.5% at alpha > 10 (measured for
  // sigma >= 1).
  const double g0 = (k - 1.0) * at(k), g1 = k * at(k + 1.0);
  if (std::isinf(g0) || std::isinf(g1)) return kInf;
  return ((k + 1.0 - alpha) * g0 + (alpha - k) * g1) / (alpha - 1.0);
}

/// Minimises a convex function g over the integers [lo, hi] (g(t+1) - g(t) non-decreasing):
/// the first t whose forward difference is >= 0, by bisection. Returns t.
template <class G>
std::int64_t argmin_convex(const G& g, std::int64_t lo, std::int64_t hi) {
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (g(mid + 1) >= g(mid)) hi = mid; else lo = mid + 1;
  }
  return lo;
}

/// Noise on a grid (docs/security.md, "shifted-renyi on the grid"): the window's PABI term
/// `base` (evaluated with the start gap D + slack s_first) plus the extra shift slack s_t of
/// each of its T~ steps, absorbed at the step where it arises (a_t -> a_t + slack s_t); by
/// Minkowski sqrt(sum a_t^2 / s1_t^2) grows by slack sqrt(T~ / f), i.e.
///   (sqrt(base) + slack sqrt(alpha T~ / (2 f)))^2,  f = s1^2 / s^2 (f = 1: no split).
/// Exactly `base` without a grid.
double with_grid_shift(const Setup& st, double alpha, double f, std::int64_t tt, double base) {
  if (st.slack == 0.0) return base;
  const double extra = st.slack * std::sqrt(alpha * static_cast<double>(tt) / (2.0 * f));
  const double r = std::sqrt(base) + extra;
  return r * r;
}

/// The start gap of a PABI window: D, plus one step's rounding slack s (the step from the
/// window's first iterate W_tau in K adds its rounding before the first shift is paid).
double window_gap(const Setup& st) {
  return st.D + st.slack * (st.constant ? st.s : st.s_max);
}

/// The second branch of (B.2) / (B.3) / (5.7) at a fixed split f = sigma1^2/sigma^2 in (0,1):
/// min over T~ in 1..T-1 of (T~ + 1) Q + PABI(T~), or its value at T~ = fixed_tt when
/// fixed_tt > 0. Offers every evaluated point to `best`. Returns Q (every value of this
/// branch is >= 2 Q).
double split_branch(const Setup& st, double alpha, double f, Optimum& best,
                    std::int64_t fixed_tt = 0) {
  if (st.T < 2) return kInf;  // T~ in {1, ..., T-1} is empty
  const double Q = step_rdp(alpha, st.q, std::sqrt(1.0 - f) * st.ratio);
  if (std::isinf(Q)) return Q;
  const double Dg = window_gap(st);
  const double aD2 = alpha * Dg * Dg;
  const std::int64_t hi = st.T - 1;
  if (fixed_tt > hi) return Q;
  if (!st.constant) {
    // (5.7) with the optimal a_t of Prop. 3.2 (a_t proportional to the variance s1_t^2 of
    // the split noise): PABI = alpha D^2 / (2 f sum_{last T~ steps} s_t^2). The paper's
    // a_t = D eta_t / sum eta_t is one feasible choice; by Cauchy-Schwarz it gives a larger
    // value (T~ alpha D^2 / (2 sigma1^2 (sum eta_t)^2) >= alpha D^2/(2 sigma1^2 sum eta_t^2)).
    // The Y_t of the window are those of the last T~ steps (proof of Thm 3.1, Step 3b).
    auto g = [&](std::int64_t tt) {
      return static_cast<double>(tt + 1) * Q +
             with_grid_shift(st, alpha, f, tt, aD2 / (2.0 * f * st.tail[static_cast<std::size_t>(tt)]));
    };
    double v_best = kInf;
    std::int64_t t_best = 0;
    for (std::int64_t tt = fixed_tt > 0 ? fixed_tt : 1; tt <= (fixed_tt > 0 ? fixed_tt : hi);
         ++tt) {
      const double v = g(tt);
      if (v < v_best) { v_best = v; t_best = tt; }
    }
    best.offer(v_best, Branch::split, t_best, f);
    return Q;
  }
  const double s1sq = f * st.s * st.s;
  if (st.c < 1.0) {
    // (B.3): PABI = alpha D^2 (1 - c^2) / (2 s1^2 (c^{-2T~} - 1)) (footnote 11), written as
    // (1 - c^2) c^{2T~} / (1 - c^{2T~}) to avoid overflow; c = 0 contracts to a point.
    const double two_log_c = st.c > 0 ? 2.0 * std::log(st.c) : -kInf;
    auto g = [&](std::int64_t tt) {
      const double x = static_cast<double>(tt) * two_log_c;  // log c^{2T~}
      const double frac = st.c > 0 ? (1.0 - st.c * st.c) * std::exp(x) / -std::expm1(x) : 0.0;
      return static_cast<double>(tt + 1) * Q + with_grid_shift(st, alpha, f, tt, aD2 * frac / (2.0 * s1sq));
    };
    const std::int64_t tt = fixed_tt > 0 ? fixed_tt : argmin_convex(g, 1, hi);
    best.offer(g(tt), Branch::strongly_convex, tt, f);
    return Q;
  }
  // (B.2) / (3.7): (T~ + 1) Q + alpha D^2 / (2 s1^2 T~), convex in T~; the paper's
  // "min(T, D/(eta sigma1) sqrt(alpha/(2Q)))" modulo floor/ceiling, done exactly.
  auto g = [&](std::int64_t tt) {
    return static_cast<double>(tt + 1) * Q +
           with_grid_shift(st, alpha, f, tt, aD2 / (2.0 * s1sq * static_cast<double>(tt)));
  };
  const std::int64_t tt = fixed_tt > 0 ? fixed_tt : argmin_convex(g, 1, hi);
  best.offer(g(tt), Branch::split, tt, f);
  return Q;
}

/// Outer minimisation of (B.2)/(B.3) over the split f = sigma1^2/sigma^2 in (0, 1): a grid in
/// logit(f), golden-section refinement around the best grid point, then the same with T~
/// fixed at the neighbours of the best T~ (see below). The paper suggests a ternary search
/// over sigma1 (App. B.2), which assumes unimodality; the grid does not.
void optimise_split(const Setup& st, double alpha, Optimum& best) {
  constexpr std::int64_t kRefineT = 100;
  if (st.T < 2 || !std::isfinite(st.D)) return;
  auto f_of = [](double u) { return 1.0 / (1.0 + std::exp(-u)); };
  double last_q = 0;
  Optimum split_best;  // the best point of this branch (best may hold the composition one)
  double u_split = 0;
  auto eval_at = [&](double u, std::int64_t fixed_tt) {
    Optimum local;
    last_q = split_branch(st, alpha, f_of(u), local, fixed_tt);
    best.offer(local.epsilon, local.branch, local.t_tilde, local.split);
    if (local.epsilon < split_best.epsilon) { split_best = local; u_split = u; }
    return local.epsilon;
  };
  auto eval = [&](double u) { return eval_at(u, 0); };
  constexpr int kGrid = 16;
  constexpr double kLo = -12.0, kHi = 12.0;
  double u_best = kLo, v_best = kInf;
  for (int i = 0; i <= kGrid; ++i) {
    const double u = kLo + (kHi - kLo) * i / kGrid;
    const double v = eval(u);
    if (v < v_best) { v_best = v; u_best = u; }
    // Q grows with f (S_alpha decreases in sigma2 = sqrt(1-f) sigma) and every value of the
    // branch is >= 2Q: once 2Q reaches the best value, larger f cannot win. (Saves the
    // costly S_alpha evaluations at small sigma2.)
    if (2.0 * last_q >= best.epsilon) break;
  }
  if (std::isinf(v_best)) return;
  const double h = (kHi - kLo) / kGrid;
  double a = std::max(kLo, u_best - h), b = std::min(kHi, u_best + h);
  const double r = 0.5 * (std::sqrt(5.0) - 1.0);
  double x1 = b - r * (b - a), x2 = a + r * (b - a);
  double f1 = eval(x1), f2 = eval(x2);
  for (int it = 0; it < 22; ++it) {
    if (f1 <= f2) {
      b = x2; x2 = x1; f2 = f1; x1 = b - r * (b - a); f1 = eval(x1);
    } else {
      a = x1; x1 = x2; f1 = f2; x2 = a + r * (b - a); f2 = eval(x2);
    }
  }
  // The branch is min over the integer T~ of h_T~(f) = (T~ + 1) Q(f) + PABI(T~, f), each
  // unimodal in f; their minimum can have several local minima (the minimiser of h_T~ for
  // more than one T~, each inside the range of f where its T~ is the best), and the golden
  // section above finds one of them: up to 0.24% above the true minimum when T~ is small
  // (randomised search against brute force, T~ = 2..11). So the neighbouring T~ - 1 and
  // T~ + 1 are minimised over f too, each with T~ fixed (unimodal: golden section). Past
  // T~ = 100 the local minima differ by < 1e-6 relative (same search) and this is skipped.
  const std::int64_t t_star = split_best.t_tilde;
  if (t_star < 1 || t_star > kRefineT) return;
  const double u_star = u_split;
  for (const std::int64_t tt : {t_star - 1, t_star + 1}) {
    if (tt < 1) continue;
    a = std::max(kLo, u_star - h);
    b = std::min(kHi, u_star + h);
    x1 = b - r * (b - a);
    x2 = a + r * (b - a);
    f1 = eval_at(x1, tt);
    f2 = eval_at(x2, tt);
    // 16 steps: the bracket shrinks to 1e-3 in logit(f), ~1e-6 relative in the value.
    for (int it = 0; it < 16; ++it) {
      if (f1 <= f2) {
        b = x2; x2 = x1; f2 = f1; x1 = b - r * (b - a); f1 = eval_at(x1, tt);
      } else {
        a = x1; x1 = x2; f1 = f2; x2 = a + r * (b - a); f2 = eval_at(x2, tt);
      }
    }
  }
}

/// (B.1): full-batch GD (Thm 5.6 with b = n), constant schedules.
void full_batch(const Setup& st, double alpha, Optimum& best) {
  // 2 eta L / n; with a grid + slack s: every step's map moves two coupled points at most
  // slack s further apart (docs/security.md), so each a_t and the start gap pay it.
  const double delta = st.k * st.eta * st.L / static_cast<double>(st.n) + st.slack * st.s;
  const double scale = alpha / (2.0 * st.s * st.s);
  best.offer(scale * static_cast<double>(st.T) * delta * delta, Branch::full_composition, 0, 0.0);
  if (!std::isfinite(st.D)) return;
  const double Dt = st.D + delta;  // D~ = D + 2 eta L / n (Observation 5.7)
  auto g = [&](std::int64_t tt) {
    const double a = Dt / static_cast<double>(tt) + delta;
    return scale * static_cast<double>(tt) * a * a;
  };
  const std::int64_t tt = argmin_convex(g, 1, st.T);
  best.offer(g(tt), Branch::full_batch, tt, 0.0);
}

/// Thm 5.6 via (5.6), constant schedules, P = floor(n/b). The proof assumes b | n "for
/// simplicity"; in general, with batches of b consecutive records wrapping around, two uses of
/// a record are at least P steps apart (between them the window start advances by at least
/// n - (b - 1) positions, b per step), so the repayment windows below have length >= P.
/// For a window of T~ = T - tau steps, the proof's a_t: a uniform D0/T~ (D0 = D~ = D + 2 eta L/b
/// when tau >= 1, Observation 5.7; D0 = 0 when tau = 0, V_0 = V'_0, the (5.4) case), plus each
/// increment s = 2 eta L / b of a step that uses the differing record, repaid uniformly over
/// the >= P steps up to its next use, the last one over the steps left until T. With m uses in the
/// window, the last at distance ell >= 1 from the end (counting itself):
///   sum a_t^2 <= D0^2/T~ + 2 (D0/T~) m s + s^2 ((m-1)/P + 1/ell)
/// which is at most the same expression at m = ceil(T~/P), ell = 1 for every position of the
/// record, so the bound holds for all of them.
void cyclic(const Setup& st, double alpha, Optimum& best) {
  const double sens = st.k * st.eta * st.L / static_cast<double>(st.b);
  const double P = static_cast<double>(st.n / st.b);
  // With a grid the window's start gap gains one step's slack s, and each of the T~ steps'
  // extra slack s is absorbed where it arises (Minkowski: sqrt(sum a_t^2) + slack s sqrt(T~)).
  const double extra = st.slack * st.s;
  const double Dt = st.D + sens + extra;
  const double scale = alpha / (2.0 * st.s * st.s);
  auto cost = [&](std::int64_t tt) {
    const double D0 = tt == st.T ? 0.0 : Dt;
    const double m = std::ceil(static_cast<double>(tt) / P);
    const double x = static_cast<double>(tt);
    const double sum_a2 = D0 * D0 / x + 2.0 * (D0 / x) * m * sens + sens * sens * ((m - 1.0) / P + 1.0);
    const double r = std::sqrt(sum_a2) + extra * std::sqrt(x);
    return scale * r * r;
  };
  best.offer(cost(st.T), Branch::cyclic, st.T, 0.0);
  if (!std::isfinite(st.D) || st.T < 2) return;
  // For T~ < T the cost with m = ceil(T~/P) fixed decreases in T~, so within each block
  // ((k-1)P, kP] the minimum is at its right end: T~ = kP (convex in k) or T~ = T - 1.
  const std::int64_t Pi = st.n / st.b;
  const std::int64_t k_hi = (st.T - 1) / Pi;
  if (k_hi >= 1) {
    auto by_k = [&](std::int64_t k) { return cost(k * Pi); };
    const std::int64_t k = argmin_convex(by_k, 1, k_hi);
    best.offer(by_k(k), Branch::cyclic, k * Pi, 0.0);
  }
  best.offer(cost(st.T - 1), Branch::cyclic, st.T - 1, 0.0);
}

Optimum optimum(const Run& run, double alpha) {
  const Setup st = make_setup(run);
  Optimum best;
  if (run.sampling == Sampling::shuffle) return best;  // not covered (check() says so)
  // Cyclic batches of size n are full batches: P(i* in B_t) = 1 and (B.1), (B.2) apply.
  const bool full = run.sampling == Sampling::full || st.b == st.n;
  if (run.sampling == Sampling::cyclic && !full) {
    cyclic(st, alpha, best);
    return best;
  }
  // (B.2) first branch: tau = 0 makes the two CNIs identical (term 2 = 0), no split.
  best.offer(static_cast<double>(st.T) * step_rdp(alpha, st.q, st.ratio), Branch::composition, 0,
             0.0);
  optimise_split(st, alpha, best);
  if (full && st.constant) full_batch(st, alpha, best);
  return best;
}

class ShiftedRenyi final : public RdpAnalysis {
 public:
  std::string_view name() const override { return "shifted-renyi"; }
  std::string_view citation() const override {
    return "Altschuler & Talwar 2022, Noisy-SGD: Thm 3.1 / (B.2), (B.1), Thm 5.1 / (B.3), "
           "(5.7), Thm 5.6 / (5.6), Remark B.2";
  }
  // Noise on a grid: the sampled Gaussian's bias + slack s, the window's start gap + slack s and
  // each window step's extra shift slack s absorbed where it arises (docs/security.md).
  bool charges_grid() const override { return true; }

  std::optional<std::string> check(const Run& run) const override {
    if (run.release != Release::last)
      return fmt::format("bounds the last iterate only ({}), not release = {}",
                         report_field("release", "last"), to_string(run.release));
    if (run.noise != NoiseKind::gaussian)
      return fmt::format("needs Gaussian noise ({}): the shift-reduction lemma "
                         "(Lemma 2.15) is for Gaussian noise",
                         report_field("noise", "gaussian"));
    if (!run.loss.convex)
      return std::string("needs a convex loss: the gradient step must be a contraction (Lemma 2.1)");
    if (!run.loss.lipschitz)
      return fmt::format("needs the Lipschitz constant L of the loss ({})", report_field("lipschitz"));
    if (!run.loss.smoothness)
      return fmt::format("needs the smoothness M of the loss ({}) to certify that the "
                         "gradient step is a contraction (Lemma 2.1, eta <= 2/M)",
                         report_field("smoothness"));
    if (!(*run.loss.lipschitz > 0))
      return fmt::format("needs a Lipschitz constant L > 0, got L = {}", *run.loss.lipschitz);
    const double M = *run.loss.smoothness;
    for (std::int64_t t = 1; t <= run.steps; ++t) {
      const double eta = run.eta.at(t);
      if (eta > 2.0 / M)
        return fmt::format("eta = {} at step {} exceeds 2/M = {} (Lemma 2.1: the gradient step "
                           "is a contraction only for eta <= 2/M, M = smoothness = {})",
                           eta, t, 2.0 / M, M);
      if (!(run.noise_std.at(t) > 0))
        return fmt::format("needs noise std > 0 at every step (step {} has {})", t,
                           run.noise_std.at(t));
      if (run.eta.is_constant() && run.noise_std.is_constant()) break;
    }
    if (!std::isfinite(run.diameter))
      return fmt::format("needs a bounded constraint set ({}): the bound that stops "
                         "growing after T-bar ~ D n/(L eta) steps (Prop. 3.2) uses D",
                         report_field("diameter", "D"));
    switch (run.sampling) {
      case Sampling::shuffle:
        return std::string("no theorem of the paper covers shuffled batches (sampling = shuffle): "
                           "Thm 3.1 needs batches drawn independently at each step, Thm 5.6 a "
                           "fixed cyclic order");
      case Sampling::cyclic:
        if (run.adjacency != Adjacency::replace)
          return std::string("cyclic batches (Thm 5.6) are stated for replace-one neighbours; "
                             "add/remove shifts the positions of later records");
        if (!run.eta.is_constant() || !run.noise_std.is_constant())
          return std::string("cyclic batches (Thm 5.6) need a constant step size and noise");
        break;
      case Sampling::full:
        if (run.adjacency != Adjacency::replace)
          return std::string("full-batch GD (B.1) is stated for replace-one neighbours: under "
                             "add/remove the batch mean is over n or n+1 records");
        break;
      case Sampling::fixed:
        if (run.adjacency != Adjacency::replace)
          return std::string("fixed-size batches are covered for replace-one neighbours only "
                             "(Remark B.2's 2L -> L is used for Poisson sampling, where the batch "
                             "sum is divided by the fixed b)");
        break;
      case Sampling::poisson:
        break;
    }
    if (run.batch_size > run.n)
      return fmt::format("needs batch size b <= n (b = {}, n = {})", run.batch_size, run.n);
    return std::nullopt;
  }

  // A computational cap for the RDP -> DP conversion only: the bounds hold for every
  // alpha > 1 (Remark B.1), but S_alpha costs O(alpha) at large orders and orders above 4096
  // only matter when eps(delta) is below ~1e-2; capping can only raise the reported eps.
  // rdp() itself (and --alpha) answers at any order.
  double alpha_max(const Run&) const override { return 4096.0; }

  double rdp(const Run& run, double alpha) const override {
    if (std::isnan(alpha) || !(alpha > 1.0)) fail("alpha", alpha, "> 1");
    const double v = optimum(run, alpha).epsilon;
    return std::isnan(v) ? kInf : v;
  }

  std::vector<Detail> details(const Run& run, const Query& query) const override {
    std::vector<Detail> out;
    double alpha = kInf;
    if (query.delta) {
      alpha = div::best_epsilon(curve(run), *query.delta).alpha;
    } else if (query.epsilon) {
      alpha = div::best_delta(curve(run), *query.epsilon).alpha;
    }
    const double eta = run.eta.at(run.steps);
    // T-bar = ceil(D n / (L eta)) (Thm 3.1): the number of steps after which the bound is flat.
    out.push_back({"t_bar", std::ceil(run.diameter * static_cast<double>(run.n) /
                                      (*run.loss.lipschitz * eta))});
    if (!(alpha > 1.0) || !std::isfinite(alpha)) return out;
    const Optimum o = optimum(run, alpha);
    out.push_back({"alpha", alpha});
    out.push_back({fmt::format("rdp_epsilon[{}]", label(o.branch)), round_up(o.epsilon)});
    out.push_back({"t_tilde", static_cast<double>(o.t_tilde)});
    // The split in the paper's units sigma = noise_std / eta (at the last step).
    const double sigma = run.noise_std.at(run.steps) / eta;
    if (o.split > 0) {
      out.push_back({"sigma1", std::sqrt(o.split) * sigma});
      out.push_back({"sigma2", std::sqrt(1.0 - o.split) * sigma});
    }
    return out;
  }
};

}  // namespace

AnalysisPtr make_shifted_renyi() { return std::make_shared<ShiftedRenyi>(); }

}  // namespace hsdp::detail
