// Records from numpy arrays and trained models as Python sees them (hsdp.Model,
// hsdp.load_model; TrainResult.predict/evaluate/model/save): shared by model.cpp and
// train.cpp. A model is the library's ModelFile (train/model_io.hpp), so a model loaded from
// a file of `hsdp train --output` and the model of an hsdp.train result predict, evaluate and
// save through the same functions as `hsdp predict`.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "common.hpp"
#include "hsdp/data/dataset.hpp"
#include "hsdp/train/model_io.hpp"
#include "hsdp/train/trainer.hpp"

namespace hsdp::python {

using Array = py::array_t<double, py::array::forcecast>;

/// A Dataset from a 2-D float64 array X (any strides) and, unless y is null, its labels kept
/// as raw text (numbers in shortest round-trip form, text as given), so that the library maps
/// them as it maps a file's labels. Record i is row i of X (0-based; messages say "X[i, j]",
/// "y[i]"). y null: records without labels (to score).
data::Dataset dataset_from(const Array& X, const LabelsArg* y, const char* xname, const char* yname);

/// hsdp.Model: a model file's document (the "model" object re-written from the checked
/// ModelFile, every other field as read) and the model it holds.
struct PyModel {
  train::ModelFile file;
  nlohmann::json document;
};
/// The model of a model file's document (model_from_json: the version-1 schema check);
/// `name` names the document in messages.
PyModel model_of(nlohmann::json document, const std::string& name);

/// Predictions for the rows of X in the training labels' own values (train::output_label):
/// an int64 array when every training label is an integer ("0"/"1", "-1"/"+1"), float64
/// when every one is a number, else an array of str ("M"/"B"); the squared loss's scores
/// (float64).
py::array predict_labels(const train::ModelFile& model, const FeaturesArg& X);
/// {'loss', 'accuracy'} of the model on (X, y), y in the training labels' values.
py::dict evaluate_arrays(const train::ModelFile& model, const FeaturesArg& X, const LabelsArg& y);
py::dict evaluation(const train::Evaluation& e);

/// A model's weights: outputs x (d + bias), outputs x d without the intercept, and the
/// intercept of each output (None without bias).
py::array_t<double> theta_array(const train::LinearModel& m);
py::array_t<double> weights_array(const train::LinearModel& m);
py::object intercept_of(const train::LinearModel& m);

void bind_model(py::module_& m);

}  // namespace hsdp::python
