// Exact samplers on the CSPRNG (docs/security.md): every output is drawn with integer
// arithmetic and Bernoulli draws whose probabilities are exact rationals or exp(-rational),
// so the law of each output is exactly the stated one (Canonne, Kamath, Steinke, "The
// Discrete Gaussian for Differential Privacy", NeurIPS 2020, Algorithms 1-3), and noise is
// added on a power-of-two grid, so that the set of values a noisy output can take does not
// depend on the input (Mironov, "On significance of the least significant bits for
// differential privacy", CCS 2012).
#pragma once

#include <cstdint>

#include "hsdp/random/csprng.hpp"

namespace hsdp::random {

/// Bernoulli(num/den), 0 <= num <= den, 1 <= den <= 2^127: compares the bits of a uniform
/// with the binary expansion of num/den, lazily (2 bits on average).
bool bernoulli(Csprng& g, u128 num, u128 den);
/// Bernoulli(exp(-num/den)), num >= 0, 1 <= den <= 2^126 (CKS Alg. 1).
bool bernoulli_exp(Csprng& g, u128 num, u128 den);
/// Discrete Laplace on Z: P(x) proportional to exp(-|x|/t), integer t >= 1 (CKS Alg. 2).
std::int64_t discrete_laplace(Csprng& g, std::uint64_t t);
/// Discrete Gaussian on Z: P(x) proportional to exp(-x^2/(2 sigma^2)), integer 1 <= sigma
/// <= 2^60 (CKS Alg. 3 with the discrete-Laplace proposal of scale t = sigma).
std::int64_t discrete_gaussian(Csprng& g, std::uint64_t sigma);
/// Geometric on {0, 1, ...} with P(X >= x) = exp(-x r / 2^s_bits), r >= 1, s_bits <= 60
/// (CKS Alg. 2's one-sided part: U + 2^s_bits V is geometric with ratio exp(-2^-s_bits)).
std::uint64_t geometric_exp(Csprng& g, std::uint64_t r, int s_bits);

enum class Law { gaussian, laplace };

/// Bits of the noise grid below the noise scale: lambda = 2^(floor(log2 scale) - kGridBits),
/// so that scale / lambda is in [2^32, 2^33).
inline constexpr int kGridBits = 32;
/// One draw of GridNoise against the same continuous law rounded to the grid (docs/security.md):
/// the probabilities of every grid point agree within a factor e^(+-eta), except on an event of
/// probability at most beta under both. Discrete Gaussian (sigma >= 2^32): eta <= 3000 / sigma^2
/// <= 2^-52 for |k| <= 150 sigma, log beta <= log(2 Q(149.9)) < -11000. Discrete Laplace
/// (t >= 2^32): eta <= 0.255 / t <= 2^-33 for every k, beta = 0.
inline constexpr double kGaussianEta = 0x1p-52, kGaussianLogBeta = -11000.0;
inline constexpr double kLaplaceEta = 0x1p-33;
/// Upper bound on lambda / std: lambda <= scale 2^-32 and the Laplace scale is std/sqrt 2.
inline constexpr double kSpacingOverStd = 0x1p-32;

/// The stds GridNoise draws (docs/input.md "Numbers the computation can represent"): from the
/// smallest whose grid spacing lambda = 2^(floor(log2 scale) - kGridBits) is a normal double
/// (scale >= 2^-990: 2^-990 for Gaussian noise, sqrt(2) 2^-990 for Laplace noise, whose scale
/// is std / sqrt 2), to 2^960 (~9.7e288), where a noisy value (below 2^53 lambda <= 2^21 scale
/// while on the exact grid) and the sum of up to 2^40 of them stay below the largest double.
double grid_noise_min_std(Law law);
inline constexpr double kGridNoiseMaxStd = 0x1p960;

/// Noise of a given std on a power-of-two grid lambda: add(u) = lambda (round(u / lambda) +
/// K), K the discrete Gaussian with sigma = ceil(std / lambda) or the discrete Laplace with
/// t = ceil((std / sqrt 2) / lambda) (a std at least the stated one). The result is a
/// multiple of lambda whatever u is; it is exact while |round(u / lambda)| < 2^52
/// (out_of_range counts the values that were not).
class GridNoise {
 public:
  /// std in [grid_noise_min_std(law), kGridNoiseMaxStd]; otherwise throws InvalidArgument
  /// naming `std` and that range.
  GridNoise(Law law, double std);
  double lambda() const { return lambda_; }
  std::uint64_t units() const { return units_; }  ///< sigma or t in grid units
  /// K (grid units).
  std::int64_t draw(Csprng& g) const {
    return law_ == Law::gaussian ? discrete_gaussian(g, units_) : discrete_laplace(g, units_);
  }
  /// u rounded to the grid plus noise; counts out-of-range values in *out_of_range.
  double add(Csprng& g, double u, std::uint64_t& out_of_range) const;

 private:
  Law law_;
  double lambda_ = 0;
  std::uint64_t units_ = 0;
};

}  // namespace hsdp::random
