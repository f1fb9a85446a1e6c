#include "sampler.hpp"

#include <fmt/format.h>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <numeric>
#include <stdexcept>

#include "hsdp/random/samplers.hpp"

namespace hsdp::train {

BatchSampler::BatchSampler(Sampling sampling, std::int64_t n, std::int64_t b, random::Csprng& rng,
                           bool drop_last, std::int64_t rate_n)
    : sampling_(sampling), n_(n), b_(b), rate_n_(rate_n > 0 ? rate_n : n), rng_(rng), drop_last_(drop_last) {
  if (sampling_ == Sampling::fixed || sampling_ == Sampling::shuffle) {
    perm_.resize(static_cast<std::size_t>(n));
    std::iota(perm_.begin(), perm_.end(), 0);
  }
  if (sampling_ == Sampling::poisson && b_ < rate_n_) {
    // q = b / rate_n, a public constant of the run (the neighbouring data set, of n - 1 or
    // n + 1 records, samples at the same q: what the add/remove certificate assumes,
    // docs/training.md "Public constants of the run"). The gap rate mu = -log(1 - q) rounded DOWN to r 2^-s with about 40 significant bits (and
    // 2^-40 below libm's value, far more than its error): the inclusion probability
    // q' = 1 - exp(-r 2^-s) is at most q and within 2^-39 of it (relative).
    const double mu = -std::log1p(-static_cast<double>(b_) / static_cast<double>(rate_n_)) * (1.0 - 0x1p-40);
    int e = 0;
    std::frexp(mu, &e);  // mu in [2^(e-1), 2^e)
    gap_bits_ = std::min(60, 40 - e);
    gap_rate_ = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ldexp(mu, gap_bits_)));
  }
}

void BatchSampler::next(std::int64_t t, std::vector<std::int64_t>& out) {
  out.clear();
  switch (sampling_) {
    case Sampling::full:
      out.resize(static_cast<std::size_t>(n_));
      std::iota(out.begin(), out.end(), 0);
      return;
    case Sampling::poisson: {
      if (b_ >= rate_n_) {
        out.resize(static_cast<std::size_t>(n_));
        std::iota(out.begin(), out.end(), 0);
        return;
      }
      // P(gap = k) = (1-q')^k q', k >= 0, drawn exactly (random::geometric_exp).
      std::int64_t i = -1;
      for (;;) {
        const std::uint64_t gap = random::geometric_exp(rng_, gap_rate_, gap_bits_);
        if (gap >= static_cast<std::uint64_t>(n_)) break;
        i += 1 + static_cast<std::int64_t>(gap);
        if (i >= n_) break;
        out.push_back(i);
      }
      return;
    }
    case Sampling::fixed: {
      for (std::int64_t j = 0; j < b_; ++j)
        std::swap(perm_[static_cast<std::size_t>(j)], perm_[static_cast<std::size_t>(rng_.uniform_int(j, n_ - 1))]);
      out.assign(perm_.begin(), perm_.begin() + b_);
      return;
    }
    case Sampling::shuffle: {
      // drop_last: floor(n/b) batches of b, the n mod b records at the end unused this epoch;
      // otherwise ceil(n/b) batches, the last holding those n mod b records.
      const std::int64_t per_epoch = drop_last_ ? n_ / b_ : (n_ + b_ - 1) / b_;
      const std::int64_t k = (t - 1) % per_epoch;
      if (k == 0) {
        // Fisher-Yates with the run's generator (a new hidden permutation per epoch).
        for (std::int64_t j = n_ - 1; j > 0; --j)
          std::swap(perm_[static_cast<std::size_t>(j)], perm_[static_cast<std::size_t>(rng_.uniform_int(0, j))]);
      }
      out.assign(perm_.begin() + k * b_, perm_.begin() + std::min(n_, (k + 1) * b_));
      return;
    }
    case Sampling::cyclic: {
      const std::int64_t start = ((t - 1) % n_) * b_ % n_;
      for (std::int64_t j = 0; j < b_; ++j) out.push_back((start + j) % n_);
      return;
    }
  }
}

