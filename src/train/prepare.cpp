#include "hsdp/train/prepare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "hsdp/errors.hpp"
#include "hsdp/limits.hpp"
#include "hsdp/train/planner.hpp"

namespace hsdp::train {

namespace {

// The softmax loss has one output per class: at most limits::classes (docs/data.md "Limits"),
// checked before the model is allocated.
void set_classes(TrainConfig& config, const data::Dataset& data) {
  if (config.loss.kind != LossKind::softmax) return;
  const std::size_t k = data.labels.raw.size();
  if (k > limits::classes)
    fail("labels", fmt::format("{} distinct labels in {}", k, data.label_file()),
         fmt::format("at most {} classes for the softmax loss (docs/data.md \"Limits\")", limits::classes));
  config.loss.classes = k;
}

}  // namespace

data::LabelKind map_labels_for(data::Dataset& data, TrainConfig& config,
                               const std::optional<std::string>& positive) {
  const data::LabelKind kind = label_kind(config.loss.kind);
  data::map_labels(data, kind, positive);
  set_classes(config, data);
  return kind;
}

namespace {

// prepare_records on `data`, which is the whole training set (world == nullptr) or the part
// of it that starts at record `first` of the whole.
// The ranges' text: "[min, max]" of the first few features.
std::string listed_ranges(const std::vector<data::FeatureRange>& ranges) {
  std::string out;
  for (std::size_t j = 0; j < ranges.size() && j < 4; ++j)
    out += fmt::format("{}[{}, {}]", j ? ", " : "", show(ranges[j].min), show(ranges[j].max));
  return ranges.size() > 4 ? out + ", ..." : out;
}

Preparation prepare(data::Dataset& data, const TrainConfig& config, const PublicFeatures& features,
                    const data::Collectives* world, std::size_t first) {
  Preparation p;
  p.record_norm = config.record_norm;
  if (!features.scale.empty() && !features.ranges.empty())
    fail(opt("feature_ranges"), "(given)", fmt::format("absent when {} is given (both state the public "
                                                       "constants of the features)", error_field("feature_scale")));
  if (!features.scale.empty()) {
    // Public constants (e.g. 1/255 for pixels, or documented feature maxima): record-local.
    const auto& feature_scale = features.scale;
    if (feature_scale.size() != 1 && feature_scale.size() != data.d)
      fail(opt("feature_scale"), fmt::format("{} values", feature_scale.size()),
           fmt::format("one value, or one per feature (d = {})", data.d));
    for (std::size_t j = 0; j < feature_scale.size(); ++j)
      if (!std::isfinite(feature_scale[j]))
        fail(opt("feature_scale"), feature_scale[j],
             feature_scale.size() == 1 ? "a finite number"
                                       : fmt::format("finite numbers (value {} of {} is not)", j + 1,
                                                     feature_scale.size()));
    p.feature_scale =
        feature_scale.size() == 1 ? std::vector<double>(data.d, feature_scale[0]) : feature_scale;
    p.description = data::scale_features(data, p.feature_scale).description + "; ";
  }
  if (!features.ranges.empty()) {
    // Documented ranges onto [-1, 1]: a public centre and scale per feature, record-local.
    // Centring matters for linear models trained with noise: features that are all positive
    // put every record in a narrow cone, whose common direction the bias must cancel before
    // the noisy steps can separate the classes.
    const auto& ranges = features.ranges;
    if (ranges.size() != 1 && ranges.size() != data.d)
      fail(opt("feature_ranges"), fmt::format("{} ranges", ranges.size()),
           fmt::format("one range, or one per feature (d = {})", data.d));
    for (std::size_t j = 0; j < data.d; ++j) {
      const data::FeatureRange& r = ranges[ranges.size() == 1 ? 0 : j];
      // The width and its inverse finite: a subnormal width (0 1e-320) would scale by inf.
      if (!(r.min < r.max) || !std::isfinite(r.max - r.min) || !std::isfinite(2 / (r.max - r.min)))
        fail(opt("feature_ranges"), fmt::format("[{}, {}] (feature {})", show(r.min), show(r.max), j + 1),
             "finite ranges with min < max and 2 / (max - min) finite");
      p.feature_center.push_back(r.min / 2 + r.max / 2);
      p.feature_scale.push_back(2 / (r.max - r.min));
    }
    data::center_features(data, p.feature_center);
    data::scale_features(data, p.feature_scale);
    p.description = fmt::format(
        "feature j mapped from its stated public range [min_j, max_j] = [{}] onto [-1, 1] (x_j <- (x_j - "
        "(min_j + max_j)/2) * 2/(max_j - min_j)); the constants do not depend on the data, so it does not leak "
        "privacy; ",
        listed_ranges(ranges));
  }
  // Before the rows are scaled: how much of each record's squared norm sits in its two
  // largest features. Above 95% on average (raw breast-cancer rows: 97%, the area features, in
  // the thousands, against others below 1) the model effectively sees two features.
  if (data.d >= 8 && (data.n > 0 || world)) {
    double share_sum = 0.0;
    std::vector<double> x(data.d);
    for (std::size_t i = 0; i < data.n; ++i) {
      data.effective_row(i, x.data());
      double total = 0.0, a = 0.0, b = 0.0;  // a >= b: the two largest squares
      for (std::size_t j = 0; j < data.d; ++j) {
        const double v = x[j] * x[j];
        total += v;
        if (v > a) { b = a; a = v; } else if (v > b) { b = v; }
      }
      share_sum += total > 0 ? (a + b) / total : 0.0;
    }
    double records = static_cast<double>(data.n);
    if (world) {  // the sums of every part
      std::vector<double> sums{share_sum, records};
      world->sum(sums);
      share_sum = sums[0];
      records = sums[1];
    }
    const double share = share_sum / records;
    if (share >= 0.95)
      p.warning = fmt::format(
          "for the data owner, not released: on average {:.2f}% of each record's squared norm is "
          "in its 2 largest features, so scaling records to norm R = {} leaves the other {} "
          "features near 0. Pass public per-feature constants (e.g. from the dataset's "
          "documentation) with {} to make the features comparable.",
          100.0 * share, show(config.record_norm), data.d - 2, error_field("feature_scale"));
  }
  p.description += data::scale_rows_to_norm(data, config.record_norm).description;
  // The squared loss's constants (L, beta) assume |y| <= Y; a larger label would make the
  // stated Lipschitz constant, hence the privacy report, wrong.
  if (config.loss.kind == LossKind::squared) {
    std::size_t bad = data.n;  // the first record beyond the bound
    for (std::size_t i = 0; i < data.n && bad == data.n; ++i)
      if (!(std::abs(data.y[i]) <= config.loss.label_bound)) bad = i;
    if (world) {
      // Only the process holding the first such record of the whole set reports it.
      const auto firsts = world->allgather(bad < data.n ? first + bad : ~std::uint64_t{0});
      const auto earliest = *std::min_element(firsts.begin(), firsts.end());
      if (bad < data.n && first + bad != earliest) bad = data.n;
    }
    if (bad < data.n)
      fail(opt("label_bound"), config.loss.label_bound,
           fmt::format(">= every |label| (record {} of the training set has {})", first + bad + 1,
                       show(data.y[bad])));
  }
  return p;
}

}  // namespace

Preparation prepare_records(data::Dataset& data, const TrainConfig& config, const PublicFeatures& features) {
  return prepare(data, config, features, nullptr, 0);
}

Preparation prepare_records(data::Dataset& data, const TrainConfig& config,
                            const std::vector<double>& feature_scale) {
  return prepare(data, config, PublicFeatures{feature_scale, {}}, nullptr, 0);
}

Preparation prepare_records(data::Part& part, const TrainConfig& config, const PublicFeatures& features,
                            const data::Collectives& world) {
  return prepare(part.data, config, features, &world, part.first());
}

data::LabelKind map_labels_for(data::Part& part, TrainConfig& config,
                               const std::optional<std::string>& positive,
                               const data::Collectives& world) {
  const data::LabelKind kind = label_kind(config.loss.kind);
  std::vector<std::string> universe;
  if (kind != data::LabelKind::real) universe = data::gather_labels(part.data, world);
  data::map_labels(part.data, kind, positive, universe);
  set_classes(config, part.data);
  return kind;
}

Evaluation evaluate(const LinearModel& model, const data::Part& part, const data::Collectives& world) {
  const EvaluationSums local = evaluation_sums(model, part.data);
  std::vector<double> sums{local.loss, local.correct, local.records};
  world.sum(sums);
  return evaluation_of(model, {sums[0], sums[1], sums[2]});
}

Preparation prepare(data::Dataset& data, TrainConfig& config,
                    const std::optional<std::string>& positive,
                    const std::vector<double>& feature_scale) {
  // The plan's record norm, as the training request prepares its records (train/request.hpp).
  if (const auto R = planned_record_norm(config)) config.record_norm = *R;
  map_labels_for(data, config, positive);
  return prepare_records(data, config, feature_scale);
}

void prepare_like(data::Dataset& other, const Preparation& p) {
  if (!p.feature_center.empty()) data::center_features(other, p.feature_center);
  if (!p.feature_scale.empty()) data::scale_features(other, p.feature_scale);
  data::scale_rows_to_norm(other, p.record_norm);
}

}  // namespace hsdp::train
