// Features in their stored precision (docs/data.md, "Feature storage"): the compact
// gradient kernels against float64 on the same effective features, preprocessing that only
// touches the scales, the readers' float32/uint8 storage and its errors.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "hsdp/data/readers.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/train/model.hpp"
#include "train/sampler.hpp"
#include "fixtures.hpp"

namespace {

namespace hd = hsdp::data;
using hsdp::train::LinearModel;
using hsdp::train::LossKind;
using hsdp::train::LossSpec;

// The tolerance the docs state: a compact pass agrees with the float64 pass on the same
// effective features to 1e-12 of the gradient's norm (only the summation order differs).
constexpr double kTolerance = 1e-12;

struct Pair {
  hd::Dataset compact, dense;  // the same effective features x_il = r_i (c_l u_il)
};

// n records of d uint8 levels (many zeros, as images), public per-feature scales c_l,
// per-record factors r_i; the float64 twin holds x_il = r_i (c_l u_il) itself.
Pair make_pair(std::size_t n, std::size_t d, hd::FeatureStorage storage, bool scales, LossKind kind,
               std::size_t classes, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> level(0, 255);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Pair p;
  hd::Dataset& c = p.compact;
  c.n = n;
  c.d = d;
  c.storage = storage;
  if (scales) {
    c.feature_scale.resize(d);
    for (auto& v : c.feature_scale) v = 0.5 / 255 + unit(rng) / 255;
    c.row_scale.resize(n);
    for (auto& v : c.row_scale) v = 0.2 + unit(rng);
  }
  for (std::size_t k = 0; k < n * d; ++k) {
    const int u = unit(rng) < 0.3 ? 0 : level(rng);
    if (storage == hd::FeatureStorage::uint8)
      c.x8.push_back(static_cast<std::uint8_t>(u));
    else
      c.x32.push_back(static_cast<float>(u) * 0.37f - 20.0f);  // not integers: float32 values
  }
  for (std::size_t i = 0; i < n; ++i) {
    switch (kind) {
      case LossKind::softmax: c.y.push_back(static_cast<double>(rng() % classes)); break;
      case LossKind::squared: c.y.push_back(2 * unit(rng) - 1); break;
      default: c.y.push_back(unit(rng) < 0.5 ? -1.0 : 1.0); break;
    }
  }
  p.dense = hd::as_float64(c);
  return p;
}

LinearModel random_model(LossKind kind, std::size_t d, bool bias, std::size_t classes, double scale,
                         std::uint64_t seed) {
  LossSpec loss;
  loss.kind = kind;
  loss.classes = classes;
  loss.huber_smoothing = 0.5;
  LinearModel m = LinearModel::zeros(loss, d, bias);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0.0, scale);
  for (auto& v : m.theta) v = g(rng);
  return m;
}

