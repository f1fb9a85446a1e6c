// FFTs of a fixed length with their buffers and plans: the set-up every FFTW user of the
// library needs, in one place -- a real-to-complex pair (RealFft: src/audit/convolution.cpp)
// and an out-of-place complex pair (ComplexFft: src/divergence/pld_compose.cpp). Planning and
// destruction take the shared planner lock (fftw_planner.hpp); executing distinct objects on
// distinct threads is safe.
#pragma once

#include <complex>
#include <cstddef>

namespace hsdp::num::detail {

/// Buffers real[n] and spectrum[n/2 + 1] (FFTW-aligned) with an r2c plan real -> spectrum
/// and a c2r plan spectrum -> real (FFTW_ESTIMATE: deterministic plans, no timing).
/// Unnormalised, as FFTW: inverse(forward(x)) = n x. Throws std::bad_alloc when the buffers
/// cannot be allocated, std::runtime_error when FFTW cannot plan.
/// The smallest 2^a 3^b 5^c 7^d >= max(n, 2): the lengths FFTW transforms fastest.
std::size_t fft_good_size(std::size_t n);

class RealFft {
 public:
  explicit RealFft(std::size_t n);
  ~RealFft();
  RealFft(const RealFft&) = delete;
  RealFft& operator=(const RealFft&) = delete;

  std::size_t size() const { return n_; }
  std::size_t spectrum_size() const { return n_ / 2 + 1; }
  /// n values: the input of forward(), the output of inverse().
  double* real() { return real_; }
  /// n/2 + 1 values: the output of forward(), the input of inverse() (which overwrites it).
  std::complex<double>* spectrum() { return spectrum_; }
  void forward();
  void inverse();

 private:
  std::size_t n_;
  double* real_ = nullptr;
  std::complex<double>* spectrum_ = nullptr;  // fftw_complex has the layout of std::complex
  void* forward_plan_ = nullptr;              // fftw_plan
  void* inverse_plan_ = nullptr;
};

/// Buffers input[n] and output[n] (FFTW-aligned) with an out-of-place complex forward plan
/// input -> output (e^{-2 pi i jk/n}) and backward plan output -> input (e^{+2 pi i jk/n}),
/// FFTW_ESTIMATE, unnormalised. Used where the transforms of a length are few: FFTW plans
/// an out-of-place complex transform in well under a millisecond where its real-to-complex
/// planner takes several (measured: 2^18 points, 1.3 ms against 8 ms), and two real
/// sequences share one complex transform (one as the real, one as the imaginary part).
/// Throws as RealFft.
class ComplexFft {
 public:
  explicit ComplexFft(std::size_t n);
  ~ComplexFft();
  ComplexFft(const ComplexFft&) = delete;
  ComplexFft& operator=(const ComplexFft&) = delete;

  std::size_t size() const { return n_; }
  std::complex<double>* input() { return input_; }
  std::complex<double>* output() { return output_; }
  void forward();   ///< output = DFT(input)
  void backward();  ///< input = unnormalised inverse DFT(output) (output is preserved)

 private:
  std::size_t n_;
  std::complex<double>* input_ = nullptr;
  std::complex<double>* output_ = nullptr;
  void* forward_plan_ = nullptr;
  void* backward_plan_ = nullptr;
};

}  // namespace hsdp::num::detail
