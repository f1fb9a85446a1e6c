// Linear convolution of a grid signal with a Toeplitz kernel by FFT (FFTW, real-to-complex).
// Private to src/audit/: the exact audit's Gaussian convolutions (src/audit/exact.cpp).
#pragma once

#include <complex>
#include <cstddef>
#include <span>
#include <vector>

#include "../numerics/real_fft.hpp"

namespace hsdp::audit::detail {

/// y_j = sum_{k=0}^{n-1} x_k K(j - k) for j = 0..n-1, with K given at d = -(n-1)..(n-1).
/// A circular convolution of length m >= 2n - 1 has no wrap-around for these j, so the
/// result is the exact linear convolution up to FFT round-off (~1e-16 of the largest term).
class Convolver {
 public:
  explicit Convolver(std::size_t n);

  std::size_t size() const { return n_; }
  std::size_t spectrum_size() const { return m_ / 2 + 1; }
  std::size_t transform_size() const { return m_; }

  /// Spectrum of the kernel; kernel[d + n - 1] = K(d), size 2n - 1. Includes the 1/m
  /// normalisation of the inverse transform.
  std::vector<std::complex<double>> kernel_spectrum(std::span<const double> kernel);
  /// Spectrum of x (size n), zero-padded to m.
  void forward(std::span<const double> x, std::vector<std::complex<double>>& spectrum);
  /// The first n values of the inverse transform of `spectrum`.
  void inverse(std::span<const std::complex<double>> spectrum, std::span<double> out);

 private:
  std::size_t n_, m_;
  num::detail::RealFft fft_;  // length m
};

}  // namespace hsdp::audit::detail
