// Benchmarks for the log-domain numerics and the Gaussian hockey-stick divergence.
// theta is evaluated inside every root search of the contraction analyses (journal
// Thm 1 / Thm 5), so its cost per call bounds the cost of an accountant query.
#include <benchmark/benchmark.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "hsdp/divergence/hockey_stick.hpp"
#include "hsdp/numerics/log_normal.hpp"
#include "hsdp/numerics/root.hpp"

namespace {

// Arguments are read through a volatile so the compiler cannot constant-fold the call.
// (Google Benchmark 1.7.1's DoNotOptimize(T&) uses an "+m,r" asm constraint that GCC 12
// miscompiles for doubles: the callee received garbage arguments.)
double opaque(double x) {
  volatile double v = x;
  return v;
}

std::string fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

void BM_LogQ(benchmark::State& state) {
  const double x = static_cast<double>(state.range(0)) / 100.0;
  for (auto _ : state) {
    const double y = opaque(x);
    benchmark::DoNotOptimize(hsdp::num::log_q(y));
  }
  state.SetLabel("x=" + fmt(x));
}
// x = -5, 0.5, 2, 5, 10, 30, 1000 (arguments are x * 100)
BENCHMARK(BM_LogQ)->Arg(-500)->Arg(50)->Arg(200)->Arg(500)->Arg(1000)->Arg(3000)->Arg(100000);

void BM_LogMills(benchmark::State& state) {
  const double x = static_cast<double>(state.range(0)) / 100.0;
  for (auto _ : state) {
    const double y = opaque(x);
    benchmark::DoNotOptimize(hsdp::num::log_mills(y));
  }
  state.SetLabel("x=" + fmt(x));
}
BENCHMARK(BM_LogMills)->Arg(-500)->Arg(50)->Arg(200)->Arg(500)->Arg(1000)->Arg(3000)->Arg(100000);

// Typical arguments: eps in {0.1, 1, 5} x r in {0.01, 0.5, 2, 20}.
constexpr std::array<double, 3> kEps = {0.1, 1.0, 5.0};
constexpr std::array<double, 4> kR = {0.01, 0.5, 2.0, 20.0};

void BM_Theta(benchmark::State& state) {
  const double eps = kEps[static_cast<std::size_t>(state.range(0))];
  const double r = kR[static_cast<std::size_t>(state.range(1))];
  for (auto _ : state) {
    const double e = opaque(eps), rr = opaque(r);
    benchmark::DoNotOptimize(hsdp::div::theta(e, rr));
  }
  state.SetLabel("eps=" + fmt(eps) + " r=" + fmt(r));
}
BENCHMARK(BM_Theta)->ArgsProduct({{0, 1, 2}, {0, 1, 2, 3}});

// The small-r branch (M(u) ~ M(v): quadrature of g = -M'), at several u = eps/r - r/2.
void BM_ThetaSmallR(benchmark::State& state) {
  constexpr std::array<std::array<double, 2>, 5> kArgs = {{
      {0.0, 1e-6},     // u ~ 0
      {0.01, 0.005},   // u ~ 2
      {0.1, 0.02},     // u ~ 5
      {0.1, 0.01},     // u ~ 10
      {500.0, 1e-8},   // u ~ 5e10
  }};
  const auto& a = kArgs[static_cast<std::size_t>(state.range(0))];
  for (auto _ : state) {
    const double e = opaque(a[0]), rr = opaque(a[1]);
    benchmark::DoNotOptimize(hsdp::div::log_theta(e, rr));
  }
  state.SetLabel("eps=" + fmt(a[0]) + " r=" + fmt(a[1]));
}
BENCHMARK(BM_ThetaSmallR)->DenseRange(0, 4);

// A sweep like the one inside a root search: log-spaced r at fixed eps.
void BM_ThetaSweep(benchmark::State& state) {
  std::array<double, 64> rs{};
  for (std::size_t i = 0; i < rs.size(); ++i) rs[i] = 1e-3 * std::pow(1e6, i / 63.0);
  for (auto _ : state) {
    double s = 0;
    for (double r : rs) s += hsdp::div::log_theta(1.0, r);
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(rs.size()));
}
BENCHMARK(BM_ThetaSweep);

// One inversion eps(delta) of theta by the monotone root finder (what an accountant query
// does per analysis): smallest eps with log theta_{e^eps}(r) <= log 1e-6, r = 1.
void BM_InvertTheta(benchmark::State& state) {
  const double target = std::log(1e-6);
  int evaluations = 0;
  for (auto _ : state) {
    const double r = opaque(1.0);
    auto f = [&](double eps) {
      ++evaluations;
      return hsdp::div::log_theta(eps, r) - target;
    };
    benchmark::DoNotOptimize(
        hsdp::num::monotone_boundary(f, 0.0, 1e4, hsdp::num::Holds::above));
  }
  state.counters["evals"] = benchmark::Counter(
      evaluations, benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_InvertTheta);

}  // namespace
