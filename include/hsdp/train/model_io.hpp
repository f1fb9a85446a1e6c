// The model file written by `hsdp train` and read by `hsdp predict` (docs/training.md).
//
// {"format": "hsdp-model", "version": 1,
//  "model": {"loss", "features", "bias", "outputs", "weights": [[...] per output],
//            "intercept": [... per output], "feature_center", "feature_scale", "record_norm", "l2", "huber_smoothing",
//            "label_bound", "classes", "labels": {"kind", "raw": [...], "mapped": [...]}},
//  "configuration": {...}, "train_accuracy", "test_accuracy", "train_loss", "test_loss",
//  "report": <hsdp account --json>, "randomness", "account_command"}
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "hsdp/data/dataset.hpp"
#include "hsdp/train/model.hpp"

namespace hsdp::train {

/// What predict needs to score new records exactly as the training records were seen.
struct ModelFile {
  LinearModel model;
  /// Public per-feature constants the features were centred on first, x_j - center_j
  /// (empty: none).
  std::vector<double> feature_center;
  /// Public per-feature constants the features were then multiplied by (empty: none).
  std::vector<double> feature_scale;
  double record_norm = 1.0;        ///< rows are scaled to ||x|| <= record_norm before scoring
  std::string label_kind;          ///< "plus-minus-one" | "classes" | "real"
  data::LabelMapping labels;       ///< raw label text -> the number the model uses
};

/// The "model" object of the file.
nlohmann::json to_json(const ModelFile& file);
/// Parses the "model" object of a file's document after checking the document against the
/// schema of its version (this hsdp reads version 1; any other is refused): every field's
/// type and range, the shape of the weights, the label mapping the loss reads, and the
/// limits (docs/data.md "Limits") before anything is allocated. Throws InvalidArgument
/// naming "<name>: model.<field>" and the value found.
ModelFile model_from_json(const nlohmann::json& document, const std::string& name);

/// A model output in the training labels' own terms: the raw label (as written in the
/// training data: "M", "0", "+1") whose mapped value is `output`, or for kind "real" the
/// score in shortest round-trip form. The one mapped -> raw translation of every front end
/// (`hsdp predict --output`, Python's predict). Throws std::logic_error for an output that is
/// no mapped value of a classification model (LinearModel::predict never gives one).
std::string output_label(const ModelFile& model, double output);

/// Fills data.y from data.raw_labels with a stored mapping: kind "real" parses each label
/// as a number; otherwise each raw label must be one of mapping.raw (numeric labels also
/// match by value, "1" = "1.0"). Throws InvalidArgument naming the record and the label
/// (records numbered from first + 1: `first` is the index of data's first record in a data
/// set read in parts).
void apply_label_mapping(data::Dataset& data, std::string_view kind, const data::LabelMapping& mapping,
                         std::size_t first = 0);

/// Reads a model file; throws InvalidArgument naming model_file for a missing, unreadable,
/// malformed file, a directory, or a file beyond limits::model_file_bytes.
nlohmann::json read_json_file(const std::string& path);
/// Writes `document` to `path` with write_file_atomically (field "output"): a failure never
/// leaves a half-written file. Throws InvalidArgument when it cannot.
void write_json_atomically(const std::string& path, const nlohmann::json& document);

}  // namespace hsdp::train
