// Runs, data sets and closed forms that a library test file and the CLI test of the same area
// (tests/cli/) both use, so the two assert against one reference.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "hsdp/data/dataset.hpp"
#include "hsdp/divergence/hockey_stick.hpp"
#include "hsdp/plan.hpp"
#include "hsdp/run.hpp"
#include "hsdp/train/model.hpp"

namespace hsdp::testing {

// ---- the sanitizer build (tests/CMakeLists.txt defines HSDP_SANITIZED_BUILD under
// HSDP_SANITIZE): the heavy numeric tests run a stratified subset of their grids there (each
// regime and branch kept, repetitions inside a regime dropped). The sanitizers check memory
// and undefined behaviour on the code paths; the Release build checks the values on the full
// grids. Release runs exactly what it ran before.
#if defined(HSDP_SANITIZED_BUILD) && HSDP_SANITIZED_BUILD
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif

// Whether a grid cell runs: every cell in Release; under the sanitizers the cells whose index
// sum is 0 mod `stride`. With stride = the size of one axis, each combination of the other
// axes keeps exactly one value of that axis, and each value of it is still met.
constexpr bool keep_cell(std::size_t index_sum, std::size_t stride) {
  return !kSanitizedBuild || index_sum % stride == 0;
}

// A count of random repetitions: all of them in Release, `sanitized` under the sanitizers.
constexpr int repetitions(int release, int sanitized) { return kSanitizedBuild ? sanitized : release; }

// ---- training: n records with d Gaussian features scaled to norm 0.999 R; labels by the sign
// of a random direction (logistic, huber), its clamped value (squared) or i % classes (softmax).
inline hsdp::data::Dataset synthetic(std::size_t n, std::size_t d, double R, std::uint64_t seed,
                                     hsdp::train::LossKind kind,
                                     std::size_t classes = 2) {
  hsdp::data::Dataset ds;
  ds.n = n;
  ds.d = d;
  ds.x.resize(n * d);
  ds.y.resize(n);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g;
  std::vector<double> w(d);
  for (auto& v : w) v = g(rng);
  for (std::size_t i = 0; i < n; ++i) {
    double nrm = 0, s = 0;
    for (std::size_t j = 0; j < d; ++j) {
      ds.x[i * d + j] = g(rng);
      nrm += ds.x[i * d + j] * ds.x[i * d + j];
    }
    nrm = std::sqrt(nrm);
    for (std::size_t j = 0; j < d; ++j) {
      ds.x[i * d + j] *= R / nrm * 0.999;
      s += w[j] * ds.x[i * d + j];
    }
    switch (kind) {
      case hsdp::train::LossKind::logistic:
      case hsdp::train::LossKind::huber: ds.y[i] = s > 0 ? 1 : -1; break;
      case hsdp::train::LossKind::squared: ds.y[i] = std::clamp(s, -1.0, 1.0); break;
      case hsdp::train::LossKind::softmax: ds.y[i] = static_cast<double>(i % classes); break;
    }
  }
  return ds;
}

// The run with its noise drawn on a grid of rounding slack `slack` (run.hpp NoiseGrid,
// docs/security.md), the sampler charges of a small trained run (epsilon 1e-10, beta e^-10000).
inline hsdp::Run on_noise_grid(hsdp::Run r, double slack) {
  hsdp::NoiseGrid g;
  g.slack = slack;
  g.epsilon = 1e-10;
  g.log_beta = -10000;
  r.grid = g;
  return r;
}

// ---- last-iterate bounds: L = 1, so one step that reads the record shifts by h = eta 2/b;
// constant step eta and noise std; smoothness beta, strong convexity lambda, diameter D.
inline hsdp::Run smooth_run(hsdp::Sampling sampling, std::int64_t n, std::int64_t b, std::int64_t steps,
                            double eta, double noise_std, double beta, double lambda,
                            double D = std::numeric_limits<double>::infinity()) {
  hsdp::Run run;
  run.n = n;
  run.batch_size = b;
  run.steps = steps;
  run.sampling = sampling;
  run.eta = hsdp::Schedule(eta);
  run.noise_std = hsdp::Schedule(noise_std);
  run.loss.lipschitz = 1.0;
  run.loss.smoothness = beta;
  run.loss.strong_convexity = lambda;
  run.diameter = D;
  run.release = hsdp::Release::last;
  run.adjacency = hsdp::Adjacency::replace;
  return run;
}

// ---- audit exact: a run with L = beta = 1 (no strong convexity) and constant step size and noise.
inline hsdp::Run make_run(std::int64_t n, std::int64_t steps, std::int64_t b, hsdp::Sampling sampling,
                          double eta, double std, double diameter) {
  return smooth_run(sampling, n, b, steps, eta, std, 1.0, 0.0, diameter);
}

// ---- audit mia: a tiny binary dataset: n = 24 records in 3 features, the third always 0 (so
// the canary goes there), 14 labelled +1 and 10 labelled -1.
inline hsdp::data::Dataset tiny_dataset() {
  hsdp::data::Dataset d;
  d.n = 24;
  d.d = 3;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-0.6, 0.6);
  for (std::size_t i = 0; i < d.n; ++i) {
    const double y = i < 14 ? 1.0 : -1.0;
    d.x.push_back(0.2 * y + u(rng));
    d.x.push_back(u(rng));
    d.x.push_back(0.0);
    d.y.push_back(y);
  }
  return d;
}

// ---- federated Thm 2 as printed (general schedules), by the plain double loop:
// (m/n) sum_t theta(2L/(sqrt(m) sigma_t)) prod_{j>t} theta(2 rho sqrt(m) / (eta_j sigma_j)).
inline double thm2_brute(double eps, std::int64_t n, std::int64_t m, const std::vector<double>& eta,
                         const std::vector<double>& sigma, double L, double rho) {
  using hsdp::div::theta;
  const std::size_t T = eta.size();
  const double sm = std::sqrt(static_cast<double>(m));
  double sum = 0;
  for (std::size_t t = 0; t < T; ++t) {
    double term = theta(eps, 2 * L / (sm * sigma[t]));
    for (std::size_t j = t + 1; j < T; ++j) term *= theta(eps, 2 * rho * sm / (eta[j] * sigma[j]));
    sum += term;
  }
  return static_cast<double>(m) / static_cast<double>(n) * sum;
}

// ---- langevin Fig. 1 caption, written out independently: our analysis and the composition
// baseline.
inline double fig1_ours(double alpha, double lambda, double K) {
  const double S = 4, n = 5000, eta = 0.02, sigma = 0.02;
  return alpha * S * S / (lambda * sigma * sigma * n * n) * (1 - std::exp(-lambda * eta * K / 2));
}
inline double fig1_composition(double alpha, double K) {
  const double S = 4, n = 5000, eta = 0.02, sigma = 0.02;
  return alpha * S * S / (4 * sigma * sigma * n * n) * eta * K;
}

// ---- plan: the langevin setting at epsilon = 1, delta = 1e-5, n = 1000, L = 1, D = 1, d = 10.
inline hsdp::PlanProblem langevin_problem(double beta, double lambda) {
  hsdp::PlanProblem p;
  p.setting = hsdp::PlanSetting::langevin;
  p.epsilon = 1.0;
  p.delta = 1e-5;
  p.n = 1000;
  p.lipschitz = 1.0;
  p.smoothness = beta;
  p.strong_convexity = lambda;
  p.diameter = 1.0;
  p.dimension = 10;
  return p;
}

}  // namespace hsdp::testing
