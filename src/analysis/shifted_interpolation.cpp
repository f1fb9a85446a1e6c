// shifted-interpolation: the last iterate of noisy GD on convex smooth losses in f-DP
// (Bok, Su, Altschuler, "Shifted interpolation for differential privacy", ICML 2024), from
// the shifted-interpolation lemma (include/hsdp/divergence/shift_program.hpp). Derivations
// and provenance: docs/analyses/shifted-interpolation.md.
//
// The run, in hsdp terms: W_{k+1} = Pi_K(W_k - eta g_{B_k}(W_k) + Z_k), Z_k ~ N(0, s^2 I)
// (s = noise_std), each record's loss convex, beta-smooth, L-Lipschitz (||grad|| <= L),
// strongly convex with lambda >= 0. Replace-one neighbours: the batch-mean gradients differ by
// at most Delta = 2L/b, so the step's maps differ by at most h = eta Delta when the record is
// in the batch, 0 otherwise. The gradient step w -> w - eta grad F(w) is c-Lipschitz with
// c = max(|1 - eta lambda|, |1 - eta beta|) for eta <= 2/beta (c = 1 for lambda = 0); the
// projection keeps the constant.
//
// The lemma gives T(W_t, W'_t) >= G_mu with mu = sqrt(E)/s, E the smallest sum a_k^2 of a shift
// allocation; (eps, delta) follows losslessly from mu-GDP: delta(eps) = theta_{e^eps}(mu)
// (Dong-Roth-Su 2022 Cor. 2.13; = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)).
//
//   full batch   tau = 0, b_0 = 0: E = (Q1); with a bounded domain also tau = t - S,
//                b_tau = D, for every S (the chain optimum, exact): the minimum.
//   cyclic       l = n/b batches per epoch, the record in one batch per epoch; tau = 0: the
//                exact program at every position (the worst position kept), or (Q2) at the
//                last batch for whole epochs when the program would be too large; with a
//                bounded domain also windows tau = t - S, b_tau = D.
//   shuffle      a fresh hidden uniform permutation per epoch, l = floor(n/b) batches (the
//                rest unused): the record is read at most once per epoch. Delaying a shift
//                never lowers E (the program's dual, docs), so every position sequence is
//                dominated by the record in the last batch of every epoch (the cyclic
//                worst case); and since the permutation is hidden and data-independent the
//                output pair is a mixture of the fixed-order pairs, so by joint convexity of
//                E_gamma delta(eps) is at most the average over the record's last-epoch
//                position of the worst case given that position (the "position average").
//                When an epoch can carry two shift sizes (records left out; the partial
//                batch kept) the earlier epochs are averaged too, by type: m ~ Bin(J, q)
//                strong epochs, placed last (their worst arrangement).
// The reported bound is never above the composition of the same steps (the allocation
// a_k = s_k is feasible, so E <= sum_k s_k^2).
// Affine steps (lambda = beta, no projection, clip or noise grid; docs "Affine steps"): every
// step is w -> (1 - eta lambda) w - const, so a fixed order's last iterates are Gaussians and E
// is the exact (sum_k c^{t-k} s_k)^2 / sum_k c^{2(t-k)} (the program without its gap
// constraints), used in the same three structures.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "hsdp/divergence/hockey_stick.hpp"
#include "hsdp/divergence/pld.hpp"
#include "hsdp/divergence/rdp.hpp"
#include "hsdp/numerics/log_normal.hpp"
#include "hsdp/divergence/shift_program.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/numerics/root.hpp"
#include "cache_key.hpp"
#include "neighbours.hpp"
#include "pld_grid.hpp"
#include "registry.hpp"

namespace hsdp::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Work budget (shift steps) of the exact cyclic program; beyond it, (Q2) for whole epochs.
constexpr double kProgramBudget = 3e7;

struct Setting {
  bool full = true;
  std::int64_t t = 0;  // steps
  std::int64_t l = 1;  // batches per epoch (cyclic)
  double h = 0.0;      // eta Delta: the shift of a step that reads the record
  double s = 1.0;      // noise std in parameter space
  double c = 1.0;      // contraction factor of the gradient step
  double D = kInf;     // diameter of the constraint set
  // Affine steps (docs, "Affine steps"): every record's loss is lambda-strongly convex and
  // lambda-smooth, hence (lambda/2)||w||^2 plus a linear term; nothing projects, clips or
  // rounds the noise to a grid. Then a fixed order's last iterates are Gaussians with equal
  // covariances and the exact energy is div::shift_energy_*_affine (never above the lemma's).
  bool affine = false;
  // The same steps with noise on the grid: rounded noise is not Gaussian, so the exact Gaussian value
  // is not derived there and the lemma's bound (with the slack as shifts) is used (the note says so).
  bool affine_on_grid = false;
};

struct Solution {
  double energy = kInf;        // E = min sum a_k^2 (parameter units squared)
  std::int64_t window = 0;     // S = t - tau of the best allocation (t: from W_0)
  std::int64_t position = 0;   // cyclic: the worst batch position (1..l)
  std::int64_t sensitive = 0;  // steps that read the record (composition baseline)
  bool closed_form = false;    // cyclic: (Q2) instead of the program
};

