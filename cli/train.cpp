// `hsdp train`: trains a linear model with one of the papers' noisy iterations, attaches
// the privacy report of the run it performed, writes the model as JSON (docs/training.md).
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "field_names.hpp"
#include "train_flags.hpp"
#include "unsigned_flags.hpp"
#include "hsdp/accountant.hpp"
#include "hsdp/data/readers.hpp"
#include "hsdp/data/users.hpp"
#include "hsdp/data/shard.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/train/distributed.hpp"
#include "hsdp/train/model_io.hpp"
#include "hsdp/train/prepare.hpp"
#include "hsdp/train/trainer.hpp"

namespace hsdp::cli {

namespace {


struct Options : TrainFlags {
  std::string data, format = "csv", feature_storage = "auto";
  std::optional<std::string> labels_file, test_data, test_labels_file, positive, output, users;
  std::optional<std::size_t> label_column;
  std::vector<std::string> classes;
  std::vector<double> feature_scale;
  double test_fraction = 0.2;
  std::uint64_t split_seed = 1;
  std::optional<double> epsilon, delta;
  bool no_noise = false, json = false;
  std::optional<std::uint64_t> seed;
};

// Progress on stderr, only when stderr is a terminal (nothing when piped or redirected).
std::function<void(std::int64_t, std::int64_t)> progress_bar() {
  if (!::isatty(STDERR_FILENO)) return {};
  return [](std::int64_t t, std::int64_t T) {
    constexpr int width = 40;
    const int done = static_cast<int>(width * t / T);
    std::fprintf(stderr, "\r[%.*s%*s] %3d%% step %lld/%lld", done,
                 "========================================", width - done, "",
                 static_cast<int>(100 * t / T), static_cast<long long>(t), static_cast<long long>(T));
    if (t == T) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  };
}

// The training and test records of this process, prepared: all of them in one process; under
// mpirun with K > 1 processes only this process's part of each file, read, filtered, split and
// prepared part by part with the same result as one process (docs/distributed.md).
struct TrainingData {
  data::Part train, test;
  data::LabelKind kind = data::LabelKind::real;
  train::Preparation prep;
  std::string split_text;
};

data::Part whole(data::Dataset d) {
  data::Part p;
  p.offsets = {0, d.n};
  p.data = std::move(d);
  return p;
}

TrainingData read_training_data(const Options& o, train::TrainConfig& c,
                                const train::distributed::World& world,
                                std::optional<data::FeatureStorage> storage) {
  TrainingData td;
  auto source = [&](const std::string& path, const std::optional<std::string>& labels, std::string_view field) {
    return data::DataSource{.path = path, .format = o.format, .labels_path = labels, .labels_field = std::string(field),
                            .label_column = o.label_column, .storage = storage,
                            .path_field = field == "labels" ? "data" : "test_data"};
  };
  // Federated under mpirun: every process reads the whole file and the clients keep their
  // users' records (docs/distributed.md, "Federated training").
  if (world.size == 1 || c.federation) {
    data::Dataset all = data::read(source(o.data, o.labels_file, "labels"));
    if (o.users) data::read_users(all, *o.users);  // follow the records through classes and split
    if (!o.classes.empty()) all = data::select_classes(all, o.classes);
    td.kind = train::map_labels_for(all, c, o.positive);
    data::Dataset train_set, test_set;
    if (o.test_data) {
      train_set = std::move(all);
      test_set = data::read(source(*o.test_data, o.test_labels_file, "test_labels"));
      if (!o.classes.empty()) test_set = data::select_classes(test_set, o.classes);
      train::apply_label_mapping(test_set, data::to_string(td.kind), train_set.labels);
    } else {
      std::tie(train_set, test_set) = data::train_test_split(all, o.test_fraction, o.split_seed);
    }
    td.train = whole(std::move(train_set));
    td.test = whole(std::move(test_set));
  } else {
    if (o.users)  // users are federated's (the one-process run says the same in train())
      fail("--users", "(given)", "given only with --algorithm federated (user-level training is federated Alg. 1's)");
    const data::Collectives comm = train::distributed::collectives();
    data::Part all = data::read_part(source(o.data, o.labels_file, "labels"), comm);
    if (!o.classes.empty()) all = data::select_classes(all, o.classes, comm);
    td.kind = train::map_labels_for(all, c, o.positive, comm);
    if (o.test_data) {
      td.train = std::move(all);
      td.test = data::read_part(source(*o.test_data, o.test_labels_file, "test_labels"), comm);
      if (!o.classes.empty()) td.test = data::select_classes(td.test, o.classes, comm);
      train::apply_label_mapping(td.test.data, data::to_string(td.kind), td.train.data.labels, td.test.first());
    } else {
      std::tie(td.train, td.test) = data::train_test_split(std::move(all), o.test_fraction, o.split_seed);
    }
  }
  if (o.test_data) {
    if (td.test.data.d != td.train.data.d)
      fail("--test-data", *o.test_data,
           fmt::format("a file with d = {} features like --data (it has {})", td.train.data.d, td.test.data.d));
    td.split_text = fmt::format("{} train records, {} test records ({})", td.train.n(), td.test.n(), *o.test_data);
  } else {
    td.split_text = fmt::format("{} train / {} test records (split fraction {}, split seed {})", td.train.n(),
                                td.test.n(), show(o.test_fraction), o.split_seed);
  }
  td.prep = world.size == 1 || c.federation
                ? train::prepare_records(td.train.data, c, o.feature_scale)
                : train::prepare_records(td.train, c, o.feature_scale, train::distributed::collectives());
  train::prepare_like(td.test.data, td.prep);
  return td;
}

int run_train(const Options& o) {
  // ---- configuration (validated before any data is read)
  train::TrainConfig c = train_config(o);
  c.no_noise = o.no_noise;
  c.target_epsilon = o.epsilon;
  if (o.delta) c.delta = require_open("--delta", *o.delta, 0.0, 1.0);
  if (!o.sigma && !o.noise_std && !o.epsilon && !o.no_noise)
    fail("--epsilon", "(missing)", "a target --epsilon E --delta D, or --sigma, --noise-std or --no-noise");
  c.seed = o.seed;
  // Under mpirun with K > 1 processes: data-parallel (docs/distributed.md); only process 0
  // prints and writes files.
  const auto& world = train::distributed::world();
  const bool lead = world.rank == 0;
  // federated: rank 0 the server, the others clients (docs/distributed.md "Federated training").
  if (world.size > 1 && c.algorithm == train::Algorithm::federated)
    c.federation = train::distributed::federation();
  else if (world.size > 1)
    c.data_parallel = train::distributed::data_parallel();
  c.progress = o.json || !lead ? nullptr : progress_bar();
  require_open("--test-fraction", o.test_fraction, 0.0, 1.0);

  const auto storage = data::parse_feature_storage(o.feature_storage, opt("feature_storage"));

  // ---- data
  TrainingData td = read_training_data(o, c, world, storage);
  const data::Dataset& train_set = td.train.data;
  const std::string& split_text = td.split_text;
  const train::Preparation& prep = td.prep;
  const data::LabelKind kind = td.kind;
  const std::string& prep_text = prep.description;
  if (!prep.warning.empty() && lead) std::cerr << "warning: " << prep.warning << "\n";

  // ---- train
  if (c.data_parallel) c.data_parallel->offsets = td.train.offsets;
  const train::TrainResult r = train::train(train_set, c);
  train::Evaluation tr, te;
  if (world.size > 1 && !c.federation) {  // sums over the processes' records
    const data::Collectives comm = train::distributed::collectives();
    tr = train::evaluate(r.model, td.train, comm);
    te = train::evaluate(r.model, td.test, comm);
  }
  if (!lead) return 0;
  if (world.size == 1 || c.federation) {
    tr = r.train_evaluation ? *r.train_evaluation : train::evaluate(r.model, train_set);
    te = train::evaluate(r.model, td.test.data);
  }

  // ---- the document (model file and --json)
  nlohmann::json doc;
  doc["format"] = "hsdp-model";
  doc["version"] = 1;
  train::ModelFile mf{r.model, prep.feature_scale, c.record_norm, std::string(data::to_string(kind)), train_set.labels};
  doc["model"] = train::to_json(mf);
  nlohmann::json cfg;
  cfg["data"] = o.data;
  cfg["format"] = o.format;
  cfg["feature_storage"] = data::to_string(train_set.storage);
  cfg["algorithm"] = train::to_string(c.algorithm);
  cfg["convention"] = to_string(r.convention);
  if (r.sigma) cfg["sigma"] = *r.sigma;
  const train::TrainConfig& used = r.config;  // with the plan's choices
  cfg["constraint"] = {{"kind", train::to_string(used.constraint.kind)}, {"radius", used.constraint.radius}};
  cfg["constants"] = {{"record_norm_with_bias", r.constants.record_norm},
                      {"derivation", r.constants.derivation}};
  if (r.constants.lipschitz_data) cfg["constants"]["lipschitz_data"] = *r.constants.lipschitz_data;
  cfg["constants"]["smoothness"] = r.constants.smoothness();
  cfg["constants"]["strong_convexity"] = r.constants.l2;
  if (c.target_epsilon) cfg["target"] = {{"epsilon", *c.target_epsilon}, {"delta", c.delta}};
  if (!r.plan_summary.empty()) {
    cfg["plan"] = {{"summary", r.plan_summary}, {"chosen", r.plan_chosen}};
    for (const auto& [sampling, std] : r.plan_candidates) cfg["plan"]["candidates"][sampling] = std;
    cfg["plan"]["sampling"] = to_string(r.run.sampling);
    cfg["plan"]["batch_size"] = r.run.batch_size;
    cfg["plan"]["steps"] = r.run.steps;
    cfg["plan"]["eta"] = r.run.eta.at(1);
  }
  if (r.user_level) {
    const train::UserLevel& u = *r.user_level;
    cfg["adjacency"] = {{"unit", "user"}, {"users", u.users}, {"records", u.records}, {"description", u.description}};
    if (u.message_bound) cfg["adjacency"]["message_norm_bound"] = *u.message_bound;
    if (u.sensitivity) cfg["adjacency"]["sensitivity"] = *u.sensitivity;
  }
  cfg["released_step"] = r.released_step;
  if (!r.batch_order.empty()) cfg["batch_order"] = r.batch_order;
  cfg["preprocessing"] = prep_text;
  cfg["split"] = split_text;
  cfg["labels"] = train_set.labels.describe();
  cfg["notes"] = r.notes;
  doc["configuration"] = cfg;
  if (tr.accuracy) {
    doc["train_accuracy"] = *tr.accuracy;
    doc["test_accuracy"] = *te.accuracy;
  }
  doc["train_loss"] = tr.loss;
  doc["test_loss"] = te.loss;
  doc["randomness"] = r.seeded ? "seeded: for experiments" : "operating-system entropy";
  if (r.report) {
    doc["report"] = to_json(*r.report);
    doc["account_command"] = command_line("account", r.account_request) + " --json";
  } else {
    doc["report"] = nullptr;
  }
  if (o.output) train::write_json_atomically(*o.output, doc);

  if (o.json) {
    std::cout << doc.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("data: {} ({} features); labels {}\n", o.data, train_set.d, train_set.labels.describe());
  std::cout << fmt::format("split: {}\n", split_text);
  std::cout << fmt::format("preprocessing: {}\n", prep_text);
  std::cout << fmt::format("model: {} ({} parameters{}), constraint {} r = {} (diameter {})\n", train::to_string(c.loss.kind),
                           r.model.parameters(), c.bias ? ", bias" : "", train::to_string(used.constraint.kind),
                           show(used.constraint.radius), show(r.run.diameter));
  std::cout << fmt::format("constants: {}\n", r.constants.derivation);
  std::cout << fmt::format("algorithm: {} ({} convention{}), released iterate {} of {}\n", train::to_string(c.algorithm),
                           to_string(r.convention), r.sigma ? fmt::format(", sigma = {}", show(*r.sigma)) : "",
                           r.released_step, r.run.steps);
  if (r.user_level) std::cout << fmt::format("adjacency: {}\n", r.user_level->description);
  if (!r.plan_summary.empty()) std::cout << fmt::format("plan: {}\n", r.plan_summary);
  if (!r.batch_order.empty()) std::cout << fmt::format("batches: {}\n", r.batch_order);
  std::cout << fmt::format("randomness: {}\n", doc["randomness"].get<std::string>());
  for (const auto& note : r.notes) std::cout << "note: " << note << "\n";
  if (tr.accuracy)
    std::cout << fmt::format("train accuracy {:.4f}  test accuracy {:.4f}  (train loss {:.4f}, test loss {:.4f})\n",
                             *tr.accuracy, *te.accuracy, tr.loss, te.loss);
  else
    std::cout << fmt::format("train loss {:.6g}  test loss {:.6g}\n", tr.loss, te.loss);
  if (r.report) {
    std::cout << "\nprivacy report of the run performed (noise: " << doc["randomness"].get<std::string>()
              << "):\n" << to_table(*r.report);
    std::cout << "same report: " << command_line("account", r.account_request) << " --json\n";
  } else {
    std::cout << "privacy: none (no noise: not private)\n";
  }
  if (o.output) std::cout << fmt::format("model written to {}\n", *o.output);
  return 0;
}

std::function<int()> add_train(CLI::App& app) {
  auto* sub = app.add_subcommand("train", "Train a linear model privately; the model carries its privacy report");
  auto o = std::make_shared<Options>();
  sub->add_option("--data", o->data, "Training data file (plain or gzipped)")->required();
  sub->add_option("--format", o->format, "Data format: csv|libsvm|idx")->capture_default_str();
  sub->add_option("--labels", o->labels_file, "IDX labels file (--format idx)");
  add_unsigned_flag(*sub, "label_column", o->label_column, "CSV: 0-based label column (default: last)");
  sub->add_option("--positive", o->positive, "Binary losses: the raw label that becomes +1 (default: the larger)");
  sub->add_option("--classes", o->classes, "Keep only records with these raw labels (e.g. --classes 0 6)");
  sub->add_option("--users", o->users,
                  "One user id per record of --data, in record order (federated: user-level training)");
  sub->add_option("--test-data", o->test_data, "Separate test file (default: split --data)");
  sub->add_option("--test-labels", o->test_labels_file, "IDX labels file of --test-data");
  sub->add_option("--test-fraction", o->test_fraction, "Fraction held out for testing when splitting")->capture_default_str();
  add_unsigned_flag(*sub, "split_seed", o->split_seed, "Seed of the train/test split")->default_str("1");
  add_train_flags(*sub, *o);
  sub->add_option("--feature-scale", o->feature_scale,
                  "Public constants to multiply the features by first: one value, or one per feature "
                  "(record-local; never computed from the data)")->delimiter(',');
  sub->add_option("--feature-storage", o->feature_storage,
                  "How features are held: auto|float64|float32|uint8 (auto: uint8 for IDX bytes, "
                  "float64 otherwise; arithmetic is float64 either way)")->capture_default_str();
  sub->add_option("--epsilon", o->epsilon, "Target epsilon (with --delta): calibrates the smallest sigma");
  sub->add_option("--delta", o->delta, "Target delta, or the delta of the report (default 1e-5)");
  sub->add_flag("--no-noise", o->no_noise, "Train without noise (non-private baseline, no report)");
  add_unsigned_flag(*sub, "seed", o->seed, "Seed the noise (reproducible; marked 'seeded: for experiments')");
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
