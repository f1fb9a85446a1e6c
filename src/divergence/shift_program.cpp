// The shifted-interpolation program (include/hsdp/divergence/shift_program.hpp).
#include "hsdp/divergence/shift_program.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <limits>
#include <vector>

#include "hsdp/errors.hpp"

namespace hsdp::div {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void check_c(double c) {
  if (std::isnan(c) || c < 0.0 || c > 1.0) fail("c", c, "in [0, 1] (a contraction factor)");
}

/// 1 - c^k for c in [0, 1) without cancellation near c = 1.
double one_minus_power(double c, double k) {
  if (c == 0.0) return k > 0 ? 1.0 : 0.0;
  return -std::expm1(k * std::log(c));
}

}  // namespace

double shift_energy(double c, double initial_gap, std::span<const double> shifts) {
  check_c(c);
  if (std::isnan(initial_gap) || initial_gap < 0) fail("initial_gap", initial_gap, ">= 0");
  const std::size_t S = shifts.size();
  if (S == 0) return initial_gap > 0 ? kInf : 0.0;  // nothing can close a gap in 0 steps
  // Discounted units: with p_k = c^{S-k}, the gap at the end is
  //   b_S = p_0 b_0 + sum_k p_k (s_k - a_k),
  // and b_k >= 0 for every k is sum_{j<=k} p_j a_j <= p_0 b_0 + sum_{j<=k} p_j s_j (times
  // c^{S-k} > 0). With y_k = p_k a_k the objective is sum y_k^2 / p_k^2: weights w_k = p_k^2.
  // Points (W_k, U_k): W_k = sum_{j<=k} w_j, U_k = p_0 b_0 + sum_{j<=k} p_j s_j; the
  // cumulative Y (Y_0 = 0) must stay <= U_k and end at U_S, and minimises
  // sum (dY)^2 / dW: the greatest convex minorant of {(0, 0)} u {(W_k, U_k)}.
  std::vector<long double> p(S + 1);
  p[S] = 1.0L;
  for (std::size_t k = S; k > 0; --k) p[k - 1] = p[k] * static_cast<long double>(c);
  std::vector<long double> W(S + 1), U(S + 1);
  W[0] = 0.0L;
  U[0] = 0.0L;  // the cumulative removed shift starts at 0
  long double w = 0.0L, u = p[0] * static_cast<long double>(initial_gap);
  for (std::size_t k = 1; k <= S; ++k) {
    const double s = shifts[k - 1];
    if (std::isnan(s) || s < 0) fail("shift", s, ">= 0");
    w += p[k] * p[k];
    u += p[k] * static_cast<long double>(s);
    W[k] = w;
    U[k] = u;
  }
  // Lower convex hull (Andrew's monotone chain) of the points, W non-decreasing.
  std::vector<std::size_t> hull;
  hull.reserve(S + 1);
  for (std::size_t k = 0; k <= S; ++k) {
    if (!hull.empty() && W[k] == W[hull.back()]) {
      // Same abscissa (a weight that underflowed): keep the lower point. U is
      // non-decreasing, so the earlier one.
      continue;
    }
    while (hull.size() >= 2) {
      const std::size_t i = hull[hull.size() - 2], j = hull.back();
      // Remove j when it lies on or above the segment i -> k.
      const long double cross = (W[j] - W[i]) * (U[k] - U[i]) - (U[j] - U[i]) * (W[k] - W[i]);
      if (cross <= 0.0L) hull.pop_back();
      else break;
    }
    hull.push_back(k);
  }
  if (hull.back() != S) {
    // The last point shares its abscissa with an earlier one: impossible for w_S = 1 > 0.
    return kInf;
  }
  long double energy = 0.0L;
  for (std::size_t h = 1; h < hull.size(); ++h) {
    const long double rise = U[hull[h]] - U[hull[h - 1]];
    const long double run = W[hull[h]] - W[hull[h - 1]];
    energy += rise * rise / run;
  }
  // The long-double sums carry ~1e-19 relative error per term; one ulp up covers the
  // conversion to double.
  return std::nextafter(static_cast<double>(energy), kInf);
}

double shift_energy_uniform(double c, double h, std::int64_t t) {
  check_c(c);
  if (t < 1) fail("t", static_cast<double>(t), ">= 1");
  const double td = static_cast<double>(t);
  if (c == 1.0) return h * h * td;
  // (1 + c)(1 - c^t) / ((1 - c)(1 + c^t)); 1 - c^t without cancellation.
  const double one_minus_ct = one_minus_power(c, td);
  return h * h * (1.0 + c) * one_minus_ct / ((1.0 - c) * (2.0 - one_minus_ct));
}