std::optional<std::string> check_run(const Run& run) {
  if (run.release != Release::last)
    return fmt::format("bounds the last iterate only; release = {}", to_string(run.release));
  if (run.noise != NoiseKind::gaussian) return std::string("needs Gaussian noise");
  // Add/remove (docs/analyses/neighbours.md): full batches average over n or n +- 1 records
  // (maps differ by at most 2 eta L / n, the replace-one shift); fixed-size and shuffled
  // batches by the coupling that swaps the extra record in; cyclic batches are refused.
  if (auto why = add_remove_reason(run)) return why;
  if (!run.loss.lipschitz) return std::string("needs the Lipschitz constant L of the loss");
  if (!run.loss.convex || !run.loss.smoothness)
    return std::string(
        "needs a convex, beta-smooth loss (the smoothness constant): the lemma needs every "
        "gradient step to be a contraction");
  if (run.clip && *run.clip < *run.loss.lipschitz)
    return fmt::format(
        "per-example clipping at C = {} < L = {} changes the update into one that is not a "
        "gradient step of a convex smooth loss, which the contraction argument needs",
        *run.clip, *run.loss.lipschitz);
  if (!run.eta.is_constant() || !run.noise_std.is_constant())
    return std::string("stated here for a constant step size and noise");
  const double eta = run.eta.at(1), beta = *run.loss.smoothness;
  if (!(eta <= 2.0 / beta))
    return fmt::format(
        "eta = {} exceeds 2/beta = {}: the gradient step is not a contraction", eta, 2.0 / beta);
  if (run.loss.strong_convexity > beta)
    return fmt::format("strong convexity {} exceeds the smoothness {}", run.loss.strong_convexity,
                       beta);
  if (run.sampling == Sampling::full) return std::nullopt;
  if (run.sampling == Sampling::fixed) {
    if (run.order_known && run.batch_size < run.n)
      return std::string(
          "random fixed-size batches (NoisySGD) are certified by amplification by sampling, which "
          "needs the batches hidden; the batch order is known (order_known)");
    if (!std::isfinite(run.diameter))
      return std::string(
          "random fixed-size batches (NoisySGD) need a bounded domain (the gap closed over the "
          "last steps is the diameter); the strongly convex form without one is not derived");
    return std::nullopt;
  }
  if (run.sampling == Sampling::shuffle) return std::nullopt;  // l = floor(n/b) >= 1
  if (run.sampling == Sampling::cyclic) {
    if (run.n % run.batch_size != 0)
      return fmt::format(
          "cyclic batches need b to divide n (a fixed partition into n/b batches); n = {}, b = {}",
          run.n, run.batch_size);
    return std::nullopt;
  }
  return fmt::format(
      "covers full batches, cyclic batches (a fixed partition, the same order every epoch), "
      "shuffled batches (a fresh hidden permutation every epoch) and uniformly random "
      "fixed-size batches; sampling = {}",
      to_string(run.sampling));
}

Setting setting(const Run& run) {
  Setting st;
  st.full = run.sampling == Sampling::full;
  st.t = run.steps;
  const std::int64_t b = st.full ? run.n : run.batch_size;
  st.l = st.full ? 1 : run.n / run.batch_size;
  const double eta = run.eta.at(1);
  st.h = eta * 2.0 * *run.loss.lipschitz / static_cast<double>(b);
  st.s = run.noise_std.at(1);
  const double lambda = run.loss.strong_convexity, beta = *run.loss.smoothness;
  st.c = std::min(1.0, std::max(std::abs(1.0 - eta * lambda), std::abs(1.0 - eta * beta)));
  // c is rounded up by one ulp: a contraction factor below the true one would understate E.
  if (st.c < 1.0) st.c = std::min(1.0, std::nextafter(st.c, 2.0));
  st.D = run.diameter;
  st.affine = lambda == beta && !std::isfinite(st.D) && !run.clip && !run.grid;
  st.affine_on_grid = lambda == beta && !std::isfinite(st.D) && !run.clip && run.grid;
  return st;
}

/// Full batch: (Q1) from W_0, and with a bounded domain every window S = t - tau from a gap D.
Solution solve_full(const Setting& st) {
  Solution best{div::shift_energy_uniform(st.c, st.h, st.t), st.t, 0, st.t, false};
  if (!std::isfinite(st.D)) return best;
  auto offer = [&](std::int64_t S) {
    if (S < 1 || S > st.t) return;
    const double e = div::shift_energy_uniform_from_gap(st.c, st.h, st.D, S);
    if (e < best.energy) best = {e, S, 0, st.t, false};
  };
  if (st.c == 1.0) {
    // (D + S h)^2 / S is convex in S with its real minimum at S = D/h (Q3).
    const double s_star = st.h > 0 ? st.D / st.h : kInf;
    const double lo = std::floor(std::min(s_star, static_cast<double>(st.t)));
    for (double S : {lo - 1, lo, lo + 1, lo + 2}) offer(static_cast<std::int64_t>(std::max(1.0, S)));
    offer(st.t);
    return best;
  }
  // c < 1: every window up to 20000 steps, then a geometric grid (ratio 1.01): the minimum
  // over any set of windows is a valid bound.
  const std::int64_t exhaustive = std::min<std::int64_t>(st.t, 20000);
  for (std::int64_t S = 1; S <= exhaustive; ++S) offer(S);
  for (double S = static_cast<double>(exhaustive) * 1.01; S < static_cast<double>(st.t); S *= 1.01)
    offer(static_cast<std::int64_t>(S));
  offer(st.t);
  return best;
}

/// Cyclic: the record is read at steps p, p + l, p + 2l, ... (its batch position p in 1..l).
/// The energy of the window of S steps ending at t, from a gap `gap`, at position p.
double cyclic_energy(const Setting& st, std::int64_t p, std::int64_t S, double gap,
                     std::vector<double>& shifts) {
  shifts.assign(static_cast<std::size_t>(S), 0.0);
  const std::int64_t tau = st.t - S;
  for (std::int64_t k = p; k <= st.t; k += st.l)
    if (k > tau) shifts[static_cast<std::size_t>(k - tau - 1)] = st.h;
  return div::shift_energy(st.c, gap, shifts);
}

