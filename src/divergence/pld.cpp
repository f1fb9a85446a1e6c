// Privacy loss distributions: see include/hsdp/divergence/pld.hpp and docs/pld.md.
//
// Error accounting (every term is added to delta, never subtracted):
//  * connect-the-dots (Doroshenko et al. 2022): the profile of the stored law is the chord
//    of the true profile (in e^eps) between knots: an upper bound, no error term;
//  * floating point in the discretisation: a cell's P- and Q-masses are differences of
//    normal tails, each with relative error <= kTailRel (num::q is ~1e-15, docs/numerics.md);
//    the cell sum telescopes at every eps, so the error of the profile at x is a few
//    kTailRel times the tail P(L > x - w) at the knot below x (w the cell width), not a sum
//    over cells: PrivacyLoss::rel_slack_ (what clamping moved, and the cells wider than 4h,
//    which lie where the tail is < 1e-10, are absolute: slack_);
//  * composition: a perturbation of one factor by a signed measure whose profile effect
//    is <= e(x) at every x changes the composed profile at eps by <= E[e(eps - S')] over the
//    other factors' sum S' (mass of the others <= 1): absolute bounds add (times the counts),
//    and a bound c P(L > x - w) becomes c P(L + S' > eps - w) <= c delta(eps - w - t) /
//    (1 - e^{-t}) of the composition, for every t > 0 (error_bound(eps));
//  * FFT round-off: Higham, Accuracy and Stability of Numerical Algorithms (2nd ed.),
//    ch. 24: each output of a radix-2 transform is within log2(N) eta ||x||_1 with eta ~ 5
//    eps_mach; we use eta = 8 eps_mach. Powers z^n by repeated squaring: relative error <=
//    3 n eps_mach. Propagated through the product of transforms and the inverse, and to the
//    profile by ||.||_1 <= sqrt(N) ||.||_2; where the result is large (long sequences) the
//    dominant frequencies are recomputed with a bound relative to their distance from 1
//    (Composer::recompute_low_frequencies);
//  * wrap-around of the circular convolution: a sum of losses above the window lands
//    inside it at a smaller loss; its mass is bounded by a Chernoff bound from the pieces'
//    own moment generating functions and added. Sums below the window land at larger losses
//    (pessimistic, nothing to add).
#include "hsdp/divergence/pld.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/special_functions/erf.hpp>
#include <cmath>
#include <complex>
#include <limits>
#include <map>
#include <memory>
#include <numbers>
#include <optional>
#include <stdexcept>

#include "../numerics/real_fft.hpp"  // ComplexFft, fft_good_size
#include "hsdp/divergence/hockey_stick.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/numerics/log_normal.hpp"
#include "hsdp/numerics/root.hpp"