double norm(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

struct KernelCase {
  LossKind kind;
  bool bias;
  double clip;
  bool scales;
  hd::FeatureStorage storage;
  std::size_t n;
};

std::string name_of(const KernelCase& k) {
  return std::string(hsdp::train::to_string(k.kind)) + (k.bias ? " bias" : " no-bias") +
         " clip=" + std::to_string(k.clip) + (k.scales ? " scaled " : " unscaled ") +
         std::string(hd::to_string(k.storage)) + " n=" + std::to_string(k.n);
}

TEST(FeatureStorage, CompactKernelsMatchFloat64) {
  const std::size_t d = 300;
  int cases = 0, skipped = 0;
  for (const LossKind kind : {LossKind::logistic, LossKind::huber, LossKind::squared, LossKind::softmax})
    for (const bool bias : {true, false})
      for (const double clip : {0.0, 0.3})
        for (const bool scales : {true, false})
          for (const auto storage : {hd::FeatureStorage::uint8, hd::FeatureStorage::float32})
            // 40 records: the serial pass; 4000 records: the 16-chunk pass.
            for (const std::size_t n : {std::size_t{40}, std::size_t{4000}}) {
              // Under the sanitizers two of the eight (bias, clip, scales) per (kind, storage, n):
              // all three off and all three on, so each value of each is still met with every
              // loss, storage and pass. The sanitizers check memory and undefined behaviour on
              // the kernels; the Release build checks the values on all 128 cases.
              if (!hsdp::testing::keep_cell(std::size_t{bias} + (clip > 0) + std::size_t{scales}, 3)) {
                ++skipped;
                continue;
              }
              const KernelCase kc{kind, bias, clip, scales, storage, n};
              SCOPED_TRACE(name_of(kc));
              const std::size_t classes = kind == LossKind::softmax ? 4 : 1;
              const Pair p = make_pair(n, d, storage, scales, kind, std::max<std::size_t>(classes, 2), 7 + cases);
              // Scores of order 1 whatever the feature magnitudes.
              double mean_norm = 0;
              std::vector<double> row(d);
              for (std::size_t i = 0; i < n; ++i) {
                p.compact.effective_row(i, row.data());
                mean_norm += norm(row) / static_cast<double>(n);
              }
              const LinearModel m =
                  random_model(kind, d, bias, kind == LossKind::softmax ? 4 : 2, 1.0 / mean_norm, 100 + cases);
              std::vector<double> gc(m.parameters(), 0.0), gd(m.parameters(), 0.0);
              const auto clipped_c = hsdp::train::full_gradient_sum(m, p.compact, clip, gc);
              const auto clipped_d = hsdp::train::full_gradient_sum(m, p.dense, clip, gd);
              EXPECT_EQ(clipped_c, clipped_d);
              if (clip > 0) EXPECT_GT(clipped_d, 0) << "the case must exercise clipping";
              const double scale = norm(gd);
              ASSERT_GT(scale, 0);
              double worst = 0;
              for (std::size_t j = 0; j < gc.size(); ++j) worst = std::max(worst, std::abs(gc[j] - gd[j]));
              EXPECT_LE(worst, kTolerance * scale) << "max |difference| " << worst << " of norm " << scale;
              // A sampled batch (scattered rows, repeated records) agrees as well.
              std::vector<std::int64_t> batch;
              for (std::size_t k = 0; k < 30; ++k) batch.push_back(static_cast<std::int64_t>((k * 7919) % n));
              std::vector<double> bc(m.parameters(), 0.0), bd(m.parameters(), 0.0);
              EXPECT_EQ(hsdp::train::batch_gradient_sum(m, p.compact, batch, clip, bc),
                        hsdp::train::batch_gradient_sum(m, p.dense, batch, clip, bd));
              const double bscale = norm(bd);
              for (std::size_t j = 0; j < bc.size(); ++j)
                ASSERT_LE(std::abs(bc[j] - bd[j]), kTolerance * bscale) << "batch, parameter " << j;
              ++cases;
            }
  EXPECT_EQ(cases + skipped, 4 * 2 * 2 * 2 * 2 * 2);
  EXPECT_EQ(skipped, hsdp::testing::kSanitizedBuild ? 96 : 0);
}

// One output: the compact kernel takes rows in blocks of 4 (interleaved dot products, one
// pass over the sum for the block's updates), claiming
// the same bits as one row at a time. A batch of fewer than 4 rows takes the one-row loop,
// so a batch summed in one call must equal, bit for bit, its rows added by one call each
// (without per-feature scales, where the sum is added to grad unchanged; the per-record
// factors are kept). Scores of both signs and large margins (exp underflowing) included.
TEST(FeatureStorage, BlockedRowsMatchOneRowAtATime) {
  int cases = 0;
  for (const LossKind kind : {LossKind::logistic, LossKind::huber, LossKind::squared})
    for (const bool bias : {true, false})
      for (const double clip : {0.0, 0.3})
        for (const auto storage : {hd::FeatureStorage::uint8, hd::FeatureStorage::float32})
          for (const std::size_t d : {std::size_t{5}, std::size_t{21}, std::size_t{100}})
            for (const double margin : {1.0, 40.0}) {
              SCOPED_TRACE(std::string(hsdp::train::to_string(kind)) + (bias ? " bias" : " no-bias") +
                           " clip=" + std::to_string(clip) + " " + std::string(hd::to_string(storage)) +
                           " d=" + std::to_string(d) + " margin=" + std::to_string(margin));
              const std::size_t n = 50;
              Pair p = make_pair(n, d, storage, false, kind, 2, 500 + cases);
              hd::Dataset& ds = p.compact;
              std::mt19937_64 rng(900 + cases);
              std::uniform_real_distribution<double> unit(0.0, 1.0);
              // Per-record factors giving rows of norm 0.2 to 1.2.
              ds.row_scale.resize(n);
              for (std::size_t i = 0; i < n; ++i) {
                double raw = 0;
                for (std::size_t l = 0; l < d; ++l) {
                  const double u = storage == hd::FeatureStorage::uint8 ? ds.x8[i * d + l] : ds.x32[i * d + l];
                  raw += u * u;
                }
                ds.row_scale[i] = (0.2 + unit(rng)) / std::sqrt(std::max(raw, 1.0));
              }
              const LinearModel m = random_model(kind, d, bias, 2, margin / std::sqrt(static_cast<double>(d)), 300 + cases);
              // 11 scattered rows with a repeat: two blocks of 4 and 3 rows after them.
              std::vector<std::int64_t> batch;
              for (std::size_t k = 0; k < 11; ++k) batch.push_back(static_cast<std::int64_t>((k * 17 + 3) % n));
              batch[9] = batch[2];
              std::vector<double> whole(m.parameters(), 0.0), single(m.parameters(), 0.0);
              const auto clipped_whole = hsdp::train::batch_gradient_sum(m, ds, batch, clip, whole);
              std::int64_t clipped_single = 0;
              for (const auto i : batch) clipped_single += hsdp::train::batch_gradient_sum(m, ds, {i}, clip, single);
              EXPECT_EQ(clipped_whole, clipped_single);
              if (clip > 0 && margin == 1.0 && kind != LossKind::huber) EXPECT_GT(clipped_whole, 0);
              ASSERT_GT(norm(whole), 0);
              for (std::size_t j = 0; j < whole.size(); ++j)
                ASSERT_EQ(whole[j], single[j]) << "parameter " << j;  // bit for bit, not a tolerance
              ++cases;
            }
  EXPECT_EQ(cases, 3 * 2 * 2 * 2 * 3 * 2);
}

TEST(FeatureStorage, ClippingUsesTheEffectiveNorm) {
  // One record x = r (c u) with ||x|| = 5 exactly: u = (3, 4) levels, c = 1, r = 1; then
  // the same record as u = (30, 40), c = 0.1: clip 1 must scale the gradient to norm 1.
  for (const double c : {1.0, 0.1}) {
    hd::Dataset ds;
    ds.n = 1;
    ds.d = 2;
    ds.storage = hd::FeatureStorage::uint8;
    const auto k = static_cast<std::uint8_t>(std::lround(1 / c));
    ds.x8 = {static_cast<std::uint8_t>(3 * k), static_cast<std::uint8_t>(4 * k)};
    ds.feature_scale = {c, c};
    ds.y = {1.0};
    LossSpec loss;
    loss.kind = LossKind::squared;
    LinearModel m = LinearModel::zeros(loss, 2, false);
    std::vector<double> g(2, 0.0);
    ds.y = {-2.0};  // slope s - y = 2: gradient 2 x, norm 10
    EXPECT_EQ(hsdp::train::full_gradient_sum(m, ds, 1.0, g), 1);
    EXPECT_NEAR(norm(g), 1.0, 1e-15) << c;
    EXPECT_NEAR(g[0], 0.6, 1e-15);
    EXPECT_NEAR(g[1], 0.8, 1e-15);
  }
}

TEST(FeatureStorage, PreprocessingOnlyTouchesTheScales) {
  const Pair p = make_pair(200, 50, hd::FeatureStorage::uint8, false, LossKind::logistic, 2, 3);
  hd::Dataset compact = p.compact;
  hd::Dataset dense = p.dense;
  const std::vector<double> scale(50, 1.0 / 255);
  hd::scale_features(compact, scale);
  hd::scale_features(dense, scale);
  hd::scale_rows_to_norm(compact, 1.0);
  hd::scale_rows_to_norm(dense, 1.0);
  EXPECT_EQ(compact.x8, p.compact.x8) << "the stored values stay as read";
  EXPECT_TRUE(compact.x.empty()) << "no float64 copy";
  ASSERT_EQ(compact.feature_scale.size(), 50u);
  ASSERT_EQ(compact.row_scale.size(), 200u);
  std::vector<double> row(50);
  for (std::size_t i = 0; i < compact.n; ++i) {
    compact.effective_row(i, row.data());
    double n2 = 0;
    for (std::size_t l = 0; l < 50; ++l) {
      n2 += row[l] * row[l];
      ASSERT_NEAR(row[l], dense.x[i * 50 + l], 1e-15) << i << "," << l;
    }
    ASSERT_LE(std::sqrt(n2), 1.0) << "record " << i << " within R exactly";
  }
  // Centring is not a scale: standardising compact storage is refused, naming the field.
  try {
    hd::standardize_from_data(compact);
    FAIL() << "standardize on uint8 storage";
  } catch (const hsdp::InvalidArgument& e) {
    EXPECT_EQ(e.field(), "feature_storage");
  }
  // Compact storage has no float64 row pointer.
  EXPECT_THROW((void)compact.row(0), std::logic_error);
}

TEST(FeatureStorage, SubsetsKeepTheStorage) {
  Pair p = make_pair(100, 8, hd::FeatureStorage::uint8, true, LossKind::logistic, 2, 5);
  for (std::size_t i = 0; i < p.compact.n; ++i) p.compact.raw_labels.push_back(i % 2 ? "a" : "b");
  const auto [train, test] = hd::train_test_split(p.compact, 0.25, 9);
  EXPECT_EQ(train.storage, hd::FeatureStorage::uint8);
  EXPECT_EQ(train.n + test.n, 100u);
  EXPECT_EQ(train.x8.size(), train.n * 8);
  EXPECT_EQ(train.row_scale.size(), train.n);
  EXPECT_EQ(train.feature_scale, p.compact.feature_scale);
  const auto a = hd::select_classes(p.compact, {"a"});
  EXPECT_EQ(a.n, 50u);
  std::vector<double> r1(8), r2(8);
  a.effective_row(0, r1.data());
  p.compact.effective_row(1, r2.data());
  EXPECT_EQ(r1, r2);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(FeatureStorage, TextReadersFloat32) {
  hd::CsvOptions o;
  o.header = hd::CsvOptions::Header::absent;
  o.storage = hd::FeatureStorage::float32;
  std::istringstream csv("1,0.1,a\n-2.5,3e30,b\n");
  const auto d = hd::read_csv(csv, "f.csv", o);
  EXPECT_EQ(d.storage, hd::FeatureStorage::float32);
  EXPECT_TRUE(d.x.empty());
  EXPECT_EQ(d.x32, (std::vector<float>{1.0f, 0.1f, -2.5f, 3e30f}));
  std::istringstream big("1,2,a\n3,4e38,b\n");
  EXPECT_EQ(error_of([&] { hd::read_csv(big, "f.csv", o); }),
            "f.csv:2:3: feature 1: '4e38' is outside the float32 range (feature storage float32 "
            "holds |values| up to about 3.4e38)");
  std::istringstream ok64("1,2,a\n3,4e38,b\n");
  o.storage = hd::FeatureStorage::float64;
  EXPECT_EQ(hd::read_csv(ok64, "f.csv", o).x[3], 4e38);
  o.storage = hd::FeatureStorage::uint8;
  std::istringstream any("1,2,a\n");
  EXPECT_NE(error_of([&] { hd::read_csv(any, "f.csv", o); }).find("feature_storage"), std::string::npos);

  std::istringstream svm("+1 1:0.5 3:-2\n-1 2:1e-3\n");
  const auto s = hd::read_libsvm(svm, "f.svm", 0, {}, hd::FeatureStorage::float32);
  EXPECT_EQ(s.storage, hd::FeatureStorage::float32);
  EXPECT_EQ(s.x32, (std::vector<float>{0.5f, 0, -2, 0, 1e-3f, 0}));
  std::istringstream svm_big("+1 1:0.5 3:-2\n-1 2:-1e39\n");
  EXPECT_EQ(error_of([&] {
              hd::read_libsvm(svm_big, "f.svm", 0, {}, hd::FeatureStorage::float32);
            }),
            "f.svm:2:6: value '-1e39' of feature 2 is outside the float32 range (feature storage "
            "float32 holds |values| up to about 3.4e38)");
}

TEST(FeatureStorage, ParseAndDispatch) {
  EXPECT_EQ(hd::parse_feature_storage("auto", hsdp::opt("feature_storage")), std::nullopt);
  EXPECT_EQ(hd::parse_feature_storage("uint8", hsdp::opt("feature_storage")), hd::FeatureStorage::uint8);
  EXPECT_EQ(hd::parse_feature_storage("float32", hsdp::opt("feature_storage")), hd::FeatureStorage::float32);
  try {
    hd::parse_feature_storage("int4", hsdp::opt("feature_storage"));
    FAIL();
  } catch (const hsdp::InvalidArgument& e) {
    EXPECT_EQ(e.field(), "feature_storage");
    EXPECT_NE(std::string(e.what()).find("auto, float64, float32, uint8"), std::string::npos) << e.what();
  }
  hd::DataSource csv;
  csv.path = "does-not-matter.csv";
  csv.storage = hd::FeatureStorage::uint8;
  try {
    hd::read(csv);
    FAIL();
  } catch (const hsdp::InvalidArgument& e) {
    EXPECT_EQ(e.field(), "feature_storage");
    EXPECT_NE(std::string(e.what()).find("uint8 is for IDX images"), std::string::npos) << e.what();
  }
}

TEST(FeatureStorage, IdxUint8OnlyForByteImages) {
  // int16 images: auto reads float64, uint8 is refused naming feature_storage.
  const std::vector<std::uint8_t> images{0, 0, 0x0B, 2, 0, 0, 0, 1, 0, 0, 0, 1, 0xff, 0xfe};
  const std::vector<std::uint8_t> labels{0, 0, 0x08, 1, 0, 0, 0, 1, 3};
  EXPECT_EQ(hd::read_idx(images, labels).storage, hd::FeatureStorage::float64);
  try {
    hd::read_idx(images, labels, "img", "lab", {}, hd::FeatureStorage::uint8);
    FAIL();
  } catch (const hsdp::InvalidArgument& e) {
    EXPECT_EQ(e.field(), "feature_storage");
  }
  const auto f = hd::read_idx(images, labels, "img", "lab", {}, hd::FeatureStorage::float32);
  EXPECT_EQ(f.x32, std::vector<float>{-2});
}

}  // namespace
