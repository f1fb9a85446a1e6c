// Label mapping, class selection, privacy-aware preprocessing and the seeded split.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "hsdp/data/readers.hpp"
#include "hsdp/errors.hpp"

namespace {

namespace hd = hsdp::data;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const hsdp::InvalidArgument& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a different exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "did not throw";
  return {};
}

// n records with one feature x_i = i and the given raw labels.
hd::Dataset with_labels(const std::vector<std::string>& labels) {
  hd::Dataset d;
  d.n = labels.size();
  d.d = 1;
  d.source = "mem";
  for (std::size_t i = 0; i < d.n; ++i) {
    d.x.push_back(static_cast<double>(i));
    d.origin.push_back(i + 1);
  }
  d.raw_labels = labels;
  return d;
}

// -------------------------------------------------------------------------------- labels

TEST(Labels, BinaryTextLabelsDefaultToLexicographicallyLargerPositive) {
  auto d = with_labels({"M", "B", "B", "M", "B"});
  hd::map_labels(d, hd::LabelKind::plus_minus_one);
  EXPECT_EQ(d.y, (std::vector<double>{1, -1, -1, 1, -1}));
  EXPECT_EQ(d.labels.describe(), "B -> -1, M -> +1");
  hd::map_labels(d, hd::LabelKind::zero_one, "B");
  EXPECT_EQ(d.y, (std::vector<double>{0, 1, 1, 0, 1}));
  EXPECT_EQ(d.labels.describe(), "M -> 0, B -> 1");
  EXPECT_EQ(d.raw_labels[0], "M") << "mapping keeps the raw text";
}

TEST(Labels, NumericLabelsCompareByValue) {
  // "+1", "1" and "1.0" are one label; -1 sorts below it numerically (not as text).
  auto d = with_labels({"+1", "-1", "1", "1.0", "-1"});
  hd::map_labels(d, hd::LabelKind::plus_minus_one);
  EXPECT_EQ(d.y, (std::vector<double>{1, -1, 1, 1, -1}));
  EXPECT_EQ(d.labels.describe(), "-1 -> -1, +1 -> +1");
  hd::map_labels(d, hd::LabelKind::plus_minus_one, "-1.00");
  EXPECT_EQ(d.y, (std::vector<double>{-1, 1, -1, -1, 1}));
  auto z = with_labels({"0", "1", "1"});
  hd::map_labels(z, hd::LabelKind::zero_one);
  EXPECT_EQ(z.y, (std::vector<double>{0, 1, 1}));
  EXPECT_EQ(z.labels.describe(), "0 -> 0, 1 -> 1");
}

TEST(Labels, ClassesInNumericOrElseTextOrder) {
  auto d = with_labels({"10", "9", "2", "9"});
  hd::map_labels(d, hd::LabelKind::classes);
  EXPECT_EQ(d.y, (std::vector<double>{2, 1, 0, 1}));
  EXPECT_EQ(d.labels.describe(), "2 -> 0, 9 -> 1, 10 -> 2");
  auto t = with_labels({"setosa", "virginica", "versicolor"});
  hd::map_labels(t, hd::LabelKind::classes);
  EXPECT_EQ(t.y, (std::vector<double>{0, 2, 1}));
}

TEST(Labels, RealLabels) {
  auto d = with_labels({"1.5", "-2e3", "+0.25"});
  hd::map_labels(d, hd::LabelKind::real);
  EXPECT_EQ(d.y, (std::vector<double>{1.5, -2000, 0.25}));
  EXPECT_TRUE(d.labels.raw.empty());
  auto bad = with_labels({"1.5", "abc"});
  EXPECT_EQ(error_of([&] { hd::map_labels(bad, hd::LabelKind::real); }),
            "mem:2: label 'abc' is not a number: real-valued labels must be finite numbers");
}

TEST(Labels, WrongCountsAndOptionsAreErrorsNamingTheLabels) {
  auto three = with_labels({"a", "b", "c", "a"});
  EXPECT_EQ(error_of([&] { hd::map_labels(three, hd::LabelKind::plus_minus_one); }),
            "labels = {'a', 'b', 'c'}: must be exactly 2 distinct labels for a binary mapping "
            "(found 3 in mem)");
  EXPECT_TRUE(three.y.empty()) << "a failed mapping changes nothing";
  auto one = with_labels({"a", "a"});
  EXPECT_EQ(error_of([&] { hd::map_labels(one, hd::LabelKind::classes); }),
            "labels = {'a'}: must be at least 2 distinct labels for classes (in mem)");
  auto two = with_labels({"a", "b"});
  EXPECT_EQ(error_of([&] { hd::map_labels(two, hd::LabelKind::zero_one, "c"); }),
            "positive = 'c': must be one of the labels {'a', 'b'}");
  EXPECT_EQ(error_of([&] { hd::map_labels(two, hd::LabelKind::classes, "a"); }),
            "positive = 'a': must be unset unless the label kind is binary");
  hd::Dataset unlabelled;
  unlabelled.n = 1;
  unlabelled.d = 1;
  unlabelled.x = {1};
  EXPECT_EQ(error_of([&] { hd::map_labels(unlabelled, hd::LabelKind::classes); }),
            "raw_labels.size() = 0: must be n = 1 (one raw label per record)");
}