namespace hsdp::div {

namespace {

// Sums of grid offsets times counts up to 10^18 need more than 64 bits.
__extension__ typedef __int128 i128;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kEps = std::numeric_limits<double>::epsilon();
// Relative error of a normal tail from num::q, with margin (test_numerics measures ~1e-15).
constexpr double kTailRel = 4e-15;
// Mass trimmed from the ends of a stored law after a composition (moved to +inf at the top,
// pushed up at the bottom: both pessimistic).
constexpr double kTrimMass = 1e-300;
// log of a spectral magnitude treated as 0 (its contribution is bounded by 1e-300 instead).
constexpr double kNegligibleLog = -690.0;

double log_expm1(double t) {  // log(e^t - 1), t > 0
  return t > 30.0 ? t + std::log1p(-std::exp(-t)) : std::log(std::expm1(t));
}

// ------------------------------------------------------------------ loss laws
// The law of the privacy loss L of an ordered pair, through its four tails on the loss
// axis: tp = P(L > l), hp = P(L <= l), tq, hq the same under Q. A head is computed directly
// only where its tail is >= 1/4 (elsewhere 1 - tail; only the smaller side is ever used in
// a difference). ess_inf / ess_sup: the range of L under P (finite ends are grid ends).
struct Tails {
  double tp, hp, tq, hq;
};

struct LossLaw {
  std::function<Tails(double)> at;
  double ess_inf = -kInf, ess_sup = kInf;
  // log Q(L > l), for the cells where e^l Q(cell) is needed but Q's tail is below the
  // normal range of doubles (large losses: the Gaussian mechanism at mu > 37); optional.
  std::function<double(double)> log_tq;
};

struct Component {
  double weight, mean;
};

// P and Q mixtures of N(mean, s^2) whose loss is increasing in x, with x(l) the inverse:
// L(X) > l  <=>  X > x(l).
LossLaw normal_mixture_law(std::vector<Component> p, std::vector<Component> q, double s,
                           std::function<double(double)> x_of_loss, double ess_inf,
                           double ess_sup) {
  LossLaw law;
  law.ess_inf = ess_inf;
  law.ess_sup = ess_sup;
  // Each distinct mean's normal tail once, shared by P and Q (weights per mean).
  struct Mean {
    double mean, wp = 0, wq = 0;
  };
  std::vector<Mean> means;
  auto add = [&](const Component& c, bool is_p) {
    auto it = std::find_if(means.begin(), means.end(), [&](const Mean& m) { return m.mean == c.mean; });
    if (it == means.end()) it = means.insert(means.end(), Mean{c.mean});
    (is_p ? it->wp : it->wq) += c.weight;
  };
  for (const auto& c : p) add(c, true);
  for (const auto& c : q) add(c, false);
  law.log_tq = [=](double l) {
    if (l < ess_inf) return 0.0;
    if (l >= ess_sup) return -kInf;
    const double x = x_of_loss(l);
    double out = -kInf;
    for (const auto& m : means)
      if (m.wq > 0) out = num::logaddexp(out, std::log(m.wq) + num::log_q((x - m.mean) / s));
    return out;
  };
  law.at = [=](double l) {
    if (l < ess_inf) return Tails{1.0, 0.0, 1.0, 0.0};
    if (l >= ess_sup) return Tails{0.0, 1.0, 0.0, 1.0};
    const double x = x_of_loss(l);
    Tails t{0, 0, 0, 0};
    for (const auto& m : means) {
      const double tail = num::q((x - m.mean) / s);
      t.tp += m.wp * tail;
      t.tq += m.wq * tail;
    }
    const bool head_p = t.tp >= 0.25, head_q = t.tq >= 0.25;
    if (head_p || head_q)
      for (const auto& m : means) {
        const double head = num::q((m.mean - x) / s);
        t.hp += m.wp * head;
        t.hq += m.wq * head;
      }
    if (!head_p) t.hp = 1.0 - t.tp;
    if (!head_q) t.hq = 1.0 - t.tq;
    return t;
  };
  return law;
}

// A finite l with f(l) <= target, searched outward from 0 in `direction` by doubling, then refined
// by bisection (f monotone; tails of a law).
double tail_point(const std::function<double(double)>& f, double target, double direction,
                  double start = 0.0) {
  double near = start, step = direction, far = start + step;
  for (int i = 0; f(far) > target; ++i) {
    if (i > 1100) throw std::logic_error("pld: loss tail does not decay");
    near = far;
    step *= 2.0;
    far = start + step;
  }
  for (int i = 0; i < 60 && std::abs(far - near) > 1e-14 * std::abs(far); ++i) {
    const double mid = 0.5 * (near + far);
    (f(mid) > target ? near : far) = mid;
  }
  return far;
}

// The median of the loss under P (P(L > m) = 1/2, to ~1e-12 relative): where the law's bulk
// is, which need not be near 0 (the Gaussian mechanism's loss is N(mu^2/2, mu^2)).
double loss_median(const LossLaw& law) {
  auto above = [&](double l) { return law.at(l).tp; };
  double lo = 0.0, hi = 0.0;
  if (above(0.0) > 0.5) {
    hi = tail_point(above, 0.5, 1.0);
    lo = hi - 1.0;
    for (double step = 1.0; above(lo) <= 0.5; step *= 2) lo = hi - step;
  } else {
    lo = tail_point([&](double l) { return 1.0 - above(l); }, 0.5, -1.0);
    hi = lo + 1.0;
    for (double step = 1.0; above(hi) > 0.5; step *= 2) hi = lo + step;
  }
  for (int i = 0; i < 100 && hi - lo > 1e-12 * std::max(1.0, std::abs(hi)); ++i) {
    const double mid = 0.5 * (lo + hi);
    (above(mid) > 0.5 ? lo : hi) = mid;
  }
  return std::clamp(0.5 * (lo + hi), law.ess_inf, law.ess_sup);
}

void check_grid_size(double span, const PldOptions& o) {
  if (span / o.interval > static_cast<double>(o.max_length))
    fail("pld.interval", o.interval,
         fmt::format("coarse enough for the loss range {} to fit in pld.max_length = {} "
                     "points (use a larger interval)",
                     show(span), o.max_length));
}

// The two orders of the subsampled pair with shift c (one law each, shared by the
// one-order factories and the symmetrised one).
// "remove": P = (1-q) N(0, s^2) + q N(c, s^2), Q = N(0, s^2). L(x) = log(1 - q + q e^{(c x -
// c^2/2)/s^2}) >= log(1 - q), increasing in x; for l > log(1-q):
// x(l) = (s^2/c)[log(1-q) + log(expm1(l - log(1-q))) - log q] + c/2.
LossLaw remove_order_law(double q, double s, double c) {
  const double l1q = std::log1p(-q), lq = std::log(q);
  return normal_mixture_law(
      {{1.0 - q, 0.0}, {q, c}}, {{1.0, 0.0}}, s,
      [=](double l) { return (s * s / c) * (l1q + log_expm1(l - l1q) - lq) + 0.5 * c; }, l1q,
      std::numeric_limits<double>::infinity());
}

// "add", reflected x -> -x: P = N(0, s^2), Q = (1-q) N(0, s^2) + q N(-c, s^2), so that
// L(x) = -log(1 - q + q e^{(-c x - c^2/2)/s^2}) <= -log(1-q) is increasing; for
// l < -log(1-q): (-c x - c^2/2)/s^2 = G := log(1-q) + log(expm1(-l - log(1-q))) - log q.
LossLaw add_order_law(double q, double s, double c) {
  const double l1q = std::log1p(-q), lq = std::log(q);
  return normal_mixture_law(
      {{1.0, 0.0}}, {{1.0 - q, 0.0}, {q, -c}}, s,
      [=](double l) {
        const double g = l1q + log_expm1(-l - l1q) - lq;
        return -(s * s * g + 0.5 * c * c) / c;
      },
      -std::numeric_limits<double>::infinity(), -l1q);
}

}  // namespace

// ------------------------------------------------------------------ options

void validate(const PldOptions& o, const std::function<Param(std::string_view member)>& field) {
  auto name = [&](std::string_view member) {
    return field ? field(member) : Param(fmt::format("pld.{}", member));
  };
  // A stated grid is in [1e-6, 0.5]; the spacings compose_steps chooses for itself (and
  // passes to the factories) span whatever the losses need.
  if (o.fixed_interval) require_closed(name("interval"), o.interval, 1e-6, 0.5);
  else require_closed(name("interval"), o.interval, 1e-12, 1e6);
  require_closed(name("tail_mass"), o.tail_mass, 1e-300, 1e-6);
  require_closed(name("truncation_mass"), o.truncation_mass, 1e-300, 1e-6);
  require_range(name("max_length"), o.max_length, std::int64_t{1} << 10, std::int64_t{1} << 28);
  require_range(name("refinement"), o.refinement, 0, 64);
  require_range(name("block"), o.block, 0, 1000000);
  require_closed(name("cells"), o.cells, 1.0, 1000.0);
}

// ------------------------------------------------------------------ GDP helpers

double gdp_tradeoff(double alpha, double mu) {
  require_closed("alpha", alpha, 0.0, 1.0);
  if (std::isnan(mu) || mu < 0) fail("mu", mu, ">= 0");
  if (alpha == 0.0) return 1.0;
  if (alpha == 1.0) return 0.0;
  if (std::isinf(mu)) return 0.0;
  // Phi^{-1}(1 - alpha) = Q^{-1}(alpha) = sqrt(2) erfc^{-1}(2 alpha); G = Q(mu - Q^{-1}(alpha)).
  const double z = std::numbers::sqrt2 * boost::math::erfc_inv(2.0 * alpha);
  return num::q(mu - z);
}

double gdp_log_delta(double eps, double mu) {
  if (std::isnan(eps)) fail("epsilon", eps, "a number");
  if (std::isnan(mu) || mu < 0) fail("mu", mu, ">= 0");
  if (std::isinf(mu)) return 0.0;
  if (eps == kInf) return -kInf;
  if (eps >= 0) return log_theta(eps, mu);  // theta_{e^eps}(mu): journal Thm 1 = DRS Cor 2.13
  if (eps == -kInf) return 0.0;
  // eps < 0: H_{e^eps}(P||Q) = 1 - e^eps + e^eps H_{e^-eps}(Q||P) and the Gaussian pair is
  // symmetric.
  return num::logaddexp(num::log1mexp(eps), eps + log_theta(-eps, mu));
}

double gdp_delta(double eps, double mu) { return std::exp(gdp_log_delta(eps, mu)); }

double gdp_epsilon(double delta, double mu) {
  require_open("delta", delta, 0.0, 1.0);
  if (std::isnan(mu) || mu < 0) fail("mu", mu, ">= 0");
  if (std::isinf(mu)) return kInf;
  const double log_target = std::log(delta);
  auto f = [&](double e) { return gdp_log_delta(e, mu) - log_target; };
  if (f(0.0) <= 0) return 0.0;
  // delta(eps) <= Q(eps/mu - mu/2) <= exp(-(eps/mu - mu/2)^2 / 2): a bracket end that holds.
  double hi = mu * (0.5 * mu + std::sqrt(-2.0 * log_target)) + 1.0;
  while (f(hi) > 0) hi *= 2.0;
  return num::monotone_boundary(f, 0.0, hi, num::Holds::above);
}

// ------------------------------------------------------------------ discretisation

namespace {

// slack: absolute error bound of the profile; rel_slack, shift: the error bound relative to
// the law's own tail (PrivacyLoss::rel_slack_).
struct Discretised {
  std::int64_t offset;
  std::vector<double> pmf;
  double inf_mass;
  double slack;
  double rel_slack;
  double shift;
  double q_above = 0;  // Q-mass of the losses above the grid (discretise only)
};

// Connect-the-dots (Doroshenko et al. 2022, Alg. 1 in the form "split each cell's mass
// between its ends preserving P- and Q-mass"): for the cell (a, a + h], with P-mass m_P and
// Q-mass m_Q, the lower end gets m_lo = (e^a m_Q - e^{-h} m_P) / (1 - e^{-h}) and the upper
// end m_P - m_lo; then E_P[1] and E_P[e^{-L}] are unchanged and the profile is the chord.
Discretised discretise(const LossLaw& law, const PldOptions& o) {
  validate(o);
  const double h = o.interval;
  const double centre = loss_median(law);
  double lo = std::isfinite(law.ess_inf)
                  ? law.ess_inf
                  : tail_point([&](double l) { return law.at(l).hp; }, o.tail_mass, -1.0, centre);
  double hi = std::isfinite(law.ess_sup)
                  ? law.ess_sup
                  : tail_point([&](double l) { return law.at(l).tp; }, o.tail_mass, 1.0, centre);
  if (lo > hi) lo = hi;
  check_grid_size(hi - lo, o);
  const auto i_lo = static_cast<std::int64_t>(std::floor(lo / h));
  auto i_hi = static_cast<std::int64_t>(std::ceil(hi / h));
  if (i_hi == i_lo) ++i_hi;
  const std::size_t k = static_cast<std::size_t>(i_hi - i_lo) + 1;
  auto loss = [&](std::int64_t j) { return static_cast<double>(i_lo + j) * h; };
  struct Knot {
    std::int64_t j;
    double tp, hp, tq, hq;
  };
  auto knot = [&](std::int64_t j) {
    const Tails t = law.at(loss(j));
    return Knot{j, t.tp, t.hp, t.tq, t.hq};
  };
  // Knots: every grid point where the mass beyond the knot (the smaller side) is >= 1e-10;
  // beyond, a spacing of about |l - median| / (4 cells) (a power of 2 of grid points; at least 2 below
  // 1e-16 and 4 below 1e-20). Connect-the-dots is valid for any set of knots (the chord over a
  // longer cell is still above the convex profile); a coarse cell costs tightness in
  // proportion to its mass tilted by e^{lambda l} (large deviations of many steps weigh the
  // tails) and to its width relative to the losses it holds. Heavy-tailed steps (small q,
  // small noise: losses up to 10^4 stds of the bulk) keep a few hundred knots in their tails
  // instead of millions; measured on the cases and a randomized set (tests/
  // test_pld_accuracy.cpp), eps moves by < 1e-5 relative.
  const double per_grid_point = 1.0 / (4.0 * o.cells * h);
  auto stride = [&](const Knot& kn) -> std::int64_t {
    const double m = std::min(kn.tp, kn.hp);
    if (m >= 1e-10) return 1;
    std::int64_t s = m >= 1e-16 ? 1 : m >= 1e-20 ? 2 : 4;
    const double relative = std::abs(loss(kn.j) - centre) * per_grid_point;
    while (s < (std::int64_t{1} << 20) && 2.0 * static_cast<double>(s) <= relative) s *= 2;
    return s;
  };
  Discretised d;
  d.offset = i_lo;
  d.pmf.assign(k, 0.0);
  const std::int64_t last = static_cast<std::int64_t>(k) - 1;
  Knot cur = knot(0);
  d.pmf[0] = cur.hp;  // mass at or below the lowest grid point, pushed up to it
  // Round-off: at any eps the profile of the result is sum_cells [m_P g(b) + m_lo (g(a) -
  // g(b))], g(l) = (1 - e^{eps - l})_+, which telescopes: cells wholly above eps contribute
  // P(L > a) - e^eps Q(L > a) at the lowest such knot a, cells below contribute 0, and the
  // cell holding eps contributes (m_P - m_lo) g(b) with g(b) <= 1 - e^{-w}, which cancels
  // the 1/(1 - e^{-w}) of the split. So the tails' errors do not accumulate over cells: a
  // few times kTailRel times (smaller-side P tail + e^a smaller-side Q tail) at the knot a
  // just below eps bounds them, and e^a Q(L > a) <= P(L > a), the smaller side is <= 2 P(L >
  // a) (it is the head only where the tail is >= 1/2): at most 12 kTailRel P(L > eps - w),
  // w <= 4h the widest cell. The eps_mach-level rounding of the splits and sums is relative
  // to the same masses (16 eps_mach). Only what clamping moved is absolute.
  double clamped = 0.0;
  const double e_h = std::exp(-h), one_minus_e_h = -std::expm1(-h);
  // Fine cells where the law is concentrated: a knot's stride is also limited by the next
  // knot's (so a coarse cell never straddles the bulk).
  while (cur.j < last) {
    std::int64_t s = stride(cur);
    Knot nxt = knot(std::min(last, cur.j + s));
    while (s > 1 && stride(nxt) < s) {
      s = std::max<std::int64_t>(1, s / 2);
      nxt = knot(std::min(last, cur.j + s));
    }
    const double width = loss(nxt.j) - loss(cur.j);
    const double a = loss(cur.j);
    const bool use_tail_p = cur.tp < 0.5, use_tail_q = cur.tq < 0.5;
    const double mp_raw = use_tail_p ? cur.tp - nxt.tp : nxt.hp - cur.hp;
    const double mq_raw = use_tail_q ? cur.tq - nxt.tq : nxt.hq - cur.hq;
    const double mp = std::max(0.0, mp_raw), mq = std::max(0.0, mq_raw);
    const bool unit = nxt.j == cur.j + 1;
    const double e_w = unit ? e_h : std::exp(-width), one_minus = unit ? one_minus_e_h : -std::expm1(-width);
    // e^a m_Q: directly, or from log tails where e^a overflows or m_Q is not a normal number
    // (e^a m_Q is then e^a Q(a < L <= b), with Q's tails within kTailRel relative in logs).
    double eq = 0.0;
    if (a < 690.0 && (mq > 1e-290 || !law.log_tq)) {
      eq = std::exp(a) * mq;
      clamped += std::exp(a) * (mq - mq_raw);
    } else if (law.log_tq && use_tail_q) {
      const double la = law.log_tq(a), lb = law.log_tq(loss(nxt.j));
      eq = lb < la ? std::exp(a + la + num::log1mexp(lb - la)) : 0.0;
    }
    const double m_raw = (eq - e_w * mp) / one_minus;
    const double m_lo = std::clamp(m_raw, 0.0, mp);  // round-off only: [0, m_P] exactly
    clamped += (mp - mp_raw) + std::abs(m_raw - m_lo);
    d.pmf[static_cast<std::size_t>(cur.j)] += m_lo;
    d.pmf[static_cast<std::size_t>(nxt.j)] += mp - m_lo;
    cur = nxt;
  }
  d.inf_mass = cur.tp * (1.0 + kTailRel);  // above the grid: +inf
  d.q_above = cur.tq * (1.0 + kTailRel);
  // Cells wider than 4h lie where the mass beyond is < 1e-10: there the relative bound's
  // tail is < 1e-10 itself, counted as absolute.
  d.rel_slack = 12.0 * kTailRel + 16.0 * kEps;
  d.slack = clamped + d.rel_slack * 1e-10;
  d.shift = 4.0 * h;
  return d;
}

}  // namespace

namespace {

// A law whose profile is >= the larger of the profiles of two ordered pairs, at every real
// eps: connect-the-dots on the PROFILE values. At the knots l_j the target is
// delta_j = max(delta_a(l_j), delta_b(l_j)), each delta = P(L > l) - e^l Q(L > l) from the
// tails; in gamma = e^eps the stored profile is the chord through (0, 1), (gamma_j, delta_j)
// and flat after the last knot, so its masses are w_j = gamma_j (s_j - s_{j-1}) with s_j the
// chord slopes (s_{-1} from (0, 1), s_last = 0, w_inf = delta_last). The max of two convex
// profiles is convex, so the chord is above it. Needed where the two orders of a pair are
// each dominated only for eps >= 0 (see Pld::sampled_gaussian, fixed-size replace-one):
// their maximum is the profile of the symmetrised trade-off function (min{f, f^-1})**,
// which dominates both orders for every eps (Zhu-Dong-Wang 2022; Dong-Roth-Su 2019 Prop. F.2).
Discretised discretise_max_profile(const LossLaw& a, const LossLaw& b, const PldOptions& o) {
  validate(o);
  const double h = o.interval;
  const double centre = loss_median(a);
  auto low = [&](const LossLaw& law) {
    return std::isfinite(law.ess_inf)
               ? law.ess_inf
               : tail_point([&](double l) { return law.at(l).hp; }, o.tail_mass, -1.0, loss_median(law));
  };
  auto high = [&](const LossLaw& law) {
    return std::isfinite(law.ess_sup)
               ? law.ess_sup
               : tail_point([&](double l) { return law.at(l).tp; }, o.tail_mass, 1.0, loss_median(law));
  };
  const double lo = std::min(low(a), low(b)), hi = std::max(high(a), high(b));
  check_grid_size(hi - lo, o);
  const auto i_lo = static_cast<std::int64_t>(std::floor(lo / h));
  auto i_hi = static_cast<std::int64_t>(std::ceil(hi / h));
  if (i_hi == i_lo) ++i_hi;
  const auto k = static_cast<std::size_t>(i_hi - i_lo) + 1;
  // Knots: as in discretise (every grid point where the smaller-side mass of either order is
  // >= 1e-10, a spacing of about |l - median| / (4 cells) beyond); the chord through any set of knots
  // is above the convex profile.
  const double per_grid_point = 1.0 / (4.0 * o.cells * h);
  struct Knot {
    std::size_t j;
    double delta, m;
  };
  auto knot = [&](std::size_t j) {
    const double l = static_cast<double>(i_lo + static_cast<std::int64_t>(j)) * h;
    const Tails ta = a.at(l), tb = b.at(l);
    const double el = std::exp(l);
    return Knot{j, std::clamp(std::max(ta.tp - el * ta.tq, tb.tp - el * tb.tq), 0.0, 1.0),
                std::min(std::max(ta.tp, tb.tp), std::max(ta.hp, tb.hp))};
  };
  auto stride = [&](const Knot& kn) -> std::size_t {
    if (kn.m >= 1e-10) return 1;
    std::size_t s = 1;
    const double relative =
        std::abs(static_cast<double>(i_lo + static_cast<std::int64_t>(kn.j)) * h - centre) * per_grid_point;
    while (s < (std::size_t{1} << 20) && 2.0 * static_cast<double>(s) <= relative) s *= 2;
    return s;
  };
  std::vector<Knot> knots{knot(0)};
  while (knots.back().j + 1 < k) {
    std::size_t s = stride(knots.back());
    Knot next = knot(std::min(k - 1, knots.back().j + s));
    while (s > 1 && stride(next) < s) {
      s /= 2;
      next = knot(std::min(k - 1, knots.back().j + s));
    }
    knots.push_back(next);
  }
  // Profiles are non-increasing in eps; enforce it against round-off (raising only).
  for (std::size_t i = knots.size() - 1; i-- > 0;) knots[i].delta = std::max(knots[i].delta, knots[i + 1].delta);
  Discretised d;
  d.offset = i_lo;
  d.pmf.assign(k, 0.0);
  const double g0 = std::exp(static_cast<double>(i_lo) * h);
  double prev_slope = (knots[0].delta - 1.0) / g0, clamped = 0.0;
  for (std::size_t i = 0; i < knots.size(); ++i) {
    const double gamma = std::exp(static_cast<double>(i_lo + static_cast<std::int64_t>(knots[i].j)) * h);
    double slope = 0.0;
    if (i + 1 < knots.size()) {
      const double gap = std::expm1(static_cast<double>(knots[i + 1].j - knots[i].j) * h);
      slope = (knots[i + 1].delta - knots[i].delta) / (gamma * gap);
    }
    const double w = gamma * (slope - prev_slope);
    // Convexity makes w >= 0; a negative value is round-off: raise it to 0 (adds mass,
    // which only raises the profile) and count it.
    if (w < 0) clamped += -w;
    d.pmf[knots[i].j] = std::max(0.0, w);
    prev_slope = slope;
  }
  const double last_delta = knots.back().delta;
  d.inf_mass = last_delta * (1.0 + kTailRel);
  // Knot values carry the tails' relative error, kTailRel (P(L > l) + e^l Q(L > l)) <=
  // 2 kTailRel P(L > l) for each order, and the order's tail is bounded by its profile, which
  // is <= the maximum stored here (PrivacyLoss::rel_slack_); the reconstruction telescopes
  // back to the knot values (16 eps_mach of rounding, relative). Clamping is absolute, and so
  // is the bound in the wide cells (where the mass beyond is < 1e-10).
  d.rel_slack = 4.0 * kTailRel + 16.0 * kEps;
  d.slack = kEps * clamped + d.rel_slack * 1e-10;
  d.shift = h;
  return d;
}

}  // namespace

// ------------------------------------------------------------------ factories

namespace {

std::function<double(double)> gaussian_rdp_term(double mu) {
  return [mu](double alpha) { return 0.5 * alpha * mu * mu; };
}

}  // namespace

PrivacyLoss PrivacyLoss::from_grid(double interval, std::int64_t offset, std::vector<double> pmf,
                                   double inf_mass, double slack, double rel_slack, double shift,
                                   std::function<double(double)> rdp) {
  PrivacyLoss p;
  p.interval_ = interval;
  p.offset_ = offset;
  p.pmf_ = std::move(pmf);
  p.inf_mass_ = inf_mass;
  p.slack_ = slack;
  p.rel_slack_ = rel_slack;
  p.shift_ = shift;
  p.rdp_.push_back({std::move(rdp), 1.0});
  return p;
}

PrivacyLoss PrivacyLoss::gaussian(double mu, const PldOptions& options) {
  validate(options);
  if (std::isnan(mu) || mu < 0) fail("mu", mu, ">= 0");
  PrivacyLoss p;
  p.interval_ = options.interval;
  if (mu == 0) {
    p.pmf_ = {1.0};
    return p;
  }
  if (std::isinf(mu)) {
    p.pmf_ = {0.0};
    p.inf_mass_ = 1.0;
    return p;
  }
  // P = N(mu, 1), Q = N(0, 1): L = mu x - mu^2/2, x(l) = l/mu + mu/2.
  const auto law = normal_mixture_law({{1.0, mu}}, {{1.0, 0.0}}, 1.0,
                                      [mu](double l) { return l / mu + 0.5 * mu; }, -kInf, kInf);
  auto d = discretise(law, options);
  return from_grid(options.interval, d.offset, std::move(d.pmf), d.inf_mass, d.slack, d.rel_slack, d.shift,
                   gaussian_rdp_term(mu));
}

PrivacyLoss PrivacyLoss::laplace(double r, const PldOptions& options) {
  validate(options);
  if (std::isnan(r) || r < 0 || std::isinf(r)) fail("sensitivity/scale", r, "finite and >= 0");
  PrivacyLoss p;
  p.interval_ = options.interval;
  if (r == 0) {
    p.pmf_ = {1.0};
    return p;
  }
  // P = Lap(r, 1), Q = Lap(0, 1): L(x) = |x| - |x - r| in [-r, r], increasing; on (0, r)
  // L = 2x - r, so L > l <=> X > (l + r)/2 for l in [-r, r). Tails in closed form.
  LossLaw law;
  law.ess_inf = -r;
  law.ess_sup = r;
  auto x_of = [r](double l) { return 0.5 * (l + r); };
  law.at = [=](double l) {
    if (l < -r) return Tails{1.0, 0.0, 1.0, 0.0};
    if (l >= r) return Tails{0.0, 1.0, 0.0, 1.0};
    const double x = x_of(l);
    // P: 1 - e^{x-r}/2 above x (x <= r); Q: e^{-x}/2 above x (x >= 0).
    const double hp = 0.5 * std::exp(x - r), tq = 0.5 * std::exp(-x);
    return Tails{-std::expm1(x - r) + hp, hp, tq, -std::expm1(-x) + tq};
  };
  auto d = discretise(law, options);
  p.offset_ = d.offset;
  p.pmf_ = std::move(d.pmf);
  p.inf_mass_ = d.inf_mass;
  p.slack_ = d.slack;
  p.rel_slack_ = d.rel_slack;
  p.shift_ = d.shift;
  // Mironov 2017 Prop. 6: RDP of the Laplace mechanism (both orders equal).
  p.rdp_.push_back({[r](double alpha) {
                      if (std::isinf(alpha)) return r;
                      const double a = alpha;
                      return num::logaddexp(std::log(a / (2 * a - 1)) + (a - 1) * r,
                                            std::log((a - 1) / (2 * a - 1)) - a * r) /
                             (a - 1);
                    },
                    1.0});
  return p;
}

namespace {

void check_sampled(double q, double s, double shift) {
  require_closed("q", q, 0.0, 1.0);
  require_positive("sigma", s);
  require_positive("sensitivity", shift);
}

}  // namespace

PrivacyLoss PrivacyLoss::mixture_vs_gaussian(double q, double s, double shift,
                                             const PldOptions& options) {
  validate(options);
  check_sampled(q, s, shift);
  if (q == 0) return gaussian(0.0, options);
  if (q == 1) return gaussian(shift / s, options);
  const double c = shift;
  auto d = discretise(remove_order_law(q, s, c), options);
  // MTZ 2019: the RDP of this pair, maximised over both orders (div/rdp.cpp).
  const double z = s / c;
  return from_grid(options.interval, d.offset, std::move(d.pmf), d.inf_mass, d.slack, d.rel_slack, d.shift,
                   [q, z](double alpha) {
                     return sampled_gaussian_rdp(alpha, q, z, Subsampling::poisson, Neighbours::remove);
                   });
}

PrivacyLoss PrivacyLoss::gaussian_vs_mixture(double q, double s, double shift,
                                             const PldOptions& options) {
  validate(options);
  check_sampled(q, s, shift);
  if (q == 0) return gaussian(0.0, options);
  if (q == 1) return gaussian(shift / s, options);
  const double c = shift;
  auto d = discretise(add_order_law(q, s, c), options);
  const double z = s / c;
  return from_grid(options.interval, d.offset, std::move(d.pmf), d.inf_mass, d.slack, d.rel_slack, d.shift,
                   [q, z](double alpha) {
                     return sampled_gaussian_rdp(alpha, q, z, Subsampling::poisson, Neighbours::remove);
                   });
}

std::pair<PrivacyLoss, PrivacyLoss> PrivacyLoss::mixture_and_reversed(double q, double s, double shift,
                                                                      const PldOptions& options) {
  validate(options);
  check_sampled(q, s, shift);
  if (q == 0 || q == 1) {
    PrivacyLoss g = q == 0 ? gaussian(0.0, options) : gaussian(shift / s, options);
    return {g, g};
  }
  const double c = shift, z = s / c;
  auto rdp = [q, z](double alpha) {
    return sampled_gaussian_rdp(alpha, q, z, Subsampling::poisson, Neighbours::remove);
  };
  auto d = discretise(remove_order_law(q, s, c), options);
  // The reversed pair (Q, P) = (N(0, s^2), (1-q) N(0, s^2) + q N(c, s^2)) is the "add" order
  // reflected (gaussian_vs_mixture's law up to x -> -x, which leaves the loss unchanged).
  // Its cells are those above with P and Q swapped: the same split (the split formula is
  // symmetric under l -> -l, P <-> Q), so this is the connect-the-dots law of the reversed
  // pair on the same grid, with the same error analysis (its tails are the heads computed
  // above, each the smaller side or 1 - the smaller side). The Q-mass above the grid is
  // below the reversed grid: pushed up to its lowest point. Nothing is at +inf (the reversed
  // loss is <= -log(1 - q)).
  const double h = options.interval;
  const auto len = static_cast<std::int64_t>(d.pmf.size());
  std::vector<double> rev(d.pmf.size());
  double tilt_max = 0;
  for (std::int64_t k = 0; k < len; ++k) {
    const double l = static_cast<double>(d.offset + len - 1 - k) * h;
    rev[static_cast<std::size_t>(k)] = d.pmf[static_cast<std::size_t>(len - 1 - k)] * std::exp(-l);
    tilt_max = std::max(tilt_max, -l);
  }
  rev[0] += d.q_above;
  PrivacyLoss second = from_grid(h, -(d.offset + len - 1), std::move(rev), 0.0,
                                 d.slack * std::exp(tilt_max), d.rel_slack + 2 * kEps, d.shift, rdp);
  PrivacyLoss first = from_grid(h, d.offset, std::move(d.pmf), d.inf_mass, d.slack, d.rel_slack, d.shift, rdp);
  return {std::move(first), std::move(second)};
}

PrivacyLoss PrivacyLoss::mixture_vs_gaussian_symmetrised(double q, double s, double shift,
                                                          const PldOptions& options) {
  validate(options);
  check_sampled(q, s, shift);
  if (q == 0) return gaussian(0.0, options);
  if (q == 1) return gaussian(shift / s, options);
  const double c = shift;
  // The two orders, as in mixture_vs_gaussian and gaussian_vs_mixture.
  const auto remove = remove_order_law(q, s, c);
  const auto add = add_order_law(q, s, c);
  auto d = discretise_max_profile(remove, add, options);
  // WBK 2019 Thm 9, the RDP div/rdp.cpp uses for fixed-size replace-one (valid for both
  // orders of the relation); s / shift * 2 keeps its units (noise in units of C, Delta = 2C).
  const double z = 2.0 * s / c;
  return from_grid(options.interval, d.offset, std::move(d.pmf), d.inf_mass, d.slack, d.rel_slack, d.shift,
                   [q, z](double alpha) {
                     return sampled_gaussian_rdp(alpha, q, z, Subsampling::fixed, Neighbours::replace);
                   });
}

PrivacyLoss PrivacyLoss::mixture_vs_mixture(double q, double s, const PldOptions& options) {
  validate(options);
  check_sampled(q, s, 1.0);
  if (q == 0) return gaussian(0.0, options);
  if (q == 1) return gaussian(2.0 / s, options);
  // P = (1-q) N(0,s^2) + q N(1,s^2), Q = (1-q) N(0,s^2) + q N(-1,s^2). With u = x/s^2,
  // a = 1-q, b = q e^{-1/(2 s^2)}: L = log(a + b e^u) - log(a + b e^{-u}), odd and
  // increasing in x. For l >= 0, y = e^u solves b y^2 + a(1 - e^l) y - b e^l = 0:
  // y = [a expm1(l) + sqrt(a^2 expm1(l)^2 + 4 b^2 e^l)] / (2 b); x(-l) = -x(l).
  const double a = 1.0 - q, log_b = std::log(q) - 0.5 / (s * s);
  auto x_pos = [=](double l) {
    const double big_a = a * std::expm1(l);
    const double log_big_b = std::numbers::ln2 + log_b + 0.5 * l;  // log(2 b e^{l/2})
    double log_num;
    if (big_a <= 0) {
      log_num = log_big_b;
    } else {
      const double la = std::log(big_a);
      const double ratio = std::exp(log_big_b - la);
      log_num = la + std::log1p(std::hypot(1.0, ratio));
    }
    const double u = log_num - std::numbers::ln2 - log_b;
    return u * s * s;
  };
  auto x_of = [=](double l) { return l >= 0 ? x_pos(l) : -x_pos(-l); };
  const auto law = normal_mixture_law({{1.0 - q, 0.0}, {q, 1.0}}, {{1.0 - q, 0.0}, {q, -1.0}}, s,
                                      x_of, -kInf, kInf);
  auto d = discretise(law, options);
  return from_grid(options.interval, d.offset, std::move(d.pmf), d.inf_mass, d.slack, d.rel_slack, d.shift,
                   [q, s](double alpha) {
                     return sampled_gaussian_rdp(alpha, q, s, Subsampling::poisson, Neighbours::replace);
                   });
}

// ------------------------------------------------------------------ composition

namespace {

// log E[e^{lambda_i L}] over the stored finite part, for several lambda_i of one sign at
// once (independent Horner chains in one pass, in r = e^{-|lambda| h} from the far end, so
// that nothing overflows).
void log_mgfs(const PrivacyLoss& p, const std::vector<double>& lambdas, std::vector<double>& out) {
  const auto& v = p.pmf();
  const double h = p.interval();
  const std::size_t m = lambdas.size();
  out.assign(m, -kInf);
  if (v.empty() || m == 0) return;
  const bool up = lambdas[0] >= 0;
  std::vector<double> factor(m), acc(m, 0.0);
  for (std::size_t i = 0; i < m; ++i) factor[i] = std::exp(-std::abs(lambdas[i]) * h);
  if (up)
    for (const double x : v)
      for (std::size_t i = 0; i < m; ++i) acc[i] = acc[i] * factor[i] + x;
  else
    for (auto it = v.rbegin(); it != v.rend(); ++it)
      for (std::size_t i = 0; i < m; ++i) acc[i] = acc[i] * factor[i] + *it;
  const double end = static_cast<double>(up ? p.offset() + static_cast<std::int64_t>(v.size()) - 1 : p.offset()) * h;
  for (std::size_t i = 0; i < m; ++i) out[i] = lambdas[i] * end + std::log(acc[i]);
}

// The tilts at which the Chernoff windows are evaluated: around 1 / (std of the sum) (the
// bulk: near-normal sums), and from 1 / (widest one-step support) up (heavy-tailed steps:
// a sum of few steps beyond a multiple of one step's range needs several rare jumps, which
// only small tilts see).
std::vector<double> chernoff_lambdas(double sd, double widest) {
  std::vector<double> out;
  if (sd > 0)
    for (int e = -3; e <= 8; ++e) out.push_back(std::ldexp(1.0, e) / sd);
  if (widest > 0)
    for (int e = 0; e <= 12; ++e) out.push_back(std::ldexp(1.0, e) / widest);
  if (out.empty())
    for (int e = -4; e <= 8; e += 2) out.push_back(std::ldexp(1.0, e));
  return out;
}

// Mass, mean and variance of the positions 0, 1, ... of a stored law (grid units).
struct Moments {
  double mass = 0, mean = 0, var = 0;
};
Moments moments(const std::vector<double>& v) {
  double m0 = 0, m1 = 0, m2 = 0;
  for (std::size_t j = 0; j < v.size(); ++j) {
    const double x = static_cast<double>(j);
    m0 += v[j];
    m1 += v[j] * x;
    m2 += v[j] * x * x;
  }
  Moments m;
  m.mass = m0;
  if (m0 > 0) {
    m.mean = m1 / m0;
    m.var = std::max(0.0, m2 / m0 - m.mean * m.mean);
  }
  return m;
}

// FFTW plans (and their twiddle tables) are reused per length within a thread.
// At most 8 lengths and 2^21 points (64 MiB of buffers) are kept.
num::detail::ComplexFft& fft_for(std::size_t n) {
  thread_local std::map<std::size_t, std::unique_ptr<num::detail::ComplexFft>> cache;
  auto it = cache.find(n);
  if (it != cache.end()) return *it->second;
  std::size_t points = n;
  for (const auto& [m, f] : cache) points += m;
  if (cache.size() >= 8 || points > (std::size_t{1} << 21)) cache.clear();
  return *cache.emplace(n, std::make_unique<num::detail::ComplexFft>(n)).first->second;
}

std::complex<double> cpow(std::complex<double> z, std::int64_t n) {
  std::complex<double> r(1.0, 0.0);
  while (n > 0) {
    if (n & 1) r *= z;
    n >>= 1;
    if (n) z *= z;
  }
  return r;
}

std::int64_t floor_mod(i128 a, std::int64_t n) {
  auto r = static_cast<std::int64_t>(a % n);
  return r < 0 ? r + n : r;
}

// e^{-2 pi i r / n} - 1 for an integer r, accurate relative to its modulus: r is reduced to
// [-n/2, n/2] exactly, then e^{ix} - 1 = -2 sin^2(x/2) + i sin(x) (no cancellation).
std::complex<double> expm1_turn(i128 r, std::int64_t n) {
  std::int64_t m = floor_mod(r, n);
  if (2 * m > n) m -= n;
  const double x = -2.0 * std::numbers::pi * (static_cast<double>(m) / static_cast<double>(n));
  const double s = std::sin(0.5 * x);
  return {-2.0 * s * s, std::sin(x)};
}

// The accurate low-frequency sum of one stored law (positions j = 0, 1, ... of `v`) at
// frequency k of an n-point transform, around the position jc:
//   u = sum_j v_j (e^{-2 pi i (j - jc) k / n} - 1),  s = sum_j v_j |e^{...} - 1|,
// so that the transform there is e^{-2 pi i jc k / n} (mass + u). The factors e^{...} - 1
// are exact at anchors every kBlock = 32 positions and follow the recurrence
// x_{d+1} = x_d + (1 + x_d) x_1 in between: each is within (11 + kBlock) eps (|x_d| +
// kBlock |x_1|) + 15 kBlock eps |x_1| of the truth (anchor error 11 eps |x|, one ulp of
// the sines plus the rounding of the angle; each step adds <= 15 eps |x_1| + eps |x_{d+1}|
// and |1 + x_1| = 1). With the products and the block sums (the sum over blocks is in long
// double) |u - computed| <= eps (64 s + 2048 |x_1| mass): small relative to s, which is
// small at the frequencies where the composition is large -- unlike the FFT's a-priori
// bound, which is relative to the mass (docs/pld.md).
constexpr std::int64_t kBlock = 32;
struct LowSum {
  std::complex<double> u;
  double s = 0, error = 0;
};
LowSum finish(long double ur, long double ui, long double s, std::complex<double> x1, double mass) {
  LowSum out;
  out.u = {static_cast<double>(ur), static_cast<double>(ui)};
  out.s = static_cast<double>(s) * (1 + 1e-10);
  out.error = kEps * (64.0 * out.s + 2048.0 * std::abs(x1) * mass) + 2 * kEps * std::abs(out.u);
  return out;
}

// The sums for several frequencies, four at a time (independent recurrences side by side).
std::vector<LowSum> low_frequency_sums(const std::vector<double>& v, std::int64_t jc, std::int64_t stride,
                                       std::span<const std::size_t> ks, std::int64_t n, double mass) {
  std::vector<LowSum> out(ks.size());
  const auto len = static_cast<std::int64_t>(v.size());
  const double* const pv = v.data();
  // Two frequencies side by side (independent recurrences, all in registers); real
  // arithmetic (std::complex's product carries NaN checks).
  for (std::size_t first = 0; first < ks.size(); first += 2) {
    // Position j is at j * stride on the transform's grid: frequency k there is k * stride here.
    const auto k0 = static_cast<std::int64_t>(ks[first]) * stride;
    const auto k1 = static_cast<std::int64_t>(ks[std::min(first + 1, ks.size() - 1)]) * stride;
    const std::complex<double> x10 = expm1_turn(k0, n), x11 = expm1_turn(k1, n);
    const double ar0 = x10.real(), ai0 = x10.imag(), ar1 = x11.real(), ai1 = x11.imag();
    long double ur0 = 0, ui0 = 0, s0 = 0, ur1 = 0, ui1 = 0, s1 = 0;
    for (std::int64_t j0 = 0; j0 < len; j0 += kBlock) {
      const std::complex<double> a0 = expm1_turn(static_cast<i128>(j0 - jc) * k0, n);
      const std::complex<double> a1 = expm1_turn(static_cast<i128>(j0 - jc) * k1, n);
      double xr0 = a0.real(), xi0 = a0.imag(), xr1 = a1.real(), xi1 = a1.imag();
      double p = pv[j0];
      double br0 = p * xr0, bi0 = p * xi0, bs0 = p * (std::abs(xr0) + std::abs(xi0));  // >= p |x|
      double br1 = p * xr1, bi1 = p * xi1, bs1 = p * (std::abs(xr1) + std::abs(xi1));
      const std::int64_t end = std::min(len, j0 + kBlock);
      for (std::int64_t j = j0 + 1; j < end; ++j) {
        p = pv[j];
        const double re0 = 1.0 + xr0, re1 = 1.0 + xr1;  // x += (1 + x) x_1
        const double nr0 = xr0 + (re0 * ar0 - xi0 * ai0), nr1 = xr1 + (re1 * ar1 - xi1 * ai1);
        xi0 = xi0 + (re0 * ai0 + xi0 * ar0);
        xi1 = xi1 + (re1 * ai1 + xi1 * ar1);
        xr0 = nr0;
        xr1 = nr1;
        br0 += p * xr0;
        bi0 += p * xi0;
        bs0 += p * (std::abs(xr0) + std::abs(xi0));
        br1 += p * xr1;
        bi1 += p * xi1;
        bs1 += p * (std::abs(xr1) + std::abs(xi1));
      }
      ur0 += br0;
      ui0 += bi0;
      s0 += bs0;
      ur1 += br1;
      ui1 += bi1;
      s1 += bs1;
    }
    out[first] = finish(ur0, ui0, s0, x10, mass);
    if (first + 1 < ks.size()) out[first + 1] = finish(ur1, ui1, s1, x11, mass);
  }
  return out;
}

// Long-double sum of a stored law (pairwise: error <= log2(n) ulps of long double).
long double exact_mass(const double* v, std::size_t n) {
  if (n <= 8) {
    long double s = 0;
    for (std::size_t i = 0; i < n; ++i) s += v[i];
    return s;
  }
  return exact_mass(v, n / 2) + exact_mass(v + n / 2, n - n / 2);
}

}  // namespace

// The FFT composition of several independent sums ("jobs", e.g. the two orders of a
// neighbouring relation) on one grid h (a piece may lie on a grid that is a multiple of h:
// its atoms are then every `stride` points): one circular window length n for all, two real
// sequences per complex transform (a + i b transforms to A + i B with A, B Hermitian, so
// A_k = (X_k + conj X_{n-k}) / 2, B_k = (X_k - conj X_{n-k}) / 2i), the pieces' transforms
// raised to their counts, two composed spectra per inverse transform (real and imaginary
// parts). Error bounds as in the file comment.
struct Composer {
  struct Piece {
    const PrivacyLoss* law;
    std::int64_t count;
    std::int64_t stride = 1;  // law->interval_ / h
  };
  struct Job {
    std::vector<Piece> pieces;
    PrivacyLoss out;
    bool done = false;
    double h = 0, slack = 0, rel = 0, shift = 0, total_count = 0, support_hi = 0;
    i128 offset_sum = 0;
    double lo = 0, hi = 0;
    std::vector<double> lambdas, k_pos;
    std::int64_t i_lo = 0;
    double upper_tail = 0;
    std::vector<std::complex<double>> acc;
    std::vector<double> log_p, rel_k;
  };

