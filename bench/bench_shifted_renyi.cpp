// shifted-renyi (Altschuler & Talwar 2022): one full evaluation of the RDP bound (B.2) at one
// order, with the optimisation over the noise split sigma1 and over T~. Target: < 5 ms.
//
// Inputs are read through volatiles: Google Benchmark 1.7.1's DoNotOptimize on double inputs
// miscompiles with GCC 12 here.
#include <benchmark/benchmark.h>

#include "hsdp/analysis/analysis.hpp"
#include "hsdp/analysis/rdp_analysis.hpp"

namespace {

volatile double v_alpha = 8.0;
volatile double v_sigma = 4.0;
volatile double v_delta = 1e-6;

hsdp::Run make_run(std::int64_t steps, hsdp::Sampling sampling, double strong_convexity) {
  hsdp::Run run;
  run.n = 60000;
  run.steps = steps;
  run.batch_size = sampling == hsdp::Sampling::full ? 60000 : 256;
  run.sampling = sampling;
  run.eta = hsdp::Schedule(0.5);
  run.noise_std = hsdp::Schedule(0.5 * v_sigma);
  run.loss.lipschitz = 1.0;
  run.loss.smoothness = 2.0;
  run.loss.strong_convexity = strong_convexity;
  run.diameter = 1.0;
  run.release = hsdp::Release::last;
  return run;
}

const hsdp::RdpAnalysis& analysis() {
  static const auto a = hsdp::find_analysis("shifted-renyi");
  return dynamic_cast<const hsdp::RdpAnalysis&>(*a);
}

// One B.2 evaluation: grid + golden-section over sigma1, exact integer T~ per split.
void BM_B2_OneOrder(benchmark::State& state, hsdp::Sampling sampling, double lambda) {
  const auto run = make_run(state.range(0), sampling, lambda);
  for (auto _ : state) {
    const double alpha = v_alpha;
    double eps = analysis().rdp(run, alpha);
    benchmark::DoNotOptimize(eps);
  }
}
BENCHMARK_CAPTURE(BM_B2_OneOrder, poisson, hsdp::Sampling::poisson, 0.0)
    ->Arg(1000)->Arg(1000000)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_B2_OneOrder, fixed, hsdp::Sampling::fixed, 0.0)
    ->Arg(1000000)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_B2_OneOrder, strongly_convex_B3, hsdp::Sampling::poisson, 0.5)
    ->Arg(1000000)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_B2_OneOrder, full_B1, hsdp::Sampling::full, 0.0)
    ->Arg(1000000)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_B2_OneOrder, cyclic_Thm56, hsdp::Sampling::cyclic, 0.0)
    ->Arg(1000000)->Unit(benchmark::kMicrosecond);

// One order, large alpha (S_alpha costs O(alpha) there).
void BM_B2_LargeAlpha(benchmark::State& state) {
  const auto run = make_run(1000000, hsdp::Sampling::poisson, 0.0);
  const double alpha = static_cast<double>(state.range(0)) + 0.5 * v_sigma / 4.0;
  for (auto _ : state) {
    double eps = analysis().rdp(run, alpha);
    benchmark::DoNotOptimize(eps);
  }
}
BENCHMARK(BM_B2_LargeAlpha)->Arg(64)->Arg(1024)->Arg(4096)->Unit(benchmark::kMicrosecond);

// The (eps, delta) answer: the RDP curve minimised over alpha by the shared conversion.
void BM_EpsilonAtDelta(benchmark::State& state) {
  const auto run = make_run(state.range(0), hsdp::Sampling::poisson, 0.0);
  for (auto _ : state) {
    const double delta = v_delta;
    double eps = analysis().epsilon(run, delta);
    benchmark::DoNotOptimize(eps);
  }
}
BENCHMARK(BM_EpsilonAtDelta)->Arg(1000000)->Unit(benchmark::kMillisecond);

// The same answer for a run whose noise is below half the sensitivity of a step (the ratio
// b sigma2 / (2L) < 0.36, issue 11): S_alpha at fractional orders <= 10 leaves the
// Gauss-Hermite route for the series or the quadrature of A - 1 (0.1-0.3 ms per order).
void BM_EpsilonAtDelta_SmallNoise(benchmark::State& state) {
  hsdp::Run run;
  run.n = 50;
  run.steps = 1000;
  run.batch_size = 5;
  run.sampling = hsdp::Sampling::poisson;
  run.eta = hsdp::Schedule(0.49775453555741045);
  run.noise_std = hsdp::Schedule(0.49775453555741045 * 0.2878516096941896 * v_sigma / 4.0);
  run.loss.lipschitz = 2.0089538072022917;
  run.loss.smoothness = 0.1223415974187697;
  run.diameter = 0.9542715805005326;
  run.release = hsdp::Release::last;
  for (auto _ : state) {
    const double delta = v_delta;
    double eps = analysis().epsilon(run, delta);
    benchmark::DoNotOptimize(eps);
  }
}
BENCHMARK(BM_EpsilonAtDelta_SmallNoise)->Unit(benchmark::kMillisecond);

}  // namespace