double shift_energy_uniform_from_gap(double c, double h, double D, std::int64_t S) {
  check_c(c);
  if (S < 1) fail("S", static_cast<double>(S), ">= 1");
  const double sd = static_cast<double>(S);
  if (c == 1.0) return (D + sd * h) * (D + sd * h) / sd;
  const double one_minus_cs = one_minus_power(c, sd);
  const double reach = (1.0 - one_minus_cs) * D + h * one_minus_cs / (1.0 - c);
  // sum_{i<S} c^{2i} = (1 - c^{2S}) / (1 - c^2)
  const double weights = one_minus_power(c, 2.0 * sd) / ((1.0 - c) * (1.0 + c));
  return reach * reach / weights;
}

double shift_energy_cyclic_last(double c, double h, std::int64_t l, std::int64_t E) {
  check_c(c);
  if (l < 1) fail("l", static_cast<double>(l), ">= 1");
  if (E < 1) fail("E", static_cast<double>(E), ">= 1");
  const double ld = static_cast<double>(l), ed = static_cast<double>(E);
  if (c == 1.0) return h * h * (1.0 + (ed - 1.0) / ld);
  if (c == 0.0) return h * h;  // only the last step's shift counts
  const double one_minus_q = one_minus_power(c, ld * (ed - 1.0));
  const double one_minus_cl = one_minus_power(c, ld);
  const double c2l2 = std::exp((2.0 * ld - 2.0) * std::log(c));
  return h * h *
         (1.0 + c2l2 * (1.0 - c) * (1.0 + c) * one_minus_q /
                    (one_minus_cl * one_minus_cl * (2.0 - one_minus_q)));
}

}  // namespace hsdp::div

namespace hsdp::div {

namespace {

/// The points of the program for epoch-structured shifts, with exact differences: U_k and
/// W_k are never formed and subtracted; the rise and the run between two points are
/// summed directly (geometric sums), so no cancellation enters the energy. Two chains: epochs
/// 1..J1 shift by h1 at their last step, epochs J1+1..J1+J2 by h2 (one chain: J1 = 0).
class EpochShifts {
 public:
  EpochShifts(double c, std::int64_t l, std::int64_t J1, double h1, std::int64_t J2, double h2,
              std::int64_t r, std::optional<std::int64_t> final_position, double final_shift, double gap)
      : c_(c), h1_(h1), h2_(h2), h_final_(final_shift), gap_(gap), l_(l), J1_(J1), J_(J1 + J2),
        S_((J1 + J2) * l + r),
        final_(final_position ? std::optional<std::int64_t>((J1 + J2) * l + *final_position) : std::nullopt),
        lc_(c < 1.0 ? std::log(static_cast<long double>(c)) : 0.0L) {}

  std::int64_t steps() const { return S_; }
  std::optional<std::int64_t> final_step() const { return final_; }

  /// c^x for x >= 0 (1 at c = 1).
  long double power(long double x) const { return c_ == 1.0 ? 1.0L : std::exp(x * lc_); }
  /// sum_{m=0}^{n-1} c^{m step}
  long double geometric(std::int64_t n, std::int64_t step) const {
    if (n <= 0) return 0.0L;
    if (c_ == 1.0) return static_cast<long double>(n);
    const long double nl = static_cast<long double>(n), sl = static_cast<long double>(step);
    return std::expm1(nl * sl * lc_) / std::expm1(sl * lc_);
  }
  /// W_b - W_a = sum_{i=a+1}^{b} c^{2(S-i)} = c^{2(S-b)} sum_{m<b-a} c^{2m}.
  long double run(std::int64_t a, std::int64_t b) const {
    return power(2.0L * static_cast<long double>(S_ - b)) * geometric(b - a, 2);
  }
  /// U_b - U_a: the discounted shifts (c^{S-i} s_i) of the steps a+1..b, the initial gap
  /// counting as a shift of c b_0 at step 1.
  long double rise(std::int64_t a, std::int64_t b) const {
    long double sum = 0.0L;
    const long double S = static_cast<long double>(S_);
    if (a == 0 && b >= 1) sum += power(S) * static_cast<long double>(gap_);
    const std::int64_t lo = a / l_ + 1, hi = std::min(J_, b / l_);
    // Epochs lo..hi shift at their last step: those <= J1 by h1, the rest by h2.
    auto chain = [&](std::int64_t from, std::int64_t to, double h) {
      if (to >= from && h > 0)
        sum += static_cast<long double>(h) * power(S - static_cast<long double>(to * l_)) *
               geometric(to - from + 1, l_);
    };
    chain(lo, std::min(hi, J1_), h1_);
    chain(std::max(lo, J1_ + 1), hi, h2_);
    if (final_ && a < *final_ && *final_ <= b)
      sum += static_cast<long double>(h_final_) * power(S - static_cast<long double>(*final_));
    return sum;
  }