  // Infinity mass, error terms, Renyi terms and the Chernoff window of a job; done = true
  // when nothing is left to transform.
  static void prepare(Job& job, double h, const PldOptions& options) {
    std::vector<Piece> ps;
    for (const auto& p : job.pieces) {
      if (p.count < 0) fail("count", static_cast<double>(p.count), ">= 0");
      if (p.count > 0) ps.push_back(p);
    }
    job.pieces = ps;
    PrivacyLoss& out = job.out;
    out.interval_ = options.interval;
    if (ps.empty()) {
      out.pmf_ = {1.0};
      job.done = true;
      return;
    }
    for (auto& p : ps) {
      const double ratio = p.law->interval_ / h;
      p.stride = static_cast<std::int64_t>(std::llround(ratio));
      if (p.stride < 1 || std::abs(ratio - static_cast<double>(p.stride)) > 1e-9 * ratio)
        fail("pld.interval", p.law->interval_, fmt::format("a multiple of {} (the other pieces')", show(h)));
    }
    job.pieces = ps;
    out.interval_ = h;
    job.h = h;
    if (ps.size() == 1 && ps.front().count == 1 && ps.front().stride == 1) {
      out = *ps.front().law;
      job.done = true;
      return;
    }
    double log_finite = 0.0, mass_factor = 0.0, var_sum = 0.0;
    i128 top_sum = 0;
    for (const auto& [p, c, stride] : ps) {
      const double cd = static_cast<double>(c), sd = static_cast<double>(stride);
      log_finite += cd * std::log1p(-std::min(1.0, p->inf_mass_));
      const Moments mo = moments(p->pmf_);
      mass_factor += cd * std::log(std::max(1.0, mo.mass));
      var_sum += cd * mo.var * sd * sd;
      job.slack += cd * p->slack_;
      job.rel += cd * p->rel_slack_;
      job.shift = std::max(job.shift, p->shift_);
      job.total_count += cd;
      job.offset_sum += static_cast<i128>(p->offset_) * stride * c;
      top_sum += static_cast<i128>(p->offset_ + static_cast<std::int64_t>(p->pmf_.size()) - 1) * stride * c;
      for (const auto& t : p->rdp_) out.rdp_.push_back({t.rho, t.count * cd});
    }
    out.inf_mass_ = -std::expm1(log_finite);
    // Masses above 1 (round-off) scale the others' errors.
    job.slack *= std::exp(mass_factor);
    job.rel *= std::exp(mass_factor);
    if (!(out.inf_mass_ < 1.0)) {
      out.pmf_ = {0.0};
      out.inf_mass_ = 1.0;
      out.slack_ = job.slack;
      job.done = true;
      return;
    }
    // Window [lo, hi] of the sum from Chernoff bounds: P(S >= s) <= exp(K(t) - t s) and
    // P(S <= s) <= exp(K(-t) + t s), K the log-mgf of the sum = sum of counts x log-mgfs,
    // t on the grid of chernoff_lambdas.
    const double log_tol = std::log(options.truncation_mass);
    job.lo = static_cast<double>(job.offset_sum) * h;
    job.hi = static_cast<double>(top_sum) * h;
    job.support_hi = job.hi;
    double widest = 0;
    for (const auto& [p, c, stride] : ps)
      widest = std::max(widest, static_cast<double>(p->pmf_.size()) * p->interval_);
    job.lambdas = chernoff_lambdas(std::sqrt(var_sum) * h, widest);
    job.k_pos.assign(job.lambdas.size(), 0.0);
    std::vector<double> k_neg(job.lambdas.size(), 0.0), negative(job.lambdas.size()), one;
    for (std::size_t i = 0; i < job.lambdas.size(); ++i) negative[i] = -job.lambdas[i];
    for (const auto& [p, c, stride] : ps) {
      log_mgfs(*p, job.lambdas, one);
      for (std::size_t i = 0; i < one.size(); ++i) job.k_pos[i] += static_cast<double>(c) * one[i];
      log_mgfs(*p, negative, one);
      for (std::size_t i = 0; i < one.size(); ++i) k_neg[i] += static_cast<double>(c) * one[i];
    }
    for (std::size_t i = 0; i < job.lambdas.size(); ++i) {
      if (std::isfinite(job.k_pos[i])) job.hi = std::min(job.hi, (job.k_pos[i] - log_tol) / job.lambdas[i]);
      if (std::isfinite(k_neg[i])) job.lo = std::max(job.lo, (log_tol - k_neg[i]) / job.lambdas[i]);
    }
    if (job.lo > job.hi) job.lo = job.hi;
    check_grid_size(job.hi - job.lo + h, options);
  }

