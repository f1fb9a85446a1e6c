// Preparing records for the trainer (include/hsdp/train/prepare.hpp): one function for every
// front end, with the squared loss's label bound checked everywhere.
#include <gtest/gtest.h>

#include <cmath>

#include "hsdp/errors.hpp"
#include "hsdp/train/prepare.hpp"

namespace {

using namespace hsdp;

data::Dataset records(std::vector<std::string> labels) {
  data::Dataset d;
  d.n = labels.size();
  d.d = 2;
  for (std::size_t i = 0; i < d.n; ++i) {
    d.x.push_back(3.0 * static_cast<double>(i + 1));
    d.x.push_back(4.0 * static_cast<double>(i + 1));
  }
  d.raw_labels = std::move(labels);
  return d;
}

std::string field_of_error(data::Dataset d, train::TrainConfig c, std::vector<double> scale) {
  try {
    train::prepare(d, c, std::nullopt, scale);
  } catch (const InvalidArgument& e) {
    return e.field();
  }
  return "prepared";
}

TEST(Prepare, MapsLabelsScalesFeaturesThenRows) {
  data::Dataset d = records({"0", "1", "1"});
  train::TrainConfig c;
  const train::Preparation p = train::prepare(d, c, std::nullopt, {0.5});
  EXPECT_EQ(p.feature_scale, (std::vector<double>{0.5, 0.5}));
  EXPECT_EQ(d.y, (std::vector<double>{-1, 1, 1}));
  for (std::size_t i = 0; i < d.n; ++i) EXPECT_LE(std::hypot(d.row(i)[0], d.row(i)[1]), 1.0 + 1e-12);
  EXPECT_NE(p.description.find("; "), std::string::npos) << p.description;
  // Other records get the same scale and norm.
  data::Dataset other = records({"1"});
  train::prepare_like(other, p);
  EXPECT_DOUBLE_EQ(other.row(0)[0], 0.6);  // (1.5, 2) has norm 2.5, scaled to 1
}

TEST(Prepare, ChecksTheScaleAndTheSquaredLossLabelBound) {
  train::TrainConfig c;
  EXPECT_EQ(field_of_error(records({"0", "1"}), c, {1, 2, 3}), "feature_scale");
  c.loss.kind = train::LossKind::squared;
  c.loss.label_bound = 1;
  EXPECT_EQ(field_of_error(records({"0.5", "2"}), c, {}), "label_bound");
  EXPECT_EQ(field_of_error(records({"0.5", "-1"}), c, {}), "prepared");
}

}  // namespace
