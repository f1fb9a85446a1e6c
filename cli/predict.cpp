// `hsdp predict`: scores a model written by `hsdp train` on a data file, seeing each
// record exactly as training did (the same record-norm scaling and label mapping).
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "unsigned_flags.hpp"
#include "hsdp/data/readers.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/output_files.hpp"
#include "hsdp/train/model_io.hpp"
#include "hsdp/train/request.hpp"

namespace hsdp::cli {

namespace {

struct Options {
  std::string model_file, data, format = "csv", feature_storage = "auto";
  std::optional<std::string> labels_file, output;
  std::optional<std::size_t> label_column;
  std::vector<std::string> classes;
  bool json = false;
};

int run_predict(const Options& o) {
  const nlohmann::json doc = train::read_json_file(o.model_file);
  const train::ModelFile mf = train::model_from_json(doc, o.model_file);
  train::DataSpec spec;
  spec.data = o.data;
  spec.format = o.format;
  spec.labels = o.labels_file;
  spec.label_column = o.label_column;
  spec.classes = o.classes;
  spec.feature_storage = o.feature_storage;
  // The records as training saw them (the model's label mapping, feature constants, record norm).
  const data::Dataset d = train::records_for(mf, std::move(spec));
  const train::Evaluation e = train::evaluate(mf.model, d);

  if (o.output) {
    std::string text = "record,prediction,label\n";
    std::vector<double> x(d.d);
    for (std::size_t i = 0; i < d.n; ++i) {
      d.effective_row(i, x.data());
      const double p = mf.model.predict(x.data());
      std::string shown = fmt::format("{}", p);
      // Show classification outputs as the raw label text they stand for.
      for (std::size_t k = 0; k < mf.labels.mapped.size(); ++k)
        if (mf.label_kind != "real" && mf.labels.mapped[k] == p) shown = mf.labels.raw[k];
      text += fmt::format("{},{},{}\n", i + 1, shown, d.raw_labels[i]);
    }
    write_file_atomically(*o.output, text, "output");
  }
  nlohmann::json out;
  out["model_file"] = o.model_file;
  out["data"] = o.data;
  out["records"] = d.n;
  if (e.accuracy) out["accuracy"] = *e.accuracy;
  out["loss"] = e.loss;
  if (o.json) {
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << fmt::format("{} records of {}\n", d.n, o.data);
    if (e.accuracy) std::cout << fmt::format("accuracy {:.4f}\n", *e.accuracy);
    std::cout << fmt::format("loss {:.6g}\n", e.loss);
    if (o.output) std::cout << fmt::format("predictions written to {}\n", *o.output);
  }
  return 0;
}

std::function<int()> add_predict(CLI::App& app) {
  auto* sub = app.add_subcommand("predict", "Score a model written by hsdp train on a data file");
  auto o = std::make_shared<Options>();
  sub->add_option("--model-file", o->model_file, "Model JSON written by hsdp train --output")->required();
  sub->add_option("--data", o->data, "Data file")->required();
  sub->add_option("--format", o->format, "csv|libsvm|idx")->capture_default_str();
  sub->add_option("--feature-storage", o->feature_storage,
                  "How features are held: auto|float64|float32|uint8 (auto: uint8 for IDX bytes, "
                  "float64 otherwise)")->capture_default_str();
  sub->add_option("--labels", o->labels_file, "IDX labels file (--format idx)");
  add_unsigned_flag(*sub, "label_column", o->label_column, "CSV: 0-based label column (default: last)");
  sub->add_option("--classes", o->classes, "Keep only records with these raw labels (as in training)");
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
