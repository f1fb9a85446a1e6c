// Features in their stored precision (docs/data.md, "Feature storage"): the full-batch
// gradient pass over the same data held as float64, float32 and uint8. Counters:
// examples/s (items_per_second), bytes_per_step (stored features + labels + per-record
// factors the pass reads), and the run's threads.
//
// Data: Fashion-MNIST from Debian's dataset-fashion-mnist (skipped with a message when
// absent): sneaker (7) vs sandal (5), 12000 x 784, logistic; all 10 classes, 60000 x 784,
// softmax; pixels times the public 1/255, rows scaled to norm 1. Synthetic: 10^6 x 100
// logistic with values quantised to uint8 levels (0..255 times the public 1/255, rows scaled
// to norm 1; label the sign of an alternating sum), so all three storages hold the same data.
// The pass is unclipped (clip 0), as in bench_train.cpp.
//
// Arguments: {storage: 0 float64, 1 float32, 2 uint8} x {threads: 1, or 0 = OpenMP default}.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <random>

#include "hsdp/data/readers.hpp"
#include "hsdp/train/model.hpp"
#include "train/sampler.hpp"

namespace {

using namespace hsdp;
using namespace hsdp::train;

constexpr std::array<data::FeatureStorage, 3> kStorages{data::FeatureStorage::float64, data::FeatureStorage::float32,
                                                       data::FeatureStorage::uint8};

// `u8` (uint8 storage, scales set) as `storage`: the same effective features.
data::Dataset as_storage(const data::Dataset& u8, data::FeatureStorage storage) {
  if (storage == data::FeatureStorage::uint8) return u8;
  if (storage == data::FeatureStorage::float64) return data::as_float64(u8);
  data::Dataset f = u8;
  f.storage = storage;
  f.x32.assign(u8.x8.begin(), u8.x8.end());  // exact: levels 0..255
  f.x8.clear();
  f.x8.shrink_to_fit();
  return f;
}

struct Variants {
  std::array<std::unique_ptr<data::Dataset>, 3> of;
};

const Variants* fashion(bool ten_classes) {
  static std::map<bool, std::unique_ptr<Variants>> cache;
  static std::map<bool, bool> tried;
  if (!tried[ten_classes]) {
    tried[ten_classes] = true;
    const std::string dir = "/usr/share/datasets/fashion-mnist/";
    if (std::filesystem::exists(dir + "train-images-idx3-ubyte.gz")) {
      auto all = data::read_idx(dir + "train-images-idx3-ubyte.gz", dir + "train-labels-idx1-ubyte.gz");
      if (!ten_classes) all = data::select_classes(all, {"5", "7"});
      data::map_labels(all, ten_classes ? data::LabelKind::classes : data::LabelKind::plus_minus_one);
      data::scale_features(all, std::vector<double>(all.d, 1.0 / 255));
      data::scale_rows_to_norm(all, 1.0);
      auto v = std::make_unique<Variants>();
      for (std::size_t s = 0; s < 3; ++s) v->of[s] = std::make_unique<data::Dataset>(as_storage(all, kStorages[s]));
      cache[ten_classes] = std::move(v);
    }
  }
  return cache[ten_classes].get();
}

const data::Dataset& synthetic(data::FeatureStorage storage) {
  static std::map<data::FeatureStorage, std::unique_ptr<data::Dataset>> cache;
  auto& slot = cache[storage];
  if (!slot) {
    const std::size_t n = 1000000, d = 100;
    data::Dataset u8;
    u8.n = n;
    u8.d = d;
    u8.storage = data::FeatureStorage::uint8;
    u8.x8.resize(n * d);
    u8.y.resize(n);
    std::mt19937_64 rng(1234);
    std::uniform_int_distribution<int> level(0, 255);
    for (std::size_t i = 0; i < n; ++i) {
      int s = 0;
      for (std::size_t j = 0; j < d; ++j) {
        const int u = level(rng);
        u8.x8[i * d + j] = static_cast<std::uint8_t>(u);
        s += (j % 2 ? 1 : -1) * (u - 128);
      }
      u8.y[i] = s > 0 ? 1.0 : -1.0;
    }
    data::scale_features(u8, std::vector<double>(d, 1.0 / 255));
    data::scale_rows_to_norm(u8, 1.0);
    slot = std::make_unique<data::Dataset>(as_storage(u8, storage));
  }
  return *slot;
}

LinearModel model_for(LossKind kind, std::size_t d, std::size_t classes) {
  LossSpec spec;
  spec.kind = kind;
  spec.classes = classes;
  LinearModel m = LinearModel::zeros(spec, d, true);
  for (std::size_t j = 0; j < m.theta.size(); ++j) m.theta[j] = 0.01 * static_cast<double>(j % 7) - 0.03;
  return m;
}

// What one full-batch step reads: the stored features, the labels and (compact) the
// per-record factors.
double bytes_per_step(const data::Dataset& ds) {
  return static_cast<double>(ds.n) *
         static_cast<double>(ds.record_bytes() + sizeof(double) + (ds.row_scale.empty() ? 0 : sizeof(double)));
}

void full_batch(benchmark::State& state, const data::Dataset& ds, LossKind kind, std::size_t classes) {
  const int threads = state.range(1) == 0 ? omp_get_num_procs() : static_cast<int>(state.range(1));
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  const LinearModel m = model_for(kind, ds.d, classes);
  std::vector<double> grad(m.parameters());
  double best = 1e300;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    std::fill(grad.begin(), grad.end(), 0.0);
    full_gradient_sum(m, ds, 0.0, grad);
    benchmark::DoNotOptimize(grad.data());
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  omp_set_num_threads(saved);
  const double bytes = bytes_per_step(ds);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(ds.n));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
  state.counters["bytes_per_step"] = bytes;
  state.counters["best_step_ms"] = best * 1e3;
  state.counters["best_examples_per_s"] = static_cast<double>(ds.n) / best;
  state.counters["threads"] = threads;
  state.SetLabel(std::string(data::to_string(ds.storage)));
}

void BM_StoredPrecision_Synthetic1e6x100(benchmark::State& state) {
  full_batch(state, synthetic(kStorages[static_cast<std::size_t>(state.range(0))]), LossKind::logistic, 2);
}

void BM_StoredPrecision_FashionMnist5v7(benchmark::State& state) {
  const auto* v = fashion(false);
  if (!v) {
    state.SkipWithError("Fashion-MNIST not installed (dataset-fashion-mnist)");
    return;
  }
  full_batch(state, *v->of[static_cast<std::size_t>(state.range(0))], LossKind::logistic, 2);
}

void BM_StoredPrecision_FashionMnist10Softmax(benchmark::State& state) {
  const auto* v = fashion(true);
  if (!v) {
    state.SkipWithError("Fashion-MNIST not installed (dataset-fashion-mnist)");
    return;
  }
  full_batch(state, *v->of[static_cast<std::size_t>(state.range(0))], LossKind::softmax, 10);
}

void storage_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"storage", "threads"});
  for (int threads : {1, 0})
    for (int s = 0; s < 3; ++s) b->Args({s, threads});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}
BENCHMARK(BM_StoredPrecision_FashionMnist5v7)->Apply(storage_args);
BENCHMARK(BM_StoredPrecision_FashionMnist10Softmax)->Apply(storage_args);
BENCHMARK(BM_StoredPrecision_Synthetic1e6x100)->Apply(storage_args);

}  // namespace
