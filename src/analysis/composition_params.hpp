// The per-step mechanism of the release-every-iterate baseline, shared by composition-rdp
// (composition.cpp) and composition-pld (composition_pld.cpp): sampling rate, scheme,
// neighbouring relation and the distinct noise multipliers with their step counts (the
// modelling of each batch policy is documented at the top of composition.cpp).
// Implementation detail, not a public header.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "hsdp/analysis/analysis.hpp"

#include "hsdp/divergence/rdp.hpp"
#include "hsdp/run.hpp"

namespace hsdp::detail {

struct CompositionParams {
  double q = 1.0;
  div::Subsampling scheme = div::Subsampling::poisson;
  div::Neighbours neighbours = div::Neighbours::remove;
  double clip = 1.0;
  // Distinct noise multipliers z with their multiplicities: of the subsampled steps when
  // !gaussian (sum = T), of every step otherwise (for the details).
  std::map<double, std::int64_t> z_counts;
  // The subsampled steps' shift in units of C: each step is the subsampled Gaussian with
  // noise multiplier z / sensitivity (2 for fixed-size batches under add/remove).
  double sensitivity = 1.0;
  // The run is one Gaussian mechanism (no amplification by sampling: full, shuffled and cyclic
  // batches, or an order known to the adversary): the steps that can read a record, each
  // with its sensitivity (in units of C/b) over its noise multiplier, compose to mu-GDP with
  // mu^2 = gaussian_mu2 (docs/analyses/composition.md, "Per-step mechanism").
  bool gaussian = false;
  double gaussian_mu2 = 0.0;
};

/// The parameters of an applicable run (Gaussian noise, clip or Lipschitz bound known, and
/// !add_remove_reason(run), neighbours.hpp).
CompositionParams composition_params(const Run& run);

/// The RDP of the whole sequence at order alpha: sum over the steps of the subsampled
/// Gaussian's RDP (Mironov 2017 Prop. 1), or alpha mu^2 / 2 for a Gaussian run; +inf as
/// soon as one step's is.
double composition_rdp(const CompositionParams& p, double alpha);

/// The order-1 route of the whole sequence (docs/rdp.md "Order 1: KL and total variation"): a
/// proven upper bound on the KL divergence of the neighbouring pair's outputs and on their
/// total variation distance TV (= delta at eps = 0, so delta(eps) <= TV for every eps >= 0).
struct TvBound {
  double kl = 0.0;
  double tv = 1.0;
};
/// nullopt when no bound below 1 is derived (or a term would underflow).
std::optional<TvBound> composition_tv_bound(const CompositionParams& p);

/// The details both composition analyses report: q, the noise multiplier (or its minimum),
/// and for a Gaussian run its mu.
std::vector<Detail> composition_details(const CompositionParams& p);

}  // namespace hsdp::detail