  static void run(std::span<Job> jobs, const PldOptions& options) {
    validate(options);
    double h_min = kInf;  // the finest grid of all pieces
    for (const auto& job : jobs)
      for (const auto& p : job.pieces)
        if (p.count > 0) h_min = std::min(h_min, p.law->interval_);
    for (auto& job : jobs) prepare(job, h_min, options);
    std::size_t width = 0;
    double h = 0;
    for (const auto& job : jobs) {
      if (job.done) continue;
      const auto i_lo = static_cast<std::int64_t>(std::floor(job.lo / job.h));
      const auto i_hi = static_cast<std::int64_t>(std::ceil(job.hi / job.h));
      width = std::max(width, static_cast<std::size_t>(i_hi - i_lo + 1));
      h = job.h;
    }
    if (width == 0) return;
    const std::size_t n = num::detail::fft_good_size(width);
    if (n > static_cast<std::size_t>(options.max_length)) check_grid_size(static_cast<double>(n) * h * 2, options);
    const auto ni = static_cast<std::int64_t>(n);
    const std::size_t nspec = n / 2 + 1;
    const double eta = 8.0 * kEps, log2n = std::log2(static_cast<double>(n));

    // Windows [i_lo, i_lo + n - 1] and the mass of each sum above its window.
    std::vector<Job*> live;
    for (auto& job : jobs) {
      if (job.done) continue;
      live.push_back(&job);
      job.i_lo = static_cast<std::int64_t>(std::floor(job.lo / job.h));
      const double top = static_cast<double>(job.i_lo + ni - 1) * job.h;
      if (top < job.support_hi) {
        double best = 0.0;  // log of the bound
        for (std::size_t i = 0; i < job.lambdas.size(); ++i)
          if (std::isfinite(job.k_pos[i])) best = std::min(best, job.k_pos[i] - job.lambdas[i] * (top + job.h));
        job.upper_tail = std::exp(best);
      }
      job.acc.assign(nspec, {1.0, 0.0});
      job.log_p.assign(nspec, 0.0);
      job.rel_k.assign(nspec, 3.0 * job.total_count * kEps);
    }

    // The distinct pieces and where they are used.
    std::vector<const PrivacyLoss*> distinct;
    std::vector<std::size_t> strides;
    std::vector<std::vector<std::pair<Job*, std::int64_t>>> uses;
    for (Job* job : live)
      for (const auto& [p, c, stride] : job->pieces) {
        const auto it = std::find(distinct.begin(), distinct.end(), p);
        const std::size_t i = static_cast<std::size_t>(it - distinct.begin());
        if (it == distinct.end()) {
          distinct.push_back(p);
          strides.push_back(static_cast<std::size_t>(stride));
          uses.emplace_back();
        }
        uses[i].emplace_back(job, c);
      }

    // Forward transforms, two pieces at a time; round-off per frequency k (file comment):
    // with z_ck perturbed by at most d_c = log2(n) eta (||a||_1 + ||b||_1) + 4 eps (the
    // componentwise a-priori bound of a Cooley-Tukey transform of a + i b: log2(n) stages,
    // each adding <= eta times the sum of the moduli it combines, twiddles of modulus 1;
    // Higham ch. 24; then the unpacking), the product prod_c z_ck^{n_c} is off by
    // <= P_k [sum_c n_c d_c / m_ck + 3 n eps_mach], m_ck = |z_ck| + d_c, P_k = prod_c m_ck^{n_c}.
    num::detail::ComplexFft& fft = fft_for(n);
    std::complex<double>* const in = fft.input();
    std::complex<double>* const out = fft.output();
    for (std::size_t first = 0; first < distinct.size(); first += 2) {
      const PrivacyLoss* a = distinct[first];
      const PrivacyLoss* b = first + 1 < distinct.size() ? distinct[first + 1] : nullptr;
      std::fill(in, in + n, std::complex<double>(0.0, 0.0));
      double norm1 = 0;
      const std::size_t sa = strides[first], sb = b ? strides[first + 1] : 1;
      for (std::size_t j = 0; j < a->pmf_.size(); ++j) {
        in[(j * sa) % n] += std::complex<double>(a->pmf_[j], 0.0);  // folding: part of the wrap-around
        norm1 += a->pmf_[j];
      }
      if (b)
        for (std::size_t j = 0; j < b->pmf_.size(); ++j) {
          in[(j * sb) % n] += std::complex<double>(0.0, b->pmf_[j]);
          norm1 += b->pmf_[j];
        }
      fft.forward();
      const double d = log2n * eta * norm1 + 4.0 * kEps * norm1;
      for (int side = 0; side < (b ? 2 : 1); ++side) {
        for (const auto& [job, c] : uses[first + static_cast<std::size_t>(side)]) {
          const double cd = static_cast<double>(c);
          // |z|^c < e^{kNegligibleLog} <=> |z| < this (checked again below in logs).
          const double negligible = std::exp(kNegligibleLog / cd) * (1 - 4 * kEps);
          for (std::size_t k = 0; k < nspec; ++k) {
            if (job->log_p[k] < kNegligibleLog) continue;  // this frequency is (and stays) 0
            const std::complex<double> xk = out[k], xc = std::conj(out[(n - k) % n]);
            const std::complex<double> z =
                side == 0 ? 0.5 * (xk + xc) : std::complex<double>(0.0, -0.5) * (xk - xc);
            const double az = std::sqrt(std::norm(z)) * (1 + 2 * kEps), m = az + d;
            if (m < negligible) {  // then |z|^c <= P_k < e^{kNegligibleLog}: set to 0
              job->acc[k] = 0.0;
              job->log_p[k] = -kInf;
              continue;
            }
            job->log_p[k] += cd * std::log(m);
            job->rel_k[k] += cd * d / m;
            // |z|^c below 1e-300 is set to 0 (its error bound P_k is then < 1e-300 too): avoids
            // denormal arithmetic in the powers.
            if (cd * std::log(az) < kNegligibleLog || job->log_p[k] < kNegligibleLog) {
              job->acc[k] = 0.0;
              job->log_p[k] = -kInf;
            } else {
              job->acc[k] *= cpow(z, c);
            }
          }
        }
      }
    }

    // Error of each frequency; where the a-priori bound matters (long sequences: it grows as
    // the count times log2(n) eta), the largest ones are recomputed from the pieces directly
    // (low_frequency_sums, logarithms in long double): the error there is relative to how
    // far the frequency is from 0, not to the mass.
    std::vector<std::vector<double>> errors;
    for (Job* job : live) {
      std::vector<double> err(nspec);
      double err2 = 0;
      for (std::size_t k = 0; k < nspec; ++k) {
        // A frequency set to 0 is off by < e^{kNegligibleLog} ~ 1e-300: all of them together
        // by < n 1e-300 (added below), not squared here (underflow).
        err[k] = job->log_p[k] < kNegligibleLog ? 0.0 : std::exp(job->log_p[k]) * job->rel_k[k];
        err2 += (k == 0 || 2 * k == n ? 1.0 : 2.0) * err[k] * err[k];
      }
      if (std::sqrt(err2) > kRecomputeAbove) recompute_low_frequencies(*job, n, err);
      errors.push_back(std::move(err));
    }

    // Inverse transforms, two sums at a time (real and imaginary parts).
    for (std::size_t first = 0; first < live.size(); first += 2) {
      Job* ja = live[first];
      Job* jb = first + 1 < live.size() ? live[first + 1] : nullptr;
      double spec_norm1 = 0;
      std::vector<double>& ea = errors[first];
      auto spectrum = [&](Job* job, std::vector<double>& err, std::size_t k) {
        std::complex<double> z = job->acc[k];
        if (k == 0 || 2 * k == n) {  // real for a real sequence: the imaginary part is round-off
          err[k] += std::abs(z.imag());
          z = z.real();
        }
        return z;
      };
      for (std::size_t k = 0; k < nspec; ++k) {
        const std::complex<double> za = spectrum(ja, ea, k);
        const std::complex<double> zb = jb ? spectrum(jb, errors[first + 1], k) : 0.0;
        const std::complex<double> i1(0.0, 1.0);
        out[k] = za + i1 * zb;
        if (k > 0 && 2 * k < n) out[n - k] = std::conj(za) + i1 * std::conj(zb);
        const double mult = k == 0 || 2 * k == n ? 1.0 : 2.0;
        spec_norm1 += mult * (std::abs(za) + std::abs(zb));
      }
      fft.backward();
      for (int side = 0; side < (jb ? 2 : 1); ++side) {
        Job& job = side == 0 ? *ja : *jb;
        const std::vector<double>& err = errors[first + static_cast<std::size_t>(side)];
        double err2 = 0;
        for (std::size_t k = 0; k < nspec; ++k) err2 += (k == 0 || 2 * k == n ? 1.0 : 2.0) * err[k] * err[k];
        // Position r of the circular result holds the sums s = r (mod n); the window's index m
        // (loss (i_lo + m) h) is the position sum s = i_lo + m - offset_sum.
        const std::int64_t shift = floor_mod(static_cast<i128>(job.i_lo) - job.offset_sum, ni);
        const double scale = 1.0 / static_cast<double>(n);
        std::vector<double> pmf(n);
        for (std::size_t m = 0, r = static_cast<std::size_t>(shift); m < n; ++m, r = r + 1 == n ? 0 : r + 1) {
          const double x = (side == 0 ? in[r].real() : in[r].imag()) * scale;
          pmf[m] = std::max(0.0, x);  // negative round-off -> 0: adds mass
        }
        // ||error||_1 <= sqrt(n) ||error||_2 = ||spectral error||_2 (Parseval, 1/n inverse),
        // plus the inverse transform's own round-off (componentwise: log2(n) eta ||Y||_1 / n
        // per entry, Y the packed spectrum of both sums).
        const double fft_error = std::sqrt(err2) + log2n * eta * spec_norm1 + static_cast<double>(n) * 1e-300;
        job.out.offset_ = job.i_lo;
        job.out.pmf_ = std::move(pmf);
        job.out.slack_ = job.slack + job.upper_tail + fft_error;
        job.out.rel_slack_ = job.rel;
        job.out.shift_ = job.shift;
        job.out.trim();
        job.done = true;
      }
    }
  }

