// Exact hockey-stick divergence of two Gaussian mixtures with a common variance, and the
// mixtures of the unprojected 1-D quadratic instance (include/hsdp/audit/gaussian_mixture.hpp).
//
// E_gamma(P || Q) = int (p - gamma q)^+ = sum over the intervals I where p > gamma q of
// P(I) - gamma Q(I). In standard units z = x / sd, with component means m_i,
//     sqrt(2 pi) e^{z^2/2} (p - gamma q)(z) = sum_k c_k e^{lambda_k z},
// an exponential sum (lambda_k = m_k, c_k = +w_k e^{-m_k^2/2} for P, -gamma w_k e^{-m_k^2/2}
// for Q, equal exponents merged). Its real roots are the ends of the intervals. They are
// isolated exactly by Rolle's theorem on e^{-lambda_1 z} F(z), whose derivative is the sum of
// the other terms times (lambda_k - lambda_1) > 0; when the coefficients change sign only
// once there is at most one root (Laguerre's extension of Descartes' rule of signs to
// exponential sums), which is the case for every pair the audit builds (one-signed read
// weights). The probabilities are sums of normal tails in long double (Boost erfc), so the
// only approximations are rounding and the roots' position, and both are bounded.
#include "hsdp/audit/gaussian_mixture.hpp"

#include <fmt/format.h>

#include <boost/math/special_functions/erf.hpp>
#include <boost/math/tools/roots.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <stdexcept>

#include "hsdp/analysis/analysis.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/numerics/log_normal.hpp"
#include "hsdp/numerics/quadrature.hpp"
#include "hsdp/numerics/root.hpp"
#include "instance.hpp"

