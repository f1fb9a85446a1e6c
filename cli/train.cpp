// `hsdp train`: trains a linear model with one of the papers' noisy iterations, attaches
// the privacy report of the run it performed, writes the model as JSON (docs/training.md).
// The flags become the library's training request (train/request.hpp); this file parses
// and prints, nothing else.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "field_names.hpp"
#include "outputs.hpp"
#include "progress.hpp"
#include "train_flags.hpp"
#include "unsigned_flags.hpp"
#include "hsdp/train/distributed.hpp"
#include "hsdp/train/model_io.hpp"
#include "hsdp/train/request.hpp"

namespace hsdp::cli {

namespace {

struct Options {
  train::TrainRequest request;
  std::optional<std::string> output;
  bool json = false;
};

int run_train(Options& o) {
  // Under mpirun with K > 1 processes: data-parallel or federated (docs/distributed.md); only
  // process 0 prints and writes files.
  train::Watch watch;
  watch.warning = [](const std::string& warning) { std::cerr << "warning: " << warning << "\n"; };
  if (!o.json) watch.progress = progress_bar("step");
  if (o.output) refuse_outputs_over({{*o.output, "output"}}, o.request.data.input_files());
  const train::TrainOutcome out =
      train::train_request(std::move(o.request), train::distributed::layout(), std::move(watch));
  if (!out.lead) return 0;
  const std::string account = command_line("account", out.result.account_request) + " --json";
  // The model file holds what may be released; --json shows the data owner the rest too
  // (train/provenance.hpp).
  if (o.output) train::write_json_atomically(*o.output, train::model_document(out, account));
  if (o.json)
    std::cout << train::to_json(out, account).dump(2) << "\n";
  else
    std::cout << train::to_text(out, account, o.output);
  return 0;
}

std::function<int()> add_train(CLI::App& app) {
  auto* sub = app.add_subcommand("train", "Train a linear model privately; the model carries its privacy report");
  auto o = std::make_shared<Options>();
  train::DataSpec& d = o->request.data;
  train::TrainRequest& r = o->request;
  sub->add_option("--data", d.data, "Training data file (plain or gzipped)")->required();
  sub->add_option("--format", d.format, "Data format: csv|libsvm|idx")->default_str("csv");
  sub->add_option("--labels", d.labels, "IDX labels file (--format idx)");
  add_unsigned_flag(*sub, "label_column", d.label_column, "CSV: 0-based label column (default: last)");
  sub->add_option("--positive", d.positive, "Binary losses: the raw label that becomes +1 (default: the larger)");
  sub->add_option("--classes", d.classes, "Keep only records with these raw labels (e.g. --classes 0 6)");
  sub->add_option("--users", d.users,
                  "One user id per record of --data, in record order (federated: user-level training)");
  sub->add_option("--test-data", d.test_data, "Separate test file (default: split --data)");
  sub->add_option("--test-labels", d.test_labels, "IDX labels file of --test-data");
  sub->add_option("--test-fraction", d.test_fraction, "Fraction held out for testing when splitting")->default_str("0.2");
  add_unsigned_flag(*sub, "split_seed", d.split_seed, "Seed of the train/test split")->default_str("1");
  add_train_flags(*sub, r.run);
  sub->add_option("--feature-scale", d.feature_scale,
                  "Public constants to multiply the features by first: one value, or one per feature "
                  "(record-local; never computed from the data)")->delimiter(',');
  sub->add_option("--feature-ranges", d.feature_ranges,
                  "File of public feature ranges, 'min max' per line (one line for every feature, or one per "
                  "feature; e.g. from the data set's documentation): each feature is mapped onto [-1, 1] first "
                  "(data/feature-ranges/ ships some; never computed from the data)");
  sub->add_option("--feature-storage", d.feature_storage,
                  "How features are held: auto|float64|float32|uint8 (auto: uint8 for IDX bytes, "
                  "float64 otherwise; arithmetic is float64 either way)")->capture_default_str();
  sub->add_option("--epsilon", r.epsilon, "Target epsilon (with --delta): calibrates the smallest sigma");
  sub->add_option("--delta", r.delta, "Target delta, or the delta of the report (default 1e-5)");
  sub->add_flag("--no-noise", r.no_noise, "Train without noise (non-private baseline, no report)");
  add_unsigned_flag(*sub, "seed", r.seed, "Seed the generator (reproducible; marked 'seeded: for experiments, not for release': a model trained with a known seed has noise anyone can regenerate)");
  sub->add_option("--output", o->output, "Write the model (JSON) to this file");
  sub->add_flag("--json", o->json, "Print the result as JSON");
  return [sub, o]() -> int {
    if (!sub->parsed()) return -1;
    return run_train(*o);
  };
}

const Register kTrain{"train", add_train};

}  // namespace
}  // namespace hsdp::cli