Solution solve_cyclic(const Setting& st) {
  Solution out;
  if (st.affine) {
    // Affine steps: the record read at the last step (and every l steps before it) has the
    // largest discounted gap sum_k c^{t-k} s_k of all positions (c >= 0: the latest reads and
    // the most of them), and the Gaussian value of that position is exact (docs).
    out.energy = div::shift_energy_cyclic_affine(st.c, st.h, st.l, st.t);
    out.position = (st.t - 1) % st.l + 1;
    out.window = st.t;
    out.sensitive = (st.t - 1) / st.l + 1;
    return out;
  }
  // Fast path: whole epochs, no windows (unbounded domain), l >= 2: (Q2) is the program's
  // worst position exactly (the last batch; tests compare them at every position).
  if (!std::isfinite(st.D) && st.l >= 2 && st.t % st.l == 0) {
    out.energy = div::shift_energy_cyclic_last(st.c, st.h, st.l, st.t / st.l);
    out.position = st.l;
    out.window = st.t;
    out.sensitive = st.t / st.l;
    return out;
  }
  const double l = static_cast<double>(st.l), t = static_cast<double>(st.t);
  const std::int64_t whole_epochs = st.t / st.l;
  // Windows from a gap D: whole epochs S = j l (j = 1..E, or a geometric grid of ~48 values).
  std::vector<std::int64_t> windows;
  if (std::isfinite(st.D)) {
    const std::int64_t E = std::max<std::int64_t>(1, whole_epochs);
    if (E <= 48) {
      for (std::int64_t j = 1; j <= E; ++j) windows.push_back(j * st.l);
    } else {
      for (double j = 1; j <= static_cast<double>(E); j = std::max(j + 1, std::floor(j * 1.15)))
        windows.push_back(static_cast<std::int64_t>(j) * st.l);
    }
    std::erase_if(windows, [&](std::int64_t S) { return S >= st.t; });
  }
  double work = l * t;
  for (auto S : windows) work += l * static_cast<double>(S);
  if (work > kProgramBudget) {
    // (Q2): whole epochs only, worst position the last batch (tests compare it with the
    // program at every position); windows are dropped (any subset of bounds is valid).
    out.closed_form = true;
    out.position = st.l;
    out.window = st.t;
    out.sensitive = whole_epochs;
    if (st.t % st.l != 0) return out;  // energy stays +inf: the caller reports why
    out.energy = div::shift_energy_cyclic_last(st.c, st.h, st.l, whole_epochs);
    return out;
  }
  std::vector<double> shifts;
  double worst = -1.0;
  for (std::int64_t p = 1; p <= st.l; ++p) {
    double e = cyclic_energy(st, p, st.t, 0.0, shifts);
    std::int64_t window = st.t;
    for (auto S : windows) {
      const double w = cyclic_energy(st, p, S, st.D, shifts);
      if (w < e) {
        e = w;
        window = S;
      }
    }
    if (e > worst) {
      worst = e;
      out.energy = e;
      out.position = p;
      out.window = window;
    }
  }
  // Steps that read the record at the worst position: the composition baseline.
  out.sensitive = out.position <= st.t ? (st.t - out.position) / st.l + 1 : 0;
  return out;
}

Solution solve(const Run& run) {
  const Setting st = setting(run);
  return st.full ? solve_full(st) : solve_cyclic(st);
}

// ---- Shuffled batches (docs/analyses/shifted-interpolation.md, "Shuffled batches").
// t = J l + r steps: J whole epochs of l batches (neighbours.hpp: floor(n/b), or ceil(n/b)
// with the partial last batch kept), then r in 1..l steps of the last epoch (whole epochs:
// r = l). For a fixed position sequence the run is a fixed-order noisy GD whose sensitive
// steps are the record's; E of that sequence is at most E of the sequence with the epoch's
// worst shift (ShuffledEpoch::worst) at the last step of each earlier epoch (delay lemma)
// and the record at position j in the last epoch, or not read in it ("absent": a position
// j > r, or one of the n - l b records left out by the drop-last cut). Class j has
// probability b/n (the partial batch: r_p/n), absent the rest. Within a class every sequence
// is dominated by the class's worst one, for every window, so each class is bounded by min
// over windows of shift_energy_epochs. The average is not used when the order is known, nor
// under add/remove with the partial batch kept (two shifts per epoch: only the worst case is
// derived).
// Earlier epochs by type (docs, section 7): when an earlier epoch can carry two different
// shifts -- drop-last with records left out (h or none) or the partial batch kept (h_r or h) --
// each earlier epoch is independently "strong" (the larger shift, probability q) or "weak";
// given the number m of strong epochs, the m strong epochs last dominate every arrangement
// (exchange + delay lemma), m ~ Binomial(J, q), and E is non-decreasing in m: m is bucketed.
struct ShuffleClass {
  double weight = 0.0;
  double energy = kInf;
  std::int64_t position = 0;  // last-epoch position (upper end of its bucket); 0: absent
  std::int64_t strong = 0;    // strong earlier epochs (upper end of its bucket)
};

struct ShuffleBound {
  std::int64_t l = 1, J = 0, r = 1;
  double worst = kInf;            // the worst position sequence
  std::int64_t worst_window = 0;  // steps of its best window (t: from W_0)
  bool averaged = false;          // the reported bound is the position average (classes)
  std::vector<ShuffleClass> classes;
  std::int64_t last_epoch_classes = 0;     // position_classes
  std::int64_t earlier_epoch_classes = 0;  // buckets of m (0: earlier epochs at their worst)
  double strong_probability = 1.0;         // q
};

// At most this many last-epoch classes: larger l are bucketed, each bucket bounded by its
// last position (E is non-decreasing in the position, delay lemma).
constexpr std::int64_t kShuffleClasses = 128;
// Classes of the earlier epochs' strong count m: at most max(kStrongMin, kClassBudget / (last
// epoch classes)), and at most kStrongMax.
constexpr std::int64_t kClassBudget = 1024, kStrongMin = 8, kStrongMax = 64;
// Blocks of consecutive m whose probabilities are bounded together when the binomial's range
// is wider than this (each block by its width times its largest probability).
constexpr std::int64_t kBinomialBlocks = 100000;

/// log(n!) - log(sqrt(2 pi n) (n/e)^n) (Loader's stirlerr), long double.
long double stirling_error(long double n) {
  if (n <= 15.0L) {
    if (n == 0.0L) return 0.0L;  // unused (the end points are handled apart)
    return std::lgamma(n + 1.0L) - (n + 0.5L) * std::log(n) + n - 0.5L * std::log(2.0L * 3.14159265358979323846264338327950288L);
  }
  const long double nn = n * n;
  constexpr long double S0 = 1.0L / 12, S1 = 1.0L / 360, S2 = 1.0L / 1260, S3 = 1.0L / 1680, S4 = 1.0L / 1188;
  if (n > 500) return (S0 - S1 / nn) / n;
  if (n > 80) return (S0 - (S1 - S2 / nn) / nn) / n;
  if (n > 35) return (S0 - (S1 - (S2 - S3 / nn) / nn) / nn) / n;
  return (S0 - (S1 - (S2 - (S3 - S4 / nn) / nn) / nn) / nn) / n;
}

/// x log(x / m) + m - x without cancellation (Loader's bd0).
long double deviance(long double x, long double m) {
  if (std::abs(x - m) < 0.1L * (x + m)) {
    long double v = (x - m) / (x + m), s = (x - m) * v, ej = 2 * x * v;
    v = v * v;
    for (int j = 1; j < 1000; ++j) {
      ej *= v;
      const long double s1 = s + ej / (2 * j + 1);
      if (s1 == s) return s1;
      s = s1;
    }
    return s;
  }
  return x * std::log(x / m) + m - x;
}