namespace hsdp::audit {

namespace {

using ld = long double;
constexpr ld kU = std::numeric_limits<ld>::epsilon() / 2;  // unit round-off of long double
constexpr ld kUDouble = std::numeric_limits<double>::epsilon() / 2;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr ld kInvSqrt2 = 0.707106781186547524400844362104849039L;
constexpr ld kInvSqrt2Pi = 0.398942280401432677939946059934381868L;
// The roots are sought in [-X, X] with X = max |m| + kReach: outside, every component's mass
// is below Q(64) ~ 1e-893, which the error bound carries.
constexpr ld kReach = 64.0L;

// Q(x) = P(N(0,1) > x) and a bound on its absolute error. The argument x / sqrt 2 is off by
// u relative, which moves erfc by about 2 y^2 u relative (d log erfc(y) / dy ~ -2y);
// Boost's long double erfc is good to a few ulp (its documented worst cases on x86).
struct Tail {
  ld value, error;
};
Tail q_tail(ld x) {
  if (std::isinf(x)) return {x > 0 ? 0.0L : 1.0L, 0.0L};
  const ld v = 0.5L * boost::math::erfc(x * kInvSqrt2);
  // (Beyond x ~ 106 erfc underflows: the value is then below the smallest subnormal.)
  return {v, v * (x * x + 16) * kU + std::numeric_limits<ld>::denorm_min()};
}

// P(A < Z < B) for a standard normal Z, A < B (either may be infinite), without cancellation
// beyond what the tails carry: upper tails when the interval lies right of 0, lower tails when
// left, the complement of both otherwise.
Tail normal_mass(ld a, ld b) {
  if (!(a < b)) return {0.0L, 0.0L};
  if (a >= 0) {
    const Tail qa = q_tail(a), qb = q_tail(b);
    const ld v = qa.value - qb.value;
    return {std::max(v, 0.0L), qa.error + qb.error + kU * qa.value};
  }
  if (b <= 0) {
    const Tail qa = q_tail(-b), qb = q_tail(-a);
    const ld v = qa.value - qb.value;
    return {std::max(v, 0.0L), qa.error + qb.error + kU * qa.value};
  }
  const Tail l = q_tail(-a), r = q_tail(b);
  return {1.0L - l.value - r.value, l.error + r.error + 2 * kU};
}

// sign * exp(log_c + lambda z).
struct Term {
  ld lambda;
  int sign;
  ld log_c;
};

// log(e^a + e^b), log(e^a - e^b) for a >= b.
ld log_add(ld a, ld b) {
  if (a < b) std::swap(a, b);
  if (std::isinf(b)) return a;
  return a + std::log1p(std::exp(b - a));
}
ld log_sub(ld a, ld b) {
  if (std::isinf(b)) return a;
  return a + std::log1p(-std::exp(b - a));
}

// The terms of sqrt(2 pi) e^{z^2/2} (p - gamma q)(z), sorted by exponent, equal exponents
// merged (exactly cancelling ones dropped).
std::vector<Term> exponential_sum(const GaussianMixture& p, const GaussianMixture& q, ld log_gamma) {
  std::vector<Term> t;
  t.reserve(p.atoms.size() + q.atoms.size());
  auto add = [&](const GaussianMixture& m, int sign, ld extra) {
    for (const auto& a : m.atoms) {
      if (!(a.weight > 0)) continue;
      const ld mu = a.mean / m.sd;
      t.push_back({mu, sign, std::log(a.weight) - mu * mu / 2 + extra});
    }
  };
  add(p, +1, 0.0L);
  add(q, -1, log_gamma);
  std::sort(t.begin(), t.end(), [](const Term& a, const Term& b) { return a.lambda < b.lambda; });
  std::vector<Term> out;
  out.reserve(t.size());
  for (const auto& x : t) {
    if (out.empty() || out.back().lambda != x.lambda) {
      out.push_back(x);
      continue;
    }
    Term& y = out.back();
    if (y.sign == x.sign) {
      y.log_c = log_add(y.log_c, x.log_c);
    } else if (y.log_c == x.log_c) {
      out.pop_back();  // exact cancellation
    } else if (y.log_c > x.log_c) {
      y.log_c = log_sub(y.log_c, x.log_c);
    } else {
      y = {x.lambda, x.sign, log_sub(x.log_c, y.log_c)};
    }
  }
  return out;
}

// log of the positive and of the negative part of the sum at z, and the rounding threshold
// under which their difference does not decide the sign.
struct Parts {
  ld pos = -std::numeric_limits<ld>::infinity();
  ld neg = -std::numeric_limits<ld>::infinity();
  ld tol = 0;
  int sign() const { return pos > neg ? 1 : (pos < neg ? -1 : 0); }
  bool reliable() const { return std::abs(pos - neg) > tol || std::isinf(pos - neg); }
};

Parts evaluate(std::span<const Term> terms, ld z) {
  Parts r;
  ld max_pos = -std::numeric_limits<ld>::infinity(), max_neg = max_pos, largest = 0;
  for (const auto& t : terms) {
    const ld e = t.log_c + t.lambda * z;
    (t.sign > 0 ? max_pos : max_neg) = std::max(t.sign > 0 ? max_pos : max_neg, e);
    largest = std::max({largest, std::abs(t.log_c), std::abs(t.lambda * z)});
  }
  // The terms relative to the largest one in double (this only decides signs: a root's
  // position need not be known to more than double precision, since E_gamma depends on it to
  // second order), summed in long double.
  ld sp = 0, sn = 0;
  for (const auto& t : terms) {
    const ld e = t.log_c + t.lambda * z;
    if (t.sign > 0) sp += std::exp(static_cast<double>(e - max_pos));
    else sn += std::exp(static_cast<double>(e - max_neg));
  }
  if (sp > 0) r.pos = max_pos + std::log(sp);
  if (sn > 0) r.neg = max_neg + std::log(sn);
  // Each exponent is off by ~u (|log c| + |lambda z|) absolute; a term e^{-x} of the sum
  // relative to its largest is off by (x + 1) u_double relative, which weighs at most
  // (1 + 1/e) u_double in the sum; the sum adds ~n u.
  r.tol = 8 * kU * (largest + static_cast<ld>(terms.size()) + 8) + 8 * kUDouble;
  return r;
}

// A bracket [lo, hi] that contains a root of the sum.
struct Root {
  ld lo, hi;
  ld mid() const { return (lo + hi) / 2; }
};

int sign_changes(std::span<const Term> t) {
  int v = 0;
  for (std::size_t k = 1; k < t.size(); ++k) v += t[k].sign != t[k - 1].sign;
  return v;
}

// Widens [lo, hi] (inside [a, b]) until the computed signs at its ends are beyond rounding
// (sa at the left end, -sa at the right), so that it holds the exact root.
Root widen(std::span<const Term> terms, ld lo, ld hi, ld a, ld b, int sa) {
  const ld step0 = std::max(hi - lo, 1e-15L * std::max(1.0L, std::abs(lo)));
  auto out = [&](ld from, ld end, int want, int dir) {
    ld d = step0, x = from;
    for (int i = 0; i < 200; ++i) {
      const Parts r = evaluate(terms, x);
      if (r.reliable() && r.sign() == want) return x;
      if (x == end) return x;
      x = dir < 0 ? std::max(end, from - d) : std::min(end, from + d);
      d *= 2;
    }
    return end;
  };
  return {out(lo, a, sa, -1), out(hi, b, -sa, +1)};
}

// The root in [a, b], where the computed signs at a and b differ (sa = sign at a): in closed
// form for two terms (c_0 e^{lambda_0 z} = -c_1 e^{lambda_1 z}), else TOMS 748 on
// log(pos) - log(neg); then widened (above).
Root locate(std::span<const Term> terms, ld a, ld b, int sa) {
  if (terms.size() == 2) {
    const ld z = (terms[0].log_c - terms[1].log_c) / (terms[1].lambda - terms[0].lambda);
    if (z > a && z < b) return widen(terms, z, z, a, b, sa);
  }
  auto g = [&](ld z) {
    const Parts r = evaluate(terms, z);
    if (std::isinf(r.pos) && std::isinf(r.neg)) return 0.0L;
    return r.pos - r.neg;
  };
  const ld ga = g(a), gb = g(b);
  std::uintmax_t iterations = 100;
  const auto bracket =
      boost::math::tools::toms748_solve(g, a, b, ga, gb, boost::math::tools::eps_tolerance<ld>(50), iterations);
  return widen(terms, bracket.first, bracket.second, a, b, sa);
}

// All roots of the sum in [lo, hi] where it changes sign, in increasing order (Rolle).
std::vector<Root> isolate(std::span<const Term> terms, ld lo, ld hi) {
  if (terms.size() < 2 || sign_changes(terms) == 0) return {};
  std::vector<ld> cuts{lo};
  if (sign_changes(terms) >= 2) {
    // e^{-lambda_0 z} F(z) is monotone between the roots of its derivative.
    std::vector<Term> d;
    d.reserve(terms.size() - 1);
    for (std::size_t k = 1; k < terms.size(); ++k)
      d.push_back({terms[k].lambda, terms[k].sign, terms[k].log_c + std::log(terms[k].lambda - terms[0].lambda)});
    for (const auto& r : isolate(d, lo, hi)) cuts.push_back(r.mid());
  }
  cuts.push_back(hi);
  std::vector<Root> roots;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
    const int sa = evaluate(terms, cuts[i]).sign(), sb = evaluate(terms, cuts[i + 1]).sign();
    if (sa != 0 && sb != 0 && sa != sb) roots.push_back(locate(terms, cuts[i], cuts[i + 1], sa));
  }
  return roots;
}

// |p - gamma q| at z (standard units) from the parts of the sum.
ld gap_density(const Parts& r, ld z) {
  const ld base = -z * z / 2;
  auto ex = [&](ld v) { return std::isinf(v) ? 0.0L : std::exp(v + base); };
  return std::abs(ex(r.pos) - ex(r.neg)) * kInvSqrt2Pi;
}

struct Sum {
  ld value = 0, error = 0;
};

// An upper bound on phi(x') for every |x' - x| <= d.
ld density_near(ld x, ld d) {
  const ld y = std::max(std::abs(x) - d, 0.0L);
  return kInvSqrt2Pi * std::exp(-y * y / 2) * (1 + 8 * kU);
}

// An upper bound on |d/dz| of the mixture's density (standard units) on [z, z + w]:
// |phi'(y)| = |y| phi(y).
ld slope_near(const GaussianMixture& m, ld z, ld w) {
  ld s = 0;
  for (const auto& a : m.atoms) {
    const ld y = z + w / 2 - a.mean / m.sd;
    s += a.weight * (std::abs(y) + w) * density_near(y, w);
  }
  return s;
}

// sum_i w_i P(a < Z + m_i < b) (standard units) with its error bound: the tails' rounding,
// the rounding of the shifted ends a - m_i, b - m_i, and the mixture's own errors (a weight
// off by a relative e moves the sum by e of itself; a mean off by d moves each end's
// probability by at most d times the density there). The ends are the roots of the pair, so
// this is the first-order change of E_gamma (the positive set is optimal: moving it changes
// E only to second order).
Sum mass(const GaussianMixture& m, ld a, ld b) {
  Sum s;
  const ld mean_error = m.mean_error / m.sd;
  for (const auto& at : m.atoms) {
    if (!(at.weight > 0)) continue;
    const ld mu = at.mean / m.sd;
    const Tail t = normal_mass(a - mu, b - mu);
    s.value += at.weight * t.value;
    ld moved = 0;
    for (const ld end : {a, b}) {
      if (!std::isfinite(end)) continue;
      const ld d = kU * (std::abs(end) + std::abs(mu)) + mean_error;
      moved += 2 * d * density_near(end - mu, d);
    }
    s.error += at.weight * (t.error + moved);
  }
  s.error += s.value * ((static_cast<ld>(m.atoms.size()) + 4) * kU + m.weight_error);
  return s;
}

double up(ld v) {
  const double d = static_cast<double>(v);
  return d >= v ? d : std::nextafter(d, kInf);
}

void check_pair(const GaussianMixture& p, const GaussianMixture& q) {
  if (p.atoms.empty() || q.atoms.empty()) throw InvalidArgument("mixture_e_gamma: a mixture has no components");
  if (!(p.sd > 0) || p.sd != q.sd)
    throw InvalidArgument("mixture_e_gamma: the two mixtures must share one positive sd");
}

}  // namespace

