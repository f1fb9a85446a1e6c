// Exact law propagation for the one-dimensional audit instance (include/hsdp/audit/exact.hpp).
//
// Discretisation (Nystrom method): the density of w_t is kept at the grid points
// x_j = lo + j h. One step with step shift c (the gradient step of the record's linear loss;
// every other loss is zero, so the update is a translation) and noise N(0, s^2) maps
//   p'(x)  = int p(y) phi_s(x - y - c) dy + A phi_s(x - lo - c) + B phi_s(x - hi - c)
//   A'     = int p(y) Q((y + c - lo)/s) dy + A Q(c/s) + B Q((hi - lo + c)/s)
//   B'     = int p(y) Q((hi - y - c)/s) dy + A Q((hi - lo - c)/s) + B Q(-c/s)
// (A, B: the atoms at lo = -D/2 and hi = D/2 that the projection Pi_K creates: the mass past
// an end collapses onto it). The integrals are Gregory-corrected trapezoid sums (positive
// weights, exact for cubics), the density integral is one FFT convolution, the atoms' terms
// are evaluated pointwise with the exact Gaussian density and tail Q (never on the grid).
// With random batches a step is the mixture (1 - u) [shift 0] + u [shift c], u = b/n: the
// kernel is the mixture of the two (altschuler-talwar Sec. 4: the walk "biases right with
// probability b/n each step").
#include "hsdp/audit/exact.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <memory>
#include <numbers>
#include <stdexcept>

#include "convolution.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/numerics/log_normal.hpp"
#include "hsdp/numerics/root.hpp"

namespace hsdp::audit {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Window half-width of an unprojected run, in units of the total noise std: the Gaussian
// tail beyond 39 std is below 1e-333, i.e. exactly 0 in double.
constexpr double kWindowStd = 39.0;

bool is_zero(const Law& law) {
  return law.density.empty() && law.left == 0.0 && law.right == 0.0 && law.points.empty();
}

// acc += a * x (same grid).
void axpy(Law& acc, double a, const Law& x) {
  if (!x.density.empty()) {
    if (acc.density.empty()) acc.density.assign(x.density.size(), 0.0);
    for (std::size_t j = 0; j < x.density.size(); ++j) acc.density[j] += a * x.density[j];
  }
  acc.left += a * x.left;
  acc.right += a * x.right;
  for (const auto& [y, m] : x.points) acc.points.emplace_back(y, a * m);
  acc.lost += a * x.lost;
}

Law scaled(double a, Law x) {
  for (auto& v : x.density) v *= a;
  x.left *= a;
  x.right *= a;
  for (auto& pt : x.points) pt.second *= a;
  x.lost *= a;
  return x;
}

double phi_s(double x, double s) { return num::phi(x / s) / s; }

// One step's transition kernel: mixture (1 - u) [shift 0] + u [shift c], noise s.
struct Kernel {
  double u, c, s;
  std::vector<std::complex<double>> spectrum;  // of K(d) = mix phi_s(d h - shift)
  std::vector<double> tail_left, tail_right;   // weight_k * P(x_k + shift + Z past lo / hi)
  std::vector<double> from_left, from_right;   // density at x_j from the atoms at lo / hi
  double ll = 0, lr = 0, rl = 0, rr = 0;       // atom -> atom
};

class Propagator {
 public:
  Propagator(double lo, double hi, bool projected, std::size_t n)
      : lo_(lo), hi_(hi), projected_(projected), n_(n), conv_(n) {
    Law proto;
    proto.lo = lo;
    proto.hi = hi;
    proto.density.assign(n, 0.0);
    weights_ = proto.weights();
    h_ = proto.spacing();
    x_.resize(n);
    for (std::size_t j = 0; j < n; ++j) x_[j] = lo + static_cast<double>(j) * h_;
    x_.back() = hi;
  }

  Law empty() const {
    Law law;
    law.lo = lo_;
    law.hi = hi_;
    law.projected = projected_;
    return law;
  }

