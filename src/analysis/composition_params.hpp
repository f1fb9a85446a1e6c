// The per-step mechanism of the release-every-iterate baseline, shared by composition-rdp
// (composition.cpp) and composition-pld (composition_pld.cpp): sampling rate, scheme,
// neighbouring relation and the distinct noise multipliers with their step counts (the
// modelling of each batch policy is documented at the top of composition.cpp).
// Implementation detail, not a public header.
#pragma once

#include <cstdint>
#include <map>

#include "hsdp/divergence/rdp.hpp"
#include "hsdp/run.hpp"

namespace hsdp::detail {

struct CompositionParams {
  double q = 1.0;
  div::Subsampling scheme = div::Subsampling::poisson;
  div::Neighbours neighbours = div::Neighbours::remove;
  double clip = 1.0;
  // distinct noise multipliers z with their multiplicities (sum = charged steps)
  std::map<double, std::int64_t> z_counts;
};

/// The parameters of an applicable run (Gaussian noise, clip or Lipschitz bound known).
CompositionParams composition_params(const Run& run);

/// The RDP of the whole sequence at order alpha: sum over the steps of the subsampled
/// Gaussian's RDP (Mironov 2017 Prop. 1); +inf as soon as one step's is.
double composition_rdp(const CompositionParams& p, double alpha);

}  // namespace hsdp::detail