double BatchSampler::inclusion_probability() const {
  if (sampling_ != Sampling::poisson) throw std::logic_error("inclusion_probability: Poisson batches only");
  if (b_ >= rate_n_) return 1.0;
  // q' = 1 - exp(-r 2^-s), the law of random::geometric_exp's gaps (rounded to double).
  return -std::expm1(-std::ldexp(static_cast<double>(gap_rate_), -gap_bits_));
}

std::string describe_batch_order(Sampling sampling, std::int64_t n, std::int64_t b, std::int64_t T,
                                 bool seeded, bool drop_last) {
  const std::string generator =
      seeded ? "the run's ChaCha20 generator keyed from --seed: the same command with the same --seed draws the "
               "same order (seeded: for experiments, not for release)"
             : "the run's ChaCha20 generator keyed from operating-system entropy (getrandom): never written, not "
               "reproducible";
  switch (sampling) {
    case Sampling::full:
      return "full: every record at every step";
    case Sampling::poisson:
      return fmt::format("poisson: each record in each step's batch independently with probability b/n = {}/{} ({})",
                         b, n, generator);
    case Sampling::fixed:
      return fmt::format("fixed: each step {} records drawn uniformly without replacement ({})", b, generator);
    case Sampling::shuffle: {
      const std::int64_t r = n % b;
      const bool partial = !drop_last && r > 0;
      const std::int64_t l = n / b + (partial ? 1 : 0);
      const std::int64_t epochs = T / l + (T % l != 0 ? 1 : 0);
      const std::string cut =
          partial ? fmt::format("cut into {} batch{} of {} and a last batch of the {} record{} left (each "
                                "batch's gradient the mean over its own records)",
                                l - 1, l - 1 == 1 ? "" : "es", b, r, r == 1 ? "" : "s")
                  : fmt::format("cut into {} batch{} of {}, {} record{} unused per epoch", l, l == 1 ? "" : "es", b,
                                n - l * b, n - l * b == 1 ? "" : "s");
      return fmt::format(
          "shuffle: each epoch a fresh uniformly random permutation (Fisher-Yates), {}, {} epoch{} ({} "
          "steps; the last {}); the certificate's position average assumes the permutations uniformly "
          "random and unpublished -- a known order is certified at the worst position ({})",
          cut, epochs, epochs == 1 ? "" : "s", T, T % l == 0 ? "whole" : fmt::format("{} of {} batches", T % l, l),
          generator);
    }
    case Sampling::cyclic:
      return fmt::format("cyclic: records in their stored order, step t reads records (t-1) b .. t b - 1 modulo n "
                         "(b = {}, n = {}), the same order every epoch (deterministic)",
                         b, n);
  }
  return {};
}

namespace {

/// How many threads the parallel pass uses. A team pays off only when its threads get a core:
/// on a loaded machine (measured: 2 threads on 2 busy cores 1.8x SLOWER than 1) the waits at
/// the barrier cost more than the split saves. So the pass measures itself: in the first 4
/// calls of every 64 it alternates 1 thread and the full team, then uses whichever was
/// faster per row. The chunked sum below makes the result independent of the choice.
class ThreadTuner {
 public:
  int pick(int team) {
    if (team <= 1) return 1;
    const int phase = calls_ % 64;
    if (phase == 0) sum_one_ = sum_team_ = 0.0;
    if (phase < 4) return phase % 2 == 0 ? 1 : team;
    return sum_one_ <= sum_team_ ? 1 : team;
  }
  void record(int threads, double seconds) {
    const int phase = calls_ % 64;
    if (phase < 4) (threads == 1 ? sum_one_ : sum_team_) += seconds;
    ++calls_;
  }

