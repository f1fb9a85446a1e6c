#include "convolution.hpp"

#include <fftw3.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>

#include "../numerics/fftw_planner.hpp"

namespace hsdp::audit::detail {

namespace {

// FFTW's planner is not thread-safe; execution of distinct plans on distinct arrays is.
// The lock is shared with every other FFTW user of the library (src/divergence/pld.cpp).
std::mutex& planner_mutex() { return num::detail::fftw_planner_mutex(); }

// Smallest 2^a 3^b 5^c 7^d >= n: sizes FFTW transforms fastest.
std::size_t good_size(std::size_t n) {
  for (std::size_t m = std::max<std::size_t>(n, 2);; ++m) {
    std::size_t r = m;
    for (const std::size_t p : {2, 3, 5, 7})
      while (r % p == 0) r /= p;
    if (r == 1) return m;
  }
}

}  // namespace

Convolver::Convolver(std::size_t n) : n_(n), m_(good_size(2 * n - 1)) {
  if (n < 1) throw std::logic_error("Convolver: empty grid");
  std::lock_guard lock(planner_mutex());
  real_ = fftw_alloc_real(m_);
  auto* c = fftw_alloc_complex(m_ / 2 + 1);
  if (!real_ || !c) throw std::bad_alloc();
  complex_ = c;
  forward_plan_ = fftw_plan_dft_r2c_1d(static_cast<int>(m_), real_, c, FFTW_ESTIMATE);
  inverse_plan_ = fftw_plan_dft_c2r_1d(static_cast<int>(m_), c, real_, FFTW_ESTIMATE);
  if (!forward_plan_ || !inverse_plan_) throw std::runtime_error("Convolver: FFTW planning failed");
}

Convolver::~Convolver() {
  std::lock_guard lock(planner_mutex());
  fftw_destroy_plan(static_cast<fftw_plan>(forward_plan_));
  fftw_destroy_plan(static_cast<fftw_plan>(inverse_plan_));
  fftw_free(real_);
  fftw_free(complex_);
}

std::vector<std::complex<double>> Convolver::kernel_spectrum(std::span<const double> kernel) {
  if (kernel.size() != 2 * n_ - 1) throw std::logic_error("Convolver: kernel size");
  std::fill(real_, real_ + m_, 0.0);
  // K(d) at index d mod m.
  for (std::size_t i = 0; i < kernel.size(); ++i) {
    const auto d = static_cast<std::ptrdiff_t>(i) - static_cast<std::ptrdiff_t>(n_ - 1);
    real_[d >= 0 ? static_cast<std::size_t>(d) : m_ - static_cast<std::size_t>(-d)] = kernel[i];
  }
  fftw_execute(static_cast<fftw_plan>(forward_plan_));
  std::vector<std::complex<double>> s(m_ / 2 + 1);
  std::memcpy(s.data(), complex_, s.size() * sizeof(fftw_complex));
  const double scale = 1.0 / static_cast<double>(m_);
  for (auto& v : s) v *= scale;
  return s;
}

void Convolver::forward(std::span<const double> x, std::vector<std::complex<double>>& spectrum) {
  if (x.size() != n_) throw std::logic_error("Convolver: signal size");
  std::copy(x.begin(), x.end(), real_);
  std::fill(real_ + n_, real_ + m_, 0.0);
  fftw_execute(static_cast<fftw_plan>(forward_plan_));
  spectrum.resize(m_ / 2 + 1);
  std::memcpy(spectrum.data(), complex_, spectrum.size() * sizeof(fftw_complex));
}

void Convolver::inverse(std::span<const std::complex<double>> spectrum, std::span<double> out) {
  if (spectrum.size() != m_ / 2 + 1 || out.size() != n_)
    throw std::logic_error("Convolver: spectrum or output size");
  std::memcpy(complex_, spectrum.data(), spectrum.size() * sizeof(fftw_complex));
  fftw_execute(static_cast<fftw_plan>(inverse_plan_));  // c2r overwrites its input: a copy
  std::copy(real_, real_ + n_, out.begin());
}

}  // namespace hsdp::audit::detail
