// Throughput of the data readers and of record-norm scaling (docs/data.md). Inputs are
// generated in memory so the numbers measure parsing, not the disk: a CSV and a LIBSVM
// text of 2000 x 100 features, and a gzipped IDX pair shaped like 2000 Fashion-MNIST images.
// The Wide benchmarks: 4 records of up to 10^6 features (docs/data.md "Limits": the
// record-norm loop was quadratic in d; 4 x 10^6 must train in under 5 s).
#include <benchmark/benchmark.h>
#include <zlib.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "hsdp/data/readers.hpp"
#include "hsdp/train/prepare.hpp"
#include "hsdp/train/train_spec.hpp"
#include "hsdp/train/trainer.hpp"

namespace {

namespace hd = hsdp::data;

constexpr int kRows = 2000;
constexpr int kCols = 100;

double value(int i, int j) { return ((i * 7919 + j * 104729) % 20011) / 997.0 - 10.0; }

const std::string& csv_text() {
  static const std::string text = [] {
    std::string s;
    for (int i = 0; i < kRows; ++i) {
      for (int j = 0; j < kCols; ++j) s += std::to_string(value(i, j)) + ",";
      s += i % 2 ? "M\n" : "B\n";
    }
    return s;
  }();
  return text;
}

const std::string& libsvm_text() {
  static const std::string text = [] {
    std::string s;
    for (int i = 0; i < kRows; ++i) {
      s += i % 2 ? "+1" : "-1";
      for (int j = 0; j < kCols; ++j) s += " " + std::to_string(j + 1) + ":" + std::to_string(value(i, j));
      s += "\n";
    }
    return s;
  }();
  return text;
}

std::vector<std::uint8_t> gzip(const std::vector<std::uint8_t>& in) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::vector<std::uint8_t> out(deflateBound(&z, static_cast<uLong>(in.size())) + 32);
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::vector<std::uint8_t> idx_header(std::uint8_t dims, const std::vector<std::uint32_t>& sizes) {
  std::vector<std::uint8_t> out = {0, 0, 0x08, dims};
  for (const auto s : sizes)
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(s >> shift));
  return out;
}

void BM_ReadCsv(benchmark::State& state) {
  for (auto _ : state) {
    std::istringstream in(csv_text());
    benchmark::DoNotOptimize(hd::read_csv(in, "bench.csv").x.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * csv_text().size()));
  state.SetItemsProcessed(state.iterations() * kRows);
}
BENCHMARK(BM_ReadCsv)->Unit(benchmark::kMillisecond);

void BM_ReadLibsvm(benchmark::State& state) {
  for (auto _ : state) {
    std::istringstream in(libsvm_text());
    benchmark::DoNotOptimize(hd::read_libsvm(in, "bench.svm").x.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * libsvm_text().size()));
  state.SetItemsProcessed(state.iterations() * kRows);
}
BENCHMARK(BM_ReadLibsvm)->Unit(benchmark::kMillisecond);

void BM_ReadIdxGzip(benchmark::State& state) {
  constexpr std::uint32_t n = 2000;
  auto images = idx_header(3, {n, 28, 28});
  auto labels = idx_header(1, {n});
  for (std::uint32_t i = 0; i < n * 784; ++i) images.push_back(static_cast<std::uint8_t>((i * 31) % 251));
  for (std::uint32_t i = 0; i < n; ++i) labels.push_back(static_cast<std::uint8_t>(i % 10));
  const auto gz_images = gzip(images);
  const auto gz_labels = gzip(labels);
  for (auto _ : state) benchmark::DoNotOptimize(hd::read_idx(gz_images, gz_labels).x8.data());  // uint8 storage
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * images.size()));
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_ReadIdxGzip)->Unit(benchmark::kMillisecond);

// scale_rows_to_norm(., 1) on a fresh copy of `data` per iteration (the copy not timed).
void time_scaling(benchmark::State& state, const hd::Dataset& data) {
  for (auto _ : state) {
    state.PauseTiming();
    hd::Dataset copy = data;
    state.ResumeTiming();
    hd::scale_rows_to_norm(copy, 1.0);
    benchmark::DoNotOptimize(copy.x.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(data.n * data.d));
}

void BM_ScaleRowsToNorm(benchmark::State& state) {
  std::istringstream in(csv_text());
  time_scaling(state, hd::read_csv(in, "bench.csv"));
}
BENCHMARK(BM_ScaleRowsToNorm)->Unit(benchmark::kMicrosecond);

// 4 records of d features as CSV text, labels 0/1 (values that need rescaling: norm >> 1).
std::string wide_csv(std::int64_t d) {
  std::string s;
  for (int r = 0; r < 4; ++r) {
    for (std::int64_t j = 0; j < d; ++j) s += (j + r) % 3 == 0 ? "0.5," : "-1.25,";
    s += std::to_string(r % 2) + "\n";
  }
  return s;
}

// scale_rows_to_norm on 4 records of d features (state.range(0)): O(d log d).
void BM_WideScaleRowsToNorm(benchmark::State& state) {
  std::istringstream in(wide_csv(state.range(0)));
  time_scaling(state, hd::read_csv(in, "wide.csv"));
}
BENCHMARK(BM_WideScaleRowsToNorm)->Arg(100000)->Arg(200000)->Arg(1000000)->Unit(benchmark::kMillisecond);

// `hsdp train --data wide.csv --model logistic --sigma 1 --seed 1 --test-fraction 0.25` on 4
// records of 10^6 features, every step but the file system: parse the CSV text, map the
// labels, split 3/1, scale the records to norm 1, train (noisy-sgd, one epoch) with its
// privacy report, evaluate.
void BM_WideTrain(benchmark::State& state) {
  const std::string text = wide_csv(state.range(0));
  hsdp::train::TrainSpec spec;
  spec.model = "logistic";
  spec.sigma = 1.0;
  for (auto _ : state) {
    std::istringstream in(text);
    hd::Dataset all = hd::read_csv(in, "wide.csv");
    hsdp::train::TrainConfig c = spec.resolve();
    c.seed = 1;
    const hd::LabelKind kind = hsdp::train::map_labels_for(all, c, std::nullopt);
    auto [train_set, test_set] = hd::train_test_split(all, 0.25, 1);
    const hsdp::train::Preparation prep = hsdp::train::prepare_records(train_set, c, std::vector<double>{});
    hsdp::train::prepare_like(test_set, prep);
    const hsdp::train::TrainResult r = hsdp::train::train(train_set, c);
    benchmark::DoNotOptimize(hsdp::train::evaluate(r.model, test_set).loss);
    benchmark::DoNotOptimize(kind);
  }
  state.SetItemsProcessed(state.iterations() * 4 * state.range(0));
}
BENCHMARK(BM_WideTrain)->Arg(1000000)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
