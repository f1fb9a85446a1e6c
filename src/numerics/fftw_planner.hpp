// FFTW's planner (fftw_plan_*, fftw_destroy_plan) is not thread-safe; executing distinct
// plans on distinct arrays is. Every user of FFTW in the library plans under this one lock,
// through RealFft (real_fft.hpp), which takes it.
#pragma once

#include <mutex>

namespace hsdp::num::detail {

std::mutex& fftw_planner_mutex();

}  // namespace hsdp::num::detail
