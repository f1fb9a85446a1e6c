// `hsdp compare`: evaluating a paper-figure preset (every curve at every sweep point) and
// rendering its SVG. The figures are meant to be regenerated interactively: the target is
// well under a second per preset at the default number of points.
#include <benchmark/benchmark.h>

#include <string>

#include "hsdp/compare.hpp"
#include "hsdp/plot.hpp"

namespace {

void BM_FigureEvaluate(benchmark::State& state, const char* name) {
  const hsdp::CompareSpec spec = hsdp::figure(name);
  for (auto _ : state) {
    auto c = hsdp::compare(spec);
    benchmark::DoNotOptimize(c);
  }
  state.counters["points"] = static_cast<double>(spec.xs.size());
}

void BM_FigureRender(benchmark::State& state, const char* name) {
  const hsdp::svg::LinePlot plot = hsdp::to_plot(hsdp::compare(hsdp::figure(name)));
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string svg = hsdp::svg::render(plot);
    bytes = svg.size();
    benchmark::DoNotOptimize(svg.data());
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}

BENCHMARK_CAPTURE(BM_FigureEvaluate, journal_fig2, "journal-fig2")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FigureEvaluate, isit_fig2, "isit-fig2")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FigureEvaluate, langevin_fig1, "langevin-fig1")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FigureEvaluate, federated_fig2, "federated-fig2")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FigureEvaluate, noisy_sgd_fig1, "noisy-sgd-fig1")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FigureRender, langevin_fig1, "langevin-fig1")->Unit(benchmark::kMicrosecond);

}  // namespace