/// P(Binomial(J, q) = m), q = k/n, by Loader's saddle-point form (relative error ~1e-16 for
/// every J up to 2^63, where lgamma differences would lose everything).
long double binomial_pmf(std::int64_t m, std::int64_t J, std::int64_t k, std::int64_t n) {
  const long double q = static_cast<long double>(k) / static_cast<long double>(n);
  const long double p = static_cast<long double>(n - k) / static_cast<long double>(n);
  const long double Jl = static_cast<long double>(J), x = static_cast<long double>(m);
  if (m == 0) return std::exp(Jl * std::log(p));
  if (m == J) return std::exp(Jl * std::log(q));
  const long double lc = stirling_error(Jl) - stirling_error(x) - stirling_error(Jl - x) -
                         deviance(x, Jl * q) - deviance(Jl - x, Jl * p);
  const long double lf = std::log(2.0L * 3.14159265358979323846264338327950288L) + std::log(x) +
                         std::log1p(-x / Jl);
  return std::exp(lc - 0.5L * lf);
}

struct StrongClass {
  std::int64_t top;  // the bucket's largest m: its bound
  double weight;     // >= the probability of every m the bucket covers
};

/// Buckets of m ~ Binomial(J, k/n), each with a weight at least its probability. The range
/// mode +- (10 sd + 30) is split into at most `buckets` buckets at quantiles (uniform, then
/// geometric towards the top, where each bucket's bound is loosest); the mass below the range
/// joins the first bucket, the mass above it is a class of its own at m = J (geometric tail
/// bounds, the pmf ratio being decreasing in m). Each upper set of buckets gets at least its
/// probability and the weights sum to 1 (the excess taken from the lowest buckets).
std::vector<StrongClass> strong_epoch_classes(std::int64_t J, std::int64_t k, std::int64_t n,
                                              std::int64_t buckets) {
  const long double q = static_cast<long double>(k) / static_cast<long double>(n);
  const long double p = static_cast<long double>(n - k) / static_cast<long double>(n);
  const long double odds = static_cast<long double>(k) / static_cast<long double>(n - k);
  const long double Jl = static_cast<long double>(J);
  const std::int64_t mode = std::clamp<std::int64_t>(
      static_cast<std::int64_t>(std::floor((Jl + 1.0L) * q)), 0, J);
  const long double sd = std::sqrt(Jl * q * p);
  const long double reach = std::ceil(10.0L * sd + 30.0L);
  const std::int64_t lo = reach >= static_cast<long double>(mode) ? 0 : mode - static_cast<std::int64_t>(reach);
  const std::int64_t hi = reach >= static_cast<long double>(J - mode) ? J : mode + static_cast<std::int64_t>(reach);
  // Blocks of width w; each bounded by w x its largest probability (the pmf is unimodal with
  // its maximum at `mode`): exact when w = 1.
  const std::int64_t range = hi - lo + 1;
  const std::int64_t w = (range + kBinomialBlocks - 1) / kBinomialBlocks;
  struct Block { std::int64_t top; long double mass; };
  std::vector<Block> blocks;
  long double total = 0.0L;
  for (std::int64_t a = lo; a <= hi; a += w) {
    const std::int64_t b = std::min(hi, a + (w - 1));
    const long double mass = static_cast<long double>(b - a + 1) * binomial_pmf(std::clamp(mode, a, b), J, k, n);
    blocks.push_back({b, mass});
    total += mass;
    if (b == hi) break;
  }
  // Tails: beyond hi the pmf ratio (J - m) odds / (m + 1) keeps falling, so the tail is at most
  // a geometric series from pmf(hi); below lo likewise with m / ((J - m + 1) odds).
  auto tail = [](long double at, long double ratio) {
    return ratio < 1.0L ? at * ratio / (1.0L - ratio) : 1.0L;
  };
  const long double upper = hi == J ? 0.0L
      : tail(binomial_pmf(hi, J, k, n), static_cast<long double>(J - hi) * odds / static_cast<long double>(hi + 1));
  const long double lower = lo == 0 ? 0.0L
      : tail(binomial_pmf(lo, J, k, n), static_cast<long double>(lo) / (static_cast<long double>(J - lo + 1) * odds));
  // The long-double sums of at most 1e5 terms: 1e-12 relative covers their rounding.
  constexpr long double kUp = 1.0L + 1e-12L;
  std::vector<StrongClass> out;
  if (static_cast<std::int64_t>(blocks.size()) <= buckets) {
    for (const auto& bl : blocks) out.push_back({bl.top, static_cast<double>(bl.mass * kUp)});
  } else {
    // Cumulative levels: half the buckets uniform up to 1 - 1/h, the rest halving the top mass.
    const std::int64_t half = std::max<std::int64_t>(1, buckets / 2);
    std::vector<long double> levels;
    for (std::int64_t i = 1; i < half; ++i) levels.push_back(static_cast<long double>(i) / half);
    long double top = 1.0L / half;
    for (std::int64_t i = half; i < buckets - 1; ++i) {
      top /= 2;
      levels.push_back(1.0L - top);
    }
    long double cum = 0.0L, mass = 0.0L;
    std::size_t next = 0;
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      cum += blocks[i].mass;
      mass += blocks[i].mass;
      bool close = i + 1 == blocks.size();
      while (next < levels.size() && cum >= levels[next] * total) {
        close = true;
        ++next;
      }
      if (close) {
        out.push_back({blocks[i].top, static_cast<double>(mass * kUp)});
        mass = 0.0L;
      }
    }
  }
  out.front().weight += static_cast<double>(lower * kUp);
  if (upper > 0.0L) out.push_back({J, static_cast<double>(upper * kUp)});
  // Every weight is >= its buckets' probability, so the weight of every upper set of buckets
  // (m above a cut) is >= its probability; the excess over 1 (the blocks' bounds, the rounding
  // allowance) is taken from the lowest buckets, which keeps that true for every cut with the
  // total 1 (stochastic dominance: E is non-decreasing in m, so the average does not drop).
  long double excess = -1.0L;
  for (const auto& c : out) excess += c.weight;
  for (auto& c : out) {
    if (excess <= 0.0L) break;
    const long double take = std::min<long double>(c.weight, excess);
    c.weight = static_cast<double>(static_cast<long double>(c.weight) - take);
    excess -= take;
  }
  // A deficit (the weights summing below 1: not expected, the pmf is accurate to ~1e-16 and
  // every bound rounds up) would drop probability; it goes to the largest m, the least private
  // class, so the weights never sum below 1.
  if (excess < 0.0L) out.back().weight += static_cast<double>(-excess);
  std::erase_if(out, [](const StrongClass& c) { return c.weight <= 0.0; });
  return out;
}