 private:
  double c_, h1_, h2_, h_final_, gap_;
  std::int64_t l_, J1_, J_, S_;
  std::optional<std::int64_t> final_;
  long double lc_;
};

void check_epochs(double c, std::int64_t l, std::int64_t J1, double h1, std::int64_t J2, double h2,
                  std::int64_t r, std::optional<std::int64_t> final_position, double final_shift) {
  check_c(c);
  if (std::isnan(final_shift) || final_shift < 0) fail("final_shift", final_shift, ">= 0");
  if (std::isnan(h1) || h1 < 0) fail("h1", h1, ">= 0");
  if (std::isnan(h2) || h2 < 0) fail("h", h2, ">= 0");
  if (l < 1) fail("l", static_cast<double>(l), ">= 1");
  if (J1 < 0) fail("J1", static_cast<double>(J1), ">= 0");
  if (J2 < 0) fail("J", static_cast<double>(J2), ">= 0");
  if (r < 1 || r > l) fail("r", static_cast<double>(r), fmt::format("in [1, l = {}]", l));
  if (final_position && (*final_position < 1 || *final_position > r))
    fail("final_position", static_cast<double>(*final_position), fmt::format("in [1, r = {}]", r));
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  if (J1 > kMax - J2 || J1 + J2 > (kMax - r) / l)
    fail("J", static_cast<double>(J2), "such that (J1 + J) l + r fits in 64 bits");
}

}  // namespace

double shift_energy_epochs(double c, double h, std::int64_t l, std::int64_t J, std::int64_t r,
                           std::optional<std::int64_t> final_position, double initial_gap) {
  return shift_energy_epochs(c, h, l, J, r, final_position, h, initial_gap);
}

double shift_energy_epochs(double c, double h, std::int64_t l, std::int64_t J, std::int64_t r,
                           std::optional<std::int64_t> final_position, double final_shift,
                           double initial_gap) {
  return shift_energy_two_chains(c, l, 0, 0.0, J, h, r, final_position, final_shift, initial_gap);
}

double shift_energy_two_chains(double c, std::int64_t l, std::int64_t J1, double h1, std::int64_t J2,
                               double h2, std::int64_t r, std::optional<std::int64_t> final_position,
                               double final_shift, double initial_gap) {
  check_epochs(c, l, J1, h1, J2, h2, r, final_position, final_shift);
  if (std::isnan(initial_gap) || initial_gap < 0) fail("initial_gap", initial_gap, ">= 0");
  if (c == 0.0) {
    // Every gap is wiped by the next step: only a shift at the last step must be removed.
    const bool last = final_position && *final_position == r;
    return last ? final_shift * final_shift : 0.0;
  }
  const EpochShifts sh(c, l, J1, h1, J2, h2, r, final_position, final_shift, initial_gap);
  const std::int64_t S = sh.steps(), J = J1 + J2;
  // Candidate vertices (indices into 0..S): the origin, the end, the point before the final
  // shift, and for each chain the points before its first, second, next-to-last and last
  // shift. Inside a chain the points before the shifts are concave (equal shifts, discounted
  // rise per discounted weight falling towards the end): an interior point lies above the
  // chord of its neighbours and is no vertex of the minorant.
  std::vector<std::int64_t> idx{0, S};
  auto chain_ends = [&](std::int64_t first, std::int64_t last) {
    if (last < first) return;
    for (std::int64_t e : {first, first + 1, last - 1, last})
      if (e >= first && e <= last) idx.push_back(e * l - 1);
  };
  chain_ends(1, J1);
  chain_ends(J1 + 1, J);
  if (sh.final_step()) idx.push_back(*sh.final_step() - 1);
  std::sort(idx.begin(), idx.end());
  idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
  // Lower convex hull; cross products on directly summed differences.
  std::vector<std::int64_t> hull;
  for (const std::int64_t k : idx) {
    if (!hull.empty() && k != S && sh.run(hull.back(), k) == 0.0L) continue;  // same abscissa
    while (hull.size() >= 2) {
      const std::int64_t i = hull[hull.size() - 2], j = hull.back();
      const long double cross = sh.run(i, j) * sh.rise(i, k) - sh.rise(i, j) * sh.run(i, k);
      if (cross <= 0.0L) hull.pop_back();
      else break;
    }
    hull.push_back(k);
  }
  long double energy = 0.0L;
  for (std::size_t e = 1; e < hull.size(); ++e) {
    const long double rise = sh.rise(hull[e - 1], hull[e]);
    if (rise > 0.0L) energy += rise * rise / sh.run(hull[e - 1], hull[e]);
  }
  // The geometric sums carry a few long-double ulps each; 1e-12 relative covers them.
  return std::nextafter(static_cast<double>(energy * (1.0L + 1e-12L)), kInf);
}

// ---- Affine steps (docs/analyses/shifted-interpolation.md, "Affine steps"): the squared mean
// gap of the two Gaussian last iterates over their common variance, in units of s^2.

double shift_energy_affine(double c, std::span<const double> shifts) {
  check_c(c);
  const std::size_t S = shifts.size();
  if (S == 0) return 0.0;
  long double p = 1.0L, gap = 0.0L, weights = 0.0L;
  // From the last step backwards: p = c^{S-k}.
  for (std::size_t k = S; k > 0; --k) {
    const double s = shifts[k - 1];
    if (std::isnan(s) || s < 0) fail("shift", s, ">= 0");
    gap += p * static_cast<long double>(s);
    weights += p * p;
    p *= static_cast<long double>(c);
  }
  // weights >= 1 (the last step's own noise); the long-double sums carry ~S ulps.
  return std::nextafter(static_cast<double>(gap * gap / weights * (1.0L + 1e-12L)), kInf);
}

double shift_energy_epochs_affine(double c, double h, std::int64_t l, std::int64_t J, std::int64_t r,
                                  std::optional<std::int64_t> final_position, double final_shift) {
  return shift_energy_two_chains_affine(c, l, 0, 0.0, J, h, r, final_position, final_shift);
}

double shift_energy_two_chains_affine(double c, std::int64_t l, std::int64_t J1, double h1, std::int64_t J2,
                                      double h2, std::int64_t r, std::optional<std::int64_t> final_position,
                                      double final_shift) {
  check_epochs(c, l, J1, h1, J2, h2, r, final_position, final_shift);
  if (c == 0.0) {
    // Only the last step's shift reaches W_S; its own noise is the whole variance.
    const bool last = final_position && *final_position == r;
    return last ? final_shift * final_shift : 0.0;
  }
  const EpochShifts sh(c, l, J1, h1, J2, h2, r, final_position, final_shift, 0.0);
  const long double gap = sh.rise(0, sh.steps()), weights = sh.run(0, sh.steps());
  return std::nextafter(static_cast<double>(gap * gap / weights * (1.0L + 1e-12L)), kInf);
}

double shift_energy_cyclic_affine(double c, double h, std::int64_t l, std::int64_t S) {
  check_c(c);
  if (std::isnan(h) || h < 0) fail("h", h, ">= 0");
  if (l < 1) fail("l", static_cast<double>(l), ">= 1");
  if (S < 1) fail("S", static_cast<double>(S), ">= 1");
  if (c == 0.0) return h * h;
  if (S > std::numeric_limits<std::int64_t>::max() - l)
    fail("S", static_cast<double>(S), "such that S + l fits in 64 bits");
  // Reads at S, S - l, ..., S - (N - 1) l >= 1. The mean gap only sees the reads: the same
  // discounted sum as N epochs of l steps with a shift at the last step of each (EpochShifts
  // with J = N - 1, r = l, the final shift at l); the variance counts all S steps.
  const std::int64_t N = (S - 1) / l + 1;
  const EpochShifts sh(c, l, 0, 0.0, N - 1, h, l, std::optional<std::int64_t>(l), h, 0.0);
  const long double gap = sh.rise(0, sh.steps());
  // sum_{i<S} c^{2i}
  const long double weights = sh.geometric(S, 2);
  return std::nextafter(static_cast<double>(gap * gap / weights * (1.0L + 1e-12L)), kInf);
}

}  // namespace hsdp::div
