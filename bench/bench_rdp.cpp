// Benchmarks of the sampled Gaussian RDP (S_alpha of altschuler-talwar, MTZ 2019) and of the
// composition-rdp baseline. Targets (docs/rdp.md): S_alpha for one (alpha, q, sigma) under
// 20 us; composition-rdp eps over 64 orders for T = 10^4 under 1 ms.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "hsdp/analysis/analysis.hpp"
#include "hsdp/divergence/rdp.hpp"

namespace {

// Arguments are read through a volatile so the compiler cannot constant-fold the call.
// (Google Benchmark 1.7.1's DoNotOptimize(T&) miscompiles doubles with GCC 12.)
double opaque(double x) {
  volatile double v = x;
  return v;
}

std::string label(double alpha, double q, double sigma) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "alpha=%g q=%g sigma=%g", alpha, q, sigma);
  return buf;
}

// args: alpha*100, q*1e4, sigma*100
void BM_SAlpha(benchmark::State& state) {
  const double alpha = state.range(0) / 100.0, q = state.range(1) / 1e4, sigma = state.range(2) / 100.0;
  for (auto _ : state) {
    const double v = hsdp::div::s_alpha(opaque(alpha), opaque(q), opaque(sigma));
    benchmark::DoNotOptimize(v);
  }
  state.SetLabel(label(alpha, q, sigma));
}
BENCHMARK(BM_SAlpha)
    ->Args({200, 100, 400})      // integer order, Abadi setting
    ->Args({3200, 100, 400})
    ->Args({370, 100, 400})      // fractional order, series
    ->Args({2550, 100, 400})
    ->Args({150, 1, 2000})       // fractional, A - 1 tiny: quadrature of A - 1
    ->Args({102400, 100, 30})    // alpha = 1024, sigma = 0.3
    ->Args({25650, 2000, 50});   // alpha = 256.5, sigma = 0.5

hsdp::Run abadi_run() {
  hsdp::Run run;
  run.n = 100000;
  run.batch_size = 1000;  // q = 0.01
  run.steps = 10000;
  run.sampling = hsdp::Sampling::poisson;
  run.eta = hsdp::Schedule(0.1);
  run.noise_std = hsdp::Schedule(hsdp::noise_std_from_multiplier(4.0, 1.0, 0.1, 1000));
  run.clip = 1.0;
  run.adjacency = hsdp::Adjacency::remove;
  run.release = hsdp::Release::every;
  return run;
}

// composition-rdp eps(delta = 1e-5) over 64 orders (2, 3, ..., 65) for T = 10^4 steps,
// q = 0.01, noise multiplier 4: T * per-step RDP at each order, converted by the best of
// CKS / journal (23).
void BM_CompositionEps64Orders(benchmark::State& state) {
  const auto run = abadi_run();
  const auto a = hsdp::find_analysis("composition-rdp");
  for (auto _ : state) {
    const double delta = opaque(1e-5);
    double best = INFINITY;
    for (int k = 2; k <= 65; ++k) {
      const double rho = *a->rdp_at(run, k);
      best = std::min(best, hsdp::div::epsilon_from_rdp(k, rho, delta,
                                                        hsdp::div::RdpConversion::optimal));
    }
    benchmark::DoNotOptimize(best);
  }
}
BENCHMARK(BM_CompositionEps64Orders)->Unit(benchmark::kMicrosecond);

// The analysis' own answer: alpha minimised continuously (grid + golden section).
void BM_CompositionEpsContinuous(benchmark::State& state) {
  const auto run = abadi_run();
  const auto a = hsdp::find_analysis("composition-rdp");
  for (auto _ : state) {
    const double e = a->epsilon(run, opaque(1e-5));
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_CompositionEpsContinuous)->Unit(benchmark::kMicrosecond);

// The DP-SGD run of the PLD issue: Poisson q = 0.01, noise multiplier 1, T = 10^4,
// add/remove, eps at delta = 1e-5 (target <= 0.25 ms).
void BM_CompositionEpsDpSgdZ1(benchmark::State& state) {
  auto run = abadi_run();
  run.noise_std = hsdp::Schedule(hsdp::noise_std_from_multiplier(1.0, 1.0, 0.1, 1000));
  const auto a = hsdp::find_analysis("composition-rdp");
  for (auto _ : state) {
    const double e = a->epsilon(run, opaque(1e-5));
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_CompositionEpsDpSgdZ1)->Unit(benchmark::kMicrosecond);

}  // namespace