std::shared_ptr<const ShuffleBound> shuffle_bound(const Run& run) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const ShuffleBound>> lemma_cache, affine_cache;
  Setting st = setting(run);
  // The key below does not say which energy: the affine runs have a cache of their own.
  auto& cache = st.affine ? affine_cache : lemma_cache;
  const ShuffledEpoch ep = shuffled_epoch(run);
  const double unit = run.eta.at(1) * *run.loss.lipschitz;  // eta L: shifts in parameter space
  const double h_full = unit * ep.full, h_partial = unit * ep.partial, h_worst = unit * ep.worst();
  const std::int64_t n = run.n, l = ep.l;
  const std::int64_t J = (st.t - 1) / l, r = st.t - J * l;
  const bool average = !run.order_known && ep.every_last == 0.0;
  // Keyed by the whole run (cache_key.hpp) but its noise: the energies do not depend on the
  // noise, so calibrating the noise reuses them.
  const std::string key = cache_key(run, KeyOmits::noise_std);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  auto out = std::make_shared<ShuffleBound>();
  out->l = l;
  out->J = J;
  out->r = r;
  out->averaged = average;
  // Earlier epochs' types (docs, section 7): strong with probability k/n. Drop-last with
  // records left out: read (h, at its last step) in k = l b of n, else not read (0). Partial
  // batch kept: in the partial batch (h_r, at the last step) in k = r_p of n, else in a full
  // batch (h, dominated by h at the last step). Under add/remove (drop-last only, neighbours.md)
  // the read probability is l b/n or l b/(n + 1) <= l b/n: the binomial with k/n dominates.
  const std::int64_t k = ep.r > 0 ? ep.r : l * run.batch_size;
  const double h_weak = ep.r > 0 ? h_full : 0.0, h_strong = h_worst;
  const bool types = average && J >= 1 && k < n;
  // Windows: from W_0 (gap 0, all J earlier epochs) and, with a bounded domain, from a gap D
  // at the start of each of the last J' + 1 epochs (all J' <= 64, then a ratio-1.15 grid).
  struct Window { std::int64_t epochs; double gap; };
  std::vector<Window> windows{{J, 0.0}};
  if (std::isfinite(st.D)) {
    for (double j = 0; j < static_cast<double>(J); j = j < 64 ? j + 1 : std::floor(j * 1.15))
      windows.push_back({static_cast<std::int64_t>(j), st.D});
  }
  // The class's dominating sequence: m strong earlier epochs last, J - m weak before them (a
  // window of the last J' epochs sees min(m, J') strong ones), then the last epoch's class.
  auto energy = [&](std::int64_t m, std::optional<std::int64_t> position, double final_shift,
                    std::int64_t* window) {
    if (st.affine) {
      // Affine steps (no windows: an unbounded domain): the exact Gaussian energy of the
      // class's dominating sequence. Delaying or adding shift mass never lowers
      // sum_k c^{t-k} s_k (c >= 0), so the class is still dominated by it (docs).
      if (window) *window = st.t;
      return div::shift_energy_two_chains_affine(st.c, l, J - m, h_weak, m, h_strong, r, position, final_shift);
    }
    double best = kInf;
    for (const auto& w : windows) {
      const std::int64_t strong = std::min(m, w.epochs);
      const double e = div::shift_energy_two_chains(st.c, l, w.epochs - strong, h_weak, strong, h_strong, r,
                                                    position, final_shift, w.gap);
      if (e < best) {
        best = e;
        if (window) *window = w.epochs * l + r;
      }
    }
    return best;
  };
  // The shift of the record read at last-epoch position j: its batch's class; the worst case
  // puts the whole epoch's worst at the last step run (the partial batch, and the last batch's
  // change under add/remove, only when that step is run: r = l).
  const bool partial_at_end = ep.r > 0;
  auto shift_at = [&](std::int64_t j) { return partial_at_end && j == l ? h_partial : h_full; };
  out->worst = energy(J, r, r == l ? h_worst : h_full, &out->worst_window);
  if (!average) return out;  // not cached: cheap (one class)
  // The last epoch's classes: full-batch positions 1..f (bucketed), the partial batch at l,
  // and absent.
  struct Final { double weight; std::optional<std::int64_t> position; double shift; };
  std::vector<Final> finals;
  const double per_position = static_cast<double>(run.batch_size) / static_cast<double>(n);
  const std::int64_t f = partial_at_end ? std::min(r, l - 1) : r;
  const std::int64_t buckets = std::min<std::int64_t>(f, kShuffleClasses);
  std::int64_t done = 0;
  double used = 0.0;
  for (std::int64_t i = 1; i <= buckets; ++i) {
    // Positions done+1 .. upper, bounded by the upper end.
    const std::int64_t upper = i == buckets ? f : (f * i) / buckets;
    if (upper <= done) continue;
    const double w = static_cast<double>(upper - done) * per_position;
    finals.push_back({w, upper, h_full});
    used += w;
    done = upper;
  }
  if (partial_at_end && r == l) {
    const double w = static_cast<double>(ep.r) / static_cast<double>(n);
    finals.push_back({w, l, shift_at(l)});
    used += w;
  }
  // Not read in the last epoch: what is left (>= 0 up to rounding).
  const double absent = 1.0 - used;
  // A rounding residue (below 1e-12: its delta is the smallest of all classes, so leaving it
  // out changes the average by less than 1e-12 relative, inside round_up's 1e-9).
  if (absent > 1e-12) finals.push_back({absent, std::nullopt, 0.0});
  out->last_epoch_classes = static_cast<std::int64_t>(finals.size());
  std::vector<StrongClass> strong{{J, 1.0}};
  if (types) {
    const std::int64_t cap = std::clamp<std::int64_t>(kClassBudget / out->last_epoch_classes, kStrongMin, kStrongMax);
    strong = strong_epoch_classes(J, k, n, cap);
    out->earlier_epoch_classes = static_cast<std::int64_t>(strong.size());
    out->strong_probability = static_cast<double>(k) / static_cast<double>(n);
  }
  for (const auto& sc : strong)
    for (const auto& fc : finals)
      out->classes.push_back({sc.weight * fc.weight, energy(sc.top, fc.position, fc.shift, nullptr),
                              fc.position.value_or(0), sc.top});
  if (types) {
    // Classes whose energies agree to 1e-9 relative are merged at the larger (fewer terms per
    // delta; mu moves by at most 5e-10 relative).
    auto& cl = out->classes;
    std::sort(cl.begin(), cl.end(), [](const ShuffleClass& a, const ShuffleClass& b) { return a.energy < b.energy; });
    std::vector<ShuffleClass> merged;
    double group_min = 0.0;
    for (const auto& c : cl) {
      if (!merged.empty() && c.energy <= group_min * (1 + 1e-9)) {
        // The group is bounded by its largest energy (c's: sorted).
        merged.back().weight += c.weight;
        merged.back().energy = c.energy;
        merged.back().position = c.position;
        merged.back().strong = c.strong;
      } else {
        merged.push_back(c);
        group_min = c.energy;
      }
    }
    cl = std::move(merged);
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() > 32) cache.clear();
  cache[key] = out;
  return out;
}

