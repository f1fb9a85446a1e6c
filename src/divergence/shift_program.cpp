// The shifted-interpolation program (include/hsdp/divergence/shift_program.hpp).
#include "hsdp/divergence/shift_program.hpp"

#include <cmath>
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
