// The whole `hsdp account` table (every analysis, eps at a given delta) for runs with
// n = 10^6 records. Target: under 1 ms per table with constant parameters.
#include <benchmark/benchmark.h>

#include "hsdp/accountant.hpp"

namespace {

hsdp::Run big_run(hsdp::Release release, hsdp::Sampling sampling) {
  hsdp::Run run;
  run.n = 1'000'000;
  run.steps = 1'000'000;
  run.batch_size = 1;
  run.sampling = sampling;
  run.eta = hsdp::Schedule(0.05);
  run.noise_std = hsdp::Schedule(0.05 * 3.0);
  run.loss.lipschitz = 1.0;
  run.loss.smoothness = 1.0;
  run.diameter = 1.0;
  run.release = release;
  return run;
}

void BM_AccountTable(benchmark::State& state, hsdp::Release release, hsdp::Sampling sampling,
                     bool by_delta) {
  const auto run = big_run(release, sampling);
  const auto query = by_delta ? hsdp::Query::at_delta(1e-6) : hsdp::Query::at_epsilon(1.0);
  for (auto _ : state) {
    auto report = hsdp::account(run, query);
    benchmark::DoNotOptimize(report);
  }
}

BENCHMARK_CAPTURE(BM_AccountTable, last_cyclic_eps_at_delta, hsdp::Release::last,
                  hsdp::Sampling::cyclic, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_AccountTable, random_stop_cyclic_eps_at_delta, hsdp::Release::random_stop,
                  hsdp::Sampling::cyclic, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_AccountTable, last_shuffle_eps_at_delta, hsdp::Release::last,
                  hsdp::Sampling::shuffle, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_AccountTable, random_stop_shuffle_eps_at_delta, hsdp::Release::random_stop,
                  hsdp::Sampling::shuffle, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_AccountTable, last_cyclic_delta_at_eps, hsdp::Release::last,
                  hsdp::Sampling::cyclic, false)->Unit(benchmark::kMicrosecond);

}  // namespace
