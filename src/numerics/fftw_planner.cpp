#include "fftw_planner.hpp"

namespace hsdp::num::detail {

std::mutex& fftw_planner_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace hsdp::num::detail