long double GaussianMixture::mass() const {
  ld s = 0;
  for (const auto& a : atoms) s += a.weight;
  return s;
}

double Certified::lo() const { return std::max(0.0, value - error); }
double Certified::hi() const { return value + error; }

Certified mixture_e_gamma(const GaussianMixture& p, const GaussianMixture& q, double epsilon) {
  check_pair(p, q);
  require_closed("epsilon", epsilon, 0.0, 1e4);
  const ld log_gamma = epsilon, gamma = std::exp(log_gamma);
  const auto terms = exponential_sum(p, q, log_gamma);
  ld reach = 0;
  for (const auto* m : {&p, &q})
    for (const auto& a : m->atoms) reach = std::max(reach, std::abs(a.mean / m->sd));
  reach += kReach;
  const auto roots = isolate(terms, -reach, reach);

  ld value = 0, error = 0;
  // The intervals between the roots (their bracket midpoints), each with the sign of a point
  // inside it.
  std::vector<ld> ends{-std::numeric_limits<ld>::infinity()};
  for (const auto& r : roots) ends.push_back(r.mid());
  ends.push_back(std::numeric_limits<ld>::infinity());
  const ld mass_p = p.mass(), mass_q = q.mass();
  for (std::size_t i = 0; i + 1 < ends.size(); ++i) {
    const ld a = ends[i], b = ends[i + 1];
    const ld z = std::isinf(a) ? (std::isinf(b) ? 0.0L : b - 1) : (std::isinf(b) ? a + 1 : (a + b) / 2);
    const Parts r = terms.empty() ? Parts{} : evaluate(terms, z);
    const bool positive = r.sign() > 0;
    if (!positive && r.reliable()) continue;
    const Sum mp = mass(p, a, b), mq = mass(q, a, b);
    if (positive) {
      value += mp.value - gamma * mq.value;
      error += mp.error + gamma * mq.error + 2 * kU * (mp.value + gamma * mq.value);
    }
    // A sign that rounding could flip: the whole interval's contribution is uncertain.
    if (!r.reliable()) error += mp.value + gamma * mq.value;
  }
  // Each root's bracket: the integrand vanishes at the exact root, so placing the end at the
  // midpoint instead changes E by at most the bracket's width times |p - gamma q| on it.
  for (const auto& r : roots) {
    const ld w = r.hi - r.lo;
    const ld f = std::max(gap_density(evaluate(terms, r.lo), r.lo), gap_density(evaluate(terms, r.hi), r.hi));
    const ld slope = slope_near(p, r.lo, w) + gamma * slope_near(q, r.lo, w);
    error += w * (f + w * slope) * 1.01L;
  }
  // Sign changes beyond +-reach (not sought) sit where every component has mass < Q(64).
  error += 2 * (mass_p + gamma * mass_q) * q_tail(kReach).value;
  value = std::max(value, 0.0L);
  Certified c;
  c.value = static_cast<double>(value);
  const ld rounding = std::abs(static_cast<ld>(c.value) - value);
  c.error = up((error + rounding) * (1 + 64 * kU));
  return c;
}

