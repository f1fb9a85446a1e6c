// Benchmarks of the PLD accountant (src/divergence/pld.cpp, docs/pld.md). Target (issue
// 13): eps(delta = 1e-5) of DP-SGD, Poisson q = 0.01, noise multiplier 1, T = 10^4,
// add/remove, from scratch (both orders discretised, composed, inverted) in <= 5 ms; the
// reference Python dp_accounting PLD takes 523 ms on the project machine
// (bench/bench_pld_dp_accounting.py times it in one process when it is importable).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "hsdp/divergence/pld.hpp"

namespace {

using hsdp::div::Neighbours;
using hsdp::div::Pld;
using hsdp::div::PldOptions;
using hsdp::div::PldSteps;
using hsdp::div::Subsampling;

// Arguments are read through a volatile so the compiler cannot constant-fold the call.
double opaque(double x) {
  volatile double v = x;
  return v;
}

double dpsgd_epsilon(double q, double z, std::int64_t t, Neighbours nb, const PldOptions& o) {
  const PldSteps steps{[=](const PldOptions& oo) {
                         return Pld::sampled_gaussian(q, z, Subsampling::poisson, nb, oo);
                       },
                       t};
  return hsdp::div::compose_steps({&steps, 1}, o).epsilon(1e-5);
}

// args: q * 1e6, z * 100, T, neighbours (0 remove, 1 replace), refinement (0 = auto)
void BM_DpSgdEpsilon(benchmark::State& state) {
  const double q = state.range(0) / 1e6, z = state.range(1) / 100.0;
  const std::int64_t t = state.range(2);
  const Neighbours nb = state.range(3) ? Neighbours::replace : Neighbours::remove;
  PldOptions o;
  o.refinement = state.range(4);
  double eps = 0;
  for (auto _ : state) {
    eps = dpsgd_epsilon(opaque(q), opaque(z), t, nb, o);
    benchmark::DoNotOptimize(eps);
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "q=%g z=%g T=%lld %s refinement=%lld eps=%.5f", q, z,
                static_cast<long long>(t), state.range(3) ? "replace" : "add/remove",
                static_cast<long long>(o.refinement), eps);
  state.SetLabel(buf);
}
BENCHMARK(BM_DpSgdEpsilon)
    ->Args({10000, 100, 10000, 0, 0})   // the run: target <= 5 ms
    ->Args({10000, 100, 10000, 0, 8})   // refined: as tight as dp_accounting at 1e-4
    ->Args({40000, 150, 2250, 0, 0})    // Opacus' example
    ->Args({4267, 100, 10000, 0, 0})    // q = 256/60000
    ->Args({25000, 300, 8000, 1, 0})    // replace-one
    ->Unit(benchmark::kMillisecond);

// What composition-pld computes (40 grid cells per step std: refinement where a step's loss
// is narrow), for the runs.
void BM_AnalysisSetting(benchmark::State& state) {
  const double q = state.range(0) / 1e6, z = state.range(1) / 100.0;
  const std::int64_t t = state.range(2);
  const Neighbours nb = state.range(3) ? Neighbours::replace : Neighbours::remove;
  PldOptions o;
  o.cells = 40;
  double eps = 0;
  for (auto _ : state) {
    eps = dpsgd_epsilon(opaque(q), opaque(z), t, nb, o);
    benchmark::DoNotOptimize(eps);
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "q=%g z=%g T=%lld %s cells=40 eps=%.5f", q, z,
                static_cast<long long>(t), state.range(3) ? "replace" : "add/remove", eps);
  state.SetLabel(buf);
}
BENCHMARK(BM_AnalysisSetting)
    ->Args({10000, 100, 10000, 0})
    ->Args({25000, 300, 2000, 1})
    ->Unit(benchmark::kMillisecond);

// eps(delta) alone on an already composed PLD (what calibration loops call).
void BM_EpsilonQuery(benchmark::State& state) {
  const PldSteps steps{[](const PldOptions& oo) {
                         return Pld::sampled_gaussian(0.01, 1.0, Subsampling::poisson,
                                                      Neighbours::remove, oo);
                       },
                       10000};
  const Pld pld = hsdp::div::compose_steps({&steps, 1});
  for (auto _ : state) {
    const double e = pld.epsilon(opaque(1e-5));
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_EpsilonQuery)->Unit(benchmark::kMicrosecond);

// T = 10^9 of a tiny-q mechanism (repeated squaring of the transforms).
void BM_BillionSteps(benchmark::State& state) {
  for (auto _ : state) {
    const Pld one = Pld::sampled_gaussian(opaque(1e-5), 2.0, Subsampling::poisson,
                                          Neighbours::remove);
    const double e = one.self_compose(1000000000).epsilon(1e-5);
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_BillionSteps)->Unit(benchmark::kMillisecond);

}  // namespace
