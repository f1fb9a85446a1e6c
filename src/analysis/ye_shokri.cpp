// ye-shokri: the Rényi-DP bound of Ye & Shokri, "Differentially private learning needs hidden
// state (or much faster convergence)", NeurIPS 2022 (arXiv 2203.05363), for noisy mini-batch
// gradient descent with "shuffle and partition" batches on strongly convex smooth losses, as
// the authors evaluate it (privacytrustlab/dp_dynamics, dp_utils.py: first_epoch_guarantee,
// shuffle_guarantee, priv_dynamics_guarantees). Kind COMPARISON: printed next to the other
// analyses, never best, never calibrated for -- for two or more epochs its earlier-epochs term
// is not derived in docs/analyses/ye-shokri.md (the theorem's proof was not available; the
// derivation and the numerical checks that were done are there).
//
// The run, in hsdp terms: each epoch a fresh data-independent permutation cut into
// m = floor(n/b) batches of b (the n - m b records left over sit the epoch out, as a loader
// with drop_last), W_{k+1} = W_k - eta g_{B_k}(W_k) + Z_k, Z_k ~ N(0, s^2 I) (s = noise_std),
// replace-one. One step that reads the record moves the update by at most
// eta Delta = 2 eta L / b; in the paper's DP-SGD units (noise std z L on the batch SUM of
// per-example gradients of norm <= L, then divided by b) one step is (alpha, 2 alpha / z^2)-RDP
// with 2/z = (2 eta L / b) / s, i.e. z = s b / (eta L). The gradient step is c-Lipschitz with
// c = max(|1 - eta lambda|, |1 - eta beta|) (= 1 - eta lambda, the paper's c, exactly when
// eta <= 2/(lambda + beta)); the formula is non-decreasing in c, so the larger of the two is
// the conservative choice. With e1(j) = c^{2(j-1)} (1 - c^2) / (1 - c^{2j}) (one read followed
// by j - 1 noisy contractions; exact for the 1-D linear instance), h = floor(m/2), K epochs:
//
//   eps(alpha) = (2 alpha/z^2) e1(h) (1 - c^{2(m-h)(K-1)}) / (1 - c^{2(m-h)})     [earlier epochs]
//              + 1/(alpha-1) log( (1/m) sum_{j=1..m} exp((alpha-1) (2 alpha/z^2) e1(j)) )  [last]
//
// The last-epoch term is the Rényi divergence of the mixture over the record's hidden
// position (joint convexity of exp((alpha-1) D_alpha)); for K = 1 it is the whole bound and is
// derived (docs). A single partial epoch (steps = r < m) reads the record only if its position
// is among the first r: the terms j = 1..r, and exp(0) for the m - r positions never read.
// Several epochs need whole epochs (steps a multiple of m): the formula is stated for them.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hsdp/analysis/rdp_analysis.hpp"
#include "hsdp/divergence/rdp.hpp"
#include "hsdp/errors.hpp"
#include "registry.hpp"

namespace hsdp::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Positions j summed term by term; beyond, blocks of geometrically growing length, each
// bounded by its first (largest) term: the sum is an upper bound in O(log m) terms.
constexpr std::int64_t kExactTerms = 4096;
constexpr double kBlockGrowth = 1.02;

struct Params {
  double z = 0;          // noise multiplier: std of the noise on the batch SUM over L
  double c = 0;          // contraction factor of the gradient step, in (0, 1)
  double log_c = 0;      // log c (< 0)
  std::int64_t m = 1;    // batches per epoch, floor(n/b)
  std::int64_t h = 0;    // floor(m/2)
  std::int64_t K = 1;    // epochs
  std::int64_t r = 1;    // steps of the last epoch (m, or steps < m for a single partial epoch)
  std::int64_t T = 1;    // steps
  double slack = 0;      // noise grid: extra shift per step over s (0 without a grid)
};

Params params(const Run& run) {
  Params p;
  const double eta = run.eta.at(1), L = *run.loss.lipschitz, b = static_cast<double>(run.batch_size);
  p.z = run.noise_std.at(1) * b / (eta * L);
  const double lambda = run.loss.strong_convexity, beta = *run.loss.smoothness;
  const double c = std::max(std::abs(1.0 - eta * lambda), std::abs(1.0 - eta * beta));
  // One ulp up: a contraction factor below the true one would understate the bound (and c = 0,
  // eta lambda = eta beta = 1, becomes the smallest positive double: log c stays finite).
  p.c = std::nextafter(c, 2.0);
  // c just below 1 (eta lambda ~ 1e-16) rounds to 1, where e1 would read 0/0: step past it (the
  // formula is non-decreasing in c, and finite above 1: e1(j) = 1 / sum_{i<j} c^{-2i}).
  if (p.c == 1.0) p.c = std::nextafter(1.0, 2.0);
  p.log_c = std::log(p.c);
  p.m = run.n / run.batch_size;
  p.h = p.m / 2;
  p.K = run.steps <= p.m ? 1 : run.steps / p.m;
  p.r = run.steps <= p.m ? run.steps : p.m;
  p.T = run.steps;
  if (run.grid) p.slack = run.grid->slack;
  return p;
}

