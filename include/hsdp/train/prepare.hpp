// Preparing records for the trainer, one way for every front end (`hsdp train`, `hsdp audit
// mia`, `hsdp predict`, hsdp.train, hsdp.audit_mia): labels mapped as the loss reads them,
// public feature constants applied, rows scaled to the record norm (record-local, so no
// privacy is spent), and the squared loss's label bound checked.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hsdp/data/dataset.hpp"
#include "hsdp/data/readers.hpp"
#include "hsdp/data/shard.hpp"
#include "hsdp/train/trainer.hpp"

namespace hsdp::train {

/// The public per-feature constants a request states (never computed from the records):
/// multipliers (one value for every feature, or one per feature), or ranges [min_j, max_j]
/// (one for every feature, or one per feature), each mapped onto [-1, 1] by
/// x_j <- (x_j - (min_j + max_j) / 2) * 2 / (max_j - min_j). At most one of the two.
struct PublicFeatures {
  std::vector<double> scale;
  std::vector<data::FeatureRange> ranges;
  bool empty() const { return scale.empty() && ranges.empty(); }
};

/// What preparation did: the per-feature centre and scale applied (x_j <- (x_j - center_j)
/// * scale_j; empty: none), the record norm, and the text the front ends print ("features
/// multiplied by ...; every record scaled to L2 norm <= R = 1 ...").
struct Preparation {
  std::vector<double> feature_center;
  std::vector<double> feature_scale;
  double record_norm = 1.0;
  std::string description;
  /// For the data owner only (print it; never write it into a released model): set when
  /// the records' norms are dominated by a few features, so scaling each record to norm R
  /// would leave the others near 0 -- a hint to pass public per-feature constants
  /// (feature_scale). Computed from the data, hence not part of any released output.
  std::string warning;
};

/// Maps the labels of `data` as config's loss reads them (binary losses: exactly two values,
/// `positive` -> +1, else the larger; softmax: class ids, and config.loss.classes is set;
/// squared: real values). Returns the kind used.
data::LabelKind map_labels_for(data::Dataset& data, TrainConfig& config,
                               const std::optional<std::string>& positive);

/// The record-local part: applies the public feature constants (ranges: float64 storage
/// only), scales every row to ||x|| <= config.record_norm, and checks |y| <=
/// config.loss.label_bound for the squared loss. Throws InvalidArgument naming feature_scale,
/// feature_ranges or label_bound.
Preparation prepare_records(data::Dataset& data, const TrainConfig& config, const PublicFeatures& features);
/// The same with multipliers only.
Preparation prepare_records(data::Dataset& data, const TrainConfig& config,
                            const std::vector<double>& feature_scale);

/// Both: map_labels_for, then prepare_records, at the plan's record norm when one is
/// planned (train/planner.hpp planned_record_norm), as the training request prepares them.
Preparation prepare(data::Dataset& data, TrainConfig& config,
                    const std::optional<std::string>& positive,
                    const std::vector<double>& feature_scale);

/// The same for this process's part of a training set read by several processes
/// (data/shard.hpp, docs/distributed.md): the mapping of the whole set (its labels gathered
/// from every part), the same checks; the record-norm warning is computed from the sum over
/// the parts, and a label beyond the squared loss's bound is named by its index in the whole
/// training set, by the process that holds the first such record. Collectives: every
/// process calls these in the same order.
data::LabelKind map_labels_for(data::Part& part, TrainConfig& config,
                               const std::optional<std::string>& positive,
                               const data::Collectives& world);
Preparation prepare_records(data::Part& part, const TrainConfig& config,
                            const PublicFeatures& features, const data::Collectives& world);

/// The evaluation of a model on every part: the loss and correct counts summed over the
/// processes (one sum), the same result on every process.
Evaluation evaluate(const LinearModel& model, const data::Part& part, const data::Collectives& world);

/// Other records (a test set, records to predict) prepared as `p` prepared the training
/// records: the same feature centre, scale and record norm (labels are mapped by the caller
/// with the training set's mapping, apply_label_mapping).
void prepare_like(data::Dataset& other, const Preparation& p);

}  // namespace hsdp::train
