#include "hsdp/random/samplers.hpp"

#include "hsdp/errors.hpp"
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "hsdp/errors.hpp"

namespace hsdp::random {

bool bernoulli(Csprng& g, u128 num, u128 den) {
  if (num >= den) return true;
  if (num == 0) return false;
  if ((den & (den - 1)) == 0 && den <= (static_cast<u128>(1) << 64)) {
    // den = 2^j: U < num / 2^j for U = (j uniform bits) / 2^j, one word.
    const int j = den == (static_cast<u128>(1) << 64) ? 64 : __builtin_ctzll(static_cast<std::uint64_t>(den));
    const std::uint64_t w = j == 0 ? 0 : g.next_u64() >> (64 - j);
    return w < static_cast<std::uint64_t>(num);
  }
  // U < num/den, U = 0.u1 u2 ... uniform: the first bit where U and the expansion of num/den
  // differ decides (2 bits on average).
  if (den <= (static_cast<u128>(1) << 63)) {  // 64-bit arithmetic: r < den <= 2^63, 2r fits
    std::uint64_t r = static_cast<std::uint64_t>(num);
    const auto d = static_cast<std::uint64_t>(den);
    for (;;) {
      r <<= 1;
      const unsigned p = r >= d ? 1u : 0u;
      if (p) r -= d;
      const unsigned u = g.next_bit();
      if (u != p) return u < p;
      if (r == 0) return false;  // the expansion ends: U >= num/den (U has a later 1 a.s.)
    }
  }
  u128 r = num;  // r < den <= 2^127, so 2r fits
  for (;;) {
    r <<= 1;
    unsigned p = 0;
    if (r >= den) {
      r -= den;
      p = 1;
    }
    const unsigned u = g.next_bit();
    if (u != p) return u < p;
    if (r == 0) return false;
  }
}

namespace {
// exp(-x) for x = num/den in [0, 1] (CKS Alg. 1): K = 1; while Bernoulli(x/K): K++; return K odd.
bool bernoulli_exp_unit(Csprng& g, u128 num, u128 den) {
  if (num == den) {  // x = 1: Bernoulli(1/K) alone
    std::uint64_t k = 2;
    while (bernoulli(g, 1, k)) ++k;
    return (k & 1u) != 0;
  }
  std::uint64_t k = 1;
  // Bernoulli(x/K) as Bernoulli(x) and Bernoulli(1/K), independent: probability x/K.
  while (bernoulli(g, num, den) && bernoulli(g, 1, k)) ++k;
  return (k & 1u) != 0;
}
}  // namespace

bool bernoulli_exp(Csprng& g, u128 num, u128 den) {
  if (num <= den) return bernoulli_exp_unit(g, num, den);
  // exp(-x) = exp(-1)^floor(x) exp(-(x - floor x)).
  const u128 whole = num / den;
  for (u128 k = 0; k < whole; ++k)
    if (!bernoulli_exp_unit(g, 1, 1)) return false;
  return bernoulli_exp_unit(g, num % den, den);
}

namespace {
constexpr std::uint64_t kCap = std::uint64_t{1} << 62;

// The one-sided part of CKS Alg. 2: Z = U + s V, P(Z = z) proportional to exp(-z/s) (U uniform
// in [0, s) accepted with probability exp(-U/s), V the number of successes of Bernoulli(1/e)
// before the first failure). Returns false (redraw U) when U is rejected.
template <typename Uniform>
bool geometric_units(Csprng& g, std::uint64_t s, Uniform uniform, u128& z) {
  const std::uint64_t u = uniform();
  if (!bernoulli_exp_unit(g, u, s)) return false;
  std::uint64_t v = 0;
  while (bernoulli_exp_unit(g, 1, 1)) ++v;
  z = static_cast<u128>(u) + static_cast<u128>(s) * v;
  return true;
}
}  // namespace

std::int64_t discrete_laplace(Csprng& g, std::uint64_t t) {
  for (;;) {
    u128 z = 0;
    if (!geometric_units(g, t, [&] { return g.uniform_below(t); }, z)) continue;
    if (z >= kCap) continue;  // never in practice: P(|X| >= 2^62) < exp(-2^28) for t <= 2^33
    const auto x = static_cast<std::uint64_t>(z);
    const unsigned negative = g.next_bit();
    if (negative && x == 0) continue;  // 0 would be counted twice
    return negative ? -static_cast<std::int64_t>(x) : static_cast<std::int64_t>(x);
  }
}

std::int64_t discrete_gaussian(Csprng& g, std::uint64_t sigma) {
  // Proposal Y ~ discrete Laplace of scale t = sigma, accepted with probability
  // exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2)) = exp(-(|Y| - sigma)^2 / (2 sigma^2)): then
  // P(Y = y) is proportional to exp(-|y|/sigma - (|y| - sigma)^2/(2 sigma^2)) =
  // exp(-y^2/(2 sigma^2) - 1/2), the discrete Gaussian (CKS Alg. 3, any t > 0).
  const u128 den = 2 * static_cast<u128>(sigma) * sigma;
  for (;;) {
    const std::int64_t y = discrete_laplace(g, sigma);
    const u128 a = static_cast<std::uint64_t>(y < 0 ? -y : y);
    const u128 diff = a >= sigma ? a - sigma : sigma - a;
    if (bernoulli_exp(g, diff * diff, den)) return y;
  }
}

std::uint64_t geometric_exp(Csprng& g, std::uint64_t r, int s_bits) {
  const std::uint64_t s = std::uint64_t{1} << s_bits;
  for (;;) {
    u128 z = 0;
    if (!geometric_units(g, s, [&] { return g.next_u64() & (s - 1); }, z)) continue;
    // P(floor(Z/r) >= x) = P(Z >= r x) = exp(-r x / s)
    if (z <= ~std::uint64_t{0}) return static_cast<std::uint64_t>(z) / r;
    const u128 x = z / r;
    return x > ~std::uint64_t{0} ? ~std::uint64_t{0} : static_cast<std::uint64_t>(x);
  }
}

double grid_noise_min_std(Law law) {
  // scale = std (Gaussian) or std / sqrt 2 (Laplace) >= 2^-990, so that lambda >= 2^-1022. For
  // Laplace the smallest double with std / sqrt(2) >= 2^-990 after rounding: sqrt(2) 2^-990
  // rounded up, then nudged until the division agrees.
  if (law == Law::gaussian) return 0x1p-990;
  double s = std::nextafter(std::sqrt(2.0) * 0x1p-990, std::numeric_limits<double>::infinity());
  while (s / std::sqrt(2.0) < 0x1p-990) s = std::nextafter(s, std::numeric_limits<double>::infinity());
  return s;
}

GridNoise::GridNoise(Law law, double std) : law_(law) {
  const double lo = grid_noise_min_std(law);
  if (!(std >= lo && std <= kGridNoiseMaxStd))
    fail(Param("std"), std,
         fmt::format("a noise std in [{}, {}] (the grid spacing std 2^-32 must be a normal double, and "
                     "the noisy values far below the largest double)",
                     show(lo), show(kGridNoiseMaxStd)));
  const double scale = law == Law::gaussian ? std : std / std::sqrt(2.0);
  int e = 0;
  std::frexp(scale, &e);  // scale = f 2^e, f in [0.5, 1): floor(log2 scale) = e - 1
  lambda_ = std::ldexp(1.0, e - 1 - kGridBits);
  if (!(lambda_ >= std::numeric_limits<double>::min()))
    throw std::logic_error("grid noise: lambda below the normal range inside the checked std range");
  units_ = static_cast<std::uint64_t>(std::ceil(scale / lambda_));  // exact: a power-of-two scaling
}

double GridNoise::add(Csprng& g, double u, std::uint64_t& out_of_range) const {
  constexpr double kExact = 0x1p52;
  const double w = std::nearbyint(u / lambda_);  // u / lambda is exact (a power of two)
  const auto k = static_cast<double>(draw(g));
  // w and k below 2^52: their sum is an integer below 2^53, exact, and times lambda exact.
  if (!(std::fabs(w) < kExact) || !(std::fabs(k) < kExact)) {
    ++out_of_range;
    // Off the exact grid (counted: the trainer's report then certifies nothing): u plus the
    // noise, never (w + k) lambda, whose w = u / lambda may have overflowed to +-inf.
    return u + k * lambda_;
  }
  return (w + k) * lambda_;
}

}  // namespace hsdp::random
