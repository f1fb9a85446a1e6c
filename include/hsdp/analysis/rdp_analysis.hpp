// Base class of the analyses whose guarantee is a Rényi-DP curve: they state eps(alpha)
// and inherit the (eps, delta) answer from the best RDP -> DP conversion.
#pragma once

#include <limits>

#include "hsdp/analysis/analysis.hpp"
#include "hsdp/divergence/rdp.hpp"

namespace hsdp {

class RdpAnalysis : public Analysis {
 public:
  /// RDP epsilon at order alpha > 1 of an applicable run (+inf where the bound is silent).
  virtual double rdp(const Run& run, double alpha) const = 0;
  /// The largest order at which rdp() is valid (some theorems restrict alpha).
  virtual double alpha_max(const Run&) const { return std::numeric_limits<double>::infinity(); }

  /// delta(eps) and eps(delta) through div::best_delta / div::best_epsilon of the curve.
  double log_delta(const Run& run, double epsilon) const override;
  double epsilon(const Run& run, double delta) const override;

  std::optional<double> rdp_at(const Run& run, double alpha) const override {
    return rdp(run, alpha);
  }

  div::RdpCurve curve(const Run& run) const;
};

}  // namespace hsdp