Certified mixture_delta(const GaussianMixture& p, const GaussianMixture& q, double epsilon) {
  const Certified a = mixture_e_gamma(p, q, epsilon), b = mixture_e_gamma(q, p, epsilon);
  Certified c;
  c.value = std::max(a.value, b.value);
  // max is 1-Lipschitz in each argument: |max(a, b) - max(A, B)| <= max(|a - A|, |b - B|).
  c.error = std::max(a.error, b.error);
  return c;
}

Certified mixture_epsilon(const GaussianMixture& p, const GaussianMixture& q, double delta) {
  require_open("delta", delta, 0.0, 1.0);
  const double log_target = std::log(delta);
  auto f = [&](double eps) {
    const double d = mixture_delta(p, q, eps).value;
    return d > 0 ? std::log(d) - log_target : -kInf;
  };
  const auto found = num::smallest_meeting(f, 0.0, 1.0, 1e4, {1e-15, 1e-300, 400});
  if (!found) return {kInf, 0.0};
  const double eps = *found;
  // The exact boundary lies between an eps whose certified delta is surely above the target
  // and one whose certified delta is surely at or below it.
  double below = eps;
  for (double t = 1e-15 * std::max(1.0, eps);; t *= 8) {
    below = std::max(0.0, eps - t);
    if (below == 0.0 || mixture_delta(p, q, below).lo() > delta || t > 1e4) break;
  }
  if (below > 0.0 && !(mixture_delta(p, q, below).lo() > delta)) below = 0.0;
  double above = eps;
  for (double t = 1e-15 * std::max(1.0, eps);; t *= 8) {
    if (mixture_delta(p, q, above).hi() <= delta) break;
    above = eps + t;
    if (above > 1e4) return {eps, kInf};
  }
  return {eps, std::nextafter(std::max(above - eps, eps - below), kInf)};
}

