// `hsdp predict`: scores a model written by `hsdp train` on a data file, seeing each
// record exactly as training did (the same record-norm scaling and label mapping).
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "outputs.hpp"
#include "unsigned_flags.hpp"
#include "hsdp/data/readers.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/output_files.hpp"
#include "hsdp/train/model_io.hpp"
#include "hsdp/train/request.hpp"

namespace hsdp::cli {

namespace {

struct Options {
  std::string model_file;
  train::DataSpec data;  ///< the records to score: data, format, labels, label column, classes, storage
  std::optional<std::string> output;
  bool json = false;
};

int run_predict(const Options& o) {
  // Without labels there is no accuracy or loss to print: the predictions are the result.
  if (o.data.no_labels && !o.output)
    fail(opt("output"), "(missing)", "a file for the predictions with --no-labels (there is nothing else to report)");
  if (o.output) {
    std::vector<FileUse> inputs = o.data.input_files();
    inputs.push_back({o.model_file, "model_file"});
    refuse_outputs_over({{*o.output, "output"}}, inputs);
  }
  const nlohmann::json doc = train::read_json_file(o.model_file);
  const train::ModelFile mf = train::model_from_json(doc, o.model_file);
  if (const auto warning = train::release_warning(doc, o.model_file)) std::cerr << *warning << "\n";
  train::DataSpec spec = o.data;
  // The records as training saw them (the model's label mapping, feature constants, record norm).
  const data::Dataset d = train::records_for(mf, std::move(spec));
  std::optional<train::Evaluation> e;
  if (!o.data.no_labels) e = train::evaluate(mf.model, d);

  // What is printed, composed before the predictions are written: nothing can fail after.
  std::string printed;
  if (o.json) {
    nlohmann::json out;
    out["model_file"] = json_file_name(o.model_file);  // a file name is bytes (docs/input.md)
    out["data"] = json_file_name(o.data.data);
    out["records"] = d.n;
    if (e && e->accuracy) out["accuracy"] = *e->accuracy;
    if (e) out["loss"] = e->loss;
    if (o.data.no_labels) out["labels"] = false;
    printed = out.dump(2) + "\n";
  } else {
    printed = fmt::format("{} records of {}{}\n", d.n, escape_controls(o.data.data), o.data.no_labels ? " (no labels)" : "");
    if (e && e->accuracy) printed += fmt::format("accuracy {:.4f}\n", *e->accuracy);
    if (e) printed += fmt::format("loss {:.6g}\n", e->loss);
    if (o.output) printed += fmt::format("predictions written to {}\n", escape_controls(*o.output));
  }
  if (o.output) {
    // Each output as the raw label it stands for (the training labels' own text), or the score.
    const std::vector<double> predictions = train::predict(mf.model, d);
    std::string text = o.data.no_labels ? "record,prediction\n" : "record,prediction,label\n";
    for (std::size_t i = 0; i < d.n; ++i) {
      text += fmt::format("{},{}", i + 1, train::output_label(mf, predictions[i]));
      text += o.data.no_labels ? "\n" : fmt::format(",{}\n", d.raw_labels[i]);
    }
    write_file_atomically(*o.output, text, "output");
  }
  std::cout << printed;
  return 0;
}

std::function<int()> add_predict(CLI::App& app) {
  auto* sub = app.add_subcommand("predict", "Score a model written by hsdp train on a data file");
  auto o = std::make_shared<Options>();
  sub->add_option("--model-file", o->model_file, "Model JSON written by hsdp train --output")->required();
  train::DataSpec& d = o->data;
  sub->add_option("--data", d.data, "Data file")->required();
  sub->add_option("--format", d.format, "csv|libsvm|idx")->default_str("csv");
  sub->add_option("--feature-storage", d.feature_storage,
                  "How features are held: auto|float64|float32|uint8 (auto: uint8 for IDX bytes, "
                  "float64 otherwise)")->capture_default_str();
  sub->add_option("--labels", d.labels, "IDX labels file (--format idx)");
  add_unsigned_flag(*sub, "label_column", d.label_column, "CSV: 0-based label column (default: last)");
  sub->add_option("--classes", d.classes, "Keep only records with these raw labels (as in training)");
  sub->add_flag("--no-labels", d.no_labels,
                "The data file has no labels: CSV without a label column, LIBSVM lines without a leading "
                "label, IDX images without --labels (only predictions, written to --output)");
  sub->add_option("--output", o->output, "Write per-record predictions (CSV) to this file");
  sub->add_flag("--json", o->json, "Print JSON");
  return [sub, o]() -> int {
    if (!sub->parsed()) return -1;
    return run_predict(*o);
  };
}

const Register kPredict{"predict", add_predict};

}  // namespace
}  // namespace hsdp::cli