/// e1(j) = c^{2(j-1)} (1 - c^2) / (1 - c^{2j}) for j >= 1, written with expm1 so that c near 1
/// (eta lambda tiny) keeps its digits (the limit is 1/j).
double e1(const Params& p, std::int64_t j) {
  const double jd = static_cast<double>(j);
  return std::exp(2.0 * (jd - 1.0) * p.log_c) * (std::expm1(2.0 * p.log_c) / std::expm1(2.0 * jd * p.log_c));
}

/// (1 - c^{2(m-h)(K-1)}) / (1 - c^{2(m-h)}): the geometric sum over the K - 1 earlier epochs
/// (K - 1 in the limit c -> 1).
double earlier_sum(const Params& p) {
  if (p.K <= 1) return 0.0;
  const double g = 2.0 * static_cast<double>(p.m - p.h) * p.log_c;
  return std::expm1(g * static_cast<double>(p.K - 1)) / std::expm1(g);
}

/// The RDP of one read followed by j - 1 noisy contractions, over alpha, for a read whose shifted-
/// Renyi energy is `energy` (in units of the per-step ratio (2/z)^2: e1(j), or the earlier epochs'
/// sum) over `steps` noisy steps: (2/z^2) energy. Noise on a grid (docs/security.md, "ye-shokri
/// on the grid"): each of the steps adds a shift slack s, absorbed where it arises; by Minkowski
/// (1/2) ((2/z) sqrt(energy) + slack sqrt(steps))^2.
double per_alpha(const Params& p, double energy, std::int64_t steps) {
  if (p.slack == 0.0) return 2.0 * energy / (p.z * p.z);
  const double r = 2.0 / p.z * std::sqrt(energy) + p.slack * std::sqrt(static_cast<double>(steps));
  return 0.5 * r * r;
}

/// The earlier-epochs term at order alpha (0 for one epoch).
double earlier_term(const Params& p, double alpha) {
  if (p.K <= 1) return 0.0;
  return alpha * per_alpha(p, e1(p, p.h) * earlier_sum(p), p.T);
}

/// Visits the positions j = 1..r as (j, count): every j up to kExactTerms, then blocks
/// [j, j + count) of geometrically growing length; `f` is given the block's first position.
template <typename F>
void for_blocks(std::int64_t r, F&& f) {
  std::int64_t j = 1;
  for (; j <= std::min(r, kExactTerms); ++j) f(j, std::int64_t{1});
  while (j <= r) {
    const auto grow = static_cast<std::int64_t>(static_cast<double>(j) * (kBlockGrowth - 1.0));
    const auto len = std::min<std::int64_t>(r - j + 1, std::max<std::int64_t>(1, grow));
    f(j, len);
    j += len;
  }
}

/// The last-epoch term at order alpha = 1 + u: 1/u log( (1/m) [sum_{j<=r} exp(u R e1(j)) + (m - r)] ),
/// R = 2 alpha / z^2; an upper bound (blocks bounded by their largest term, e1 decreasing in j).
/// Near alpha = 1 through log1p of the mean of expm1 (no cancellation); otherwise with the
/// largest exponent factored out (no overflow). +inf when the exponent is.
double last_term(const Params& p, double alpha) {
  const double u = alpha - 1.0;
  // A block [j, j + len) is bounded by its largest term: e1 decreases in j, the grid's shift term
  // grows with the number of steps j + len - 1.
  auto R = [&](std::int64_t j, std::int64_t len) { return alpha * per_alpha(p, e1(p, j), j + len - 1); };
  double top = 0.0;  // the largest exponent over u
  for_blocks(p.r, [&](std::int64_t j, std::int64_t len) { top = std::max(top, R(j, len)); });
  if (!std::isfinite(u * top)) return kInf;
  const double m = static_cast<double>(p.m);
  double sum = 0.0;
  if (u * top <= 1.0) {
    for_blocks(p.r, [&](std::int64_t j, std::int64_t len) {
      sum += static_cast<double>(len) * std::expm1(u * R(j, len));
    });
    return std::log1p(sum / m) / u;
  }
  for_blocks(p.r, [&](std::int64_t j, std::int64_t len) {
    sum += static_cast<double>(len) * std::exp(u * (R(j, len) - top));
  });
  sum += static_cast<double>(p.m - p.r) * std::exp(-u * top);
  return top + std::log(sum / m) / u;
}

double ye_shokri_rdp(const Params& p, double alpha) {
  const double last = last_term(p, alpha);
  if (std::isinf(last)) return kInf;
  return earlier_term(p, alpha) + last;
}