TEST(Labels, SelectClasses) {
  auto d = with_labels({"0", "6", "3", "6", "0", "9"});
  hd::map_labels(d, hd::LabelKind::classes);
  const auto s = hd::select_classes(d, {"6", "0"});
  EXPECT_EQ(s.n, 4u);
  EXPECT_EQ(s.x, (std::vector<double>{0, 1, 3, 4}));
  EXPECT_EQ(s.raw_labels, (std::vector<std::string>{"0", "6", "6", "0"}));
  EXPECT_EQ(s.origin, (std::vector<size_t>{1, 2, 4, 5}));
  EXPECT_TRUE(s.y.empty()) << "the subset's labels must be mapped again";
  EXPECT_EQ(error_of([&] { hd::select_classes(d, {"6", "7"}); }),
            "classes = '7': must be labels present in mem: {'0', '3', '6', '9'}");
  EXPECT_EQ(error_of([&] { hd::select_classes(d, {"6", "6.0"}); }),
            "classes = '6.0': must be listed once (it is repeated)");
  EXPECT_EQ(error_of([&] { hd::select_classes(d, {}); }),
            "classes = {}: must be at least one label to select");
}

// ------------------------------------------------------------------------- preprocessing

double norm(const hd::Dataset& d, std::size_t i) {
  double s = 0;
  for (std::size_t j = 0; j < d.d; ++j) s += d.row(i)[j] * d.row(i)[j];
  return std::sqrt(s);
}

TEST(Preprocess, ScaleRowsToNormIsRecordLocal) {
  hd::Dataset d;
  d.n = 4;
  d.d = 2;
  d.x = {3, 4, 0.3, 0.4, 0, 0, 3e200, -4e200};
  const auto p = hd::scale_rows_to_norm(d, 1.0);
  EXPECT_FALSE(p.leaks_privacy);
  EXPECT_NE(p.description.find("R = 1"), std::string::npos) << p.description;
  EXPECT_NE(p.description.find("does not leak"), std::string::npos) << p.description;
  EXPECT_NEAR(d.x[0], 0.6, 1e-15);
  EXPECT_NEAR(d.x[1], 0.8, 1e-15);
  EXPECT_EQ(d.x[2], 0.3) << "a record inside the ball is untouched";
  EXPECT_EQ(d.x[3], 0.4);
  EXPECT_EQ(d.x[4], 0.0);
  EXPECT_NEAR(d.x[6], 0.6, 1e-15) << "no overflow for huge entries";
  EXPECT_NEAR(d.x[7], -0.8, 1e-15);
  // The bound holds exactly, for many directions and radii (rounding could exceed R).
  hd::Dataset many;
  many.d = 7;
  for (int i = 0; i < 2000; ++i)
    for (std::size_t j = 0; j < many.d; ++j)
      many.x.push_back(std::sin(1.0 + i * 7.3 + static_cast<double>(j) * 1.7) * (1 + i % 13));
  many.n = 2000;
  for (const double R : {0.1, 1.0, 3.7}) {
    auto m = many;
    hd::scale_rows_to_norm(m, R);
    for (std::size_t i = 0; i < m.n; ++i) ASSERT_LE(norm(m, i), R) << i;
  }
  EXPECT_EQ(error_of([&] { hd::scale_rows_to_norm(d, 0); }), "R = 0: must be finite and > 0");
  EXPECT_EQ(error_of([&] { hd::scale_rows_to_norm(d, INFINITY); }),
            "R = inf: must be finite and > 0");
}

TEST(Preprocess, ScaleFeaturesWithPublicConstants) {
  hd::Dataset d;
  d.n = 2;
  d.d = 3;
  d.x = {255, 0, 51, 1, 2, 3};
  auto u = d;
  const auto p = hd::scale_features(u, std::vector<double>(3, 1.0 / 255));
  EXPECT_FALSE(p.leaks_privacy);
  EXPECT_NE(p.description.find("every feature multiplied by the public constant 0.00392"),
            std::string::npos)
      << p.description;
  EXPECT_DOUBLE_EQ(u.x[0], 1.0);
  EXPECT_DOUBLE_EQ(u.x[2], 0.2);
  const auto q = hd::scale_features(d, {1, 2, 0.5});
  EXPECT_EQ(d.x, (std::vector<double>{255, 0, 25.5, 1, 4, 1.5}));
  EXPECT_NE(q.description.find("public_scale[j] = [1, 2, 0.5]"), std::string::npos)
      << q.description;
  EXPECT_EQ(error_of([&] { hd::scale_features(d, {1, 2}); }),
            "public_scale.size() = 2: must be the number of features d = 3");
  EXPECT_EQ(error_of([&] { hd::scale_features(d, {1, NAN, 2}); }),
            "public_scale[1] = nan: must be a finite number");
}

