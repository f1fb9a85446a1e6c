// Exact law propagation for the one-dimensional audit instance (include/hsdp/audit/exact.hpp).
//
// Discretisation (Nystrom method): the density of w_t is kept at the grid points
// x_j = lo + j h. One step with step shift c (the gradient step of the record's linear loss;
// every other loss is zero, so the update is a translation; with lambda > 0 the regulariser
// first contracts, y -> a y, a = 1 - eta lambda, and the kernel below has x - a y - c, a dense
// sum instead of a convolution: Propagator::dense) and noise N(0, s^2) maps
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
// Every value carries a proven bound on its round-off (Law::density_error), and values far
// below the peak, which a plain FFT gets only to ~1e-16 of the peak, are recomputed by
// exponentially tilted FFTs (Propagator::convolve; docs/audit.md, "Round-off bounds").
#include "hsdp/audit/exact.hpp"
#include "hsdp/field_use.hpp"
#include "hsdp/audit/gaussian_mixture.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <memory>
#include <numbers>
#include <span>
#include <stdexcept>

#include "convolution.hpp"
#include "instance.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/numerics/log_normal.hpp"
#include "hsdp/numerics/root.hpp"

namespace hsdp::audit {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Unit round-off of double.
constexpr double kU = std::numeric_limits<double>::epsilon() / 2;
// Window half-width of an unprojected run, in units of the total noise std: the Gaussian
// tail beyond 39 std is below 1e-333, i.e. exactly 0 in double.
constexpr double kWindowStd = 39.0;

// FFT round-off. For an m-point FFT by stages, |fl(F v) - F v|_2 <= eta_m |F v|_2 with
// eta_m ~ log2(m) (mu + gamma_4 (sqrt 2 + mu)) ~ 7 u log2(m) for twiddles accurate to mu ~ u
// (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., Thm 24.2). FFTW's mixed-
// radix codelets are not radix-2 butterflies, so we take 4x that: eta_m = 32 u log2(m)
// (the propagated bounds are >= 400x the measured errors in tests/test_audit_exact.cpp).
double fft_eta(std::size_t m) { return 32.0 * kU * std::log2(static_cast<double>(m)); }

// Bound on max_j |computed - exact| of y = x * K computed as F*((F x) (F K / m)), from the
// bound above applied to the three transforms and the pointwise product (Parseval, and
// |F v|_inf <= |v|_1):  (2 eta + 3u) |x|_2 |K|_1 + (eta + 2u) |x|_1 |K|_2,  plus a margin for
// the rounding of this expression itself.
double fft_bound(std::size_t m, double x1, double x2, double k1, double k2) {
  const double eta = fft_eta(m);
  return ((2 * eta + 3 * kU) * x2 * k1 + (eta + 2 * kU) * x1 * k2) * (1 + 1e-6);
}

// Tilt levels: a tilted convolution multiplies the signal by e^{lambda (k - c)} and the kernel
// by e^{lambda d} (c the grid's centre), which leaves sum_k x_k K(j - k) times e^{lambda (j - c)}:
// the FFT's absolute round-off, ~1e-16 of the largest tilted term, becomes relative to the
// values the tilt lifts. Level L has lambda (n - 1) = sign(L) 8 2^{|L| - 1}, up to e^{+-256}
// across the grid (no overflow of the tilted kernel or signal).
constexpr int kMaxTiltLevel = 6;
// A value is resolved when its round-off bound is below this fraction of it.
constexpr double kResolved = 1e-10;

double tilt_total(int level) {
  if (level == 0) return 0.0;
  const double mag = 8.0 * std::ldexp(1.0, std::abs(level) - 1);
  return level > 0 ? mag : -mag;
}

bool is_zero(const Law& law) {
  return law.density.empty() && law.left == 0.0 && law.right == 0.0 && law.points.empty();
}

double error_at(const Law& law, std::size_t j) {
  return law.density_error.empty() ? 0.0 : law.density_error[j];
}

// acc += a * x (same grid), a >= 0; the error bounds add, plus the rounding of the sum.
void axpy(Law& acc, double a, const Law& x) {
  if (!x.density.empty()) {
    if (acc.density.empty()) acc.density.assign(x.density.size(), 0.0);
    if (acc.density_error.empty()) acc.density_error.assign(x.density.size(), 0.0);
    for (std::size_t j = 0; j < x.density.size(); ++j) {
      acc.density[j] += a * x.density[j];
      acc.density_error[j] += a * error_at(x, j) + 2 * kU * std::abs(acc.density[j]);
    }
  }
  acc.left += a * x.left;
  acc.right += a * x.right;
  acc.left_error += a * x.left_error + 2 * kU * std::abs(acc.left);
  acc.right_error += a * x.right_error + 2 * kU * std::abs(acc.right);
  for (const auto& [y, m] : x.points) acc.points.emplace_back(y, a * m);
  acc.lost += a * x.lost;
  acc.lost_error += a * x.lost_error + 2 * kU * acc.lost;
}

Law scaled(double a, Law x) {
  for (std::size_t j = 0; j < x.density.size(); ++j) {
    x.density[j] *= a;
    if (!x.density_error.empty()) x.density_error[j] = a * x.density_error[j] + kU * x.density[j];
  }
  x.left *= a;
  x.right *= a;
  x.left_error = a * x.left_error + kU * x.left;
  x.right_error = a * x.right_error + kU * x.right;
  for (auto& pt : x.points) pt.second *= a;
  x.lost *= a;
  x.lost_error = a * x.lost_error + kU * x.lost;
  return x;
}

// The Gaussian density phi_s(x) and tail Q(t) that define the scheme. A value at t = x / s
// standard deviations moves by ~t^2 times the relative rounding of t: up to 1500 u at t = 38
// (beyond, phi underflows in double) if t is formed in double. So t and the exponent -t^2/2
// are formed in long double (2^-64: an absolute error < 1e-16 in the exponent), split into
// double hi + lo, and exp(hi)(1 + lo) resp. erfc(hi) - (2/sqrt(pi)) e^{-hi^2} lo (first
// order; lo ~ u hi) are evaluated in double: each value is within 2u (phi) or 8u (Q; the C
// library's erfc is good to a few ulp) of the exact function at the grid's arguments
// (measured: 1.7u and 5.1u over t in [-38, 38]), covered by the 24 u per step in
// Propagator::step. (Long double exp and erfc throughout cost 5x the run time of a
// step-size schedule, which makes a kernel per step.)
using ld = long double;
// phi_s(x) for s = 1 / inv_s.
ld gauss_l(ld x, ld inv_s) {
  constexpr ld kInvSqrt2Pi = 0.398942280401432677939946059934381868L;
  const ld t = x * inv_s;
  const ld e = -0.5L * t * t;
  const double hi = static_cast<double>(e), lo = static_cast<double>(e - hi);
  const double ex = std::exp(hi);
  return (static_cast<ld>(ex) + static_cast<ld>(ex) * lo) * (kInvSqrt2Pi * inv_s);
}
ld q_l(ld t) {
  constexpr ld kInvSqrt2 = 0.707106781186547524400844362104849039L;
  constexpr ld kTwoOverSqrtPi = 1.12837916709551257389615890312154517L;
  const ld z = t * kInvSqrt2;
  const double hi = static_cast<double>(z), lo = static_cast<double>(z - hi);
  const double ec = std::erfc(hi);
  if (lo == 0.0) return 0.5L * ec;
  return 0.5L * (static_cast<ld>(ec) - kTwoOverSqrtPi * static_cast<ld>(std::exp(-hi * hi)) * lo);
}

// The kernel K(d) tilted by e^{lambda d}: its spectrum and norms (for fft_bound).
struct TiltedKernel {
  int level = 0;
  std::vector<std::complex<double>> spectrum;
  double norm1 = 0.0, norm2 = 0.0;
};

// One step's transition kernel: y -> a y + (mixture (1 - u) [shift 0] + u [shift c]) + noise s.
// a = 1 (linear losses): a convolution; a != 1 (the regulariser's gradient step, strongly
// convex runs): a dense Nystrom matrix, evaluated column by column in Propagator::dense.
struct Kernel {
  double u, c, s, a;
  std::vector<double> values;                  // a = 1: K(d) = mix phi_s(d h - shift), d = -(n-1)..(n-1)
  std::vector<TiltedKernel> tilted;            // level 0 first, others made when first needed
  std::vector<double> tail_left, tail_right;   // weight_k * P(x_k + shift + Z past lo / hi)
  std::vector<double> from_left, from_right;   // density at x_j from the atoms at lo / hi
  double ll = 0, lr = 0, rl = 0, rr = 0;       // atom -> atom
};

class Propagator {
 public:
  Propagator(double lo, double hi, bool projected, std::size_t n, bool tilt)
      : lo_(lo), hi_(hi), projected_(projected), tilt_(tilt), n_(n), conv_(n) {
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

  std::shared_ptr<Kernel> kernel(double u, double c, double s, double a = 1.0) {
    if (u == 0.0 || c == 0.0) {  // canonical form of the unshifted kernel
      u = 0.0;
      c = 0.0;
    }
    for (const auto& k : cache_)
      if (k->u == u && k->c == c && k->s == s && k->a == a) return k;
    if (cache_.size() >= 8) cache_.clear();  // step-size or noise schedules: bounded memory
    auto k = std::make_shared<Kernel>();
    k->u = u;
    k->c = c;
    k->s = s;
    k->a = a;
    const ld n = static_cast<ld>(n_), lo = lo_, hi = hi_, inv_s = 1.0L / static_cast<ld>(s);
    const ld al = a;
    auto mix = [&](auto f) -> double {
      return static_cast<double>(u == 0.0 ? f(0.0L)
                                          : (1.0L - u) * f(0.0L) + u * f(static_cast<ld>(c)));
    };
    if (a == 1.0) {
      k->values.resize(2 * n_ - 1);
      for (std::size_t i = 0; i < k->values.size(); ++i) {
        const ld d = static_cast<ld>(i) - (n - 1.0L);
        k->values[i] = mix([&](ld sh) { return gauss_l(d * h_ - sh, inv_s); });
      }
      tilted(*k, 0);
    }
    k->tail_left.resize(n_);
    k->tail_right.resize(n_);
    k->from_left.resize(n_);
    k->from_right.resize(n_);
    for (std::size_t j = 0; j < n_; ++j) {
      const ld xj = x_[j];
      // P(a x + shift + Z <= lo) = Q((a x + shift - lo)/s); P(a x + shift + Z >= hi) = Q((hi - a x - shift)/s).
      k->tail_left[j] = weights_[j] * mix([&](ld sh) { return q_l((al * xj + sh - lo) * inv_s); });
      k->tail_right[j] = weights_[j] * mix([&](ld sh) { return q_l((hi - al * xj - sh) * inv_s); });
      k->from_left[j] = mix([&](ld sh) { return gauss_l(xj - al * lo - sh, inv_s); });
      k->from_right[j] = mix([&](ld sh) { return gauss_l(xj - al * hi - sh, inv_s); });
    }
    // Atom -> atom: from lo (resp. hi) to a lo + shift (resp. a hi + shift), then past an end.
    k->ll = mix([&](ld sh) { return q_l((al * lo + sh - lo) * inv_s); });
    k->lr = mix([&](ld sh) { return q_l((hi - al * lo - sh) * inv_s); });
    k->rl = mix([&](ld sh) { return q_l((al * hi + sh - lo) * inv_s); });
    k->rr = mix([&](ld sh) { return q_l((hi - al * hi - sh) * inv_s); });
    cache_.push_back(k);
    return k;
  }

  // The law after one step from `in` through kernel k, with the error bounds carried along:
  // every term below is a sum of products of nonnegative numbers, so an error bound e_k on an
  // input value contributes (its coefficient) * e_k to the output's bound, and each new
  // rounding adds its own bound (fft_bound for the convolution, n u relative for the sums).
  Law step(const Law& in, Kernel& k) {
    Law out = empty();
    out.lost = in.lost;
    out.lost_error = in.lost_error;
    out.density.assign(n_, 0.0);
    out.density_error.assign(n_, 0.0);
    auto& err = out.density_error;
    const double sum_rel = (static_cast<double>(n_) + 8.0) * kU;  // recursive sum, n terms
    if (!in.density.empty()) {
      weighted_.resize(n_);
      for (std::size_t j = 0; j < n_; ++j) weighted_[j] = weights_[j] * in.density[j];
      if (k.a == 1.0) {
        const auto levels = convolve(weighted_, k, out.density, err);
        if (!in.density_error.empty()) {
          for (std::size_t j = 0; j < n_; ++j)
            weighted_[j] = weights_[j] * in.density_error[j] * (1 + 2 * kU);
          add_convolution_bound(weighted_, k, levels, err);
        }
      } else {
        dense(in, k, out.density, err);
      }
      double left = 0.0, right = 0.0, left_err = 0.0, right_err = 0.0;
      for (std::size_t j = 0; j < n_; ++j) {
        left += in.density[j] * k.tail_left[j];
        right += in.density[j] * k.tail_right[j];
        const double e = error_at(in, j);
        left_err += e * k.tail_left[j];
        right_err += e * k.tail_right[j];
      }
      out.left += left;
      out.right += right;
      out.left_error += (left_err + sum_rel * left) * (1 + sum_rel);
      out.right_error += (right_err + sum_rel * right) * (1 + sum_rel);
    }
    if (in.left != 0.0 || in.left_error != 0.0) {
      for (std::size_t j = 0; j < n_; ++j) {
        out.density[j] += in.left * k.from_left[j];
        err[j] += in.left_error * k.from_left[j];
      }
      out.left += in.left * k.ll;
      out.right += in.left * k.lr;
      out.left_error += in.left_error * k.ll;
      out.right_error += in.left_error * k.lr;
    }
    if (in.right != 0.0 || in.right_error != 0.0) {
      for (std::size_t j = 0; j < n_; ++j) {
        out.density[j] += in.right * k.from_right[j];
        err[j] += in.right_error * k.from_right[j];
      }
      out.left += in.right * k.rl;
      out.right += in.right * k.rr;
      out.left_error += in.right_error * k.rl;
      out.right_error += in.right_error * k.rr;
    }
    for (const auto& [y, m] : in.points) {
      const ld yl = static_cast<ld>(k.a) * y, inv_s = 1.0L / static_cast<ld>(k.s), lo = lo_, hi = hi_;
      auto mix = [&](auto f) -> double {
        return static_cast<double>(
            k.u == 0.0 ? f(0.0L) : (1.0L - k.u) * f(0.0L) + k.u * f(static_cast<ld>(k.c)));
      };
      for (std::size_t j = 0; j < n_; ++j)
        out.density[j] += m * mix([&](ld sh) { return gauss_l(x_[j] - yl - sh, inv_s); });
      out.left += m * mix([&](ld sh) { return q_l((yl + sh - lo) * inv_s); });
      out.right += m * mix([&](ld sh) { return q_l((hi - yl - sh) * inv_s); });
    }
    // The few roundings of each value above (products, the additions of the atom and point
    // terms, the kernel values themselves): 24 u relative; and the last bits of values that
    // are subnormal (rounding there is absolute, 2^-1074).
    constexpr double kSub = 64 * std::numeric_limits<double>::denorm_min();
    for (std::size_t j = 0; j < n_; ++j)
      err[j] = (err[j] + 24 * kU * out.density[j] + kSub) * (1 + 4 * kU);
    out.left_error = (out.left_error + 24 * kU * out.left + kSub) * (1 + 4 * kU);
    out.right_error = (out.right_error + 24 * kU * out.right + kSub) * (1 + 4 * kU);
    if (!projected_) {
      // No projection: what crossed the window's ends is gone for good (it is < 1e-300 by
      // the choice of the window) and is carried as `lost`, part of the stated error.
      out.lost += out.left + out.right;
      out.lost_error += out.left_error + out.right_error;
      out.left = out.right = 0.0;
      out.left_error = out.right_error = 0.0;
    }
    return out;
  }

 private:
  // The density part of a step with a != 1: out_j = sum_k w_k p_k K(x_j - a y_k) with the
  // exact kernel (no FFT: x_j - a y_k is not a grid difference), and the propagated bound
  // sum_k w_k e_k K(x_j - a y_k). Every term is positive, so each sum is accurate relative to
  // itself (no tilts are needed for the tails): n u of recursive summation. Each column
  // K(x_j - m), j = 0..n-1, is a Gaussian sampled on the grid, produced outwards from its peak
  // by phi_{j+1} = phi_j r_j, r_{j+1} = r_j e^{-dt^2} (dt = h/s), restarted from values within
  // 2u of the exact ones (gauss_l; r by the same split exponent) every kRestart points: the
  // i-th value after a restart is within (2 + 3i + i(i - 1)) u <= 260 u of the exact one.
  static constexpr std::size_t kRestart = 16;
  static constexpr double kColumnRel = 260 * kU;

  void dense(const Law& in, const Kernel& k, std::vector<double>& density, std::vector<double>& err) {
    acc_.assign(n_, 0.0);
    acc_err_.assign(n_, 0.0);
    const ld inv_s = 1.0L / static_cast<ld>(k.s), dt = static_cast<ld>(h_) * inv_s;
    const double q = std::exp(static_cast<double>(-dt * dt));
    const bool with_err = !in.density_error.empty();
    // r = e^{e}, e formed in long double, split into hi + lo as in gauss_l (within 2u).
    auto exp_split = [](ld e) {
      const double hi = static_cast<double>(e), lo = static_cast<double>(e - hi);
      const double ex = std::exp(hi);
      return ex + ex * lo;
    };
    auto column = [&](ld m, double weight, double weight_err, auto carry_err) {
      const ld j0l = std::round((m - static_cast<ld>(lo_)) / static_cast<ld>(h_));
      const auto j0 = static_cast<std::size_t>(std::clamp<ld>(j0l, 0.0L, static_cast<ld>(n_ - 1)));
      for (const int dir : {+1, -1}) {
        if (dir < 0 && j0 == 0) break;
        std::size_t j = dir > 0 ? j0 : j0 - 1;
        double phi = 0, r = 0;
        for (std::size_t step = 0;; ++step) {
          if (step % kRestart == 0) {
            const ld t = (static_cast<ld>(x_[j]) - m) * inv_s;
            phi = static_cast<double>(gauss_l(static_cast<ld>(x_[j]) - m, inv_s));
            r = exp_split(dir > 0 ? -t * dt - dt * dt / 2 : t * dt - dt * dt / 2);
            // Past the peak in the direction of travel, the column only decreases: once a
            // value is below the smallest subnormal it and the rest are 0 in double.
            if (phi == 0.0 && (dir > 0 ? t > 0 : t < 0)) break;
          }
          acc_[j] += weight * phi;
          if constexpr (decltype(carry_err)::value) acc_err_[j] += weight_err * phi;
          if (dir > 0 ? j + 1 >= n_ : j == 0) break;
          j = dir > 0 ? j + 1 : j - 1;
          phi *= r;
          r *= q;
        }
      }
    };
    // The input's error bounds: where e_i <= 1e-8 p_i (the usual case: relative bounds), the
    // output's share is at most rho times the output, rho = the largest such ratio (all terms
    // are positive), and those columns need no second sum; the others carry theirs.
    constexpr double kRegular = 1e-8;
    double rho = 0.0;
    std::vector<char> regular(n_, 1);
    for (std::size_t i = 0; i < n_ && with_err; ++i) {
      const double e = in.density_error[i], p = in.density[i];
      if (e <= kRegular * p) rho = std::max(rho, p > 0 ? e / p : 0.0);
      else regular[i] = 0;
    }
    rho *= 1 + 4 * kU;
    for (std::size_t i = 0; i < n_; ++i) {
      const double mass = weights_[i] * in.density[i];
      const double emass = with_err ? weights_[i] * in.density_error[i] * (1 + 2 * kU) : 0.0;
      if (mass == 0 && emass == 0) continue;
      const ld y = static_cast<ld>(k.a) * static_cast<ld>(x_[i]);
      const double share[2] = {1 - k.u, k.u};
      const ld shift[2] = {0.0L, static_cast<ld>(k.c)};
      for (int part = 0; part < (k.u == 0.0 ? 1 : 2); ++part) {
        const double f = k.u == 0.0 ? 1.0 : share[part];
        if (regular[i]) column(y + shift[part], f * mass, 0.0, std::false_type{});
        else column(y + shift[part], f * mass, f * emass, std::true_type{});
      }
    }
    const double sum_rel = kColumnRel + (static_cast<double>(2 * n_) + 8) * kU;
    for (std::size_t j = 0; j < n_; ++j) {
      density[j] += acc_[j];
      err[j] += (acc_err_[j] + (rho + sum_rel) * acc_[j]) * (1 + sum_rel);
    }
  }

  const TiltedKernel& tilted(Kernel& k, int level) {
    for (const auto& t : k.tilted)
      if (t.level == level) return t;
    TiltedKernel t;
    t.level = level;
    const double lambda = tilt_total(level) / static_cast<double>(n_ - 1);
    std::vector<double> values(k.values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      const double d = static_cast<double>(i) - static_cast<double>(n_ - 1);
      values[i] = level == 0 ? k.values[i] : k.values[i] * std::exp(lambda * d);
      t.norm1 += values[i];
      t.norm2 += values[i] * values[i];
    }
    // The norms enter a bound: rounded up by more than the rounding of their sums.
    t.norm1 *= 1 + 4 * static_cast<double>(values.size()) * kU;
    t.norm2 = std::sqrt(t.norm2 * (1 + 4 * static_cast<double>(values.size()) * kU));
    t.spectrum = conv_.kernel_spectrum(values);
    k.tilted.push_back(std::move(t));
    return k.tilted.back();
  }

  // e^{sign * lambda_level (j - c)}, j = 0..n-1.
  const std::vector<double>& tilt_factors(int level) {
    const int key = level + kMaxTiltLevel;
    if (factors_.empty()) factors_.resize(2 * kMaxTiltLevel + 1);
    auto& f = factors_[static_cast<std::size_t>(key)];
    if (f.empty()) {
      f.resize(n_);
      const double lambda = tilt_total(level) / static_cast<double>(n_ - 1);
      const double c = 0.5 * static_cast<double>(n_ - 1);
      for (std::size_t j = 0; j < n_; ++j) f[j] = std::exp(lambda * (static_cast<double>(j) - c));
    }
    return f;
  }

  // est_j ~ sum_k x_k K(j - k) through the kernel tilted by `level`; bound_j >= |est_j - that|.
  void pass(std::span<const double> x, Kernel& k, int level, std::vector<double>& est,
            std::vector<double>& bound) {
    const auto& t = tilted(k, level);
    tilted_.resize(n_);
    double x1 = 0.0, x2 = 0.0;
    const std::vector<double>* up = level == 0 ? nullptr : &tilt_factors(level);
    for (std::size_t j = 0; j < n_; ++j) {
      tilted_[j] = up ? x[j] * (*up)[j] : x[j];
      x1 += tilted_[j];
      x2 += tilted_[j] * tilted_[j];
    }
    x1 *= 1 + 4 * static_cast<double>(n_) * kU;
    x2 = std::sqrt(x2 * (1 + 4 * static_cast<double>(n_) * kU));
    conv_.forward(tilted_, spectrum_);
    for (std::size_t i = 0; i < spectrum_.size(); ++i) spectrum_[i] *= t.spectrum[i];
    est.resize(n_);
    bound.resize(n_);
    conv_.inverse(spectrum_, est);
    const double b = fft_bound(conv_.transform_size(), x1, x2, t.norm1, t.norm2);
    if (!up) {
      for (std::size_t j = 0; j < n_; ++j) bound[j] = b + 4 * kU * std::abs(est[j]);
      return;
    }
    const auto& down = tilt_factors(-level);
    for (std::size_t j = 0; j < n_; ++j) {
      // Untilting multiplies by e^{-lambda (j - c)}; the factors (std::exp, a few ulp) and
      // the products add a relative 8 u.
      est[j] *= down[j];
      bound[j] = b * down[j] * (1 + 8 * kU) + 8 * kU * std::abs(est[j]);
    }
  }

  // y = x * K (x >= 0) with err_j >= |y_j - exact|: the plain FFT, then, for the values whose
  // bound exceeds kResolved of them (the tails, where the plain FFT's absolute round-off
  // swamps the density; e.g. the small atom that decides delta at eps ~ 20-30), tilts of
  // growing strength towards that side; each value keeps its tightest estimate. Returns
  // the levels used.
  std::vector<int> convolve(std::span<const double> x, Kernel& k, std::vector<double>& y,
                            std::vector<double>& err) {
    std::vector<int> levels{0};
    pass(x, k, 0, y, err);
    for (std::size_t j = 0; j < n_; ++j) y[j] = std::max(y[j], 0.0);  // a density is >= 0
    if (!tilt_) return levels;
    const auto peak = static_cast<std::size_t>(std::max_element(y.begin(), y.end()) - y.begin());
    // Below e^-290 of the peak no tilt (at most e^256 between two points) can resolve a value:
    // not worth a pass (its bound stays absolute).
    const double reach = y[peak] * std::exp(-290.0);
    auto unresolved = [&](std::size_t j) {
      return err[j] > kResolved * y[j] && y[j] + err[j] > reach;
    };
    for (const int side : {-1, 1}) {  // -1: left of the peak (lifted by lambda < 0)
      auto any = [&] {
        for (std::size_t j = 0; j < n_; ++j)
          if ((side < 0 ? j < peak : j > peak) && unresolved(j)) return true;
        return false;
      };
      for (int level = 1; level <= kMaxTiltLevel && any(); ++level) {
        pass(x, k, side * level, est_, bound_);
        bool improved = false, used = false;
        for (std::size_t j = 0; j < n_; ++j) {
          if (!(bound_[j] < err[j])) continue;
          if (unresolved(j) && bound_[j] < 0.5 * err[j]) improved = true;
          y[j] = std::max(est_[j], 0.0);
          err[j] = bound_[j];
          used = true;
        }
        if (used) levels.push_back(side * level);
        // A stronger tilt lifts the far tail more; when this one helped none of the
        // unresolved values, they are below every tilt's reach (or exactly 0).
        if (!improved) break;
      }
    }
    return levels;
  }

  // err_j += an upper bound on sum_k e_k K(j - k) (e >= 0): the smallest estimate + bound over
  // the tilts that `convolve` used for the density.
  void add_convolution_bound(std::span<const double> e, Kernel& k, const std::vector<int>& levels,
                             std::vector<double>& err) {
    upper_.assign(n_, kInf);
    for (const int level : levels) {
      pass(e, k, level, est_, bound_);
      for (std::size_t j = 0; j < n_; ++j)
        upper_[j] = std::min(upper_[j], std::max(est_[j], 0.0) + bound_[j]);
    }
    for (std::size_t j = 0; j < n_; ++j) err[j] += upper_[j] * (1 + 2 * kU);
  }

  double lo_, hi_;
  bool projected_, tilt_;
  std::size_t n_;
  double h_ = 0.0;
  detail::Convolver conv_;
  std::vector<double> weights_, x_, weighted_, tilted_, est_, bound_, upper_, acc_, acc_err_;
  std::vector<std::vector<double>> factors_;
  std::vector<std::complex<double>> spectrum_;
  std::vector<std::shared_ptr<Kernel>> cache_;
};

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
  // lambda > 0: every record's loss gains the regulariser (lambda/2) w^2, whose gradient step
  // w -> (1 - eta lambda) w must be a contraction.
  detail::check_contraction(run);
  // The trainer clips per-example gradients to C, so the record's slope is min(L, C).
  if (run.loss.lipschitz && run.clip) return std::min(*run.loss.lipschitz, *run.clip);
  if (run.loss.lipschitz) return *run.loss.lipschitz;
  if (run.clip) return *run.clip;
  fail(opt("lipschitz"), "(missing)", "given: the slope L > 0 of the record's linear loss");
}

LawPair propagate(const Run& run, Pair pair, std::int64_t grid_points, bool tilted) {
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
  Propagator prop(lo, hi, projected, n, tilted);
  const auto index = detail::record_index(run);
  const double q_use = static_cast<double>(run.batch_size) / static_cast<double>(run.n);
  auto usage = [&](std::int64_t t) -> double {
    switch (run.sampling) {
      case Sampling::full: return 1.0;
      case Sampling::poisson:
      case Sampling::fixed: return q_use;  // marginal b/n, independent across steps
      case Sampling::cyclic: return detail::in_cyclic_batch(run, *index, t) ? 1.0 : 0.0;
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
        law = prop.step(law, *prop.kernel(usage(t), c, s, detail::contraction(run, t)));
        if (stop) axpy(acc, 1.0 / static_cast<double>(T), law);
      }
      return stop ? acc : law;
    }
    // Shuffled epochs of K = floor(n/b) batches (src/train/sampler.cpp: a fresh uniform
    // permutation per epoch, cut into K batches of b, the n - K b records left over sit the
    // epoch out): the record is in batch j of an epoch with probability b/n, in none with
    // 1 - K b/n. Exact law = U + V with U the part on which the record has not been used in
    // the current epoch yet, V the part on which it has; at epoch step j (0-based) it is used
    // with conditional probability (b/n) / (1 - j b/n) = b / (n - j b) (1 at the last batch
    // when b divides n; otherwise U keeps the runs in which the record sits the epoch out).
    // With the partial last batch kept (K = ceil(n/b)), its r = n mod b records are read at
    // the epoch's last step with conditional probability 1 and a gradient weight 1/r: the
    // shift scaled by b/r.
    const std::int64_t K = detail::shuffled_batches(run), b_int = run.batch_size, r_part = run.partial_batch();
    Law U = start, V = prop.empty();
    for (std::int64_t t = 1; t <= T; ++t) {
      const std::int64_t j = (t - 1) % K;
      if (j == 0 && t > 1) {
        axpy(U, 1.0, V);
        V = prop.empty();
      }
      const double s = run.noise_std.at(t);
      const bool partial = r_part > 0 && j == K - 1;
      const double pr = partial ? 1.0 : static_cast<double>(b_int) / static_cast<double>(run.n - j * b_int);
      const double a = detail::contraction(run, t);
      const auto k0 = prop.kernel(0.0, 0.0, s, a);
      const auto kc = prop.kernel(1.0, shift(t) * (partial ? static_cast<double>(b_int) / static_cast<double>(r_part) : 1.0), s, a);
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
  for (Law* law : {&out.p, &out.q}) {
    if (law->density.empty()) law->density.assign(n, 0.0);
    if (law->density_error.empty()) law->density_error.assign(n, 0.0);
  }
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

// The change of the grid sum of (p - gamma q)^+ + atom terms when every density value and
// atom may be off by its error bound (Law::density_error, left_error, right_error): towards
// the upper end p + e_p, q - e_q, towards the lower end p - e_p, q + e_q. Where q is not
// resolved (its bound comparable to itself) its ratio to p means nothing, and this is what
// widens the band there (e.g. at eps in the hundreds, where delta(eps) is decided by density
// values ~e^-300 of the peak that the grid cannot resolve). `slack` receives the rounding of
// forming p - gamma q where it is positive: at most 2u of p there.
double roundoff_shift(const Law& p, const Law& q, double epsilon, bool upper, double& slack) {
  const double gamma = std::exp(epsilon);
  auto term = [gamma](double a, double b) {
    if (b <= 0.0) return a;
    return std::isinf(gamma) ? 0.0 : std::max(a - gamma * b, 0.0);
  };
  auto alt = [&](double pc, double ep, double qc, double eq) {
    return upper ? term(pc + ep, std::max(qc - eq, 0.0)) : term(std::max(pc - ep, 0.0), qc + eq);
  };
  const auto w = p.weights();
  double shift = 0.0, positive_mass = 0.0;
  for (std::size_t j = 0; j < w.size(); ++j) {
    const double pc = p.density[j], qc = q.density[j];
    const double base = term(pc, qc);
    shift += w[j] * (alt(pc, error_at(p, j), qc, error_at(q, j)) - base);
    if (base > 0.0) positive_mass += w[j] * pc;
  }
  shift += alt(p.left, p.left_error, q.left, q.left_error) - term(p.left, q.left);
  shift += alt(p.right, p.right_error, q.right, q.right_error) - term(p.right, q.right);
  if (term(p.left, q.left) > 0.0) positive_mass += p.left;
  if (term(p.right, q.right) > 0.0) positive_mass += p.right;
  slack = 2 * kU * positive_mass;
  return shift;
}

// delta(eps) at the upper or lower end of the round-off band (the lost mass of an
// unprojected window counts in full at the upper end, not at all at the lower end).
double delta_band(const LawPair& laws, double epsilon, bool upper) {
  auto one = [&](const Law& a, const Law& b) {
    double slack = 0.0;
    const double e = e_gamma(a, b, epsilon);
    double v = e + roundoff_shift(a, b, epsilon, upper, slack);
    // The sum of the (nonnegative, but for Gregory's end corrections) terms: n u of 2e.
    slack += 2 * (static_cast<double>(a.density.size()) + 16) * kU * e;
    v += upper ? slack + a.lost_error : -slack;
    if (!upper) v -= a.lost;
    return std::max(v, 0.0);
  };
  return std::max(one(laws.p, laws.q), one(laws.q, laws.p));
}

double epsilon_band(const LawPair& laws, double delta, bool upper) {
  const double log_target = std::log(delta);
  auto f = [&](double eps) {
    const double d = delta_band(laws, eps, upper);
    return d > 0.0 ? std::log(d) - log_target : -kInf;
  };
  const auto eps = num::smallest_meeting(f, 0.0, 1.0, 1e4);
  return eps ? *eps : kInf;
}

// The laws with every error bound cut to what it would be were each value as accurate,
// relative to itself, as the law's peak density is: about what tilted FFTs achieve. Only
// to decide whether they are worth running; never a stated error.
LawPair relative_floor(LawPair laws) {
  for (Law* law : {&laws.p, &laws.q}) {
    if (law->density.empty() || law->density_error.empty()) continue;
    const auto peak = static_cast<std::size_t>(
        std::max_element(law->density.begin(), law->density.end()) - law->density.begin());
    if (!(law->density[peak] > 0.0)) continue;
    const double rel = 4 * law->density_error[peak] / law->density[peak];
    for (std::size_t j = 0; j < law->density.size(); ++j)
      law->density_error[j] = std::min(law->density_error[j], rel * law->density[j]);
    law->left_error = std::min(law->left_error, rel * law->left);
    law->right_error = std::min(law->right_error, rel * law->right);
  }
  return laws;
}

}  // namespace

namespace {

// The unprojected last iterate in closed form: the instance's two laws are Gaussian mixtures
// (read_law, quadratic_laws); the pair's slopes are those of propagate().
ExactResult exact_gaussian(const Run& run, const Query& query, const ExactOptions& options) {
  const double g = instance_gradient(run);
  const ReadLaw law = read_law(run);
  // X: slope +g (opposite) or 0 (sec4); X': slope -g.
  const auto [p, q] = quadratic_laws(run, law, options.pair == Pair::sec4 ? 0.0 : g, -g);
  ExactResult r;
  r.method = Method::gaussian;
  r.components = law.atoms.size();
  r.at_delta = query.delta.has_value();
  r.grid = r.coarse_grid = 0;
  r.pair = options.pair;
  r.index = law.index;
  r.gradient = g;
  Certified c;
  if (r.at_delta) {
    r.delta = *query.delta;
    c = mixture_epsilon(p, q, r.delta);
    r.epsilon = c.value;
  } else {
    r.epsilon = *query.epsilon;
    c = mixture_delta(p, q, r.epsilon);
    r.delta = std::min(1.0, c.value);
  }
  r.coarse = r.value();
  r.error = c.error;
  r.mass_defect = static_cast<double>(std::abs(1.0L - p.mass()));
  for (const double alpha : query.alphas) {
    const Certified a = mixture_renyi(p, q, alpha), b = mixture_renyi(q, p, alpha);
    r.renyi.push_back({alpha, std::max(a.value, b.value), round_up(std::max(a.error, b.error))});
  }
  return r;
}

}  // namespace

std::string_view to_string(Method m) { return m == Method::gaussian ? "gaussian" : "grid"; }

// The work of an audit on a grid, in the units of kMaxGridWork (exact.hpp), checked before
// anything is allocated.
void check_grid_work(const Run& run, std::int64_t grid) {
  const double n = static_cast<double>(grid | 1), T = static_cast<double>(run.steps);
  const bool dense = run.loss.strong_convexity > 0;  // the step contracts: Propagator::dense
  const double per_step = dense ? n * n / 12 : n * std::log2(n);
  const double work = T * per_step * (run.sampling == Sampling::shuffle ? 2.0 : 1.0);
  if (!(work <= kMaxGridWork))
    fail(opt("grid"), std::to_string(grid),
         fmt::format("such that the audit's work, {} x {} x {}{} = {:.3g}, is at most 2^29 = {:.3g} (about a minute and "
                     "a half; docs/audit.md \"Limits\"): a smaller {} or fewer {}",
                     error_field("steps", std::to_string(run.steps)), dense ? "grid^2 / 12" : "grid log2(grid)",
                     run.sampling == Sampling::shuffle ? "2 (shuffled: two laws)" : "1",
                     dense ? fmt::format(" (dense sums: {})", error_field("strong_convexity")) : std::string(), work,
                     kMaxGridWork, error_field("grid"), error_field("steps")));
}

ExactResult exact(const Run& run, const Query& query, const ExactOptions& options) {
  if (options.grid) require_range(opt("grid"), *options.grid, 65, kMaxGridPoints);
  if (!query.delta && !query.epsilon) throw InvalidArgument("query: give exactly one of epsilon or delta");
  // The worst-case instance moves by eta_t g / b at step t: its laws need the step itself.
  if (!run.eta_known)
    fail(opt("eta"), "(missing)", "given: the exact audit follows the worst-case instance step by step");
  // Without projection the last iterate is a Gaussian mixture: exact in closed form.
  if (!std::isfinite(run.diameter) && run.release == Release::last) {
    run.validate();
    if (options.grid)
      refuse_unread("grid", std::to_string(*options.grid),
                    fmt::format("the unprojected last iterate ({} unstated or inf, {}) is computed in closed form, "
                                "without a grid",
                                error_field("diameter"), error_field("release", "last")));
    return exact_gaussian(run, query, options);
  }
  const std::int64_t grid = options.grid.value_or(kDefaultGrid);
  check_grid_work(run, grid);
  ExactResult r;
  r.at_delta = query.delta.has_value();
  r.grid = grid | 1;  // odd: the coarse grid's points are every other fine point
  r.coarse_grid = (r.grid + 1) / 2;
  r.pair = options.pair;
  // Round-off band: delta(eps) with every value moved by its propagated error bound
  // (Propagator::step), in the direction that raises or lowers it. First with plain FFTs
  // (one pair per step, bounds ~1e-16 of the peak); when that band, not the grid, limits the
  // answer, and it would shrink were the small values as accurate relative to themselves as
  // the peak is (delta decided by values far below the peak, e.g. a boundary atom of 1e-13
  // at eps ~ 27), again with tilted FFTs, which make them so.
  auto diff = [](double a, double b) { return a == b ? 0.0 : std::abs(a - b); };  // inf == inf: 0
  auto band_of = [&](const LawPair& laws) {
    if (r.at_delta) {
      const double hi = epsilon_band(laws, r.delta, true);
      const double lo = epsilon_band(laws, r.delta, false);
      return std::max(diff(hi, r.epsilon), diff(r.epsilon, lo));
    }
    const double hi = std::min(1.0, delta_band(laws, r.epsilon, true));
    const double lo = delta_band(laws, r.epsilon, false);
    return std::max(hi - r.delta, r.delta - lo);
  };
  LawPair fine, coarse;
  double grid_error = 0.0, band = 0.0;
  auto evaluate = [&](bool tilted) {
    fine = propagate(run, options.pair, r.grid, tilted);
    coarse = propagate(run, options.pair, r.coarse_grid, tilted);
    if (r.at_delta) {
      r.delta = *query.delta;
      r.epsilon = epsilon_at(fine, r.delta);
      r.coarse = epsilon_at(coarse, r.delta);
    } else {
      r.epsilon = *query.epsilon;
      r.delta = std::min(1.0, delta_at(fine, r.epsilon));
      r.coarse = std::min(1.0, delta_at(coarse, r.epsilon));
    }
    grid_error = diff(r.value(), r.coarse);
    band = band_of(fine);
  };
  evaluate(false);
  if (!(band <= 1e-3 * grid_error || band <= 1e-12 * std::abs(r.value())) &&
      !(band <= 2 * band_of(relative_floor(fine))))
    evaluate(true);
  double err = grid_error + band;
  // The root finder's tolerance.
  if (r.at_delta && std::isfinite(err)) err += 1e-12 * std::max(1.0, r.epsilon);
  r.error = std::isnan(err) ? kInf : round_up(err);
  r.index = fine.index;
  r.gradient = fine.gradient;
  r.mass_defect = std::max(std::abs(1.0 - fine.p.mass()), std::abs(1.0 - fine.q.mass()));
  for (const double alpha : query.alphas) {
    const double v = renyi_at(fine, alpha);
    const double c = renyi_at(coarse, alpha);
    r.renyi.push_back({alpha, v, round_up(diff(v, c))});
  }
  return r;
}

}  // namespace hsdp::audit