  std::shared_ptr<const Kernel> kernel(double u, double c, double s) {
    if (u == 0.0 || c == 0.0) {  // canonical form of the unshifted kernel
      u = 0.0;
      c = 0.0;
    }
    for (const auto& k : cache_)
      if (k->u == u && k->c == c && k->s == s) return k;
    if (cache_.size() >= 8) cache_.clear();  // step-size or noise schedules: bounded memory
    auto k = std::make_shared<Kernel>();
    k->u = u;
    k->c = c;
    k->s = s;
    const double n = static_cast<double>(n_);
    auto mix = [&](auto f) { return u == 0.0 ? f(0.0) : (1.0 - u) * f(0.0) + u * f(c); };
    std::vector<double> kern(2 * n_ - 1);
    for (std::size_t i = 0; i < kern.size(); ++i) {
      const double d = static_cast<double>(i) - (n - 1.0);
      kern[i] = mix([&](double sh) { return phi_s(d * h_ - sh, s); });
    }
    k->spectrum = conv_.kernel_spectrum(kern);
    k->tail_left.resize(n_);
    k->tail_right.resize(n_);
    k->from_left.resize(n_);
    k->from_right.resize(n_);
    for (std::size_t j = 0; j < n_; ++j) {
      const double xj = x_[j];
      // P(x + shift + Z <= lo) = Q((x + shift - lo)/s); P(x + shift + Z >= hi) = Q((hi - x - shift)/s).
      k->tail_left[j] = weights_[j] * mix([&](double sh) { return num::q((xj + sh - lo_) / s); });
      k->tail_right[j] = weights_[j] * mix([&](double sh) { return num::q((hi_ - xj - sh) / s); });
      k->from_left[j] = mix([&](double sh) { return phi_s(xj - lo_ - sh, s); });
      k->from_right[j] = mix([&](double sh) { return phi_s(xj - hi_ - sh, s); });
    }
    const double span = hi_ - lo_;
    k->ll = mix([&](double sh) { return num::q(sh / s); });
    k->lr = mix([&](double sh) { return num::q((span - sh) / s); });
    k->rl = mix([&](double sh) { return num::q((span + sh) / s); });
    k->rr = mix([&](double sh) { return num::q(-sh / s); });
    cache_.push_back(k);
    return k;
  }

  // The law after one step from `in` through kernel k.
  Law step(const Law& in, const Kernel& k) {
    Law out = empty();
    out.lost = in.lost;
    out.density.assign(n_, 0.0);
    if (!in.density.empty()) {
      weighted_.resize(n_);
      for (std::size_t j = 0; j < n_; ++j) weighted_[j] = weights_[j] * in.density[j];
      conv_.forward(weighted_, spectrum_);
      for (std::size_t i = 0; i < spectrum_.size(); ++i) spectrum_[i] *= k.spectrum[i];
      conv_.inverse(spectrum_, out.density);
      // FFT round-off can leave values of either sign ~1e-16 of the peak where the density
      // is smaller; a density is >= 0 (counted in the stated error floor).
      double left = 0.0, right = 0.0;
      for (std::size_t j = 0; j < n_; ++j) {
        out.density[j] = std::max(out.density[j], 0.0);
        left += in.density[j] * k.tail_left[j];
        right += in.density[j] * k.tail_right[j];
      }
      out.left += left;
      out.right += right;
    }
    if (in.left != 0.0) {
      for (std::size_t j = 0; j < n_; ++j) out.density[j] += in.left * k.from_left[j];
      out.left += in.left * k.ll;
      out.right += in.left * k.lr;
    }
    if (in.right != 0.0) {
      for (std::size_t j = 0; j < n_; ++j) out.density[j] += in.right * k.from_right[j];
      out.left += in.right * k.rl;
      out.right += in.right * k.rr;
    }
    for (const auto& [y, m] : in.points) {
      auto mix = [&](auto f) { return k.u == 0.0 ? f(0.0) : (1.0 - k.u) * f(0.0) + k.u * f(k.c); };
      for (std::size_t j = 0; j < n_; ++j)
        out.density[j] += m * mix([&](double sh) { return phi_s(x_[j] - y - sh, k.s); });
      out.left += m * mix([&](double sh) { return num::q((y + sh - lo_) / k.s); });
      out.right += m * mix([&](double sh) { return num::q((hi_ - y - sh) / k.s); });
    }
    if (!projected_) {
      // No projection: what crossed the window's ends is gone for good (it is < 1e-300 by
      // the choice of the window) and is carried as `lost`, part of the stated error.
      out.lost += out.left + out.right;
      out.left = out.right = 0.0;
    }
    return out;
  }