TEST(Preprocess, StandardizeFromDataIsFlaggedAsALeak) {
  hd::Dataset d;
  d.n = 4;
  d.d = 2;
  d.x = {1e9 + 1, 5, 1e9 + 2, 5, 1e9 + 3, 5, 1e9 + 4, 5};
  const auto p = hd::standardize_from_data(d);
  EXPECT_TRUE(p.leaks_privacy);
  EXPECT_NE(p.description.find("PRIVACY LEAK"), std::string::npos);
  EXPECT_NE(p.description.find("depend on every record"), std::string::npos);
  // mean 1e9 + 2.5, population std sqrt(1.25): exact despite the large mean.
  const double s = std::sqrt(1.25);
  EXPECT_NEAR(d.x[0], -1.5 / s, 1e-12);
  EXPECT_NEAR(d.x[6], 1.5 / s, 1e-12);
  EXPECT_EQ(d.x[1], 0.0) << "a constant feature is only centred";
}

// --------------------------------------------------------------------------------- split

TEST(Split, SizesPartitionOrderAndDeterminism) {
  auto d = with_labels(std::vector<std::string>(100, "a"));
  for (std::size_t i = 0; i < d.n; i += 2) d.raw_labels[i] = "b";
  hd::map_labels(d, hd::LabelKind::zero_one);
  const auto [train, test] = hd::train_test_split(d, 0.25, 42);
  EXPECT_EQ(train.n, 75u);
  EXPECT_EQ(test.n, 25u);
  std::set<double> seen;
  for (const auto* part : {&train, &test}) {
    EXPECT_EQ(part->x.size(), part->n);
    EXPECT_EQ(part->y.size(), part->n);
    EXPECT_EQ(part->raw_labels.size(), part->n);
    EXPECT_EQ(part->labels.describe(), d.labels.describe());
    for (std::size_t i = 0; i < part->n; ++i) {
      const auto k = static_cast<std::size_t>(part->x[i]);
      EXPECT_TRUE(seen.insert(part->x[i]).second) << "record in both parts: " << k;
      EXPECT_EQ(part->y[i], d.y[k]) << "label travels with its record";
      EXPECT_EQ(part->origin[i], k + 1);
      if (i > 0) {
        EXPECT_LT(part->x[i - 1], part->x[i]) << "file order kept";
      }
    }
  }
  EXPECT_EQ(seen.size(), 100u);
  const auto again = hd::train_test_split(d, 0.25, 42);
  EXPECT_EQ(again.second.x, test.x) << "same seed, same split";
  EXPECT_NE(hd::train_test_split(d, 0.25, 43).second.x, test.x);
  // Fixed generator: this exact split on every platform (the expected records were computed
  // by an independent Python transcription of SplitMix64 + Fisher-Yates).
  EXPECT_EQ(hd::train_test_split(with_labels({"a", "b", "c", "d", "e"}), 0.4, 7).second.x,
            (std::vector<double>{1, 4}));
}

TEST(Split, EveryRecordEquallyLikelyInTest) {
  // 10 records, 3 in test: each should land in test with probability 0.3. Over 20000
  // seeds the count is Binomial(20000, 0.3): sd 65, so 400 is more than 6 sd.
  const auto d = with_labels(std::vector<std::string>(10, "a"));
  std::vector<int> count(10, 0);
  for (std::uint64_t seed = 0; seed < 20000; ++seed)
    for (const double v : hd::train_test_split(d, 0.3, seed).second.x)
      ++count[static_cast<std::size_t>(v)];
  for (std::size_t i = 0; i < 10; ++i) EXPECT_NEAR(count[i], 6000, 400) << i;
}

TEST(Split, BadFractions) {
  const auto d = with_labels({"a", "b", "c"});
  EXPECT_EQ(error_of([&] { hd::train_test_split(d, 1.0, 1); }),
            "test_fraction = 1: must be in the open interval (0, 1)");
  EXPECT_EQ(error_of([&] { hd::train_test_split(d, 0.1, 1); }),
            "test_fraction = 0.1: must be such that both parts are non-empty: "
            "round(test_fraction * n) in [1, 2] with n = 3");
  EXPECT_EQ(error_of([&] { hd::train_test_split(d, 0.9, 1); }).substr(0, 20),
            "test_fraction = 0.9:");
}

}  // namespace
