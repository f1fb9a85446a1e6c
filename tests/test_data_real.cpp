// The readers on the real datasets Debian ships (scripts/install-deps.sh installs them;
// a test skips when its file is absent). Expected sizes and label counts are the datasets'
// published figures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>

#include "hsdp/data/readers.hpp"

// CsvOptions is written with designated initializers; GCC 12 warns about the omitted
// members although they have default member initializers.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace {

namespace hd = hsdp::data;

const std::string kSklearn = "/usr/lib/python3/dist-packages/sklearn/datasets/data/";
const std::string kHeart = "/usr/share/doc/liblinear-tools/examples/heart_scale";
const std::string kFashion = "/usr/share/datasets/fashion-mnist/";

#define REQUIRE_FILE(path) \
  if (!std::filesystem::exists(path)) GTEST_SKIP() << (path) << " is not installed"

std::map<std::string, std::size_t> counts(const hd::Dataset& d) {
  std::map<std::string, std::size_t> out;
  for (const auto& label : d.raw_labels) ++out[label];
  return out;
}

TEST(RealData, BreastCancerCsvWithScikitLearnHeader) {
  const std::string path = kSklearn + "breast_cancer.csv";
  REQUIRE_FILE(path);
  auto d = hd::read_csv(path);  // the "569,30,malignant,benign" header is detected
  EXPECT_EQ(d.n, 569u);
  EXPECT_EQ(d.d, 30u);
  EXPECT_EQ(counts(d), (std::map<std::string, std::size_t>{{"0", 212}, {"1", 357}}));
  // First record: mean radius 17.99, ..., worst fractal dimension 0.1189.
  EXPECT_EQ(d.x[0], 17.99);
  EXPECT_EQ(d.x[29], 0.1189);
  EXPECT_EQ(d.origin.front(), 2u);
  // malignant is 0 in the file; make it the positive class explicitly.
  hd::map_labels(d, hd::LabelKind::plus_minus_one, "0");
  EXPECT_EQ(d.labels.describe(), "1 -> -1, 0 -> +1");
  EXPECT_EQ(std::count(d.y.begin(), d.y.end(), 1.0), 212);
  // Equivalent explicit options: skip the special line, no header.
  const auto same = hd::read_csv(path, {.header = hd::CsvOptions::Header::absent, .skip_lines = 1});
  EXPECT_EQ(same.x, d.x);
}

TEST(RealData, IrisCsvThreeClasses) {
  const std::string path = kSklearn + "iris.csv";
  REQUIRE_FILE(path);
  auto d = hd::read_csv(path);
  EXPECT_EQ(d.n, 150u);
  EXPECT_EQ(d.d, 4u);
  hd::map_labels(d, hd::LabelKind::classes);
  EXPECT_EQ(d.labels.describe(), "0 -> 0, 1 -> 1, 2 -> 2");
  for (const double c : {0.0, 1.0, 2.0}) EXPECT_EQ(std::count(d.y.begin(), d.y.end(), c), 50);
}

TEST(RealData, HeartScaleLibsvm) {
  REQUIRE_FILE(kHeart);
  auto d = hd::read_libsvm(kHeart);
  EXPECT_EQ(d.n, 270u);
  EXPECT_EQ(d.d, 13u);
  EXPECT_EQ(counts(d), (std::map<std::string, std::size_t>{{"+1", 120}, {"-1", 150}}));
  // "+1 1:0.708333 2:1 3:1 4:-0.320755 ... 10:-0.225806 12:1 13:-1": feature 11 absent.
  EXPECT_EQ(d.x[0], 0.708333);
  EXPECT_EQ(d.x[10], 0.0);
  EXPECT_EQ(d.x[12], -1.0);
  hd::map_labels(d, hd::LabelKind::plus_minus_one);
  EXPECT_EQ(d.labels.describe(), "-1 -> -1, +1 -> +1");
  // Every value of the scaled file is in [-1, 1]: the norm is at most sqrt(13).
  for (const double v : d.x) ASSERT_LE(std::abs(v), 1.0);
  EXPECT_EQ(hd::read_libsvm(kHeart, 20).d, 20u);
}

TEST(RealData, FashionMnistIdx) {
  const std::string images = kFashion + "train-images-idx3-ubyte.gz";
  const std::string labels = kFashion + "train-labels-idx1-ubyte.gz";
  REQUIRE_FILE(images);
  REQUIRE_FILE(labels);
  const auto d = hd::read_idx(images, labels);
  EXPECT_EQ(d.n, 60000u);
  EXPECT_EQ(d.d, 784u);
  const auto c = counts(d);
  EXPECT_EQ(c.size(), 10u);
  for (const auto& [label, count] : c) EXPECT_EQ(count, 6000u) << label;
  // Unscaled pixels: integers in [0, 255]; the first image's brightest pixel is 255 at 417
  // and its pixels sum to 76247 (checked with Python's gzip module).
  // Held as uint8 (feature storage auto for unsigned-byte IDX): 784 bytes a record.
  EXPECT_EQ(d.storage, hd::FeatureStorage::uint8);
  EXPECT_EQ(d.record_bytes(), 784u);
  EXPECT_EQ(*std::max_element(d.x8.begin(), d.x8.end()), 255);
  EXPECT_EQ(*std::min_element(d.x8.begin(), d.x8.end()), 0);
  std::vector<double> row0(d.d);
  d.effective_row(0, row0.data());
  double sum = 0;
  for (std::size_t j = 0; j < d.d; ++j) sum += row0[j];
  EXPECT_EQ(sum, 76247.0);
  EXPECT_EQ(std::max_element(row0.begin(), row0.end()) - row0.begin(), 417);
  EXPECT_THROW((void)d.row(0), std::logic_error) << "compact storage has no float64 row";
  // Two classes, as the binary experiments use them: T-shirt/top (0) vs shirt (6).
  auto two = hd::select_classes(d, {"0", "6"});
  EXPECT_EQ(two.n, 12000u);
  hd::map_labels(two, hd::LabelKind::plus_minus_one, "6");
  EXPECT_EQ(two.labels.describe(), "0 -> -1, 6 -> +1");

  const auto test = hd::read_idx(kFashion + "t10k-images-idx3-ubyte.gz",
                                 kFashion + "t10k-labels-idx1-ubyte.gz");
  EXPECT_EQ(test.n, 10000u);
  for (const auto& [label, count] : counts(test)) EXPECT_EQ(count, 1000u) << label;
}

}  // namespace