 private:
  double lo_, hi_;
  bool projected_;
  std::size_t n_;
  double h_ = 0.0;
  detail::Convolver conv_;
  std::vector<double> weights_, x_, weighted_;
  std::vector<std::complex<double>> spectrum_;
  std::vector<std::shared_ptr<const Kernel>> cache_;
};

// Is record `index` (1-based) in cyclic batch t (1-based)? Batch t holds positions
// ((t-1) b + j) mod n, j = 0..b-1 (run.hpp: "batches of size b, wrapping around").
bool in_cyclic_batch(const Run& run, std::int64_t index, std::int64_t t) {
  __extension__ using u128 = unsigned __int128;
  const auto n = static_cast<u128>(run.n);
  const u128 start = (static_cast<u128>(t - 1) % n) * static_cast<u128>(run.batch_size) % n;
  const u128 pos = static_cast<u128>(index - 1);
  return (pos + n - start) % n < static_cast<u128>(run.batch_size);
}

// The differing record's position in cyclic order: the one given, or the one whose use is
// most recent (the last record of batch T) for the last iterate, or the first record (used
// in every prefix) for a random stop: where the per-index analyses put their worst case.
std::optional<std::int64_t> record_index(const Run& run) {
  if (run.sampling != Sampling::cyclic) return std::nullopt;
  if (run.index) return run.index;
  if (run.release == Release::random_stop) return 1;
  __extension__ using u128 = unsigned __int128;
  const u128 last = (static_cast<u128>(run.steps) * static_cast<u128>(run.batch_size) - 1) %
                    static_cast<u128>(run.n);
  return static_cast<std::int64_t>(last) + 1;
}

}  // namespace

std::string_view to_string(Pair pair) { return pair == Pair::sec4 ? "sec4" : "opposite"; }

Pair parse_pair(std::string_view text, const Param& parameter) {
  if (text == "sec4") return Pair::sec4;
  if (text == "opposite") return Pair::opposite;
  fail(parameter, text, "one of sec4, opposite");
}

double Law::spacing() const {
  return density.size() < 2 ? 0.0 : (hi - lo) / static_cast<double>(density.size() - 1);
}

std::vector<double> Law::weights() const {
  // Gregory's end-corrected trapezoid rule: h (3/8, 7/6, 23/24, 1, ..., 1, 23/24, 7/6, 3/8);
  // all positive, so a weighted sum of a density is a positive measure.
  const std::size_t n = density.size();
  if (n < 7) throw std::logic_error("Law::weights: fewer than 7 grid points");
  const double h = spacing();
  std::vector<double> w(n, h);
  const double ends[3] = {3.0 / 8.0, 7.0 / 6.0, 23.0 / 24.0};
  for (std::size_t i = 0; i < 3; ++i) {
    w[i] = h * ends[i];
    w[n - 1 - i] = h * ends[i];
  }
  return w;
}

double Law::mass() const {
  double total = left + right + lost;
  for (const auto& pt : points) total += pt.second;
  if (!density.empty()) {
    const auto w = weights();
    for (std::size_t j = 0; j < density.size(); ++j) total += w[j] * density[j];
  }
  return total;
}

double instance_gradient(const Run& run) {
  run.validate();
  if (run.noise != NoiseKind::gaussian)
    fail(opt("noise"), std::string(to_string(run.noise)), "gaussian for the exact audit");
  if (run.release == Release::every)
    fail(opt("release"), "every", "last or random-stop for the exact audit (a last-iterate audit)");
  if (run.adjacency != Adjacency::replace)
    fail(opt("adjacency"), std::string(to_string(run.adjacency)), "replace for the exact audit");
  if (run.loss.strong_convexity > 0)
    fail(opt("strong_convexity"), run.loss.strong_convexity,
         "0 for the exact audit (its losses are linear, not strongly convex)");
  if (run.sampling == Sampling::shuffle && run.n % run.batch_size != 0)
    fail(opt("batch_size"), std::to_string(run.batch_size),
         fmt::format("a divisor of n = {} for shuffled batches in the exact audit", run.n));
  // The trainer clips per-example gradients to C, so the record's slope is min(L, C).
  if (run.loss.lipschitz && run.clip) return std::min(*run.loss.lipschitz, *run.clip);
  if (run.loss.lipschitz) return *run.loss.lipschitz;
  if (run.clip) return *run.clip;
  fail(opt("lipschitz"), "(missing)", "given: the slope L > 0 of the record's linear loss");
}