/// log delta(eps) of the position average: log sum_classes weight * theta_{e^eps}(mu_class);
/// the worst case when the average is not used. mu_extra: the noise grid's shift (grid_mu).
double shuffle_log_delta(const ShuffleBound& sb, double s, double mu_extra, double epsilon) {
  if (!sb.averaged) return div::log_theta(epsilon, std::sqrt(sb.worst) / s + mu_extra);
  std::vector<double> terms;
  terms.reserve(sb.classes.size());
  for (const auto& cl : sb.classes) {
    if (cl.weight <= 0) continue;
    terms.push_back(std::log(cl.weight) + div::log_theta(epsilon, std::sqrt(cl.energy) / s + mu_extra));
  }
  return terms.empty() ? -kInf : num::logsumexp(terms);
}

// Noise on a grid (docs/security.md): every step's map may move the two runs up to
// grid->slack s apart beyond the lemma's shifts. Absorbing that extra shift at the step where it
// arises keeps the gap sequence feasible and adds slack s to each of the (at most T) shifts a_k,
// so by Minkowski sqrt(sum (a_k + slack s)^2) / s <= mu + slack sqrt(T).
double grid_mu(const Run& run) {
  return run.grid ? run.grid->slack * std::sqrt(static_cast<double>(run.steps)) : 0.0;
}

double mu_of(const Run& run, const Solution& sol) {
  return std::sqrt(sol.energy) / setting(run).s + grid_mu(run);
}

// ---- NoisySGD: uniformly random batches of exactly b records (without replacement within
// a step, independent across steps), a bounded domain, replace-one (note §5.2; docs). Split
// each step's noise N(0, s^2) into independent parts of variances lambda s^2 and
// (1 - lambda) s^2. From tau = t - nu, where ||W_tau - W'_tau|| <= D, the interpolating
// process closes the gap D with the shifts a_k = D/nu (c = 1: a convex, beta-smooth loss with
// eta <= 2/beta), paid by the second parts: G(D / (sqrt(nu (1 - lambda)) s)); the record's
// own gradient term at each of the nu steps is the subsampled Gaussian mechanism on the
// first parts: C_p(G(Delta / (sigma sqrt(lambda)))), p = b/n. Composition:
//   f_nu = C_p(G(Delta/(sigma sqrt lambda)))^{(x) nu} (x) G(D / (eta sigma sqrt(nu (1 - lambda)))),
// each a valid bound; nu = t from tau = 0 (b_0 = 0) needs no split: the composition of the t
// subsampled steps. The candidates (nu, lambda) are chosen by the CLT of the subsampled
// Gaussian (an approximation, used only to pick candidates), then composed exactly by PLD
// (pessimistic, docs/pld.md); the best certified candidate is reported.
struct SgdParams {
  double p = 0.0;   // b / n
  double z = 0.0;   // noise multiplier: std of the noise on the batch SUM over L
  double D = 0.0;   // diameter
  double s = 0.0;   // noise std in parameter space
  std::int64_t t = 0;
  double slack = 0.0;  // noise grid: extra shift per step over s (docs/security.md)
};

SgdParams sgd_params(const Run& run) {
  SgdParams q;
  const double b = static_cast<double>(run.batch_size);
  q.p = std::min(1.0, b / static_cast<double>(run.n));
  q.s = run.noise_std.at(1);
  q.z = q.s * b / (run.eta.at(1) * *run.loss.lipschitz);
  q.D = run.diameter;
  q.t = run.steps;
  if (run.grid) q.slack = run.grid->slack;
  return q;
}

struct SgdCandidate {
  std::int64_t nu;
  double lambda;  // 1: no split (nu = t, from W_0)
};

/// mu of nu composed C_p(G_mu) by the central limit (Bok et al.'s approximation).
double clt_mu(double p, double mu, double nu) {
  const double m = std::min(mu, 26.0);  // e^{mu^2} overflows beyond; the CLT is moot there
  const double v = 2.0 * (std::exp(m * m) * num::q(-1.5 * m) + 3.0 * num::q(0.5 * m) - 2.0);
  return p * std::sqrt(nu * std::max(0.0, v));
}

std::vector<SgdCandidate> sgd_candidates(const SgdParams& q) {
  const double mu_step = 2.0 / q.z;  // Delta / sigma
  double best = clt_mu(q.p, mu_step, static_cast<double>(q.t));  // composition from W_0
  SgdCandidate pick{q.t, 1.0};
  for (double lambda = 0.05; lambda < 0.96; lambda += 0.05) {
    for (double nu = 1; nu <= static_cast<double>(q.t); nu = std::max(nu + 1, std::floor(nu * 1.1))) {
      const double a = clt_mu(q.p, mu_step / std::sqrt(lambda), nu);
      const double shift = q.D / (std::sqrt(nu * (1 - lambda)) * q.s);
      const double total = std::sqrt(a * a + shift * shift);
      if (total < best) {
        best = total;
        pick = {static_cast<std::int64_t>(nu), lambda};
      }
    }
  }
  std::vector<SgdCandidate> out{{q.t, 1.0}};
  if (pick.lambda < 1.0) out.push_back(pick);
  return out;
}