  // The a-priori FFT bound above which (in l2 over the frequencies) the largest errors are
  // recomputed, and the level they are brought down to.
  static constexpr double kRecomputeAbove = 1e-10, kRecomputeTo = 1e-11;

  // Replaces the largest-error frequencies of a job's product by the accurate computation
  // (low_frequency_sums for each piece around its mean position, log1p of the normalised
  // sum, counts applied to the logarithm, the phases of the centres reduced exactly), where
  // that has the smaller error bound. At most ~2^25 terms of work.
  static void recompute_low_frequencies(Job& job, std::size_t n, std::vector<double>& err) {
    const std::size_t nspec = n / 2 + 1;
    const auto ni = static_cast<std::int64_t>(n);
    // The fewest frequencies (largest errors first) that leave the rest below kRecomputeTo
    // (those below kRecomputeTo / sqrt(2 nspec) are left in any case).
    const double floor_err = kRecomputeTo / std::sqrt(2.0 * static_cast<double>(nspec));
    std::vector<std::size_t> order;
    double rest = 0;
    for (std::size_t k = 0; k < nspec; ++k) {
      if (err[k] > floor_err) order.push_back(k);
      else rest += (k == 0 || 2 * k == n ? 1.0 : 2.0) * err[k] * err[k];
    }
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return err[a] > err[b]; });
    std::size_t keep = order.size();
    while (keep > 0) {
      const std::size_t k = order[keep - 1];
      const double e2 = (k == 0 || 2 * k == n ? 1.0 : 2.0) * err[k] * err[k];
      if (rest + e2 > kRecomputeTo * kRecomputeTo) break;
      rest += e2;
      --keep;
    }
    order.resize(keep);
    double per_k = 0;
    struct Centre {
      std::int64_t jc;
      long double mass, log_mass;
    };
    std::vector<Centre> centres;
    for (const auto& [p, c, stride] : job.pieces) {
      const Moments mo = moments(p->pmf_);
      const long double mass = exact_mass(p->pmf_.data(), p->pmf_.size());
      centres.push_back({static_cast<std::int64_t>(std::llround(mo.mean)), mass, std::log(mass)});
      per_k += static_cast<double>(p->pmf_.size());
    }
    const auto budget = static_cast<std::size_t>(std::max(1.0, std::ldexp(1.0, 25) / std::max(1.0, per_k)));
    if (order.size() > budget) order.resize(budget);
    std::vector<std::vector<LowSum>> sums;
    for (std::size_t i = 0; i < job.pieces.size(); ++i) {
      const auto mass = static_cast<double>(centres[i].mass);
      if (!(mass > 0)) return;
      sums.push_back(low_frequency_sums(job.pieces[i].law->pmf_, centres[i].jc, job.pieces[i].stride, order, ni, mass));
    }
    for (std::size_t ik = 0; ik < order.size(); ++ik) {
      const std::size_t k = order[ik];
      long double re = 0;  // sum_c n_c (log mass_c + Re log1p(w_c))
      double im = 0, d_re = 0, d_im = 0, abs_im = 0;
      i128 phase = 0;
      bool ok = true;
      for (std::size_t i = 0; i < job.pieces.size() && ok; ++i) {
        const auto c = job.pieces[i].count;
        const Centre& ce = centres[i];
        const auto mass = static_cast<double>(ce.mass);
        const LowSum& ls = sums[i][ik];
        const std::complex<double> w = ls.u / mass;
        const double aw = std::abs(w);
        if (!(aw < 0.5)) {
          ok = false;
          break;
        }
        const double err_w = ls.error / mass + 2 * kEps * aw;
        const double y = 2.0 * w.real() + aw * aw;
        const std::complex<double> lw(0.5 * std::log1p(y), std::atan2(w.imag(), 1.0 + w.real()));
        // |d log1p(w)| <= |dw| / |1 + w| (to first order; 1% for the rest), |1 + w| >= 1 - |w|;
        // the rounding of y = 2 Re w + |w|^2 (3 eps (2|w| + |w|^2)) moves 0.5 log1p(y) by at
        // most half that over |1 + w|^2, that of 1 + Re w the angle by eps |w| / |1 + w|^2;
        // log1p and atan2 round by an ulp each.
        const double err_l = 1.01 * (err_w + 5 * kEps * aw) / ((1 - aw) * (1 - aw)) + 2 * kEps * std::abs(lw);
        const auto cl = static_cast<long double>(c);
        re += cl * (ce.log_mass + static_cast<long double>(lw.real()));
        im += static_cast<double>(c) * lw.imag();
        abs_im += std::abs(static_cast<double>(c) * lw.imag());
        d_re += static_cast<double>(c) * err_l;
        d_im += static_cast<double>(c) * err_l;
        phase += static_cast<i128>(c) * ce.jc * job.pieces[i].stride * static_cast<i128>(k);
      }
      if (!ok) continue;
      const double angle = im - 2.0 * std::numbers::pi * (static_cast<double>(floor_mod(phase, ni)) /
                                                          static_cast<double>(n));
      const double rr = static_cast<double>(re);
      const double modulus = std::exp(rr);
      const std::complex<double> z = modulus * std::complex<double>(std::cos(angle), std::sin(angle));
      // Exponent: the pieces' bounds, long double rounding of the real part, double rounding
      // of the imaginary sum and the angle; then exp, cos, sin (a few ulps each).
      const double dr = d_re + 1e-17 * (std::abs(rr) + 1) + 2 * kEps * std::abs(rr);
      const double da = d_im + 2 * kEps * abs_im + 24 * kEps + kEps * std::abs(angle);
      const double e_new = modulus * (std::expm1(dr) + da + 4 * kEps) * (1 + 1e-6);
      if (!(e_new < err[k])) continue;
      job.acc[k] = z;
      err[k] = e_new;
    }
  }
};