LawPair propagate(const Run& run, Pair pair, std::int64_t grid_points) {
  const double g = instance_gradient(run);
  require_range("grid", grid_points, 7, std::int64_t{1} << 26);
  const auto n = static_cast<std::size_t>(grid_points);
  const double b = static_cast<double>(run.batch_size);
  const std::int64_t T = run.steps;
  // Drift of the two walks on a step that uses the record: w - eta (g_record / b).
  auto shift_q = [&](std::int64_t t) { return run.eta.at(t) * g / b; };  // x'_n: slope -g
  auto shift_p = [&](std::int64_t t) { return pair == Pair::sec4 ? 0.0 : -run.eta.at(t) * g / b; };

  const bool projected = std::isfinite(run.diameter);
  double lo = -run.diameter / 2, hi = run.diameter / 2;
  if (!projected) {
    double drift = 0.0, var = 0.0;
    for (std::int64_t t = 1; t <= T; ++t) {
      drift += std::abs(shift_q(t));
      var += run.noise_std.at(t) * run.noise_std.at(t);
    }
    hi = drift + kWindowStd * std::sqrt(var);
    lo = -hi;
  }
  Propagator prop(lo, hi, projected, n);
  const auto index = record_index(run);
  const double q_use = static_cast<double>(run.batch_size) / static_cast<double>(run.n);
  auto usage = [&](std::int64_t t) -> double {
    switch (run.sampling) {
      case Sampling::full: return 1.0;
      case Sampling::poisson:
      case Sampling::fixed: return q_use;  // marginal b/n, independent across steps
      case Sampling::cyclic: return in_cyclic_batch(run, *index, t) ? 1.0 : 0.0;
      case Sampling::shuffle: break;
    }
    throw std::logic_error("usage: shuffle is propagated separately");
  };

  Law start = prop.empty();
  start.points.emplace_back(0.0, 1.0);  // w_0 = 0 (altschuler-talwar Sec. 4)
  const bool stop = run.release == Release::random_stop;

  auto run_walk = [&](auto shift) -> Law {
    Law acc = prop.empty();
    if (run.sampling != Sampling::shuffle) {
      Law law = start;
      for (std::int64_t t = 1; t <= T; ++t) {
        const double s = run.noise_std.at(t);
        const double c = shift(t);
        law = prop.step(law, *prop.kernel(usage(t), c, s));
        if (stop) axpy(acc, 1.0 / static_cast<double>(T), law);
      }
      return stop ? acc : law;
    }
    // Shuffled epochs of K = n/b batches: the record sits in exactly one batch per epoch,
    // uniformly. Exact law = U + V with U the part on which the record has not been used in
    // the current epoch yet, V the part on which it has; at epoch step j (0-based) it is used
    // with conditional probability 1/(K - j).
    const std::int64_t K = run.n / run.batch_size;
    Law U = start, V = prop.empty();
    for (std::int64_t t = 1; t <= T; ++t) {
      const std::int64_t j = (t - 1) % K;
      if (j == 0 && t > 1) {
        axpy(U, 1.0, V);
        V = prop.empty();
      }
      const double s = run.noise_std.at(t);
      const double pr = 1.0 / static_cast<double>(K - j);
      const auto k0 = prop.kernel(0.0, 0.0, s);
      const auto kc = prop.kernel(1.0, shift(t), s);
      Law nv = is_zero(V) ? prop.empty() : prop.step(V, *k0);
      if (!is_zero(U)) axpy(nv, pr, prop.step(U, *kc));
      U = (pr < 1.0 && !is_zero(U)) ? scaled(1.0 - pr, prop.step(U, *k0)) : prop.empty();
      V = std::move(nv);
      if (stop) {
        axpy(acc, 1.0 / static_cast<double>(T), U);
        axpy(acc, 1.0 / static_cast<double>(T), V);
      }
    }
    if (stop) return acc;
    axpy(U, 1.0, V);
    return U;
  };
  LawPair out;
  out.p = run_walk(shift_p);
  out.q = run_walk(shift_q);
  out.index = index;
  out.gradient = g;
  for (Law* law : {&out.p, &out.q})
    if (law->density.empty()) law->density.assign(n, 0.0);
  return out;
}

