#include "hsdp/random/noise_grid.hpp"

#include <cmath>

#include "hsdp/random/samplers.hpp"

namespace hsdp::random {

// The grid's cost (include/hsdp/random/noise_grid.hpp, docs/security.md). Federated (Gaussian):
// the users' messages and the server's update are on one grid, and the sum of the m users'
// discrete Gaussians has the law of one discrete Gaussian of m times the variance up to a
// factor 1 +- e^(-2 pi^2 2^62) (Poisson summation; docs/security.md, "Federated runs on the
// grid"): one draw per coordinate and round, and at most m + 2 roundings of size
// lambda sqrt(P) / 2 in message units per step and run, i.e. a slack of
// (m + 2) / sqrt(m) 2^-32 sqrt(P) relative to the parameter-space std eta sigma / sqrt(m).
NoiseGrid noise_grid(std::size_t parameters, std::int64_t steps, NoiseKind kind,
                     std::optional<std::int64_t> federated_users) {
  NoiseGrid g;
  g.slack = 2.0 * kSpacingOverStd * std::sqrt(static_cast<double>(parameters));
  const double draws = static_cast<double>(parameters) * static_cast<double>(steps);
  const bool gaussian = kind == NoiseKind::gaussian;
  g.epsilon = 2.0 * draws * (gaussian ? kGaussianEta : kLaplaceEta);
  if (gaussian) g.log_beta = std::log(draws) + kGaussianLogBeta;
  if (federated_users) {
    const double m = static_cast<double>(*federated_users);
    g.slack = (m + 2.0) / std::sqrt(m) * kSpacingOverStd * std::sqrt(static_cast<double>(parameters));
    if (!gaussian) {
      // The sum of discrete Laplace draws is not a discrete Laplace: no law derived for it.
      g.log_beta = 0.0;
      g.reason = "federated with Laplace noise: the law of the sum of the users' discrete Laplace draws is "
                 "not derived (docs/security.md)";
    }
  }
  return g;
}

}  // namespace hsdp::random