PrivacyLoss PrivacyLoss::compose(
    std::span<const std::pair<const PrivacyLoss*, std::int64_t>> pieces,
    const PldOptions& options) {
  Composer::Job job;
  for (const auto& [p, c] : pieces) job.pieces.push_back({p, c});
  Composer::run({&job, 1}, options);
  return std::move(job.out);
}

void PrivacyLoss::trim() {
  // Top: entries whose total is <= kTrimMass go to +inf; bottom: pushed up.
  double cum = 0;
  std::size_t end = pmf_.size();
  while (end > 1 && cum + pmf_[end - 1] <= kTrimMass) cum += pmf_[--end];
  inf_mass_ += cum;
  pmf_.resize(end);
  cum = 0;
  std::size_t begin = 0;
  while (begin + 1 < pmf_.size() && cum + pmf_[begin] <= kTrimMass) cum += pmf_[begin++];
  if (begin > 0) {
    pmf_.erase(pmf_.begin(), pmf_.begin() + static_cast<std::ptrdiff_t>(begin));
    pmf_[0] += cum;
    offset_ += static_cast<std::int64_t>(begin);
  }
}

PrivacyLoss PrivacyLoss::compose(const PrivacyLoss& other, const PldOptions& options) const {
  const std::pair<const PrivacyLoss*, std::int64_t> pieces[] = {{this, 1}, {&other, 1}};
  return compose(pieces, options);
}

PrivacyLoss PrivacyLoss::self_compose(std::int64_t times, const PldOptions& options) const {
  if (times < 0) fail("steps", static_cast<double>(times), ">= 0");
  const std::pair<const PrivacyLoss*, std::int64_t> pieces[] = {{this, times}};
  return compose(pieces, options);
}

PrivacyLoss PrivacyLoss::coarsen(std::int64_t factor) const {
  require_range("pld.refinement", factor, 1, 1 << 20);
  if (factor == 1) return *this;
  // Connect-the-dots of the stored measure onto the grid of step factor * h: an atom at l in
  // [A, A + H] is split between A and A + H preserving its mass and its e^{-l}-moment; the
  // profile of any non-negative measure is convex in e^eps, so the chord is above it.
  PrivacyLoss out = *this;
  const double h = interval_, big_h = h * static_cast<double>(factor);
  out.interval_ = big_h;
  auto floor_div = [](std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); };
  const std::int64_t first = floor_div(offset_, factor);
  const std::int64_t last = floor_div(offset_ + static_cast<std::int64_t>(pmf_.size()) - 1, factor) + 1;
  out.offset_ = first;
  out.pmf_.assign(static_cast<std::size_t>(last - first + 1), 0.0);
  std::vector<double> w_lo(static_cast<std::size_t>(factor));
  const double denom = -std::expm1(-big_h);
  for (std::int64_t r = 0; r < factor; ++r) {
    const double u = static_cast<double>(r) * h;  // l - A
    w_lo[static_cast<std::size_t>(r)] = std::clamp((std::exp(-u) - std::exp(-big_h)) / denom, 0.0, 1.0);
  }
  for (std::size_t j = 0; j < pmf_.size(); ++j) {
    const std::int64_t i = offset_ + static_cast<std::int64_t>(j);
    const std::int64_t c = floor_div(i, factor);
    const double w = w_lo[static_cast<std::size_t>(i - c * factor)];
    const auto at = static_cast<std::size_t>(c - first);
    out.pmf_[at] += w * pmf_[j];
    out.pmf_[at + 1] += (1.0 - w) * pmf_[j];
  }
  // Rounding of the weights and sums: relative to the masses moved (an error dw in a weight
  // moves dw m between A and A + H, which changes the profile by <= dw m (1 - e^{-H}), and
  // dw <= a few eps / (1 - e^{-H})), and those lie above eps - H wherever they change it.
  out.rel_slack_ += 8.0 * kEps;
  out.shift_ = std::max(out.shift_, big_h);
  out.trim();
  return out;
}

// ------------------------------------------------------------------ queries

double PrivacyLoss::rdp(double alpha) const {
  if (rdp_.empty()) return kInf;
  double s = 0;
  for (const auto& t : rdp_) s += t.count * t.rho(alpha);
  return std::isnan(s) ? kInf : s;
}

double PrivacyLoss::pmf_delta(double eps) const {
  // sum_{l_j > eps} p_j (1 - e^{eps - l_j}), from the top (small terms first).
  double s = 0;
  for (std::size_t j = pmf_.size(); j-- > 0;) {
    const double l = static_cast<double>(offset_ + static_cast<std::int64_t>(j)) * interval_;
    if (l <= eps) break;
    s += pmf_[j] * -std::expm1(eps - l);
  }
  return s;
}

double PrivacyLoss::rdp_log_delta(double eps) const {
  if (rdp_.empty()) return 0.0;
  RdpCurve curve{[this](double a) { return rdp(a); }};
  return std::min(0.0, best_log_delta(curve, eps).value);
}

double PrivacyLoss::delta(double eps) const { return std::exp(log_delta(eps)); }

double PrivacyLoss::error_bound(double eps) const {
  // slack_ + rel_slack_ T with T <= delta_ideal(eps - shift_ - t) / (1 - e^{-t}) for every
  // t > 0 and delta_ideal <= stored + slack_ + rel_slack_ (T <= 1 anyway); t on a geometric
  // grid from the grid spacing up, stopping past the minimum (about 1/lambda, lambda the
  // decay rate of the profile). One pass from the top of the stored law: with S0 the mass
  // above x and A = sum p_j e^{l_k - l_j} over the same entries (l_k the lowest), the stored
  // profile at x is S0 - e^{x - l_k} A, computed to within 4 eps S0.
  if (!(rel_slack_ > 0)) return slack_;
  if (std::isnan(eps)) return slack_ + rel_slack_;
  const double eh = std::exp(-interval_);
  double best = 1.0, prev = kInf, s0 = 0.0, a = 0.0;
  std::size_t j = pmf_.size();
  auto loss = [&](std::size_t i) { return static_cast<double>(offset_ + static_cast<std::int64_t>(i)) * interval_; };
  for (double t = std::max(interval_, 1e-9); t < 64; t *= 4) {
    const double x = eps - shift_ - t;
    while (j > 0 && loss(j - 1) > x) {
      --j;
      s0 += pmf_[j];
      a = pmf_[j] + eh * a;
    }
    const double stored = j < pmf_.size() ? std::max(0.0, s0 - std::exp(x - loss(j)) * a) + 4 * kEps * s0 : 0.0;
    const double v = (stored + inf_mass_ + slack_ + rel_slack_) / -std::expm1(-t);
    best = std::min(best, v);
    if (v > prev) break;
    prev = v;
  }
  return slack_ + rel_slack_ * best;
}

