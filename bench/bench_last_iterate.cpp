// eps(delta) of the f-DP last-iterate analyses (issue target: <= 5 ms each) and of the
// last-iterate heuristic, at the settings of their tests.
#include <benchmark/benchmark.h>

#include <limits>

#include "hsdp/analysis/analysis.hpp"
#include "hsdp/divergence/last_iterate_heuristic.hpp"
#include "hsdp/run.hpp"

namespace {

double opaque(double x) {
  benchmark::DoNotOptimize(x);
  return x;
}

hsdp::Run run(hsdp::Sampling sampling, std::int64_t n, std::int64_t b, std::int64_t steps,
              double eta, double sigma, double lambda, double D) {
  hsdp::Run r;
  r.n = n;
  r.batch_size = b;
  r.steps = steps;
  r.sampling = sampling;
  r.eta = hsdp::Schedule(eta);
  r.noise_std = hsdp::Schedule(eta * sigma);
  r.loss.lipschitz = 1.0;
  r.loss.smoothness = 1.0;
  r.loss.strong_convexity = lambda;
  r.diameter = D;
  r.release = hsdp::Release::last;
  return r;
}

void eps_of(benchmark::State& state, const hsdp::Run& r) {
  const auto a = hsdp::find_analysis("shifted-interpolation");
  for (auto _ : state) benchmark::DoNotOptimize(a->epsilon(r, opaque(1e-5)));
}

// Note T1: full batch, strongly convex, t = 1000 (closed form Q1).
void BM_ShiftedInterpolationFullBatch(benchmark::State& s) {
  eps_of(s, run(hsdp::Sampling::full, 20, 20, 1000, 1.0, 1.0, 0.01, std::numeric_limits<double>::infinity()));
}
BENCHMARK(BM_ShiftedInterpolationFullBatch)->Unit(benchmark::kMicrosecond);

// Note T3: full batch, convex, constrained, t = 640 (windows from the diameter).
void BM_ShiftedInterpolationFullBatchConstrained(benchmark::State& s) {
  eps_of(s, run(hsdp::Sampling::full, 4, 4, 640, 0.1, 8.0, 0.0, 1.0));
}
BENCHMARK(BM_ShiftedInterpolationFullBatchConstrained)->Unit(benchmark::kMicrosecond);

// Note T2: cyclic, 40 batches, 200 epochs, c = 0.999 (the exact program at every position).
void BM_ShiftedInterpolationCyclic(benchmark::State& s) {
  eps_of(s, run(hsdp::Sampling::cyclic, 60000, 1500, 8000, 0.05, 0.002, 0.02, std::numeric_limits<double>::infinity()));
}
BENCHMARK(BM_ShiftedInterpolationCyclic)->Unit(benchmark::kMillisecond);

// Note T6 A: NoisySGD, t = 20000: 4 PLD compositions, cached per run, so each iteration uses
// a new run (one more step) to time the first call.
void BM_ShiftedInterpolationNoisySgdFirstCall(benchmark::State& s) {
  std::int64_t steps = 20000;
  for (auto _ : s) {
    const auto r = run(hsdp::Sampling::fixed, 200, 2, steps++, 0.1, 3.0, 0.0, 1.0);  // new run: no cache
    benchmark::DoNotOptimize(hsdp::find_analysis("shifted-interpolation")->epsilon(r, 1e-5));
  }
}
BENCHMARK(BM_ShiftedInterpolationNoisySgdFirstCall)->Unit(benchmark::kMillisecond)->Iterations(5);

// The same in the accountant's order: composition-pld first (its PLD of the run is the
// composition from W_0, shared), then shifted-interpolation; only the latter is timed.
void BM_ShiftedInterpolationNoisySgdAfterCompositionPld(benchmark::State& s) {
  std::int64_t steps = 30000;
  const auto comp = hsdp::find_analysis("composition-pld");
  const auto si = hsdp::find_analysis("shifted-interpolation");
  for (auto _ : s) {
    s.PauseTiming();
    const auto r = run(hsdp::Sampling::fixed, 200, 2, steps++, 0.1, 3.0, 0.0, 1.0);
    benchmark::DoNotOptimize(comp->epsilon(r, 1e-5));
    s.ResumeTiming();
    benchmark::DoNotOptimize(si->epsilon(r, 1e-5));
  }
}
BENCHMARK(BM_ShiftedInterpolationNoisySgdAfterCompositionPld)->Unit(benchmark::kMillisecond)->Iterations(5);

// composition-pld alone on the same run (for comparison).
void BM_CompositionPldNoisySgdFirstCall(benchmark::State& s) {
  std::int64_t steps = 40000;
  for (auto _ : s) {
    const auto r = run(hsdp::Sampling::fixed, 200, 2, steps++, 0.1, 3.0, 0.0, 1.0);
    benchmark::DoNotOptimize(hsdp::find_analysis("composition-pld")->epsilon(r, 1e-5));
  }
}
BENCHMARK(BM_CompositionPldNoisySgdFirstCall)->Unit(benchmark::kMillisecond)->Iterations(5);

// The heuristic for DP-SGD q = 0.01, noise multiplier 1, T = 10^4.
void BM_LastIterateHeuristic(benchmark::State& s) {
  for (auto _ : s) benchmark::DoNotOptimize(hsdp::div::heuristic_epsilon(10000, 0.01, 1.0, opaque(1e-5)));
}
BENCHMARK(BM_LastIterateHeuristic)->Unit(benchmark::kMillisecond);

}  // namespace