Certified mixture_renyi(const GaussianMixture& p, const GaussianMixture& q, double alpha) {
  check_pair(p, q);
  if (std::isnan(alpha) || !(alpha > 1.0)) fail("alpha", alpha, "> 1");
  if (p.atoms.size() == 1 && q.atoms.size() == 1) {
    const ld r = (p.atoms[0].mean - q.atoms[0].mean) / p.sd;
    return {static_cast<double>(alpha * r * r / 2), 0.0};
  }
  // In standard units: log p(z) = log sum_i w_i e^{-(z - m_i)^2/2} - log sqrt(2 pi).
  auto log_density = [](const GaussianMixture& m, double z) {
    std::vector<double> t;
    t.reserve(m.atoms.size());
    for (const auto& a : m.atoms) {
      if (!(a.weight > 0)) continue;
      const double y = z - static_cast<double>(a.mean / m.sd);
      t.push_back(std::log(static_cast<double>(a.weight)) - y * y / 2);
    }
    return num::logsumexp(t) - 0.9189385332046727418;
  };
  auto f = [&](double z) {
    const double v = alpha * log_density(p, z) + (1 - alpha) * log_density(q, z);
    return std::exp(v);
  };
  const double fine = num::integrate(f, -kInf, kInf, 1e-13), coarse = num::integrate(f, -kInf, kInf, 1e-9);
  const double value = std::log(fine) / (alpha - 1), other = std::log(coarse) / (alpha - 1);
  return {value, std::nextafter(std::abs(value - other), kInf)};
}

