#include "convolution.hpp"

#include <algorithm>
#include <stdexcept>

namespace hsdp::audit::detail {

namespace {


std::size_t checked(std::size_t n) {
  if (n < 1) throw std::logic_error("Convolver: empty grid");
  return n;
}

}  // namespace

Convolver::Convolver(std::size_t n) : n_(checked(n)), m_(num::detail::fft_good_size(2 * n - 1)), fft_(m_) {}

std::vector<std::complex<double>> Convolver::kernel_spectrum(std::span<const double> kernel) {
  if (kernel.size() != 2 * n_ - 1) throw std::logic_error("Convolver: kernel size");
  double* real = fft_.real();
  std::fill(real, real + m_, 0.0);
  // K(d) at index d mod m.
  for (std::size_t i = 0; i < kernel.size(); ++i) {
    const auto d = static_cast<std::ptrdiff_t>(i) - static_cast<std::ptrdiff_t>(n_ - 1);
    real[d >= 0 ? static_cast<std::size_t>(d) : m_ - static_cast<std::size_t>(-d)] = kernel[i];
  }
  fft_.forward();
  std::vector<std::complex<double>> s(fft_.spectrum(), fft_.spectrum() + fft_.spectrum_size());
  const double scale = 1.0 / static_cast<double>(m_);
  for (auto& v : s) v *= scale;
  return s;
}

void Convolver::forward(std::span<const double> x, std::vector<std::complex<double>>& spectrum) {
  if (x.size() != n_) throw std::logic_error("Convolver: signal size");
  double* real = fft_.real();
  std::copy(x.begin(), x.end(), real);
  std::fill(real + n_, real + m_, 0.0);
  fft_.forward();
  spectrum.assign(fft_.spectrum(), fft_.spectrum() + fft_.spectrum_size());
}

void Convolver::inverse(std::span<const std::complex<double>> spectrum, std::span<double> out) {
  if (spectrum.size() != m_ / 2 + 1 || out.size() != n_)
    throw std::logic_error("Convolver: spectrum or output size");
  std::copy(spectrum.begin(), spectrum.end(), fft_.spectrum());
  fft_.inverse();  // c2r overwrites its input: a copy
  std::copy(fft_.real(), fft_.real() + n_, out.begin());
}

}  // namespace hsdp::audit::detail