double PrivacyLoss::log_delta(double eps) const {
  if (std::isnan(eps)) fail("epsilon", eps, "a number");
  const double margin = inf_mass_ + error_bound(eps);
  const double d = std::min(1.0, pmf_delta(eps) + margin);
  double ld = std::log(d);
  // The RDP route where the margins dominate (tiny delta, eps beyond the grid) or the grid
  // is coarse for the answer.
  if (!rdp_.empty() && (margin >= 1e-2 * d || d < 1e-250 || interval_ > 2e-2 * std::max(eps, 1e-3)) &&
      eps >= 0)
    ld = std::min(ld, rdp_log_delta(eps));
  return ld;
}

double PrivacyLoss::pmf_epsilon(double target) const {
  // target applies to pmf_delta alone (margins already subtracted). Returns +inf if no eps.
  if (!(target > 0)) return kInf;
  const std::size_t n = pmf_.size();
  const double h = interval_, eh = std::exp(-h);
  auto loss = [&](std::size_t k) {
    return static_cast<double>(offset_ + static_cast<std::int64_t>(k)) * h;
  };
  // From the top: S0 = sum_{j >= k} p_j, A = sum_{j >= k} p_j e^{l_k - l_j}; for eps in
  // [l_{k-1}, l_k), pmf_delta(eps) = S0 - e^{eps - l_k} A, and pmf_delta(l_{k-1}) =
  // S0 - e^{-h} A. Stop at the first k (from the top) where that exceeds the target.
  double s0 = 0, a = 0;
  std::size_t k = n;
  for (;;) {
    if (k == 0) break;
    --k;
    s0 += pmf_[k];
    a = pmf_[k] + eh * a;
    if (k == 0 || s0 - eh * a > target) break;
  }
  // (k == 0 with the target met at l_0 too: below the lowest loss the same formula holds.)
  const double r = (s0 - target) / a;
  if (!(r > 0)) return loss(k);  // pmf_delta(l_k) <= target with nothing above: l_k or less
  double e = std::min(loss(k), loss(k) + std::log(r));
  if (k > 0) e = std::max(e, loss(k - 1));
  // Conservative end: step up until the stored law meets the target (a few ulps at most),
  // checked with the in-cell form S0 - e^{eps - l_k} A (exact algebra of pmf_delta there).
  auto in_cell = [&](double x) { return s0 - std::exp(x - loss(k)) * a; };
  for (int i = 0; i < 200 && e < loss(k) && in_cell(e) > target; ++i)
    e = std::min(loss(k), e + std::max(4 * kEps * std::abs(e), 1e-300) * std::ldexp(1.0, std::min(i, 60)));
  return e;
}

double PrivacyLoss::epsilon(double delta) const {
  require_open("delta", delta, 0.0, 1.0);
  double margin = inf_mass_ + slack_;
  double e = pmf_epsilon(delta - margin);
  if (e < kInf && rel_slack_ > 0) {
    // The relative part of the bound at e0 = e bounds it at every eps >= e0 (each term of
    // error_bound decreases in eps): solve once more with it, which only moves eps up.
    margin += error_bound(e) - slack_;
    e = pmf_epsilon(delta - margin);
  }
  // The RDP route where the grid's answer is weak: margins dominate, or a grid coarse for
  // the answer.
  if (!rdp_.empty() &&
      (!(e < kInf) || margin >= 1e-2 * delta || interval_ > 2e-2 * std::max(e, 1e-3))) {
    RdpCurve curve{[this](double a) { return rdp(a); }};
    e = std::min(e, best_epsilon(curve, delta).value);
  }
  return std::max(0.0, e);
}

// ------------------------------------------------------------------ Pld

Pld Pld::gaussian(double mu, const PldOptions& options) {
  auto p = std::make_shared<const PrivacyLoss>(PrivacyLoss::gaussian(mu, options));
  return Pld(p, p);
}

Pld Pld::laplace(double r, const PldOptions& options) {
  auto p = std::make_shared<const PrivacyLoss>(PrivacyLoss::laplace(r, options));
  return Pld(p, p);
}

Pld Pld::sampled_gaussian(double q, double sigma, Subsampling scheme, Neighbours neighbours,
                          const PldOptions& options) {
  require_closed("q", q, 0.0, 1.0);
  require_positive("sigma", sigma);
  const bool replace = neighbours == Neighbours::replace;
  if (q == 1.0 || (scheme == Subsampling::fixed && !replace)) {
    // q = 1: the Gaussian mechanism, sensitivity 1 (add/remove) or 2 (replace).
    // Fixed-size batches under add/remove: no amplification claimed, as div/rdp.cpp (the
    // coupling that replaces the added record by a uniformly chosen other one makes every
    // pair of batches differ by one replacement, and joint convexity gives the Gaussian
    // mechanism at sensitivity 2).
    const double shift = (replace || scheme == Subsampling::fixed) ? 2.0 : 1.0;
    return gaussian(shift / sigma, options);
  }
  if (scheme == Subsampling::poisson && replace) {
    // Replace-one under Poisson sampling: the replaced record keeps its inclusion coin, so
    // the sums are S + B g and S + B g' with B ~ Bernoulli(q) shared; with g = +1, g' = -1
    // (the worst case at clip norm 1) the pair is the symmetric mixture pair (the tight
    // modelling dp_accounting uses for REPLACE_ONE), not "remove then add".
    auto p = std::make_shared<const PrivacyLoss>(PrivacyLoss::mixture_vs_mixture(q, sigma, options));
    return Pld(p, p);
  }
  if (scheme == Subsampling::fixed) {
    // Fixed-size (without replacement) replace-one, q = b/n. Zhu, Dong, Wang 2022
    // ("Optimal accounting of differential privacy via characteristic function", Table 1;
    // Balle-Barthe-Gaboardi 2018 Thm 10): for sampling without replacement under
    // substitution, (A, B) = (q P + (1-q) Q, Q) dominates every ordered neighbouring pair
    // for eps >= 0 when (P, Q) dominates the base mechanism; for the noisy sum that is
    // (N(2, s^2), N(0, s^2)) (||g - g'|| <= 2 at clip norm 1) -- the pair behind the WBK
    // Thm 9 RDP bound div/rdp.cpp uses. Here the two orders are NOT the exact output pairs
    // of a fixed (D, D') (the batch without the record is not independent of whether it
    // is in), so (A, B) alone is not known to dominate at eps < 0, which composition needs;
    // by H_g(X||Y) = 1 - g + g H_{1/g}(Y||X) the reverse order (B, A) does there. One law
    // whose profile is max(delta_{A||B}, delta_{B||A}) at every eps dominates both
    // (the symmetrised trade-off function) and is composed once.
    auto p = std::make_shared<const PrivacyLoss>(
        PrivacyLoss::mixture_vs_gaussian_symmetrised(q, sigma, 2.0, options));
    return Pld(p, p);
  }
  // Poisson add/remove: ((1-q)N(0) + qN(1), N(0)) and the reverse order: for D = D' + x
  // the output pair IS (the image of) the first at every eps (Mironov-Talwar-Zhang 2019,
  // Koskela et al. 2020), for D' = D + x the second. One discretisation gives both.
  auto [first, second] = PrivacyLoss::mixture_and_reversed(q, sigma, 1.0, options);
  return Pld(std::make_shared<const PrivacyLoss>(std::move(first)),
             std::make_shared<const PrivacyLoss>(std::move(second)));
}

Pld Pld::compose(std::span<const std::pair<const Pld*, std::int64_t>> pieces,
                 const PldOptions& options) {
  // Both orders in one pass (their transforms share the complex FFTs).
  Composer::Job jobs[2];
  bool symmetric = true;
  for (const auto& [p, c] : pieces) {
    jobs[0].pieces.push_back({p->first_.get(), c});
    jobs[1].pieces.push_back({p->second_.get(), c});
    symmetric = symmetric && p->symmetric();
  }
  Composer::run(std::span<Composer::Job>(jobs, symmetric ? 1 : 2), options);
  auto a = std::make_shared<const PrivacyLoss>(std::move(jobs[0].out));
  if (symmetric) return Pld(a, a);
  return Pld(a, std::make_shared<const PrivacyLoss>(std::move(jobs[1].out)));
}

Pld Pld::compose(const Pld& other, const PldOptions& options) const {
  const std::pair<const Pld*, std::int64_t> pieces[] = {{this, 1}, {&other, 1}};
  return compose(pieces, options);
}

Pld Pld::self_compose(std::int64_t times, const PldOptions& options) const {
  if (times < 0) fail("steps", static_cast<double>(times), ">= 0");
  const std::pair<const Pld*, std::int64_t> pieces[] = {{this, times}};
  return compose(pieces, options);
}

Pld Pld::compose_gaussian(double mu, const PldOptions& options) const {
  if (std::isnan(mu) || mu < 0) fail("mu", mu, ">= 0");
  // On this PLD's grid, or on one 2, 4, ... times coarser (coarsen: pessimistic) when the
  // Gaussian's losses (N(mu^2/2, mu^2), about 19 mu wide) would not fit in max_length points
  // next to the stored ones.
  const double h = first_->interval();
  const double span = static_cast<double>(std::max(first_->pmf().size(), second_->pmf().size())) * h +
                      20.0 * mu + 1.0 * h;
  std::int64_t factor = 1;
  while (span / (h * static_cast<double>(factor)) > 0.5 * static_cast<double>(options.max_length) &&
         factor < (std::int64_t{1} << 20))
    factor *= 2;
  const Pld base = factor > 1 ? coarsen(factor) : *this;
  PldOptions o = options;
  o.fixed_interval = false;  // the grid of the stored law, whatever it is
  o.interval = base.first().interval();
  return base.compose(gaussian(mu, o), o);
}

Pld Pld::coarsen(std::int64_t factor) const {
  auto a = std::make_shared<const PrivacyLoss>(first_->coarsen(factor));
  if (symmetric()) return Pld(a, a);
  return Pld(a, std::make_shared<const PrivacyLoss>(second_->coarsen(factor)));
}

