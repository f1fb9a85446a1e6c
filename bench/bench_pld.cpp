// Benchmarks of the PLD composition (src/divergence/pld.cpp, docs/pld.md) on the reference
// table: eps at delta = 1e-5 of DP-SGD runs, computed as composition-pld computes them by
// default (the automatic grid, 16 cells per step std, FFTs up to 2^20 points; full batches as
// one Gaussian), composed from scratch in every iteration -- the library call, without the
// analysis' caches of compositions and discretisations. FFTW plans of a length are reused
// after the first use in the process, as in any process that composes twice. The first call
// of each case in the process is timed on its own (counter first_ms, CPU time; earlier cases
// may have planned the same FFT length). bench/bench_pld_dp_accounting.py times the same
// cases side by side with dp_accounting's PLD accountant in one Python process.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <ctime>
#include <string>

#include "hsdp/calibrate.hpp"
#include "hsdp/divergence/pld.hpp"
#include "hsdp/run.hpp"
#include "hsdp/run_spec.hpp"

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

double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return 1e3 * static_cast<double>(ts.tv_sec) + 1e-6 * static_cast<double>(ts.tv_nsec);
}

// The reference table (docs/pld.md): Poisson DP-SGD (q = 1: full batches).
struct Case {
  const char* name;
  double q, z;
  std::int64_t steps;
  Neighbours neighbours;
};
constexpr Case kCases[] = {
    {"q=0.01 z=1 T=1e4", 0.01, 1.0, 10000, Neighbours::remove},
    {"q=0.04 z=1.5 T=2250", 0.04, 1.5, 2250, Neighbours::remove},
    {"q=256/60000 z=1 T=1e4", 256.0 / 60000.0, 1.0, 10000, Neighbours::remove},
    {"q=0.001 z=0.8 T=1e5", 0.001, 0.8, 100000, Neighbours::remove},
    {"q=1e-4 z=2 T=1e6", 1e-4, 2.0, 1000000, Neighbours::remove},
    {"q=0.1 z=4 T=1000", 0.1, 4.0, 1000, Neighbours::remove},
    {"full batch z=10 T=100", 1.0, 10.0, 100, Neighbours::remove},
    {"replace-one q=0.025 z=3 T=8000", 0.025, 3.0, 8000, Neighbours::replace},
};

// What composition-pld composes for the case (its default grid).
Pld compose_case(const Case& c) {
  PldOptions o;
  o.max_length = std::int64_t{1} << 20;
  const double q = opaque(c.q), z = opaque(c.z);
  PldSteps steps;
  if (c.q >= 1.0) {
    steps.gaussian = (c.neighbours == Neighbours::replace ? 2.0 : 1.0) / z;  // exact: mu-GDP
    steps.count = c.steps;
  } else {
    const auto nb = c.neighbours;
    steps = {[=](const PldOptions& oo) { return Pld::sampled_gaussian(q, z, Subsampling::poisson, nb, oo); },
             c.steps};
  }
  return hsdp::div::compose_steps({&steps, 1}, o);
}

void BM_ReferenceTable(benchmark::State& state) {
  const Case& c = kCases[state.range(0)];
  const double start = cpu_ms();
  double eps = compose_case(c).epsilon(1e-5);
  const double first = cpu_ms() - start;
  std::size_t points = 0;
  for (auto _ : state) {
    const Pld pld = compose_case(c);
    eps = pld.epsilon(opaque(1e-5));
    points = pld.first().pmf().size();
    benchmark::DoNotOptimize(eps);
  }
  state.counters["eps"] = eps;
  state.counters["first_ms"] = first;
  state.counters["points"] = static_cast<double>(points);
  state.SetLabel(c.name);
}
BENCHMARK(BM_ReferenceTable)->DenseRange(0, 7)->Unit(benchmark::kMillisecond);

// The fixed grid of interval 1e-3 with 40 cells per step std (the default before the
// automatic grid; what --pld-interval 1e-3 gives).
void BM_FixedGrid(benchmark::State& state) {
  const Case& c = kCases[state.range(0)];
  PldOptions o;
  o.fixed_interval = true;
  o.cells = 40;
  o.max_length = std::int64_t{1} << 20;
  const auto nb = c.neighbours;
  const double q = c.q, z = c.z;
  const PldSteps steps{[=](const PldOptions& oo) { return Pld::sampled_gaussian(q, z, Subsampling::poisson, nb, oo); },
                       c.steps};
  double eps = 0;
  for (auto _ : state) {
    eps = hsdp::div::compose_steps({&steps, 1}, o).epsilon(opaque(1e-5));
    benchmark::DoNotOptimize(eps);
  }
  state.counters["eps"] = eps;
  state.SetLabel(c.name);
}
BENCHMARK(BM_FixedGrid)->Arg(0)->Arg(2)->Unit(benchmark::kMillisecond);

// eps(delta) alone on an already composed PLD (what a query on a cached composition costs).
void BM_EpsilonQuery(benchmark::State& state) {
  const Pld pld = compose_case(kCases[0]);
  for (auto _ : state) {
    const double e = pld.epsilon(opaque(1e-5));
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_EpsilonQuery)->Unit(benchmark::kMicrosecond);

// T = 10^9 of a tiny-q mechanism on a fixed grid (repeated squaring of the transforms).
void BM_BillionSteps(benchmark::State& state) {
  for (auto _ : state) {
    const Pld one = Pld::sampled_gaussian(opaque(1e-5), 2.0, Subsampling::poisson, Neighbours::remove);
    const double e = one.self_compose(1000000000).epsilon(1e-5);
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_BillionSteps)->Unit(benchmark::kMillisecond);

// Calibration of the noise multiplier for eps = 1 at delta = 1e-5, q = 0.01, T = 10^4, every
// iterate released (composition-pld decides): the search interpolates the envelope's log
// delta (docs/calibrate.md). A different start each iteration, so that no composition is
// found in the analysis' cache.
void BM_CalibrateNoise(benchmark::State& state) {
  hsdp::Run run;
  run.n = 60000;
  run.batch_size = 600;
  run.steps = 10000;
  run.sampling = hsdp::Sampling::poisson;
  run.eta = hsdp::Schedule(0.1);
  run.clip = 1.0;
  run.adjacency = hsdp::Adjacency::remove;
  run.release = hsdp::Release::every;
  int evaluations = 0, i = 0;
  double z = 0;
  for (auto _ : state) {
    hsdp::CalibrationOptions o;
    o.noise = hsdp::NoiseParameter{hsdp::NoiseUnit::multiplier, hsdp::Convention::journal, 1.0 + 1e-6 * ++i};
    run.noise_std = hsdp::Schedule(hsdp::noise_std_from_multiplier(o.noise->value, 1.0, 0.1, 600));
    const auto r = hsdp::calibrate(run, hsdp::CalibrationParameter::noise, 1.0, 1e-5, o);
    evaluations = r.evaluations;
    z = r.value;
    // The result object, not the double: DoNotOptimize on a double lvalue may pick a general
    // register with GCC and benchmark 1.7 (the counter then read 6.9e-310).
    benchmark::DoNotOptimize(&r);
  }
  state.counters["evaluations"] = evaluations;
  state.counters["z"] = z;
}
BENCHMARK(BM_CalibrateNoise)->Unit(benchmark::kMillisecond);

}  // namespace