/// The PLD of one candidate on composition-pld's grid (pld_grid: the run's pld_interval /
/// pld_cells when stated; coarser when the losses span too many points); nullopt when no
/// grid up to 0.5 can hold it.
std::optional<div::Pld> sgd_pld(const SgdParams& q, const SgdCandidate& c, div::PldOptions grid) {
  // The composition from W_0 on composition-pld's grid, so that this analysis is never above
  // composition-pld; a split candidate on a grid 4x coarser in cells per std (10 by
  // default: about 4x faster, still pessimistic).
  if (c.lambda < 1.0) grid.cells = std::max(1.0, grid.cells / 4);
  const double z = q.z * std::sqrt(c.lambda), p = q.p;
  const std::vector<div::PldSteps> steps{
      {[=](const div::PldOptions& opt) {
         return div::Pld::sampled_gaussian(p, z, div::Subsampling::fixed, div::Neighbours::replace, opt);
       },
       c.nu}};
  return on_a_grid_that_fits(grid, [&](const div::PldOptions& o) {
    div::Pld pld = div::compose_steps(steps, o);
    if (c.lambda < 1.0) {
      // The gap D closed over nu steps, plus the grid's extra shift absorbed where it arises
      // (Minkowski, as in grid_mu): slack sqrt(nu) on the second parts' scale.
      const double shift = q.D / (std::sqrt(static_cast<double>(c.nu) * (1 - c.lambda)) * q.s) +
                           q.slack * std::sqrt(static_cast<double>(c.nu) / (1 - c.lambda));
      pld = pld.compose_gaussian(shift, o);
    }
    return pld;
  });
}

struct SgdBound {
  std::vector<SgdCandidate> candidates;
  std::vector<div::Pld> plds;  // the certified ones (same order, those that could be built)
  std::vector<SgdCandidate> built;
};

/// The candidates' PLDs, cached per run (the accountant asks for eps, then for details;
/// calibration asks the same run twice).
std::shared_ptr<const SgdBound> sgd_bound(const Run& run) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const SgdBound>> cache;
  const SgdParams q = sgd_params(run);
  const div::PldOptions grid = pld_grid(run);
  // The whole run (cache_key.hpp): the composition from W_0 is composition-pld's PLD of this
  // run, which depends on the adjacency, among others.
  const std::string key = cache_key(run);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  auto bound = std::make_shared<SgdBound>();
  bound->candidates = sgd_candidates(q);
  for (const auto& c : bound->candidates) {
    if (c.lambda >= 1.0) {
      // From W_0: the composition of the t subsampled steps, which is composition-pld's own
      // PLD of this run (fixed-size batches, replace-one, the same grid): shared, so that
      // the accountant composes it once and this analysis is never above composition-pld.
      if (const auto pld = composition_pld_of(run); *pld) {
        bound->plds.push_back(**pld);
        bound->built.push_back(c);
      }
    } else if (auto pld = sgd_pld(q, c, grid)) {
      bound->plds.push_back(std::move(*pld));
      bound->built.push_back(c);
    }
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() > 32) cache.clear();
  cache[key] = bound;
  return bound;
}

/// The RDP route of the composition from W_0 (when no PLD grid can hold the run).
div::RdpCurve sgd_rdp_curve(const SgdParams& q) {
  // Every iterate composed: with a noise grid a reading step's sensitivity grows by one
  // rounding (slack s), so 1/z grows by slack (composition_params does the same).
  const double z = 1.0 / (1.0 / q.z + q.slack);
  return {[q, z](double alpha) {
    return static_cast<double>(q.t) *
           div::sampled_gaussian_rdp(alpha, q.p, z, div::Subsampling::fixed, div::Neighbours::replace);
  }};
}

/// Details of a shuffled run: the worst case (mu, its GDP value for the query) next to the
/// position average that the analysis reports.
std::vector<Detail> shuffle_details(const Run& run, const Setting& st, const Query& query) {
  const auto sb = shuffle_bound(run);
  const double mu = std::sqrt(sb->worst) / st.s + grid_mu(run);
  std::vector<Detail> out;
  out.push_back({"mu", round_up(mu)});
  out.push_back({"contraction_factor", st.c});
  const ShuffledEpoch ep = shuffled_epoch(run);
  const double unit = run.eta.at(1) * *run.loss.lipschitz / st.s;
  out.push_back({"sensitivity_over_noise", unit * ep.full});
  if (ep.r > 0) out.push_back({"partial_batch_sensitivity_over_noise", unit * ep.partial});
  out.push_back({"window", static_cast<double>(sb->worst_window)});
  out.push_back({"batches_per_epoch", static_cast<double>(sb->l)});
  // The GDP value of the worst case alone (what a known order is certified with).
  if (query.delta) {
    const double target = std::log(*query.delta);
    auto f = [&](double e) { return div::log_theta(e, mu) - target; };
    out.push_back({"worst_case_epsilon", round_up(num::smallest_meeting(f, 0.0, 1.0, 1e4).value_or(kInf))});
  } else if (query.epsilon) {
    out.push_back({"worst_case_delta", delta_upper(div::log_theta(*query.epsilon, mu))});
  }
  out.push_back({"position_classes", static_cast<double>(sb->last_epoch_classes)});
  if (sb->earlier_epoch_classes > 0) {
    // The earlier epochs averaged by type (docs, section 7): buckets of the strong count m.
    out.push_back({"earlier_epoch_classes", static_cast<double>(sb->earlier_epoch_classes)});
    out.push_back({"strong_epoch_probability", sb->strong_probability});
  }
  // Epochs that read the record (at most once each), each with its worst class's shifts:
  // the composition baseline.
  const double reads = static_cast<double>(sb->J + 1);
  const double per_epoch = ep.every_last > 0 ? ep.full * ep.full + ep.partial * ep.partial
                                             : std::pow(std::max(ep.full, ep.partial), 2);
  out.push_back({"composition_mu", round_up(std::sqrt(reads * per_epoch) * unit)});
  return out;
}

class ShiftedInterpolation final : public Analysis {
 public:
  std::string_view name() const override { return "shifted-interpolation"; }
  bool charges_grid() const override { return true; }  // grid_mu; the SGD split's shift term
  std::string_view citation() const override {
    return "Bok, Su, Altschuler 2024 (shifted interpolation, f-DP): the shifted-interpolation "
           "lemma; NoisyGD (full batch), NoisyCGD (cyclic), shuffled batches (worst case over positions, "
           "averaged over the last epoch's hidden position), NoisySGD (fixed-size batches, PLD)";
  }

