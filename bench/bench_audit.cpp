// The exact audit (src/audit/exact.cpp). Target (issue "Exact audit"): one exact audit of
// 1000 steps on a 10^4-point grid under 2 s. audit::exact propagates both laws on the
// fine grid (10^4 points) and on the coarse grid (5001 points) for the stated error, then
// finds eps(delta) on both; the bounds (account) are not part of it.
#include <benchmark/benchmark.h>

#include <limits>

#include "hsdp/audit/exact.hpp"

namespace {

hsdp::Run audit_run(hsdp::Sampling sampling, std::int64_t n, std::int64_t b) {
  hsdp::Run run;
  run.n = n;
  run.steps = 1000;
  run.batch_size = b;
  run.sampling = sampling;
  run.eta = hsdp::Schedule(0.05);
  run.noise_std = hsdp::Schedule(0.02);
  run.loss.lipschitz = 1.0;
  run.loss.smoothness = 1.0;
  run.diameter = 1.0;
  return run;
}

void BM_ExactAudit(benchmark::State& state, hsdp::Sampling sampling, std::int64_t n, std::int64_t b) {
  const auto run = audit_run(sampling, n, b);
  const hsdp::audit::ExactOptions options{10001, hsdp::audit::Pair::opposite};
  for (auto _ : state) {
    auto r = hsdp::audit::exact(run, hsdp::Query::at_delta(1e-5), options);
    benchmark::DoNotOptimize(r);
  }
}

// Random batches (mixture kernel every step), cyclic (record used on 1 step in 100) and
// full batch.
BENCHMARK_CAPTURE(BM_ExactAudit, poisson_1000_steps_grid_1e4, hsdp::Sampling::poisson, 100, 10)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ExactAudit, cyclic_1000_steps_grid_1e4, hsdp::Sampling::cyclic, 100, 1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ExactAudit, full_1000_steps_grid_1e4, hsdp::Sampling::full, 100, 100)
    ->Unit(benchmark::kMillisecond);

// Only the propagation of one pair of laws on the 10^4 grid.
void BM_Propagate(benchmark::State& state) {
  const auto run = audit_run(hsdp::Sampling::poisson, 100, 10);
  for (auto _ : state) {
    auto laws = hsdp::audit::propagate(run, hsdp::audit::Pair::opposite, 10001);
    benchmark::DoNotOptimize(laws);
  }
}
BENCHMARK(BM_Propagate)->Unit(benchmark::kMillisecond);

// Strongly convex runs. Projected: dense Nystrom steps, N^2 per step (12 shuffled steps of
// three dense steps each, per law and grid). Unprojected: the Gaussian closed form of the last
// iterate (a mixture of 4^3 components).
hsdp::Run strongly_convex(double diameter) {
  hsdp::Run run;
  run.n = 12;
  run.steps = 12;
  run.batch_size = 3;
  run.sampling = hsdp::Sampling::shuffle;
  run.eta = hsdp::Schedule(0.5);
  run.noise_std = hsdp::Schedule(0.3);
  run.loss.lipschitz = 1.0;
  run.loss.smoothness = 0.4;
  run.loss.strong_convexity = 0.4;
  run.diameter = diameter;
  return run;
}

void BM_ExactStronglyConvexGrid(benchmark::State& state) {
  const auto run = strongly_convex(2.0);
  const hsdp::audit::ExactOptions options{state.range(0), hsdp::audit::Pair::opposite};
  for (auto _ : state) {
    auto r = hsdp::audit::exact(run, hsdp::Query::at_delta(1e-5), options);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_ExactStronglyConvexGrid)->Arg(1001)->Arg(4001)->Unit(benchmark::kMillisecond);

void BM_ExactStronglyConvexClosedForm(benchmark::State& state) {
  const auto run = strongly_convex(std::numeric_limits<double>::infinity());
  for (auto _ : state) {
    auto r = hsdp::audit::exact(run, hsdp::Query::at_delta(1e-5), {});
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_ExactStronglyConvexClosedForm)->Unit(benchmark::kMillisecond);

}  // namespace