class YeShokri final : public RdpAnalysis {
 public:
  std::string_view name() const override { return "ye-shokri"; }
  std::string_view citation() const override {
    return "Ye, Shokri 2022 (NeurIPS, arXiv 2203.05363), shuffle-and-partition noisy mini-batch GD, "
           "strongly convex smooth loss, as evaluated in privacytrustlab/dp_dynamics dp_utils.py; "
           "converted by CKS 2020 Prop. 12 and journal (23)";
  }
  BoundKind kind() const override { return BoundKind::comparison; }
  // Noise on a grid: each read's shifted-Renyi energy plus the steps' slack (per_alpha).
  bool charges_grid() const override { return true; }

  std::optional<std::string> check(const Run& run) const override {
    if (run.release != Release::last)
      return fmt::format("bounds the last iterate only; release = {}", to_string(run.release));
    if (run.noise != NoiseKind::gaussian)
      return fmt::format("needs Gaussian noise ({})", report_field("noise", "gaussian"));
    if (run.adjacency != Adjacency::replace)
      return std::string("stated for replace-one neighbours (one step is (alpha, 2 alpha/z^2)-RDP)");
    if (run.sampling != Sampling::shuffle)
      return fmt::format(
          "stated for shuffle-and-partition batches (a fresh permutation each epoch, cut into n/b "
          "batches); sampling = {}",
          to_string(run.sampling));
    if (run.partial_batch() > 0)
      return std::string(
          "stated for m = floor(n/b) batches per epoch (the loader drops the partial last batch); "
          "drop_last = false keeps a batch of n mod b");
    if (run.order_known)
      return std::string(
          "averages over the record's position in the epoch, which needs the permutation hidden; "
          "the batch order is known (order_known)");
    if (!run.loss.lipschitz)
      return fmt::format("needs the Lipschitz constant L of the loss ({})", report_field("lipschitz"));
    if (!run.loss.convex || !run.loss.smoothness)
      return fmt::format(
          "needs a convex, beta-smooth loss ({}): the contraction of the gradient step",
          report_field("smoothness"));
    if (!(run.loss.strong_convexity > 0))
      return fmt::format("needs a strongly convex loss ({} > 0): the bound contracts with 1 - eta lambda",
                         report_field("strong_convexity"));
    if (run.clip && *run.clip < *run.loss.lipschitz)
      return fmt::format(
          "per-example clipping at C = {} < L = {} changes the update into one that is not a "
          "gradient step of a strongly convex smooth loss, which the contraction needs",
          *run.clip, *run.loss.lipschitz);
    if (!run.eta.is_constant() || !run.noise_std.is_constant())
      return std::string("stated for a constant step size and noise");
    const double eta = run.eta.at(1), beta = *run.loss.smoothness;
    if (run.loss.strong_convexity > beta)
      return fmt::format("strong convexity {} exceeds the smoothness {}", run.loss.strong_convexity, beta);
    if (!(eta < 2.0 / beta))
      return fmt::format(
          "eta = {} must be below 2/beta = {}: the gradient step must contract (c < 1)", eta, 2.0 / beta);
    const std::int64_t m = run.n / run.batch_size;
    if (run.steps > m) {
      if (m < 2)
        return fmt::format(
            "needs at least 2 batches per epoch for several epochs (h = floor(m/2) >= 1); "
            "m = floor(n/b) = {}",
            m);
      if (run.steps % m != 0)
        return fmt::format(
            "stated for whole epochs: steps = {} is not a multiple of the {} batches per epoch "
            "(floor(n/b)); its earlier-epochs term is not derived for a partial last epoch",
            run.steps, m);
    }
    return std::nullopt;
  }

  double rdp(const Run& run, double alpha) const override { return ye_shokri_rdp(params(run), alpha); }

  std::vector<Detail> details(const Run& run, const Query& query) const override {
    const Params p = params(run);
    std::vector<Detail> out{{"noise_multiplier", p.z},
                            {"contraction_factor", p.c},
                            {"batches_per_epoch", static_cast<double>(p.m)},
                            {"epochs", static_cast<double>(p.K)}};
    const auto c = curve(run);
    const auto r = query.delta ? div::best_epsilon(c, *query.delta) : div::best_log_delta(c, *query.epsilon);
    if (!std::isnan(r.alpha)) {
      out.push_back({"alpha", r.alpha});
      out.push_back({"earlier_epochs", round_up(earlier_term(p, r.alpha))});
      out.push_back({"last_epoch", round_up(last_term(p, r.alpha))});
    }
    return out;
  }

  std::string note(const Run& run) const override {
    if (params(run).K == 1)
      return "one epoch: the mixture over the hidden batch position, derived in "
             "docs/analyses/ye-shokri.md";
    return "the earlier-epochs term is the paper's and is not derived here "
           "(docs/analyses/ye-shokri.md)";
  }
};

}  // namespace

AnalysisPtr make_ye_shokri() { return std::make_shared<YeShokri>(); }

}  // namespace hsdp::detail
