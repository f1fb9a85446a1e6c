// Privacy loss distributions, part 2 (pld_internal.hpp): composition by FFT. The pieces'
// transforms raised to their counts on one circular window sized by Chernoff bounds, with
// a-priori round-off bounds and the dominant low frequencies recomputed accurately.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <map>
#include <memory>
#include <numbers>
#include <span>
#include <utility>
#include <vector>

#include "../numerics/real_fft.hpp"  // ComplexFft, fft_good_size
#include "hsdp/divergence/pld.hpp"
#include "hsdp/errors.hpp"
#include "pld_internal.hpp"

namespace hsdp::div {

using namespace pld_detail;

namespace pld_detail {

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

}  // namespace pld_detail

namespace {

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
// parts). Error bounds as in pld_internal.hpp.
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

    // Forward transforms, two pieces at a time; round-off per frequency k (pld_internal.hpp):
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

}  // namespace hsdp::div
