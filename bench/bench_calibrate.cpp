// Targets (issue 4): a full report (`hsdp account`) on a typical run under 5 ms, a
// calibration under 20 ms. Typical runs: the journal's one-pass PNSGD setting and DP-SGD
// with Poisson or fixed-size batches. BM_Analysis times each applicable analysis alone
// (epsilon at delta = 1e-5) to show which one dominates a slow report.
#include <benchmark/benchmark.h>

#include "hsdp/accountant.hpp"
#include "hsdp/calibrate.hpp"

namespace {

// One pass of PNSGD, n = T = 1000, b = 1, journal sigma (Fig. 2 constants).
hsdp::Run pnsgd(double sigma, hsdp::Release release = hsdp::Release::last) {
  hsdp::Run run;
  run.n = 1000;
  run.steps = 1000;
  run.batch_size = 1;
  run.sampling = hsdp::Sampling::cyclic;
  run.eta = hsdp::Schedule(0.05);
  run.noise_std = hsdp::Schedule(0.05 * sigma);
  run.loss.lipschitz = 1.0;
  run.loss.smoothness = 1.0;
  run.diameter = 1.0;
  run.release = release;
  return run;
}

// DP-SGD: n = 60000, b = 256, T = 2000, clip 1, noise multiplier z, last iterate released.
hsdp::Run dpsgd(hsdp::Sampling sampling, double z, hsdp::Release release = hsdp::Release::last) {
  hsdp::Run run;
  run.n = 60000;
  run.steps = 2000;
  run.batch_size = 256;
  run.sampling = sampling;
  run.eta = hsdp::Schedule(0.1);
  run.clip = 1.0;
  run.loss.lipschitz = 1.0;
  run.loss.smoothness = 1.0;
  run.diameter = 10.0;
  run.release = release;
  run.noise_std = hsdp::Schedule(hsdp::noise_std_from_multiplier(z, 1.0, 0.1, 256));
  return run;
}

void BM_Account(benchmark::State& state, hsdp::Run run) {
  const auto query = hsdp::Query::at_delta(1e-5);
  for (auto _ : state) benchmark::DoNotOptimize(hsdp::account(run, query));
}
BENCHMARK_CAPTURE(BM_Account, pnsgd_last, pnsgd(3.0))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Account, pnsgd_random_stop, pnsgd(3.0, hsdp::Release::random_stop))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Account, dpsgd_fixed_last, dpsgd(hsdp::Sampling::fixed, 1.0))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Account, dpsgd_poisson_last, dpsgd(hsdp::Sampling::poisson, 1.0))
    ->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_AccountPerIndex(benchmark::State& state, hsdp::Run run) {
  const auto query = hsdp::Query::at_delta(1e-5);
  for (auto _ : state) {
    auto report = hsdp::account(run, query);
    hsdp::add_per_index(report, hsdp::all_analyses());
    benchmark::DoNotOptimize(report);
  }
}
BENCHMARK_CAPTURE(BM_AccountPerIndex, pnsgd_last_1000_positions, pnsgd(3.0))
    ->Unit(benchmark::kMillisecond);

void BM_Analysis(benchmark::State& state, hsdp::Run run, const char* name) {
  const auto a = hsdp::find_analysis(name);
  if (a->check(run)) {
    state.SkipWithError("not applicable");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(a->epsilon(run, 1e-5));
}
BENCHMARK_CAPTURE(BM_Analysis, poisson_composition_rdp, dpsgd(hsdp::Sampling::poisson, 1.0),
                  "composition-rdp")->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_Analysis, poisson_shifted_renyi, dpsgd(hsdp::Sampling::poisson, 1.0),
                  "shifted-renyi")->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_Analysis, fixed_composition_rdp, dpsgd(hsdp::Sampling::fixed, 1.0),
                  "composition-rdp")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Analysis, fixed_shifted_renyi, dpsgd(hsdp::Sampling::fixed, 1.0),
                  "shifted-renyi")->Unit(benchmark::kMillisecond);

void BM_Calibrate(benchmark::State& state, hsdp::Run run, hsdp::CalibrationParameter which,
                  std::optional<hsdp::NoiseParameter> noise, double epsilon) {
  hsdp::CalibrationOptions options;
  options.noise = noise;
  int evaluations = 0;
  for (auto _ : state) {
    auto r = hsdp::calibrate(run, which, epsilon, 1e-5, options);
    evaluations = r.evaluations;
    benchmark::DoNotOptimize(r);
  }
  state.counters["evaluations"] = evaluations;
}
const hsdp::NoiseParameter kJournal{hsdp::NoiseUnit::sigma, hsdp::Convention::journal, 3.0};
const hsdp::NoiseParameter kMultiplier{hsdp::NoiseUnit::multiplier, hsdp::Convention::journal, 1.0};
BENCHMARK_CAPTURE(BM_Calibrate, pnsgd_noise, pnsgd(3.0), hsdp::CalibrationParameter::noise,
                  kJournal, 1.0)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Calibrate, pnsgd_random_stop_noise, pnsgd(3.0, hsdp::Release::random_stop),
                  hsdp::CalibrationParameter::noise, kJournal, 1.0)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Calibrate, pnsgd_steps_unbounded, pnsgd(10.0),
                  hsdp::CalibrationParameter::steps, kJournal, 1.0)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Calibrate, dpsgd_fixed_every_noise,
                  dpsgd(hsdp::Sampling::fixed, 1.0, hsdp::Release::every),
                  hsdp::CalibrationParameter::noise, kMultiplier, 2.0)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Calibrate, dpsgd_fixed_every_steps,
                  dpsgd(hsdp::Sampling::fixed, 1.0, hsdp::Release::every),
                  hsdp::CalibrationParameter::steps, kMultiplier, 2.0)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Calibrate, dpsgd_fixed_every_sampling_rate,
                  dpsgd(hsdp::Sampling::fixed, 1.0, hsdp::Release::every),
                  hsdp::CalibrationParameter::sampling_rate, kMultiplier, 2.0)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Calibrate, dpsgd_poisson_last_noise, dpsgd(hsdp::Sampling::poisson, 1.0),
                  hsdp::CalibrationParameter::noise, kMultiplier, 2.0)
    ->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