ReadLaw read_law(const Run& run, std::size_t max_atoms) {
  run.validate();
  if (run.noise != NoiseKind::gaussian)
    fail(opt("noise"), std::string(to_string(run.noise)), "gaussian for the exact audit");
  if (run.release != Release::last)
    fail(opt("release"), std::string(to_string(run.release)),
         "last for the Gaussian closed form (the iterate at one fixed step)");
  if (run.adjacency != Adjacency::replace)
    fail(opt("adjacency"), std::string(to_string(run.adjacency)), "replace for the exact audit");
  if (std::isfinite(run.diameter))
    fail(opt("diameter"), run.diameter,
         "inf for the Gaussian closed form (a projection keeps the iterate off Gaussian; the grid "
         "propagation handles it)");
  detail::check_contraction(run);
  const std::int64_t T = run.steps;
  const ld lambda = run.loss.strong_convexity;
  // prod_{k > t} c_k (suffix products, exact to (T - t) 2u), the step weights a_t.
  std::vector<ld> a(static_cast<std::size_t>(T) + 1);
  ld suffix = 1, variance = 0, total = 0;
  for (std::int64_t t = T; t >= 1; --t) {
    const ld eta = run.eta.at(t), s = run.noise_std.at(t);
    a[static_cast<std::size_t>(t)] = eta * suffix;
    variance += s * s * suffix * suffix;
    total += std::abs(a[static_cast<std::size_t>(t)]);
    suffix *= 1.0L - eta * lambda;
  }
  ReadLaw law;
  law.variance = variance;
  const ld Tl = static_cast<ld>(T);
  // Each a_t: T factors c_k (each formed with one rounding) and eta: (2T + 2) u relative; a
  // sum of up to T of them adds T u of their absolute sum.
  law.value_error = (3 * Tl + 4) * kU * total;
  const auto b = static_cast<ld>(run.batch_size), n = static_cast<ld>(run.n);
  using Dist = std::map<ld, ld>;
  Dist dist{{0.0L, 1.0L}};
  std::int64_t factors = 0;
  // Both limits are checked as the mixture is built, never after: at most max_atoms values are
  // held, and at most kMaxMixtureWork (value, outcome) pairs are combined in all (2^27, ~10 s).
  constexpr double kMaxMixtureWork = 134217728.0;
  double work = 0;
  auto too_large = [&](std::string_view what) {
    fail(opt("steps"), std::to_string(run.steps),
         fmt::format("small enough that the exact mixture of the record's read pattern stays within its limits "
                     "({}: docs/audit.md \"Limits\"); fewer {} or a constant {}",
                     what, error_field("steps"), error_field("eta_schedule")));
  };
  auto convolve = [&](const std::vector<std::pair<ld, ld>>& block) {
    work += static_cast<double>(dist.size()) * static_cast<double>(block.size());
    if (work > kMaxMixtureWork) too_large("more than 2^27 combinations of its values");
    Dist next;
    for (const auto& [v, w] : dist)
      for (const auto& [x, pr] : block)
        if (pr > 0) {
          next[v + x] += w * pr;
          if (next.size() > max_atoms)
            too_large(fmt::format("more than {} distinct effects on the last iterate", max_atoms));
        }
    dist = std::move(next);
    ++factors;
  };
  auto fixed_sum = [&](auto reads) {
    ld s = 0;
    for (std::int64_t t = 1; t <= T; ++t)
      if (reads(t)) s += a[static_cast<std::size_t>(t)];
    dist = Dist{{s, 1.0L}};
  };
  switch (run.sampling) {
    case Sampling::full:
      fixed_sum([](std::int64_t) { return true; });
      break;
    case Sampling::cyclic: {
      law.index = detail::record_index(run);
      const std::int64_t index = *law.index;
      fixed_sum([&](std::int64_t t) { return detail::in_cyclic_batch(run, index, t); });
      break;
    }
    case Sampling::fixed:
    case Sampling::poisson: {
      // Independently in each step's batch with probability b/n (the record's coin; the
      // other records' gradients are zero, so the batch's size does not matter).
      const ld p = b / n;
      for (std::int64_t t = 1; t <= T; ++t) convolve({{0.0L, 1.0L - p}, {a[static_cast<std::size_t>(t)], p}});
      break;
    }
    case Sampling::shuffle: {
      // Epochs of l = floor(n/b) batches; in each the record is in batch j w.p. b/n, in none
      // w.p. 1 - (batches run in the epoch) b/n. With the partial last batch kept (l =
      // ceil(n/b)): in it w.p. r/n, r = n mod b, where its gradient counts 1/r, not 1/b (the
      // value b/r times a_t, the laws scale A by g/b).
      const std::int64_t l = detail::shuffled_batches(run), r = run.partial_batch();
      const ld p = b / n;
      for (std::int64_t start = 1; start <= T; start += l) {
        const std::int64_t end = std::min(T, start + l - 1);
        std::vector<std::pair<ld, ld>> block;
        ld used = 0;
        for (std::int64_t t = start; t <= end; ++t) {
          const bool partial = r > 0 && t - start == l - 1;
          const ld pr = partial ? static_cast<ld>(r) / n : p;
          block.emplace_back(a[static_cast<std::size_t>(t)] * (partial ? b / static_cast<ld>(r) : 1.0L), pr);
          used += pr;
        }
        block.emplace_back(0.0L, std::max(0.0L, 1.0L - used));
        convolve(block);
      }
      break;
    }
  }
  for (const auto& [v, w] : dist) law.atoms.push_back({w, v});
  // Each probability: one factor per step or epoch, each a quotient or 1 - k b/n (two
  // roundings), and the sums of merged equal values.
  law.weight_error = (4 * static_cast<ld>(factors) + 8) * kU;
  return law;
}

std::pair<GaussianMixture, GaussianMixture> quadratic_laws(const Run& run, const ReadLaw& law,
                                                           double g_p, double g_q) {
  require_finite("g_p", g_p);
  require_finite("g_q", g_q);
  if (!(law.variance > 0)) throw InvalidArgument("quadratic_laws: the read law has no noise");
  const ld b = static_cast<ld>(run.batch_size);
  const ld sd = std::sqrt(law.variance);
  auto make = [&](double g) {
    GaussianMixture m;
    m.sd = sd;
    m.weight_error = law.weight_error;
    const ld k = -static_cast<ld>(g) / b;
    ld largest = 0;
    for (const auto& at : law.atoms) {
      m.atoms.push_back({at.weight, k * at.mean});
      largest = std::max(largest, std::abs(k * at.mean));
    }
    // The values of A (value_error), the product k A (2u), and the sd: V is good to the
    // same relative (3T + 4) u as the values, so the standardised means move by that much.
    const ld v_rel = (3 * static_cast<ld>(run.steps) + 6) * kU;
    m.mean_error = std::abs(k) * law.value_error + largest * (v_rel + 4 * kU);
    return m;
  };
  return {make(g_p), make(g_q)};
}

}  // namespace hsdp::audit
