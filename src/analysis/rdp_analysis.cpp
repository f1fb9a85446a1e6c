// RdpAnalysis: an analysis stated as an RDP curve inherits its (eps, delta) answer from the
// best conversion of div/rdp (journal (23), CKS 2020 Prop. 12 / Balle et al. 2020 Thm 21),
// minimised over alpha continuously (docs/rdp.md).
#include "hsdp/analysis/rdp_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hsdp {

div::RdpCurve RdpAnalysis::curve(const Run& run) const {
  div::RdpCurve c;
  c.alpha_max = alpha_max(run);
  c.epsilon = [this, &run](double alpha) { return rdp(run, alpha); };
  return c;
}

double RdpAnalysis::log_delta(const Run& run, double epsilon) const {
  const auto c = curve(run);
  const auto r = div::best_log_delta(c, epsilon);
  return std::isnan(r.value) ? 0.0 : std::min(0.0, r.value);
}

double RdpAnalysis::epsilon(const Run& run, double delta) const {
  const auto r = div::best_epsilon(curve(run), delta);
  return std::isnan(r.value) ? std::numeric_limits<double>::infinity() : r.value;
}

}  // namespace hsdp
