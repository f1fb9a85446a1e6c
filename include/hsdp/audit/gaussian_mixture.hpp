// Exact privacy of the last iterate of an unprojected 1-D quadratic instance: every iterate is
// Gaussian given the steps that read the differing record, so the last iterate is a finite
// MIXTURE of Gaussians with one common variance, and E_gamma between two such mixtures is a
// sum of normal probabilities between the roots of p = gamma q (docs/audit.md, "Strongly
// convex runs: the Gaussian closed form").
//
// The instance: every record's loss is (lambda/2) w^2 (the regulariser, the same on both
// datasets) plus a linear term g_x w with |g_x| <= L; every record but the differing one has
// g_x = 0. Noisy gradient descent without projection from w_0 = 0,
//     W_t = c_t W_{t-1} - (eta_t / b) g [record in batch t] + Z_t,  Z_t ~ N(0, s_t^2),
// c_t = 1 - eta_t lambda, gives W_T = -(g / b) A + N(0, V) with
//     A = sum_{t in R} eta_t prod_{k > t} c_k   (R: the steps that read the record),
//     V = sum_t s_t^2 prod_{k > t} c_k^2.
// R is fixed for full batches and cyclic order (one Gaussian: exact mu-GDP) and random for
// shuffled, fixed-size and Poisson batches, where the law of A is computed exactly as a
// discrete distribution (the convolution of independent per-epoch or per-step laws).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "hsdp/run.hpp"

namespace hsdp::audit {

/// One component: weight * N(mean, sd^2).
struct Atom {
  long double weight = 0;
  long double mean = 0;
};

/// sum_i weight_i N(mean_i, sd^2), with bounds on how far the stored numbers may be from the
/// exact ones (the rounding of the sums and products that formed them).
struct GaussianMixture {
  std::vector<Atom> atoms;
  long double sd = 1;
  long double weight_error = 0;  ///< relative error bound of every weight
  long double mean_error = 0;    ///< absolute error bound of every mean
  long double mass() const;      ///< sum of the weights
};

/// A computed number with a proven bound on its error: |value - exact| <= error.
struct Certified {
  double value = 0;
  double error = 0;
  double lo() const;  ///< max(0, value - error)
  double hi() const;  ///< value + error
};

/// E_{e^eps}(P || Q) = int (p - e^eps q)^+ for two mixtures with the same sd. The positive
/// set of p - gamma q is a union of intervals between the real roots of the exponential sum
/// e^{x^2/2} (p - gamma q)(x) = sum_k c_k e^{lambda_k x}: isolated by Rolle's theorem
/// (between two roots of a sum lies a root of the derivative of e^{-lambda_1 x} times it, a
/// sum with one term fewer; Descartes' rule of signs for exponential sums bounds their
/// number by the sign changes of c_k, so one sign change means at most one root), located
/// by TOMS 748. The probabilities of the intervals are sums of normal tails in long double
/// (Boost erfc). The error bound covers the tails' and sums' rounding, the roots'
/// uncertainty (the integrand vanishes at a root, so it enters only through the width of
/// the bracket times the integrand there) and the mixtures' own error bounds.
/// epsilon in [0, 1e4]; std::invalid_argument (InvalidArgument) when the sds differ.
Certified mixture_e_gamma(const GaussianMixture& p, const GaussianMixture& q, double epsilon);

/// delta(eps) = max(E(P||Q), E(Q||P)) (both orders of the neighbouring pair).
Certified mixture_delta(const GaussianMixture& p, const GaussianMixture& q, double epsilon);

/// eps(delta): the smallest eps >= 0 with delta(eps) <= delta (value), and an error such that
/// the exact boundary lies in [value - error, value + error] (from the certified delta at
/// the two ends). delta in (0, 1). +inf (error 0) when no eps up to 1e4 reaches it.
Certified mixture_epsilon(const GaussianMixture& p, const GaussianMixture& q, double delta);

/// D_alpha(P || Q) = log(int p^alpha q^(1 - alpha)) / (alpha - 1) by tanh-sinh quadrature over
/// the line (closed form alpha r^2 / 2 for two single Gaussians at distance r sd); error:
/// |value at relative tolerance 1e-13 - value at 1e-9| (an estimate, like the grid's).
Certified mixture_renyi(const GaussianMixture& p, const GaussianMixture& q, double alpha);

/// The law of A (file comment) for the run: its values and probabilities (equal values
/// merged, only when bit-identical), the variance V, and error bounds on the stored numbers.
struct ReadLaw {
  std::vector<Atom> atoms;  ///< mean = a value of A, weight = its probability
  long double variance = 0;
  long double value_error = 0;   ///< absolute error bound of every value of A
  long double weight_error = 0;  ///< relative error bound of every probability
  std::optional<std::int64_t> index;  ///< cyclic order: the differing record's position
};

/// The read law of the run's differing record:
///  full     R = every step;
///  cyclic   R = the steps whose batch holds the record (Run::index, or by default the last
///           record of batch T, where the per-index analyses put the worst case);
///  shuffle  a fresh uniform permutation per epoch cut into l = floor(n/b) batches of b (the
///           n - l b records left over sit out the epoch, as src/train/sampler.cpp draws
///           them): in each epoch the record is in batch j (j = 1..l) with probability b/n
///           each and in none with probability 1 - l b/n, independently across epochs; a
///           last partial epoch runs only its first batches;
///  fixed, poisson: in each step's batch with probability b/n, independently across steps.
/// Throws InvalidArgument (naming the field) unless the run is Gaussian, replace-one, last
/// iterate, unprojected (diameter inf) with eta_t lambda <= 2, and unless the law has at most
/// max_atoms distinct values (random batches: up to 2^T, shuffled: up to (l+1)^epochs).
ReadLaw read_law(const Run& run, std::size_t max_atoms = std::size_t{1} << 18);

/// The two last-iterate laws of the instance when the differing record's linear loss has slope
/// g_p in dataset X and g_q in X' (it adds g / b to the batch-mean gradient):
/// P = law of -(g_p/b) A + N(0, V), Q = law of -(g_q/b) A + N(0, V).
std::pair<GaussianMixture, GaussianMixture> quadratic_laws(const Run& run, const ReadLaw& law,
                                                           double g_p, double g_q);

}  // namespace hsdp::audit