  std::optional<std::string> check(const Run& run) const override {
    if (auto why = check_run(run)) return why;
    if (run.sampling == Sampling::fixed || run.sampling == Sampling::shuffle) return std::nullopt;
    const Setting st = setting(run);
    if (!st.full && !st.affine && st.t % st.l != 0) {
      double work = static_cast<double>(st.l) * static_cast<double>(st.t);
      if (work > kProgramBudget)
        return fmt::format(
            "the exact program over {} batch positions and {} steps is too large and the "
            "closed form needs whole epochs (steps a multiple of n/b = {})",
            st.l, st.t, st.l);
    }
    return std::nullopt;
  }

  // mu-GDP -> delta(eps) = theta_{e^eps}(mu).
  double log_delta(const Run& run, double epsilon) const override {
    if (run.sampling == Sampling::fixed) {
      const auto b = sgd_bound(run);
      if (b->plds.empty()) return div::best_log_delta(sgd_rdp_curve(sgd_params(run)), epsilon).value;
      double best = 0.0;
      for (const auto& pld : b->plds) best = std::min(best, pld.log_delta(epsilon));
      return best;
    }
    if (run.sampling == Sampling::shuffle)
      return shuffle_log_delta(*shuffle_bound(run), setting(run).s, grid_mu(run), epsilon);
    const Solution sol = solve(run);
    return div::log_theta(epsilon, mu_of(run, sol));
  }

  // mu is computed once; eps(delta) inverts the GDP curve (conservative end).
  double epsilon(const Run& run, double delta) const override {
    if (run.sampling == Sampling::fixed) {
      const auto b = sgd_bound(run);
      if (b->plds.empty()) return div::best_epsilon(sgd_rdp_curve(sgd_params(run)), delta).value;
      double best = kInf;
      for (const auto& pld : b->plds) best = std::min(best, pld.epsilon(delta));
      return best;
    }
    const double target = std::log(delta);
    if (run.sampling == Sampling::shuffle) {
      const auto sb = shuffle_bound(run);
      const double s = setting(run).s;
      const double extra = grid_mu(run);
      auto f = [&](double e) { return shuffle_log_delta(*sb, s, extra, e) - target; };
      return num::smallest_meeting(f, 0.0, 1.0, 1e4).value_or(kInf);
    }
    const double mu = mu_of(run, solve(run));
    auto f = [&](double e) { return div::log_theta(e, mu) - target; };
    return num::smallest_meeting(f, 0.0, 1.0, 1e4).value_or(kInf);
  }

  std::vector<Detail> details(const Run& run, const Query& query) const override {
    if (run.sampling == Sampling::fixed) {
      // The candidate that certifies the reported value, and the split it uses.
      const auto b = sgd_bound(run);
      const SgdParams q = sgd_params(run);
      std::vector<Detail> out{{"q", q.p}, {"noise_multiplier", q.z}};
      std::size_t arg = 0;
      double best = kInf;
      for (std::size_t i = 0; i < b->plds.size(); ++i) {
        const double v = query.delta ? b->plds[i].epsilon(*query.delta)
                                     : b->plds[i].log_delta(*query.epsilon);
        if (v < best) { best = v; arg = i; }
      }
      if (!b->plds.empty()) {
        out.push_back({"window", static_cast<double>(b->built[arg].nu)});
        out.push_back({"noise_split", b->built[arg].lambda});
      }
      return out;
    }
    const Setting st = setting(run);
    if (run.sampling == Sampling::shuffle) return shuffle_details(run, st, query);
    const Solution sol = solve(run);
    std::vector<Detail> out;
    out.push_back({"mu", round_up(mu_of(run, sol))});
    out.push_back({"contraction_factor", st.c});
    out.push_back({"sensitivity_over_noise", st.h / st.s});  // Delta/sigma = eta Delta / s
    out.push_back({"window", static_cast<double>(sol.window)});
    if (!st.full) {
      out.push_back({"batches_per_epoch", static_cast<double>(st.l)});
      out.push_back({"worst_position", static_cast<double>(sol.position)});
    }
    // The composition of the same steps, mu = sqrt(k) Delta/sigma: the lemma with a_k = s_k.
    out.push_back({"composition_mu",
                   round_up(std::sqrt(static_cast<double>(sol.sensitive)) * st.h / st.s)});
    return out;
  }

  std::string note(const Run& run) const override {
    if (run.sampling == Sampling::fixed) return {};
    if (setting(run).affine_on_grid)
      return "affine steps on the noise grid: the exact Gaussian value of affine steps is not derived for "
             "rounded noise (not Gaussian): the lemma's bound, with the roundings as shifts";
    if (run.sampling == Sampling::shuffle) {
      const std::string affine = setting(run).affine
                                     ? "affine steps (strong convexity = smoothness, no projection): each order's "
                                       "exact Gaussian value; "
                                     : "";
      if (run.order_known)
        return affine + "shuffled batches, order known: the worst position sequence (the record in the last "
                        "batch of every epoch)";
      if (shuffled_epoch(run).every_last > 0)
        return affine + "shuffled batches, add/remove with the partial last batch kept: the worst position "
                        "sequence (the position average is not derived here)";
      if (shuffle_bound(run)->earlier_epoch_classes > 0)
        return affine +
               "shuffled batches: delta averaged over the record's position in the last epoch and over "
               "the earlier epochs' batch types (read or not, or in the partial batch or not; each count "
               "at its worst arrangement) -- assumes a uniformly random permutation per epoch, kept "
               "secret (a known order: worst_case_*)";
      return affine +
             "shuffled batches: worst case over the earlier epochs (the record in their last "
             "batch), delta averaged over its position in the last epoch -- assumes a uniformly "
             "random permutation per epoch, kept secret (a known order: worst_case_*)";
    }
    if (setting(run).affine)
      return "affine steps (strong convexity = smoothness, no projection): the exact Gaussian "
             "value of the worst order";
    const Solution sol = solve(run);
    if (sol.closed_form) return "cyclic: closed form (Q2) at the last batch position";
    return {};
  }
};

}  // namespace

AnalysisPtr make_shifted_interpolation() { return std::make_shared<ShiftedInterpolation>(); }

}  // namespace hsdp::detail