namespace {

// Integral of the grid function f over [x_i0, x_i1] (all f > 0 there): Gregory's rule when
// the run has >= 7 points, else the trapezoid rule (a run that short holds little mass).
double run_integral(const std::vector<double>& f, double h, std::size_t i0, std::size_t i1) {
  const std::size_t m = i1 - i0 + 1;
  if (m == 1) return 0.0;
  double s = 0.0;
  if (m < 7) {
    for (std::size_t i = i0; i <= i1; ++i) s += f[i];
    return h * (s - 0.5 * (f[i0] + f[i1]));
  }
  for (std::size_t i = i0; i <= i1; ++i) s += f[i];
  const double ends[3] = {3.0 / 8.0 - 1.0, 7.0 / 6.0 - 1.0, 23.0 / 24.0 - 1.0};
  for (std::size_t i = 0; i < 3; ++i) s += ends[i] * (f[i0 + i] + f[i1 - i]);
  return h * s;
}

// Integral of the positive part of f over the cell [x_k, x_{k+1}] in which f changes sign,
// from the cubic through the four grid points nearest the cell. 0 when one of those points
// is not finite (gamma = inf: f = -inf wherever q > 0, and no mass sits near a crossing).
double partial_cell(const std::vector<double>& f, double h, std::size_t k) {
  const std::size_t n = f.size();
  if (n < 4) return 0.0;
  const std::size_t base = std::min(k > 0 ? k - 1 : 0, n - 4);
  const double v0 = f[base], v1 = f[base + 1], v2 = f[base + 2], v3 = f[base + 3];
  if (!std::isfinite(v0) || !std::isfinite(v1) || !std::isfinite(v2) || !std::isfinite(v3)) return 0.0;
  // Newton form on nodes tau = 0..3, converted to monomials c0 + c1 tau + c2 tau^2 + c3 tau^3.
  const double d1 = v1 - v0, d2 = v2 - 2 * v1 + v0, d3 = v3 - 3 * v2 + 3 * v1 - v0;
  const double c0 = v0, c1 = d1 - d2 / 2 + d3 / 3, c2 = d2 / 2 - d3 / 2, c3 = d3 / 6;
  auto cubic = [&](double t) { return c0 + t * (c1 + t * (c2 + t * c3)); };
  auto prim = [&](double t) { return t * (c0 + t * (c1 / 2 + t * (c2 / 3 + t * c3 / 4))); };
  const double a = static_cast<double>(k - base), b = a + 1.0;
  const bool left_positive = f[k] > 0.0;
  double lo = a, hi = b;  // cubic(lo) has the sign of f[k], cubic(hi) that of f[k + 1]
  for (int it = 0; it < 100 && hi - lo > 1e-15; ++it) {
    const double mid = 0.5 * (lo + hi);
    ((cubic(mid) > 0.0) == left_positive ? lo : hi) = mid;
  }
  const double root = 0.5 * (lo + hi);
  const double part = left_positive ? prim(root) - prim(a) : prim(b) - prim(root);
  // Where f is smooth on the scale h the cubic is accurate; where it is not (f jumping by
  // orders of magnitude across a few points, as p - gamma q does at large gamma in the
  // tails) the cubic can overshoot. The positive part of f over the cell is then bounded by
  // the cell's positive end value, as for any f monotone across the cell.
  return h * std::clamp(part, 0.0, std::max(f[k], f[k + 1]));
}

}  // namespace

double e_gamma(const Law& p, const Law& q, double epsilon) {
  if (p.density.size() != q.density.size() || p.lo != q.lo || p.hi != q.hi)
    throw std::logic_error("e_gamma: laws on different grids");
  const double gamma = std::exp(epsilon);  // +inf beyond eps ~ 709: then only q = 0 counts
  auto pos = [gamma](double a, double b) { return b > 0.0 ? std::max(a - gamma * b, 0.0) : a; };
  const std::size_t n = p.density.size();
  std::vector<double> f(n);
  for (std::size_t j = 0; j < n; ++j)
    f[j] = q.density[j] > 0.0 ? p.density[j] - gamma * q.density[j] : p.density[j];
  // E = integral of f^+, f = p - gamma q. f^+ has a kink where p = gamma q, and a grid rule
  // applied across a kink is only O(h^2) accurate (Euler-Maclaurin: the kink acts as an end
  // point). So integrate f itself over each maximal run of grid points where f > 0 with
  // Gregory's end-corrected rule (O(h^4) for the smooth f), and add the partial cells out to
  // the crossings by the positive part of the cubic through the four nearest points.
  const double h = p.spacing();
  double sum = 0.0;
  for (std::size_t j = 0; j < n;) {
    if (!(f[j] > 0.0)) {
      ++j;
      continue;
    }
    const std::size_t i0 = j;
    while (j < n && f[j] > 0.0) ++j;
    const std::size_t i1 = j - 1;
    sum += run_integral(f, h, i0, i1);
    if (i0 > 0) sum += partial_cell(f, h, i0 - 1);
    if (i1 + 1 < n) sum += partial_cell(f, h, i1);
  }
  sum = std::max(sum, 0.0);
  sum += pos(p.left, q.left) + pos(p.right, q.right);
  for (const auto& [y, m] : p.points) {
    double mq = 0.0;
    for (const auto& [yq, mm] : q.points)
      if (yq == y) mq += mm;
    sum += pos(m, mq);
  }
  // Mass of P that left the window may sit anywhere: counted in full (an upper estimate).
  return sum + p.lost;
}

