// Privacy loss distributions: see include/hsdp/divergence/pld.hpp and docs/pld.md.
//
// Error accounting (every term is added to delta, never subtracted):
//  * connect-the-dots (Doroshenko et al. 2022): the profile of the stored law is the chord
//    of the true profile (in e^eps) between grid points: an upper bound, no error term;
//  * floating point in the discretisation: a cell's P- and Q-masses are differences of
//    normal tails, each with relative error <= kTailRel (num::q is ~1e-15, docs/numerics.md);
//    an error d in a cell's P-mass changes the profile at any eps by <= d, an error in the
//    split between its two ends by <= (split error) (1 - e^{-h}) = e^a (Q-mass error) +
//    e^{-h} (P-mass error). Summed over the cells: PrivacyLoss::slack_.
//  * composition: a perturbation of one factor by a signed measure whose profile effect
//    is <= e for every eps changes the composed profile by <= e (mass of the others <= 1),
//    so the slacks of the pieces add (times their counts);
//  * FFT round-off: Higham, Accuracy and Stability of Numerical Algorithms (2nd ed.),
//    Thm 24.2: ||fl(FFT x) - FFT x||_2 <= log2(N) eta ||FFT x||_2 with eta ~ 5 eps_mach; we
//    use eta = 8 eps_mach. Powers z^n by repeated squaring: relative error <= 3 n eps_mach.
//    Propagated through the product of transforms and the inverse, and to the profile by
//    ||.||_1 <= sqrt(N) ||.||_2: fft_error() below.
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

#include "../numerics/real_fft.hpp"
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
  law.at = [=](double l) {
    if (l < ess_inf) return Tails{1.0, 0.0, 1.0, 0.0};
    if (l >= ess_sup) return Tails{0.0, 1.0, 0.0, 1.0};
    const double x = x_of_loss(l);
    Tails t{0, 0, 0, 0};
    for (const auto& c : p) t.tp += c.weight * num::q((x - c.mean) / s);
    for (const auto& c : q) t.tq += c.weight * num::q((x - c.mean) / s);
    if (t.tp >= 0.25)
      for (const auto& c : p) t.hp += c.weight * num::q((c.mean - x) / s);
    else
      t.hp = 1.0 - t.tp;
    if (t.tq >= 0.25)
      for (const auto& c : q) t.hq += c.weight * num::q((c.mean - x) / s);
    else
      t.hq = 1.0 - t.tq;
    return t;
  };
  return law;
}

