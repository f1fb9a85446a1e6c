#include "real_fft.hpp"

#include <fftw3.h>

#include <algorithm>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>

#include "fftw_planner.hpp"

namespace hsdp::num::detail {

std::size_t fft_good_size(std::size_t n) {
  for (std::size_t m = std::max<std::size_t>(n, 2);; ++m) {
    std::size_t r = m;
    for (const std::size_t p : {2, 3, 5, 7})
      while (r % p == 0) r /= p;
    if (r == 1) return m;
  }
}

RealFft::RealFft(std::size_t n) : n_(n) {
  if (n < 1) throw std::logic_error("RealFft: empty transform");
  std::lock_guard lock(fftw_planner_mutex());
  real_ = fftw_alloc_real(n);
  fftw_complex* spec = fftw_alloc_complex(n / 2 + 1);
  spectrum_ = reinterpret_cast<std::complex<double>*>(spec);  // FFTW manual 4.1.1
  if (!real_ || !spec) {
    fftw_free(real_);
    fftw_free(spec);
    throw std::bad_alloc();
  }
  const int len = static_cast<int>(n);
  forward_plan_ = fftw_plan_dft_r2c_1d(len, real_, spec, FFTW_ESTIMATE);
  inverse_plan_ = fftw_plan_dft_c2r_1d(len, spec, real_, FFTW_ESTIMATE);
  if (!forward_plan_ || !inverse_plan_) {
    if (forward_plan_) fftw_destroy_plan(static_cast<fftw_plan>(forward_plan_));
    if (inverse_plan_) fftw_destroy_plan(static_cast<fftw_plan>(inverse_plan_));
    fftw_free(real_);
    fftw_free(spec);
    throw std::runtime_error("FFTW planning failed for length " + std::to_string(n));
  }
}

RealFft::~RealFft() {
  std::lock_guard lock(fftw_planner_mutex());
  fftw_destroy_plan(static_cast<fftw_plan>(forward_plan_));
  fftw_destroy_plan(static_cast<fftw_plan>(inverse_plan_));
  fftw_free(real_);
  fftw_free(spectrum_);
}

void RealFft::forward() { fftw_execute(static_cast<fftw_plan>(forward_plan_)); }
void RealFft::inverse() { fftw_execute(static_cast<fftw_plan>(inverse_plan_)); }

ComplexFft::ComplexFft(std::size_t n) : n_(n) {
  if (n < 1) throw std::logic_error("ComplexFft: empty transform");
  std::lock_guard lock(fftw_planner_mutex());
  fftw_complex* in = fftw_alloc_complex(n);
  fftw_complex* out = fftw_alloc_complex(n);
  if (!in || !out) {
    fftw_free(in);
    fftw_free(out);
    throw std::bad_alloc();
  }
  input_ = reinterpret_cast<std::complex<double>*>(in);
  output_ = reinterpret_cast<std::complex<double>*>(out);
  const int len = static_cast<int>(n);
  // FFTW_PRESERVE_INPUT on the backward plan keeps `output` (the spectrum) intact.
  forward_plan_ = fftw_plan_dft_1d(len, in, out, FFTW_FORWARD, FFTW_ESTIMATE);
  backward_plan_ = fftw_plan_dft_1d(len, out, in, FFTW_BACKWARD, FFTW_ESTIMATE | FFTW_PRESERVE_INPUT);
  if (!forward_plan_ || !backward_plan_) {
    if (forward_plan_) fftw_destroy_plan(static_cast<fftw_plan>(forward_plan_));
    if (backward_plan_) fftw_destroy_plan(static_cast<fftw_plan>(backward_plan_));
    fftw_free(in);
    fftw_free(out);
    throw std::runtime_error("FFTW planning failed for length " + std::to_string(n));
  }
}

ComplexFft::~ComplexFft() {
  std::lock_guard lock(fftw_planner_mutex());
  fftw_destroy_plan(static_cast<fftw_plan>(forward_plan_));
  fftw_destroy_plan(static_cast<fftw_plan>(backward_plan_));
  fftw_free(input_);
  fftw_free(output_);
}

void ComplexFft::forward() { fftw_execute(static_cast<fftw_plan>(forward_plan_)); }
void ComplexFft::backward() { fftw_execute(static_cast<fftw_plan>(backward_plan_)); }

}  // namespace hsdp::num::detail
