// Privacy loss distributions, part 1 (pld_internal.hpp): the law of each mechanism's privacy
// loss through its tails, discretised pessimistically on a grid (connect-the-dots), the
// PrivacyLoss factories, and coarsen (the same law on a coarser grid).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <utility>
#include <vector>

#include "hsdp/divergence/pld.hpp"
#include "hsdp/divergence/rdp.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/numerics/log_normal.hpp"
#include "pld_internal.hpp"

namespace hsdp::div {

using namespace pld_detail;

namespace {

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

}  // namespace

namespace pld_detail {

void check_grid_size(double span, const PldOptions& o) {
  if (span / o.interval > static_cast<double>(o.max_length))
    fail("pld.interval", o.interval,
         fmt::format("coarse enough for the loss range {} to fit in pld.max_length = {} "
                     "points (use a larger interval)",
                     show(span), o.max_length));
}

}  // namespace pld_detail

namespace {

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

// ------------------------------------------------------------------ coarser grids

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

}  // namespace hsdp::div