namespace {

// Standard deviation of the stored finite part of a law (normalised).
double loss_std(const PrivacyLoss& p) { return std::sqrt(moments(p.pmf()).var) * p.interval(); }

// The steps on a fixed grid (PldOptions::fixed_interval): each mechanism on `interval`, or
// on a grid `refinement` times finer composed in blocks and coarsened.
Pld compose_steps_fixed(std::span<const PldSteps> steps, const PldOptions& options) {
  std::vector<Pld> parts;
  std::vector<std::int64_t> counts;
  for (const auto& step : steps) {
    if (step.count < 0) fail("count", static_cast<double>(step.count), ">= 0");
    if (step.count == 0) continue;
    if (step.gaussian > 0) {  // exact: one Gaussian of mu sqrt(count)
      parts.push_back(Pld::gaussian(step.gaussian * std::sqrt(static_cast<double>(step.count)), options));
      counts.push_back(1);
      continue;
    }
    std::int64_t r = options.refinement;
    std::optional<Pld> coarse;
    if (r == 0) {
      coarse = step.mechanism(options);
      const double sd = std::min(loss_std(coarse->first()), loss_std(coarse->second()));
      r = 1;
      while (r < 64 && static_cast<double>(r) * sd < options.cells * options.interval) r *= 2;
      if (step.count == 1) r = 1;
    }
    if (r == 1) {
      parts.push_back(coarse ? *coarse : step.mechanism(options));
      counts.push_back(step.count);
      continue;
    }
    PldOptions fine = options;
    fine.interval = options.interval / static_cast<double>(r);
    if (fine.interval < 1e-7)
      fail("pld.refinement", static_cast<double>(r), "at most pld.interval / 1e-7");
    const Pld law = step.mechanism(fine);
    const std::int64_t k = std::min(options.block > 0 ? options.block : r * r, step.count);
    const std::int64_t full = step.count / k, rest = step.count % k;
    parts.push_back(law.self_compose(k, fine).coarsen(r));
    counts.push_back(full);
    if (rest > 0) {
      parts.push_back(law.self_compose(rest, fine).coarsen(r));
      counts.push_back(1);
    }
  }
  std::vector<std::pair<const Pld*, std::int64_t>> pieces;
  for (std::size_t i = 0; i < parts.size(); ++i) pieces.emplace_back(&parts[i], counts[i]);
  return Pld::compose(pieces, options);
}

// The std of one step's loss under P (the smaller of the two orders), from discretisations
// on grids coarse enough to be cheap (and without the far tails): from 0.1, each next grid
// 1/4 of the std measured on the previous one, until the grid is at most half the std
// (connect-the-dots adds about h^2/6 to the variance: removed).
double step_std(const PldSteps& step, PldOptions o) {
  double hp = 0.1;
  o.tail_mass = 1e-6;  // the std does not see the far tails; the grids stay short
  for (int round = 0; round < 24; ++round) {
    o.interval = hp;
    std::optional<Pld> law;
    try {
      law = step.mechanism(o);
    } catch (const InvalidArgument&) {  // losses too wide for this grid
      hp *= 64;
      if (hp > 1e6) throw;
      continue;
    }
    const double s = std::min(loss_std(law->first()), loss_std(law->second()));
    if (!(s > 0)) return 0.0;
    if (s >= 2 * hp) return std::sqrt(s * s - hp * hp / 6);
    hp = std::max(s / 4, 1e-12);
  }
  return hp;
}

// The Chernoff window [lo, hi] (loss units) of a sum of laws with counts, each on its own
// grid: each tail beyond it has mass <= truncation (log-mgfs of the stored laws, which bound
// the true ones from above).
std::pair<double, double> window_of(std::span<const std::pair<const PrivacyLoss*, double>> laws,
                                    double truncation) {
  double lo = 0, hi = 0, var = 0, widest = 0;
  for (const auto& [p, c] : laws) {
    lo += c * static_cast<double>(p->offset()) * p->interval();
    hi += c * static_cast<double>(p->offset() + static_cast<std::int64_t>(p->pmf().size()) - 1) * p->interval();
    var += c * moments(p->pmf()).var * p->interval() * p->interval();
    widest = std::max(widest, static_cast<double>(p->pmf().size()) * p->interval());
  }
  const double sd = std::sqrt(var), log_tol = std::log(truncation);
  if (!(sd > 0)) return {lo, hi};
  double up = hi, down = lo;
  std::vector<double> pos = chernoff_lambdas(sd, widest), neg, kp, kn, one;
  for (const double l : pos) neg.push_back(-l);
  kp.assign(pos.size(), 0.0);
  kn.assign(pos.size(), 0.0);
  for (const auto& [p, c] : laws) {
    log_mgfs(*p, pos, one);
    for (std::size_t i = 0; i < one.size(); ++i) kp[i] += c * one[i];
    log_mgfs(*p, neg, one);
    for (std::size_t i = 0; i < one.size(); ++i) kn[i] += c * one[i];
  }
  for (std::size_t i = 0; i < pos.size(); ++i) {
    if (std::isfinite(kp[i])) up = std::min(up, (kp[i] - log_tol) / pos[i]);
    if (std::isfinite(kn[i])) down = std::max(down, (log_tol - kn[i]) / pos[i]);
  }
  return {std::min(down, up), up};
}

// The automatic grid (PldOptions::fixed_interval = false): Gaussian steps composed exactly
// into one Gaussian; the other mechanisms on a spacing h = (rms over the steps of the std of
// one step's loss) / cells, the composition's connect-the-dots error then being about
// sum_t h_t^2 (lambda + 1) / 12 in eps -- relative to eps about 1/(12 cells^2) whatever T
// and q (docs/pld.md) -- coarser only when the composed window would not fit in max_length
// points. A mechanism much wider than the others (a noise schedule's low-noise steps) is
// discretised on a multiple 2^p h <= its std / cells of that grid: its steps then pay at most
// their share of sum_t std_t^2 / cells^2, so with cells sqrt(2) times larger the total stays
// within the single-grid error, and its far tails are not resolved finer than needed.
//
// Long sequences of narrow steps compose in two stages when that shortens the FFTs at least
// threefold: blocks of about T / 64 steps on a grid sqrt(1.25) times finer, each block
// coarsened by r (connect-the-dots again), then the blocks. With r^2 <= T / (4 * 64 * kinds)
// the coarse stage pays its connect-the-dots error (T / k) (r h)^2 at most a quarter of the
// fine stage's T h^2, so the total stays that of one stage at h; few blocks keep the
// floating-point error of the stored blocks (the inverse transform's, absolute) from being
// multiplied by more than ~64.
constexpr double kBlocks = 64;

Pld compose_steps_automatic(std::span<const PldSteps> steps, const PldOptions& options) {
  double mu2 = 0, weighted_var = 0, count = 0;
  std::vector<const PldSteps*> others;
  std::vector<double> sds;
  PldOptions probe = options;
  probe.fixed_interval = false;
  for (const auto& step : steps) {
    if (step.count < 0) fail("count", static_cast<double>(step.count), ">= 0");
    if (step.count == 0) continue;
    if (step.gaussian > 0) {
      if (!std::isfinite(step.gaussian)) fail("gaussian", step.gaussian, "finite");
      mu2 += static_cast<double>(step.count) * step.gaussian * step.gaussian;
      continue;
    }
    others.push_back(&step);
    sds.push_back(step_std(step, probe));
    weighted_var += static_cast<double>(step.count) * sds.back() * sds.back();
    count += static_cast<double>(step.count);
  }
  const double mu = std::sqrt(mu2);
  const bool spread = count > 0 && weighted_var > 0;
  double cells = options.cells;
  // Gaussian steps alone: one discretisation of N(mu^2/2, mu^2), no composition: 16 cells
  // times finer (eps within ~1e-6 relative) for ~20 x 16 cells knots.
  double h = spread ? std::sqrt(weighted_var / count) / cells : (mu > 0 ? mu / (16 * cells) : 1e-3);
  // Each mechanism's grid: 2^p h (p = 0 for all but the much wider ones).
  std::vector<int> p(others.size(), 0);
  auto powers = [&] {
    bool any = false;
    for (std::size_t i = 0; i < others.size(); ++i) {
      const double ratio = sds[i] / (cells * h);
      p[i] = ratio >= 2 ? std::min(20, static_cast<int>(std::floor(std::log2(ratio)))) : 0;
      any = any || p[i] > 0;
    }
    return any;
  };
  if (spread && powers()) {
    cells *= std::sqrt(2.0);
    h /= std::sqrt(2.0);
    powers();
  }
  int p_gauss = 0;  // the exact Gaussian: one step, on its own multiple of the grid
  if (mu > 0 && spread)
    p_gauss = std::clamp(static_cast<int>(std::floor(std::log2(mu / (4 * cells * h)))), 0, 20);
  h = std::clamp(h, 1e-12, 1e6);
  PldOptions o = options;
  o.fixed_interval = false;
  auto grid_of = [&](int power) {
    PldOptions g = o;
    g.interval = std::ldexp(h, power);
    return g;
  };
  // r = 1: one stage; r > 1: two stages, blocks of `block[i]` steps coarsened to r h.
  std::int64_t r = 1;
  std::vector<std::int64_t> block(others.size(), 1);
  bool decided = others.empty();
  for (int attempt = 0;; ++attempt) {
    o.interval = h;
    try {
      std::vector<Pld> laws;
      for (std::size_t i = 0; i < others.size(); ++i) laws.push_back(others[i]->mechanism(grid_of(p[i])));
      if (!decided) {
        decided = true;
        std::vector<std::pair<const PrivacyLoss*, double>> all;
        for (std::size_t i = 0; i < laws.size(); ++i)
          all.emplace_back(&laws[i].first(), static_cast<double>(others[i]->count));
        const auto [lo, hi] = window_of(all, options.truncation_mass);
        const double one_stage = (hi - lo) / h;
        const auto kinds = static_cast<double>(others.size());
        const double rr = std::sqrt(count / (4 * kBlocks * kinds));
        if (one_stage > 65536 && rr >= 4) {
          const auto r2 = static_cast<std::int64_t>(1) << static_cast<int>(std::floor(std::log2(rr)));
          std::vector<std::pair<const PrivacyLoss*, double>> blocks;
          std::vector<std::int64_t> k(others.size());
          for (std::size_t i = 0; i < others.size(); ++i) {
            k[i] = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(static_cast<double>(others[i]->count) / kBlocks)));
            blocks.emplace_back(&laws[i].first(), static_cast<double>(k[i]));
          }
          const auto [blo, bhi] = window_of(blocks, options.truncation_mass);
          const double fine = h / std::sqrt(1.25);
          if ((bhi - blo) / fine + (hi - lo) / (fine * static_cast<double>(r2)) < one_stage / 3) {
            r = r2;
            block = k;
            h = fine;
            for (auto& pi : p) pi = std::min<int>(pi, static_cast<int>(std::log2(static_cast<double>(r))));
            continue;  // the laws again, on the finer grid
          }
        }
      }
      const PldOptions coarse = grid_of(r == 1 ? 0 : static_cast<int>(std::log2(static_cast<double>(r))));
      std::vector<Pld> parts;
      std::vector<std::int64_t> counts;
      for (std::size_t i = 0; i < others.size(); ++i) {
        const std::int64_t c = others[i]->count;
        if (r == 1) {
          parts.push_back(laws[i]);
          counts.push_back(c);
          continue;
        }
        const std::int64_t factor = r >> p[i];  // from 2^p h to r h
        const PldOptions own = grid_of(p[i]);
        const std::int64_t k = std::min(block[i], c), full = c / k, rest = c % k;
        parts.push_back(k == 1 ? laws[i].coarsen(factor) : laws[i].self_compose(k, own).coarsen(factor));
        counts.push_back(full);
        if (rest > 0) {
          parts.push_back(rest == 1 ? laws[i].coarsen(factor) : laws[i].self_compose(rest, own).coarsen(factor));
          counts.push_back(1);
        }
      }
      if (mu > 0) {
        parts.push_back(Pld::gaussian(mu, r == 1 ? grid_of(p_gauss) : coarse));
        counts.push_back(1);
      }
      // The composed window must fit: estimated from the laws themselves, the spacing
      // widened at once to what fits (instead of failing in the composition).
      std::vector<std::pair<const PrivacyLoss*, double>> pieces_laws;
      for (std::size_t i = 0; i < parts.size(); ++i)
        pieces_laws.emplace_back(&parts[i].first(), static_cast<double>(counts[i]));
      const auto [lo, hi] = window_of(pieces_laws, options.truncation_mass);
      const double fits = 0.9 * static_cast<double>(options.max_length) * coarse.interval;
      if (hi - lo > fits && attempt < 8) {
        h = std::min(1e6, h * std::max(1.25, (hi - lo) / fits));
        continue;
      }
      std::vector<std::pair<const Pld*, std::int64_t>> pieces;
      for (std::size_t i = 0; i < parts.size(); ++i) pieces.emplace_back(&parts[i], counts[i]);
      return Pld::compose(pieces, coarse);
    } catch (const InvalidArgument&) {
      // A mechanism's own losses do not fit on the grid (too fine for them): coarser.
      if (attempt >= 8 || h >= 1e6) throw;
      h = std::min(1e6, 4 * h);
    }
  }
}

}  // namespace

Pld compose_steps(std::span<const PldSteps> steps, const PldOptions& options) {
  validate(options);
  // A step is an exact Gaussian (gaussian > 0) or a mechanism; a Gaussian whose mu is not a
  // positive number (mu^2 underflowed under a huge noise) is neither, and must not be called.
  for (const auto& step : steps)
    if (!step.mechanism && !(step.gaussian > 0))
      fail("gaussian", step.gaussian, "> 0: the privacy loss of a Gaussian step (sensitivity / std), or a mechanism");
  return options.fixed_interval ? compose_steps_fixed(steps, options)
                                : compose_steps_automatic(steps, options);
}

double Pld::delta(double eps) const {
  return symmetric() ? first_->delta(eps) : std::max(first_->delta(eps), second_->delta(eps));
}

double Pld::log_delta(double eps) const {
  return symmetric() ? first_->log_delta(eps)
                     : std::max(first_->log_delta(eps), second_->log_delta(eps));
}

double Pld::epsilon(double delta) const {
  return symmetric() ? first_->epsilon(delta)
                     : std::max(first_->epsilon(delta), second_->epsilon(delta));
}

}  // namespace hsdp::div