 private:
  int calls_ = 0;
  double sum_one_ = 0.0, sum_team_ = 0.0;
};

// Threads only pay off when the pass is long: a mini-batch (256 rows of 784) takes about
// 0.1 ms, comparable to waking a team and its barrier on a busy machine. The choice depends
// on the pass's size only, never on the number of threads, so the summation order (and the
// result) is the same on every machine.
bool short_pass(std::int64_t count, std::size_t P) {
  return static_cast<double>(count) * static_cast<double>(P) < 1048576.0;
}

// A fixed number of chunks, each summed into its own buffer by sum_rows(begin, end, buffer)
// and handed out dynamically: a thread stalled behind a busy neighbour no longer holds the
// barrier (with a static split, 2 threads on a loaded 2-core machine were slower than 1),
// and the buffers are added to grad by finish(buffer, grad) in chunk order, so the result is
// the same for any number of threads and any scheduling (bit-for-bit reproducible with a
// seed).
template <typename SumRows, typename Finish>
std::int64_t chunked_sum(std::int64_t count, std::vector<double>& grad, SumRows sum_rows, Finish finish) {
  const std::size_t P = grad.size();
  constexpr std::int64_t kChunks = 16;
  thread_local ThreadTuner tuner;
  const int threads = tuner.pick(static_cast<int>(std::min<std::int64_t>(omp_get_max_threads(), kChunks)));
  const double start = omp_get_wtime();
  std::vector<double> partial(static_cast<std::size_t>(kChunks) * P, 0.0);
  std::vector<std::int64_t> clipped(static_cast<std::size_t>(kChunks), 0);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (std::int64_t chunk = 0; chunk < kChunks; ++chunk) {
    clipped[static_cast<std::size_t>(chunk)] =
        sum_rows(count * chunk / kChunks, count * (chunk + 1) / kChunks,
                 partial.data() + static_cast<std::size_t>(chunk) * P);
  }
  tuner.record(threads, omp_get_wtime() - start);
  std::int64_t total = 0;
  for (std::int64_t chunk = 0; chunk < kChunks; ++chunk) {
    finish(partial.data() + static_cast<std::size_t>(chunk) * P, grad.data());
    total += clipped[static_cast<std::size_t>(chunk)];
  }
  return total;
}

// Rows of a sampled batch are scattered over memory: prefetch the cache lines of the row
// kAhead positions on while this one is processed (the hardware prefetcher cannot guess
// the jumps), so several DRAM fetches are in flight at once.
constexpr std::int64_t kAhead = 4;
inline void prefetch_bytes(const void* row, std::size_t bytes) {
  const char* p = static_cast<const char*>(row);
  for (std::size_t off = 0; off < bytes; off += 64) __builtin_prefetch(p + off);
}

// float64 storage: the per-example gradients of model.cpp on the stored rows.
template <typename RowOf>
std::int64_t gradient_sum_float64(const LinearModel& model, const data::Dataset& data, std::int64_t count,
                                  RowOf row_of, double clip, std::vector<double>& grad) {
  const std::size_t row_bytes = data.d * sizeof(double);
  const double* base = data.x.data();
  auto prefetch = [&](std::int64_t k) { prefetch_bytes(base + row_of(k) * data.d, row_bytes); };
  // Adds the gradients of rows [begin, end) to g; returns how many were clipped.
  auto sum_rows = [&](std::int64_t begin, std::int64_t end, double* g) {
    std::int64_t clipped = 0;
    for (std::int64_t k = begin; k < std::min(begin + kAhead, end); ++k) prefetch(k);
    for (std::int64_t k = begin; k < end; ++k) {
      if (k + kAhead < end) prefetch(k + kAhead);
      const std::size_t i = row_of(k);
      if (add_example_gradient(model, base + i * data.d, data.y[i], clip, g) < 1.0) ++clipped;
    }
    return clipped;
  };
  if (short_pass(count, grad.size())) return sum_rows(0, count, grad.data());
  const std::size_t P = grad.size();
  return chunked_sum(count, grad, sum_rows, [P](const double* g, double* out) {
    for (std::size_t j = 0; j < P; ++j) out[j] += g[j];
  });
}

// The compact kernels, written with explicit 4-wide vectors of doubles (GCC vector
// extensions) and two independent accumulators: the summation order is fixed by the code,
// so the result is the same on every x86-64 machine, whichever clone runs. target_clones
// compiles each for AVX2 (one ymm per vector; uint8 -> double is vpmovzxbd + vcvtdq2pd) and
// for the SSE2 baseline (two xmm per vector); measured 1.4x (uint8) and 1.5x (float32) for
// AVX2 on Fashion-MNIST. FMA is not enabled, so no product is fused into an add.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(HSDP_NO_CLONES)
#define HSDP_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define HSDP_CLONES
#endif
// The helpers below pass 32-byte vectors between internal, inlined functions: the ABI note
// GCC gives for that (-Wpsabi) does not concern any interface.
#pragma GCC diagnostic ignored "-Wpsabi"
using v4d = double __attribute__((vector_size(32)));
using v4f = float __attribute__((vector_size(16)));

inline v4d load4(const double* p) {
  v4d v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline v4d load4(const float* p) {
  v4f v;
  std::memcpy(&v, p, sizeof v);
  return __builtin_convertvector(v, v4d);
}
inline v4d load4(const std::uint8_t* p) {
  return v4d{static_cast<double>(p[0]), static_cast<double>(p[1]), static_cast<double>(p[2]),
             static_cast<double>(p[3])};
}
inline void store4(double* p, v4d v) { std::memcpy(p, &v, sizeof v); }
inline double sum4(v4d a, v4d b) {
  const v4d s = a + b;
  return (s[0] + s[1]) + (s[2] + s[3]);
}

// out <- u as float64 (exact for float and uint8) and returns <w, u>: one pass over the
// stored row, lanes l mod 8 summed separately and added as sum4(a0, a1) at the end.
template <typename T>
inline double widen_dot_generic(const T* __restrict u, const double* __restrict w, std::size_t d,
                                double* __restrict out) {
  v4d a0{}, a1{};
  std::size_t l = 0;
  for (; l + 8 <= d; l += 8) {
    const v4d x0 = {static_cast<double>(u[l]), static_cast<double>(u[l + 1]), static_cast<double>(u[l + 2]),
                    static_cast<double>(u[l + 3])};
    const v4d x1 = {static_cast<double>(u[l + 4]), static_cast<double>(u[l + 5]), static_cast<double>(u[l + 6]),
                    static_cast<double>(u[l + 7])};
    store4(out + l, x0);
    store4(out + l + 4, x1);
    a0 += load4(w + l) * x0;
    a1 += load4(w + l + 4) * x1;
  }
  double s = sum4(a0, a1);
  for (; l < d; ++l) {
    out[l] = static_cast<double>(u[l]);
    s += w[l] * out[l];
  }
  return s;
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(HSDP_NO_CLONES)
#define HSDP_AVX2_KERNELS 1
// The same arithmetic in AVX2 intrinsics (GCC does not turn the generic uint8 -> double
// conversion into vpmovzxbd + vcvtdq2pd by itself), so the result is identical.
__attribute__((target("avx2"))) inline __m256d load4_avx2(const std::uint8_t* p) {
  std::int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm256_cvtepi32_pd(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(v)));
}
__attribute__((target("avx2"))) inline __m256d load4_avx2(const float* p) {
  return _mm256_cvtps_pd(_mm_loadu_ps(p));
}
template <typename T>
__attribute__((target("avx2"))) double widen_dot_avx2(const T* __restrict u, const double* __restrict w,
                                                      std::size_t d, double* __restrict out) {
  __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
  std::size_t l = 0;
  for (; l + 8 <= d; l += 8) {
    const __m256d x0 = load4_avx2(u + l), x1 = load4_avx2(u + l + 4);
    _mm256_storeu_pd(out + l, x0);
    _mm256_storeu_pd(out + l + 4, x1);
    a0 = _mm256_add_pd(a0, _mm256_mul_pd(_mm256_loadu_pd(w + l), x0));
    a1 = _mm256_add_pd(a1, _mm256_mul_pd(_mm256_loadu_pd(w + l + 4), x1));
  }
  alignas(32) double lane[4];
  _mm256_store_pd(lane, _mm256_add_pd(a0, a1));
  double s = (lane[0] + lane[1]) + (lane[2] + lane[3]);
  for (; l < d; ++l) {
    out[l] = static_cast<double>(u[l]);
    s += w[l] * out[l];
  }
  return s;
}
// Four rows against the same w: row r is widened into out + r d and its dot returned in
// dots[r]. Each row keeps its own two accumulators and the same lane order, tail and final
// sum as widen_dot_avx2 above, so every dot is bit-identical to the one-row kernel; the four
// independent chains only let the adds of one row fill the latency of the others' (and w is
// loaded once for four rows).
template <typename T>
__attribute__((target("avx2"))) void widen_dot4_avx2(const T* const* __restrict u, const double* __restrict w,
                                                    std::size_t d, double* __restrict out, double* dots) {
  __m256d a0[4], a1[4];
  for (int r = 0; r < 4; ++r) a0[r] = a1[r] = _mm256_setzero_pd();
  std::size_t l = 0;
  for (; l + 8 <= d; l += 8) {
    const __m256d w0 = _mm256_loadu_pd(w + l), w1 = _mm256_loadu_pd(w + l + 4);
    for (int r = 0; r < 4; ++r) {
      const __m256d x0 = load4_avx2(u[r] + l), x1 = load4_avx2(u[r] + l + 4);
      _mm256_storeu_pd(out + r * d + l, x0);
      _mm256_storeu_pd(out + r * d + l + 4, x1);
      a0[r] = _mm256_add_pd(a0[r], _mm256_mul_pd(w0, x0));
      a1[r] = _mm256_add_pd(a1[r], _mm256_mul_pd(w1, x1));
    }
  }
  for (int r = 0; r < 4; ++r) {
    alignas(32) double lane[4];
    _mm256_store_pd(lane, _mm256_add_pd(a0[r], a1[r]));
    double s = (lane[0] + lane[1]) + (lane[2] + lane[3]);
    double* o = out + r * d;
    for (std::size_t t = l; t < d; ++t) {
      o[t] = static_cast<double>(u[r][t]);
      s += w[t] * o[t];
    }
    dots[r] = s;
  }
}
const bool kAvx2 = __builtin_cpu_supports("avx2");
#endif

template <typename T>
double widen_dot(const T* __restrict u, const double* __restrict w, std::size_t d, double* __restrict out) {
#ifdef HSDP_AVX2_KERNELS
  if (kAvx2) return widen_dot_avx2(u, w, d, out);
#endif
  return widen_dot_generic(u, w, d, out);
}

// widen_dot for four rows (see widen_dot4_avx2): the same per-row arithmetic as four calls.
template <typename T>
void widen_dot4(const T* const* __restrict u, const double* __restrict w, std::size_t d, double* __restrict out,
                double* dots) {
#ifdef HSDP_AVX2_KERNELS
  if (kAvx2) return widen_dot4_avx2(u, w, d, out, dots);
#endif
  for (int r = 0; r < 4; ++r) dots[r] = widen_dot_generic(u[r], w, d, out + r * d);
}

// sum_l a_l b_l.
HSDP_CLONES double dot(const double* __restrict a, const double* __restrict b, std::size_t d) {
  v4d a0{}, a1{};
  std::size_t l = 0;
  for (; l + 8 <= d; l += 8) {
    a0 += load4(a + l) * load4(b + l);
    a1 += load4(a + l + 4) * load4(b + l + 4);
  }
  double s = sum4(a0, a1);
  for (; l < d; ++l) s += a[l] * b[l];
  return s;
}

// sum_l w_l b_l^2 (w = c^2): the squared norm of the scaled row.
HSDP_CLONES double weighted_square(const double* __restrict w, const double* __restrict b, std::size_t d) {
  v4d a0{}, a1{};
  std::size_t l = 0;
  for (; l + 8 <= d; l += 8) {
    const v4d x0 = load4(b + l), x1 = load4(b + l + 4);
    a0 += load4(w + l) * (x0 * x0);
    a1 += load4(w + l + 4) * (x1 * x1);
  }
  double s = sum4(a0, a1);
  for (; l < d; ++l) s += w[l] * (b[l] * b[l]);
  return s;
}

// y <- y + a x (elementwise: no order to fix).
HSDP_CLONES void axpy(double a, const double* __restrict x, double* __restrict y, std::size_t d) {
  std::size_t l = 0;
  const v4d av = {a, a, a, a};
  for (; l + 4 <= d; l += 4) store4(y + l, load4(y + l) + av * load4(x + l));
  for (; l < d; ++l) y[l] += a * x[l];
}

// y <- y + sum_r a_r x_r for m = 2..4 rows, added in the order r = 0, 1, ...: per element
// the same sequence of roundings as m axpy calls in that order (so the same bits), in one
// pass over y instead of m.
template <int M>
inline void axpy_rows(const double* a, const double* const* __restrict x, double* __restrict y, std::size_t d) {
  v4d av[M];
  for (int r = 0; r < M; ++r) av[r] = v4d{a[r], a[r], a[r], a[r]};
  std::size_t l = 0;
  for (; l + 4 <= d; l += 4) {
    v4d v = load4(y + l);
    for (int r = 0; r < M; ++r) v = v + av[r] * load4(x[r] + l);
    store4(y + l, v);
  }
  for (; l < d; ++l) {
    double v = y[l];
    for (int r = 0; r < M; ++r) v += a[r] * x[r][l];
    y[l] = v;
  }
}
HSDP_CLONES void axpy2(const double* a, const double* const* x, double* y, std::size_t d) {
  axpy_rows<2>(a, x, y, d);
}
HSDP_CLONES void axpy3(const double* a, const double* const* x, double* y, std::size_t d) {
  axpy_rows<3>(a, x, y, d);
}
HSDP_CLONES void axpy4(const double* a, const double* const* x, double* y, std::size_t d) {
  axpy_rows<4>(a, x, y, d);
}
void axpy_m(int m, const double* a, const double* const* x, double* y, std::size_t d) {
  switch (m) {
    case 1: axpy(a[0], x[0], y, d); return;
    case 2: axpy2(a, x, y, d); return;
    case 3: axpy3(a, x, y, d); return;
    case 4: axpy4(a, x, y, d); return;
    default: return;
  }
}

// out <- u as float64 (the softmax path, whose k scores reuse the widened row).
template <typename T>
inline void widen_impl(const T* __restrict u, std::size_t d, double* __restrict out) {
  std::size_t l = 0;
  for (; l + 4 <= d; l += 4) store4(out + l, load4(u + l));
  for (; l < d; ++l) out[l] = static_cast<double>(u[l]);
}
HSDP_CLONES void widen(const float* __restrict u, std::size_t d, double* __restrict out) { widen_impl(u, d, out); }
HSDP_CLONES void widen(const std::uint8_t* __restrict u, std::size_t d, double* __restrict out) {
  widen_impl(u, d, out);
}

// Compact storage (float32, uint8): x_il = r_i c_l u_il. Per pass theta (.) c is computed
// once, so a score is s_j = b_j + r_i <theta_j (.) c, u_i> on the stored row (widened to
// float64 in an L1 buffer); the gradient (p_j - [j = y]) r_i c_l u_il is accumulated as
// coefficient * r_i * u_il per chunk buffer and c_l applied once when the buffer is added.
// Clipping uses the norm of the effective row, r_i sqrt(sum_l c_l^2 u_il^2).
template <typename T, typename RowOf>
std::int64_t gradient_sum_compact(const LinearModel& model, const data::Dataset& data, const T* base,
                                  std::int64_t count, RowOf row_of, double clip, std::vector<double>& grad) {
  const std::size_t d = model.d, p = model.features(), k = model.outputs, P = grad.size();
  const bool scaled = !data.feature_scale.empty();
  std::vector<double> wc(k * d), c2(scaled ? d : 0);
  for (std::size_t j = 0; j < k; ++j)
    for (std::size_t l = 0; l < d; ++l) wc[j * d + l] = model.theta[j * p + l] * data.feature_factor(l);
  for (std::size_t l = 0; l < c2.size(); ++l) c2[l] = data.feature_scale[l] * data.feature_scale[l];
  const double bias_norm2 = model.bias ? 1.0 : 0.0;
  const std::size_t row_bytes = d * sizeof(T);
  auto prefetch = [&](std::int64_t kk) { prefetch_bytes(base + row_of(kk) * d, row_bytes); };

  const double bias0 = model.bias ? model.theta[d] : 0.0;
  // The clipping factor min(1, C / ||g||) of a gradient c (x, 1) with ||c||^2 = cn2 and
  // x = r (c_feature . u): ||g||^2 = cn2 (r^2 sum_l c_l^2 u_l^2 + [bias]). 1 without clipping.
  auto clip_factor = [&](double cn2, double r, const double* u) {
    if (!(clip > 0 && cn2 != 0)) return 1.0;
    const double q = scaled ? weighted_square(c2.data(), u, d) : dot(u, u, d);
    const double gn = std::sqrt(cn2 * (r * r * q + bias_norm2));
    return gn > clip ? clip / gn : 1.0;
  };
  // One output: rows in blocks of 4 (the four dot products interleaved, their slopes computed
  // together, one pass over acc for their updates). Every row's score, slope, clip factor
  // and update are computed by the same arithmetic as in the one-row loop below, and the
  // updates are added to acc in row order, so the result is bit-identical to one row at a
  // time. Returns the first row not done (the rest go through the one-row loop).
  auto sum_blocks = [&](std::int64_t begin, std::int64_t end, double* acc, std::int64_t& clipped) {
    thread_local std::vector<double> block;
    block.resize(4 * d);
    std::int64_t kk = begin;
    for (; kk + 4 <= end; kk += 4) {
      std::size_t idx[4];
      const T* rows[4];
      for (int r = 0; r < 4; ++r) {
        if (kk + r + kAhead < end) prefetch(kk + r + kAhead);
        idx[r] = row_of(kk + r);
        rows[r] = base + idx[r] * d;
      }
      double dots[4];
      widen_dot4(rows, wc.data(), d, block.data(), dots);
      double coef[4], bias_coef[4];
      const double* xs[4];
      int m = 0;
      for (int r = 0; r < 4; ++r) {
        const std::size_t i = idx[r];
        const double rf = data.row_factor(i);
        const double* u = block.data() + static_cast<std::size_t>(r) * d;
        const double c0 = loss_derivative(model.loss, bias0 + rf * dots[r], data.y[i]);
        const double factor = clip_factor(c0 * c0, rf, u);
        if (factor < 1.0) ++clipped;
        const double c = c0 * factor;
        if (c == 0) continue;
        coef[m] = c * rf;
        bias_coef[m] = c;
        xs[m] = u;
        ++m;
      }
      axpy_m(m, coef, xs, acc, d);
      if (model.bias)
        for (int r = 0; r < m; ++r) acc[d] += bias_coef[r];
    }
    return kk;
  };

  auto sum_rows = [&](std::int64_t begin, std::int64_t end, double* acc) {
    std::int64_t clipped = 0;
    thread_local std::vector<double> buffer;
    buffer.resize(d + k);
    double* u = buffer.data();
    double* s = buffer.data() + d;
    for (std::int64_t kk = begin; kk < std::min(begin + kAhead, end); ++kk) prefetch(kk);
    if (k == 1) begin = sum_blocks(begin, end, acc, clipped);
    for (std::int64_t kk = begin; kk < end; ++kk) {
      if (kk + kAhead < end) prefetch(kk + kAhead);
      const std::size_t i = row_of(kk);
      const double r = data.row_factor(i);
      const double y = data.y[i];
      if (k == 1) {
        s[0] = (model.bias ? model.theta[d] : 0.0) + r * widen_dot(base + i * d, wc.data(), d, u);
      } else {
        widen(base + i * d, d, u);
        for (std::size_t j = 0; j < k; ++j)
          s[j] = (model.bias ? model.theta[j * p + d] : 0.0) + r * dot(wc.data() + j * d, u, d);
      }
      // coefficients of the gradient in (x, 1): one per output; cn2 = their squared norm.
      double cn2 = 0;
      if (k == 1) {
        s[0] = loss_derivative(model.loss, s[0], y);
        cn2 = s[0] * s[0];
      } else {
        const double mx = *std::max_element(s, s + k);
        double z = 0;
        for (std::size_t j = 0; j < k; ++j) z += (s[j] = std::exp(s[j] - mx));
        const auto label = static_cast<std::size_t>(y);
        for (std::size_t j = 0; j < k; ++j) {
          s[j] = s[j] / z - (j == label ? 1.0 : 0.0);
          cn2 += s[j] * s[j];
        }
      }
      const double factor = clip_factor(cn2, r, u);
      if (factor < 1.0) ++clipped;
      for (std::size_t j = 0; j < k; ++j) {
        const double c = s[j] * factor;
        if (c == 0) continue;
        double* a = acc + j * p;
        axpy(c * r, u, a, d);
        if (model.bias) a[d] += c;
      }
    }
    return clipped;
  };
  // Adds a buffer (u-space) to grad, applying c_l.
  auto finish = [&](const double* acc, double* g) {
    for (std::size_t j = 0; j < k; ++j) {
      const double* a = acc + j * p;
      double* o = g + j * p;
      if (scaled)
        for (std::size_t l = 0; l < d; ++l) o[l] += data.feature_scale[l] * a[l];
      else
        for (std::size_t l = 0; l < d; ++l) o[l] += a[l];
      if (model.bias) o[d] += a[d];
    }
  };
  if (short_pass(count, P)) {
    std::vector<double> acc(P, 0.0);
    const std::int64_t clipped = sum_rows(0, count, acc.data());
    finish(acc.data(), grad.data());
    return clipped;
  }
  return chunked_sum(count, grad, sum_rows, finish);
}

template <typename RowOf>
std::int64_t gradient_sum(const LinearModel& model, const data::Dataset& data, std::int64_t count,
                          RowOf row_of, double clip, std::vector<double>& grad) {
  if (data.y.size() != data.n || data.stored_values() != data.n * data.d || model.d != data.d)
    throw std::logic_error("gradient pass: the dataset's shape does not match its labels or the model");
  switch (data.storage) {
    case data::FeatureStorage::float64: return gradient_sum_float64(model, data, count, row_of, clip, grad);
    case data::FeatureStorage::float32:
      return gradient_sum_compact(model, data, data.x32.data(), count, row_of, clip, grad);
    case data::FeatureStorage::uint8:
      return gradient_sum_compact(model, data, data.x8.data(), count, row_of, clip, grad);
  }
  return 0;
}

}  // namespace

std::int64_t full_gradient_sum(const LinearModel& model, const data::Dataset& data, double clip,
                               std::vector<double>& grad) {
  return gradient_sum(model, data, static_cast<std::int64_t>(data.n),
                      [](std::int64_t k) { return static_cast<std::size_t>(k); }, clip, grad);
}

std::int64_t batch_gradient_sum(const LinearModel& model, const data::Dataset& data,
                                const std::vector<std::int64_t>& batch, double clip,
                                std::vector<double>& grad) {
  return gradient_sum(model, data, static_cast<std::int64_t>(batch.size()),
                      [&](std::int64_t k) { return static_cast<std::size_t>(batch[static_cast<std::size_t>(k)]); },
                      clip, grad);
}

}  // namespace hsdp::train