double delta_at(const LawPair& laws, double epsilon) {
  return std::max(e_gamma(laws.p, laws.q, epsilon), e_gamma(laws.q, laws.p, epsilon));
}

double epsilon_at(const LawPair& laws, double delta) {
  require_open("delta", delta, 0.0, 1.0);
  const double log_target = std::log(delta);
  auto f = [&](double eps) {
    const double d = delta_at(laws, eps);
    return d > 0.0 ? std::log(d) - log_target : -kInf;
  };
  const auto eps = num::smallest_meeting(f, 0.0, 1.0, 1e4);
  return eps ? *eps : kInf;
}

double renyi(const Law& p, const Law& q, double alpha) {
  if (std::isnan(alpha) || !(alpha > 1.0)) fail("alpha", alpha, "> 1");
  if (p.density.size() != q.density.size()) throw std::logic_error("renyi: different grids");
  // Density values below 1e-12 of the peak are at the level of the FFT round-off (about
  // 1e-16 of the peak, absolute), so their ratio p/q means nothing: those grid points are
  // left out of the sum. D_alpha is therefore exact only while the tilted law
  // p^alpha q^(1-alpha) puts negligible mass there (moderate alpha; docs/audit.md).
  double peak = 0.0;
  for (const auto* law : {&p, &q})
    for (const double v : law->density) peak = std::max(peak, v);
  const double floor = 1e-12 * peak;
  std::vector<double> terms;
  terms.reserve(p.density.size() + 2);
  // log of weight * pv^alpha qv^(1 - alpha), or nothing when pv = 0; +inf when qv = 0 < pv.
  bool infinite = false;
  auto add = [&](double weight, double pv, double qv) {
    if (pv <= 0.0) return;
    if (qv <= 0.0) {
      infinite = true;
      return;
    }
    terms.push_back(std::log(weight) + alpha * std::log(pv) + (1.0 - alpha) * std::log(qv));
  };
  const auto w = p.weights();
  for (std::size_t j = 0; j < w.size(); ++j)
    if (p.density[j] > floor && q.density[j] > floor) add(w[j], p.density[j], q.density[j]);
  add(1.0, p.left, q.left);
  add(1.0, p.right, q.right);
  if (infinite) return kInf;
  return num::logsumexp(terms) / (alpha - 1.0);
}

double renyi_at(const LawPair& laws, double alpha) {
  return std::max(renyi(laws.p, laws.q, alpha), renyi(laws.q, laws.p, alpha));
}

double ExactResult::lo() const {
  if (std::isinf(error)) return 0.0;
  return std::max(0.0, value() - error);
}
double ExactResult::hi() const { return value() + error; }