// A finite l with f(l) <= target, searched outward from 0 in `direction` by doubling, then refined
// by bisection (f monotone; tails of a law).
double tail_point(const std::function<double(double)>& f, double target, double direction) {
  double near = 0.0, far = direction;
  for (int i = 0; f(far) > target; ++i) {
    if (i > 60) throw std::logic_error("pld: loss tail does not decay");
    near = far;
    far *= 2.0;
  }
  for (int i = 0; i < 40; ++i) {
    const double mid = 0.5 * (near + far);
    (f(mid) > target ? near : far) = mid;
  }
  return far;
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
  require_closed(name("interval"), o.interval, 1e-6, 0.5);
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

struct Discretised {
  std::int64_t offset;
  std::vector<double> pmf;
  double inf_mass;
  double slack;
};

// Connect-the-dots (Doroshenko et al. 2022, Alg. 1 in the form "split each cell's mass
// between its ends preserving P- and Q-mass"): for the cell (a, a + h], with P-mass m_P and
// Q-mass m_Q, the lower end gets m_lo = (e^a m_Q - e^{-h} m_P) / (1 - e^{-h}) and the upper
// end m_P - m_lo; then E_P[1] and E_P[e^{-L}] are unchanged and the profile is the chord.
Discretised discretise(const LossLaw& law, const PldOptions& o) {
  validate(o);
  const double h = o.interval;
  double lo = std::isfinite(law.ess_inf)
                  ? law.ess_inf
                  : tail_point([&](double l) { return law.at(l).hp; }, o.tail_mass, -1.0);
  double hi = std::isfinite(law.ess_sup)
                  ? law.ess_sup
                  : tail_point([&](double l) { return law.at(l).tp; }, o.tail_mass, 1.0);
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
  // Knots: every grid point, but every 2nd/4th where the mass beyond the knot is below
  // 1e-16/1e-20. Connect-the-dots is valid for any set of knots (the chord over a longer
  // cell is still above the convex profile); a coarse cell costs tightness in proportion to
  // its mass -- tilted by e^{lambda l}, since large-deviation events of many steps weigh
  // the tails (measured: strides of 8-50 where the mass is < 1e-10 cost 0.003 in eps at
  // T = 10^4, so only the far tails are thinned).
  auto stride = [&](const Knot& kn) -> std::int64_t {
    const double m = std::min(kn.tp, kn.hp);
    return m >= 1e-16 ? 1 : m >= 1e-20 ? 2 : 4;
  };
  Discretised d;
  d.offset = i_lo;
  d.pmf.assign(k, 0.0);
  const std::int64_t last = static_cast<std::int64_t>(k) - 1;
  Knot cur = knot(0);
  d.pmf[0] = cur.hp;  // mass at or below the lowest grid point, pushed up to it
  // Round-off: at any eps the profile of the result is sum_cells [m_P g(b) + m_lo (g(a) -
  // g(b))], g(l) = (1 - e^{eps - l})_+, which telescopes: cells wholly above eps contribute
  // P(L > a) - e^eps Q(L > a) at the lowest such knot a, cells below contribute 0. So the
  // tails' errors do not accumulate over cells: a few times kTailRel times the largest
  // (smaller-side P tail + e^a smaller-side Q tail) at one knot bounds them, plus
  // eps_mach-level rounding of the splits and sums, plus whatever clamping moved.
  double worst_knot = 0.0, clamped = 0.0;
  const double e_h = std::exp(-h), one_minus_e_h = -std::expm1(-h);
  auto knot_error = [&](const Knot& kn) {
    const double a = loss(kn.j);
    return std::min(kn.tp, kn.hp) + std::exp(a) * std::min(kn.tq, kn.hq);
  };
  worst_knot = knot_error(cur);
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
    const double ea = std::exp(a);
    const bool unit = nxt.j == cur.j + 1;
    const double e_w = unit ? e_h : std::exp(-width), one_minus = unit ? one_minus_e_h : -std::expm1(-width);
    const double m_raw = (ea * mq - e_w * mp) / one_minus;
    const double m_lo = std::clamp(m_raw, 0.0, mp);  // round-off only: [0, m_P] exactly
    clamped += (mp - mp_raw) + ea * (mq - mq_raw) + std::abs(m_raw - m_lo);
    d.pmf[static_cast<std::size_t>(cur.j)] += m_lo;
    d.pmf[static_cast<std::size_t>(nxt.j)] += mp - m_lo;
    cur = nxt;
    worst_knot = std::max(worst_knot, knot_error(cur));
  }
  d.inf_mass = cur.tp * (1.0 + kTailRel);  // above the grid: +inf
  // Switching between tail and head differences adds one more knot's worth: 6 kTailRel.
  const double slack = 6.0 * kTailRel * worst_knot + 16.0 * kEps + clamped;
  d.slack = slack;
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
  auto low = [&](const LossLaw& law) {
    return std::isfinite(law.ess_inf) ? law.ess_inf
                                      : tail_point([&](double l) { return law.at(l).hp; }, o.tail_mass, -1.0);
  };
  auto high = [&](const LossLaw& law) {
    return std::isfinite(law.ess_sup) ? law.ess_sup
                                      : tail_point([&](double l) { return law.at(l).tp; }, o.tail_mass, 1.0);
  };
  const double lo = std::min(low(a), low(b)), hi = std::max(high(a), high(b));
  check_grid_size(hi - lo, o);
  const auto i_lo = static_cast<std::int64_t>(std::floor(lo / h));
  auto i_hi = static_cast<std::int64_t>(std::ceil(hi / h));
  if (i_hi == i_lo) ++i_hi;
  const auto k = static_cast<std::size_t>(i_hi - i_lo) + 1;
  std::vector<double> delta(k);
  double worst = 0.0;
  for (std::size_t j = 0; j < k; ++j) {
    const double l = static_cast<double>(i_lo + static_cast<std::int64_t>(j)) * h;
    const Tails ta = a.at(l), tb = b.at(l);
    const double el = std::exp(l);
    delta[j] = std::clamp(std::max(ta.tp - el * ta.tq, tb.tp - el * tb.tq), 0.0, 1.0);
    worst = std::max(worst, std::max(ta.tp + el * ta.tq, tb.tp + el * tb.tq));
  }
  // Profiles are non-increasing in eps; enforce it against round-off (raising only).
  for (std::size_t j = k - 1; j-- > 0;) delta[j] = std::max(delta[j], delta[j + 1]);
  Discretised d;
  d.offset = i_lo;
  d.pmf.assign(k, 0.0);
  const double g0 = std::exp(static_cast<double>(i_lo) * h), em1 = std::expm1(h);
  double prev_slope = (delta[0] - 1.0) / g0, clamped = 0.0;
  double gamma = g0;
  for (std::size_t j = 0; j < k; ++j) {
    const double slope = j + 1 < k ? (delta[j + 1] - delta[j]) / (gamma * em1) : 0.0;
    const double w = gamma * (slope - prev_slope);
    // Convexity makes w >= 0; a negative value is round-off: raise it to 0 (adds mass,
    // which only raises the profile) and count it.
    if (w < 0) clamped += -w;
    d.pmf[j] = std::max(0.0, w);
    prev_slope = slope;
    gamma *= std::exp(h);
  }
  d.inf_mass = delta[k - 1] * (1.0 + kTailRel);
  // Knot values carry the tails' relative error; the reconstruction telescopes back to them.
  d.slack = 4.0 * kTailRel * worst + 16.0 * kEps + kEps * clamped;
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
                                   double inf_mass, double slack,
                                   std::function<double(double)> rdp) {
  PrivacyLoss p;
  p.interval_ = interval;
  p.offset_ = offset;
  p.pmf_ = std::move(pmf);
  p.inf_mass_ = inf_mass;
  p.slack_ = slack;
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
  return from_grid(options.interval, d.offset, std::move(d.pmf), d.inf_mass, d.slack,
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
  return from_grid(options.interval, d.offset, std::move(d.pmf), d.inf_mass, d.slack,
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
  return from_grid(options.interval, d.offset, std::move(d.pmf), d.inf_mass, d.slack,
                   [q, z](double alpha) {
                     return sampled_gaussian_rdp(alpha, q, z, Subsampling::poisson, Neighbours::remove);
                   });
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
  return from_grid(options.interval, d.offset, std::move(d.pmf), d.inf_mass, d.slack,
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
  return from_grid(options.interval, d.offset, std::move(d.pmf), d.inf_mass, d.slack,
                   [q, s](double alpha) {
                     return sampled_gaussian_rdp(alpha, q, s, Subsampling::poisson, Neighbours::replace);
                   });
}

// ------------------------------------------------------------------ composition

namespace {


// log E[e^{lambda L}] over the stored finite part (Horner in r = e^{lambda h}, scaled so
// that nothing overflows).
double log_mgf(const PrivacyLoss& p, double lambda) {
  const auto& v = p.pmf();
  const double h = p.interval();
  if (v.empty()) return -kInf;
  double acc = 0.0;
  if (lambda >= 0) {
    const double rinv = std::exp(-lambda * h);
    for (const double x : v) acc = acc * rinv + x;
    return lambda * (static_cast<double>(p.offset() + static_cast<std::int64_t>(v.size()) - 1) * h) +
           std::log(acc);
  }
  const double r = std::exp(lambda * h);
  for (auto it = v.rbegin(); it != v.rend(); ++it) acc = acc * r + *it;
  return lambda * (static_cast<double>(p.offset()) * h) + std::log(acc);
}

// FFTW plans (and their twiddle tables) are reused per length within a thread.
num::detail::RealFft& fftw_for(std::size_t n) {
  thread_local std::map<std::size_t, std::unique_ptr<num::detail::RealFft>> cache;
  auto it = cache.find(n);
  if (it != cache.end()) return *it->second;
  if (cache.size() >= 8) cache.clear();
  return *cache.emplace(n, std::make_unique<num::detail::RealFft>(n)).first->second;
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

}  // namespace

PrivacyLoss PrivacyLoss::compose(
    std::span<const std::pair<const PrivacyLoss*, std::int64_t>> pieces,
    const PldOptions& options) {
  validate(options);
  std::vector<std::pair<const PrivacyLoss*, std::int64_t>> ps;
  for (const auto& [p, count] : pieces) {
    if (count < 0) fail("count", static_cast<double>(count), ">= 0");
    if (count > 0) ps.emplace_back(p, count);
  }
  PrivacyLoss out;
  out.interval_ = options.interval;
  if (ps.empty()) {
    out.pmf_ = {1.0};
    return out;
  }
  const double h = ps.front().first->interval_;
  for (const auto& [p, c] : ps)
    if (p->interval_ != h)
      fail("pld.interval", p->interval_, fmt::format("equal to {} (the other pieces')", show(h)));
  out.interval_ = h;
  if (ps.size() == 1 && ps.front().second == 1) return *ps.front().first;

  // Infinity mass, slack and Renyi terms of the composition.
  double log_finite = 0.0, slack = 0.0, mass_factor = 0.0, total_count = 0.0;
  i128 offset_sum = 0, top_sum = 0;
  for (const auto& [p, c] : ps) {
    const double cd = static_cast<double>(c);
    log_finite += cd * std::log1p(-std::min(1.0, p->inf_mass_));
    double m = 0.0;
    for (const double x : p->pmf_) m += x;
    mass_factor += cd * std::log(std::max(1.0, m));
    slack += cd * p->slack_;
    total_count += cd;
    offset_sum += static_cast<i128>(p->offset_) * c;
    top_sum += static_cast<i128>(p->offset_ + static_cast<std::int64_t>(p->pmf_.size()) - 1) * c;
    for (const auto& t : p->rdp_) out.rdp_.push_back({t.rho, t.count * cd});
  }
  out.inf_mass_ = -std::expm1(log_finite);
  slack *= std::exp(mass_factor);  // masses above 1 (round-off) scale the others' errors
  if (!(out.inf_mass_ < 1.0)) {
    out.pmf_ = {0.0};
    out.inf_mass_ = 1.0;
    out.slack_ = slack;
    return out;
  }

  // Window [lo, hi] of the sum from Chernoff bounds: P(S >= s) <= exp(K(t) - t s) and
  // P(S <= s) <= exp(K(-t) + t s), K the log-mgf of the sum = sum of counts x log-mgfs.
  const double log_tol = std::log(options.truncation_mass);
  double lo = static_cast<double>(offset_sum) * h, hi = static_cast<double>(top_sum) * h;
  const double support_hi = hi;
  std::vector<double> lambdas;
  for (int e = -4; e <= 8; e += 2) lambdas.push_back(std::ldexp(1.0, e));  // 1/16 .. 256
  std::vector<double> k_pos(lambdas.size()), k_neg(lambdas.size());
  for (std::size_t i = 0; i < lambdas.size(); ++i) {
    double kp = 0, kn = 0;
    for (const auto& [p, c] : ps) {
      kp += static_cast<double>(c) * log_mgf(*p, lambdas[i]);
      kn += static_cast<double>(c) * log_mgf(*p, -lambdas[i]);
    }
    k_pos[i] = kp;
    k_neg[i] = kn;
    if (std::isfinite(kp)) hi = std::min(hi, (kp - log_tol) / lambdas[i]);
    if (std::isfinite(kn)) lo = std::max(lo, (log_tol - kn) / lambdas[i]);
  }
  if (lo > hi) lo = hi;
  check_grid_size(hi - lo + h, options);
  auto i_lo = static_cast<std::int64_t>(std::floor(lo / h));
  auto i_hi = static_cast<std::int64_t>(std::ceil(hi / h));
  const auto width = static_cast<std::size_t>(i_hi - i_lo + 1);
  const std::size_t n = num::detail::fft_good_size(width);
  if (n > static_cast<std::size_t>(options.max_length)) check_grid_size(static_cast<double>(n) * h * 2, options);
  // The window actually used is [i_lo, i_lo + n - 1]; the mass of the sum above it.
  const double top = static_cast<double>(i_lo + static_cast<std::int64_t>(n) - 1) * h;
  double upper_tail = 0.0;
  if (top < support_hi) {
    double best = 0.0;  // log of the bound
    for (std::size_t i = 0; i < lambdas.size(); ++i)
      if (std::isfinite(k_pos[i])) best = std::min(best, k_pos[i] - lambdas[i] * (top + h));
    upper_tail = std::exp(best);
  }

  // Product of the pieces' transforms, powers by repeated squaring.
  const double eta = 8.0 * kEps, log2n = std::log2(static_cast<double>(n));
  const std::size_t nspec = n / 2 + 1;
  num::detail::RealFft& fft = fftw_for(n);
  double* const fft_real = fft.real();
  std::complex<double>* const fft_spec = fft.spectrum();
  std::vector<std::complex<double>> acc(nspec, {1.0, 0.0});
  // Round-off bound per frequency k (see the top of the file): with z_ck perturbed by at
  // most d_c = log2(n) eta ||p_c||_1 (the componentwise a-priori bound of a Cooley-Tukey
  // transform: log2(n) stages, each adding <= eta times the sum of the moduli it combines,
  // twiddles of modulus 1; Higham ch. 24), the product prod_c z_ck^{n_c} is off by
  // <= P_k [sum_c n_c d_c / m_ck + 3 n eps_mach], m_ck = |z_ck| + d_c,
  // P_k = prod_c m_ck^{n_c}. Most |z_ck|^{n_c} are tiny, so this is far below n d_c.
  std::vector<double> log_p(nspec, 0.0), rel(nspec, 3.0 * total_count * kEps);
  for (const auto& [p, c] : ps) {
    std::fill(fft_real, fft_real + n, 0.0);
    double norm1 = 0;
    for (std::size_t j = 0; j < p->pmf_.size(); ++j) {
      fft_real[j % n] += p->pmf_[j];  // folding: part of the wrap-around (see top)
      norm1 += p->pmf_[j];
    }
    const double d_c = log2n * eta * norm1;
    const double cd = static_cast<double>(c);
    fft.forward();
    for (std::size_t k = 0; k < nspec; ++k) {
      if (log_p[k] < kNegligibleLog) continue;  // this frequency is (and stays) 0
      const std::complex<double> z = fft_spec[k];
      const double az = std::sqrt(std::norm(z)), m = az + d_c;
      log_p[k] += cd * std::log(m);
      rel[k] += cd * d_c / m;
      // |z|^c below 1e-300 is set to 0 (its error bound P_k is then < 1e-300 too): avoids
      // denormal arithmetic in the powers.
      if (cd * std::log(az) < kNegligibleLog || log_p[k] < kNegligibleLog) {
        acc[k] = 0.0;
        log_p[k] = -kInf;
      } else {
        acc[k] *= cpow(z, c);
      }
    }
  }
  double err2 = 0, spec_norm1 = 0;
  for (std::size_t k = 0; k < nspec; ++k) {
    const double e = log_p[k] < kNegligibleLog ? 1e-300 : std::exp(log_p[k]) * rel[k];
    const double mult = k == 0 || 2 * k == n ? 1.0 : 2.0;  // Hermitian: both halves
    err2 += mult * e * e;
    spec_norm1 += mult * std::sqrt(std::norm(acc[k]));
  }
  std::copy(acc.begin(), acc.end(), fft_spec);
  fft.inverse();
  // Position r of the circular result holds the sums s = r (mod n); the window's index m
  // (loss (i_lo + m) h) is the position sum s = i_lo + m - offset_sum.
  const std::int64_t shift = floor_mod(static_cast<i128>(i_lo) - offset_sum, static_cast<std::int64_t>(n));
  const double scale = 1.0 / static_cast<double>(n);
  std::vector<double> pmf(n);
  for (std::size_t m = 0, r = static_cast<std::size_t>(shift); m < n; ++m, r = r + 1 == n ? 0 : r + 1)
    pmf[m] = std::max(0.0, fft_real[r] * scale);  // negative round-off -> 0: adds mass

  // ||error||_1 <= sqrt(n) ||error||_2 = ||spectral error||_2 (Parseval, 1/n inverse), plus
  // the inverse transform's own round-off (componentwise: log2(n) eta ||Y||_1 / n per entry).
  const double fft_error = std::sqrt(err2) + log2n * eta * spec_norm1;
  out.offset_ = i_lo;
  out.pmf_ = std::move(pmf);
  out.slack_ = slack + upper_tail + fft_error;
  out.trim();
  return out;
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
  double total = 0;
  for (std::size_t j = 0; j < pmf_.size(); ++j) {
    const std::int64_t i = offset_ + static_cast<std::int64_t>(j);
    const std::int64_t c = floor_div(i, factor);
    const double w = w_lo[static_cast<std::size_t>(i - c * factor)];
    const auto at = static_cast<std::size_t>(c - first);
    out.pmf_[at] += w * pmf_[j];
    out.pmf_[at + 1] += (1.0 - w) * pmf_[j];
    total += pmf_[j];
  }
  out.slack_ += 8.0 * kEps * total;  // rounding of the weights and sums
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

double PrivacyLoss::log_delta(double eps) const {
  if (std::isnan(eps)) fail("epsilon", eps, "a number");
  const double margin = inf_mass_ + slack_;
  const double d = std::min(1.0, pmf_delta(eps) + margin);
  double ld = std::log(d);
  // The RDP route where the margins dominate (tiny delta, eps beyond the grid).
  if (!rdp_.empty() && (margin >= 1e-2 * d || d < 1e-250 || interval_ > 1e-2) && eps >= 0)
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
  const double margin = inf_mass_ + slack_;
  double e = pmf_epsilon(delta - margin);
  // The RDP route where the grid's answer is weak: margins dominate, or a coarse grid.
  if (!rdp_.empty() && (!(e < kInf) || margin >= 1e-2 * delta || interval_ > 1e-2)) {
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
  // Koskela et al. 2020), for D' = D + x the second.
  auto a = std::make_shared<const PrivacyLoss>(
      PrivacyLoss::mixture_vs_gaussian(q, sigma, 1.0, options));
  auto b = std::make_shared<const PrivacyLoss>(
      PrivacyLoss::gaussian_vs_mixture(q, sigma, 1.0, options));
  return Pld(a, b);
}

Pld Pld::compose(std::span<const std::pair<const Pld*, std::int64_t>> pieces,
                 const PldOptions& options) {
  std::vector<std::pair<const PrivacyLoss*, std::int64_t>> first, second;
  bool symmetric = true;
  for (const auto& [p, c] : pieces) {
    first.emplace_back(p->first_.get(), c);
    second.emplace_back(p->second_.get(), c);
    symmetric = symmetric && p->symmetric();
  }
  auto a = std::make_shared<const PrivacyLoss>(PrivacyLoss::compose(first, options));
  if (symmetric) return Pld(a, a);
  auto b = std::make_shared<const PrivacyLoss>(PrivacyLoss::compose(second, options));
  return Pld(a, b);
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
  const PldOptions o = [&] {
    PldOptions c = options;
    c.interval = first_->interval();
    return c;
  }();
  return compose(gaussian(mu, o), o);
}

Pld Pld::coarsen(std::int64_t factor) const {
  auto a = std::make_shared<const PrivacyLoss>(first_->coarsen(factor));
  if (symmetric()) return Pld(a, a);
  return Pld(a, std::make_shared<const PrivacyLoss>(second_->coarsen(factor)));
}

namespace {

// Standard deviation of the stored finite part of a law (normalised), for the automatic
// refinement.
double loss_std(const PrivacyLoss& p) {
  double m0 = 0, m1 = 0, m2 = 0;
  for (std::size_t j = 0; j < p.pmf().size(); ++j) {
    const double l = static_cast<double>(p.offset() + static_cast<std::int64_t>(j)) * p.interval();
    m0 += p.pmf()[j];
    m1 += p.pmf()[j] * l;
    m2 += p.pmf()[j] * l * l;
  }
  if (!(m0 > 0)) return 0.0;
  const double mean = m1 / m0;
  return std::sqrt(std::max(0.0, m2 / m0 - mean * mean));
}

}  // namespace

Pld compose_steps(std::span<const PldSteps> steps, const PldOptions& options) {
  validate(options);
  std::vector<Pld> parts;
  std::vector<std::int64_t> counts;
  for (const auto& step : steps) {
    if (step.count < 0) fail("count", static_cast<double>(step.count), ">= 0");
    if (step.count == 0) continue;
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