namespace {

// The change of the grid sum of (p - gamma q)^+ when every density value may be off by up
// to r (FFT round-off, absolute): towards the upper end p + r, q - r, towards the lower end
// p - r, q + r. Where q is at the round-off level its ratio to p means nothing, and this is
// what widens the band there (e.g. at eps in the hundreds, where delta(eps) is decided by
// density values ~e^-300 of the peak that the grid cannot resolve).
double roundoff_shift(const Law& p, const Law& q, double epsilon, double r, bool upper) {
  const double gamma = std::exp(epsilon);
  auto term = [gamma](double a, double b) {
    if (b <= 0.0) return a;
    return std::isinf(gamma) ? 0.0 : std::max(a - gamma * b, 0.0);
  };
  const auto w = p.weights();
  double shift = 0.0;
  for (std::size_t j = 0; j < w.size(); ++j) {
    const double pc = p.density[j], qc = q.density[j];
    const double alt = upper ? term(pc + r, std::max(qc - r, 0.0)) : term(std::max(pc - r, 0.0), qc + r);
    shift += w[j] * (alt - term(pc, qc));
  }
  return shift;
}

// delta(eps) at the upper or lower end of the round-off band (the lost mass of an
// unprojected window counts in full at the upper end, not at all at the lower end).
double delta_band(const LawPair& laws, double epsilon, double r, bool upper) {
  auto one = [&](const Law& a, const Law& b) {
    double v = e_gamma(a, b, epsilon) + roundoff_shift(a, b, epsilon, r, upper);
    if (!upper) v -= a.lost;
    return std::max(v, 0.0);
  };
  return std::max(one(laws.p, laws.q), one(laws.q, laws.p));
}

double epsilon_band(const LawPair& laws, double delta, double r, bool upper) {
  const double log_target = std::log(delta);
  auto f = [&](double eps) {
    const double d = delta_band(laws, eps, r, upper);
    return d > 0.0 ? std::log(d) - log_target : -kInf;
  };
  const auto eps = num::smallest_meeting(f, 0.0, 1.0, 1e4);
  return eps ? *eps : kInf;
}

}  // namespace

ExactResult exact(const Run& run, const Query& query, const ExactOptions& options) {
  require_range("grid", options.grid, 65, std::int64_t{1} << 24);
  if (!query.delta && !query.epsilon) throw InvalidArgument("query: give exactly one of epsilon or delta");
  ExactResult r;
  r.at_delta = query.delta.has_value();
  r.grid = options.grid | 1;  // odd: the coarse grid's points are every other fine point
  r.coarse_grid = (r.grid + 1) / 2;
  r.pair = options.pair;
  const LawPair fine = propagate(run, options.pair, r.grid);
  const LawPair coarse = propagate(run, options.pair, r.coarse_grid);
  r.index = fine.index;
  r.gradient = fine.gradient;
  r.mass_defect = std::max(std::abs(1.0 - fine.p.mass()), std::abs(1.0 - fine.q.mass()));

  // Round-off band: each FFT convolution is accurate to ~1e-16 of max(peak density, peak
  // kernel 1/(s sqrt(2 pi))) per point, absolute; the errors of T steps add up at most
  // linearly (the convolutions do not amplify them). Measured: 2-5e-15 at T = 2..10 with
  // peak kernel 4 (tests), inside this r.
  double peak = 0.0;
  for (const Law* law : {&fine.p, &fine.q})
    for (const double v : law->density) peak = std::max(peak, v);
  const double kernel_peak = 1.0 / (run.noise_std.min() * std::sqrt(2.0 * std::numbers::pi));
  const double r_abs = 1e-16 * (static_cast<double>(run.steps) + 20.0) * std::max(peak, kernel_peak);

  auto diff = [](double a, double b) { return a == b ? 0.0 : std::abs(a - b); };  // inf == inf: 0
  if (r.at_delta) {
    r.delta = *query.delta;
    r.epsilon = epsilon_at(fine, r.delta);
    r.coarse = epsilon_at(coarse, r.delta);
    const double hi = epsilon_band(fine, r.delta, r_abs, true);
    const double lo = epsilon_band(fine, r.delta, r_abs, false);
    double err = diff(r.epsilon, r.coarse) + std::max(diff(hi, r.epsilon), diff(r.epsilon, lo));
    if (std::isfinite(err)) err += 1e-12 * std::max(1.0, r.epsilon);  // root-finder tolerance
    r.error = std::isnan(err) ? kInf : round_up(err);
  } else {
    r.epsilon = *query.epsilon;
    r.delta = std::min(1.0, delta_at(fine, r.epsilon));
    r.coarse = std::min(1.0, delta_at(coarse, r.epsilon));
    const double hi = std::min(1.0, delta_band(fine, r.epsilon, r_abs, true));
    const double lo = delta_band(fine, r.epsilon, r_abs, false);
    r.error = round_up(diff(r.delta, r.coarse) + std::max(hi - r.delta, r.delta - lo));
  }
  for (const double alpha : query.alphas) {
    const double v = renyi_at(fine, alpha);
    const double c = renyi_at(coarse, alpha);
    r.renyi.push_back({alpha, v, round_up(diff(v, c))});
  }
  return r;
}

}  // namespace hsdp::audit
