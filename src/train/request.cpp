// The training request (include/hsdp/train/request.hpp): from the stated data and run to the
// prepared records, the trained model, its report, and the document and text the front
// ends write (docs/architecture.md, "One training request").
#include "hsdp/train/request.hpp"

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "hsdp/data/users.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/train/planner.hpp"
#include "hsdp/train/provenance.hpp"

namespace hsdp::train {

namespace {

std::string joined(const std::vector<std::string>& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : ",") + v;
  return out;
}

// ---- when the resolved request does not read a field of its own or of its data
using Rule = ReadRule<ResolvedRequest>;
using Why = std::optional<std::string>;

Why in_memory(const ResolvedRequest& r) {
  if (!r.data.records) return std::nullopt;
  return std::string("the records are given in memory (X, y), not read from a file");
}
Why unless_idx_labels(const ResolvedRequest& r) {
  if (auto why = in_memory(r)) return why;
  if (r.data.format_name() == "idx") return std::nullopt;
  return fmt::format("only {} reads a labels file ({} labels are in the file)", error_field("format", "idx"),
                     error_field("format", r.data.format_name()));
}
Why unless_csv(const ResolvedRequest& r) {
  if (auto why = in_memory(r)) return why;
  if (r.data.format_name() == "csv") return std::nullopt;
  return fmt::format("only {} has columns", error_field("format", "csv"));
}
Why unless_test_idx(const ResolvedRequest& r) {
  if (!r.data.test_data) return fmt::format("it is the IDX labels file of {}, which is not given", error_field("test_data"));
  if (r.data.format_name() == "idx") return std::nullopt;
  return fmt::format("only {} reads a labels file", error_field("format", "idx"));
}
Why unless_split(const ResolvedRequest& r) {
  if (r.data.test_data)
    return fmt::format("{} holds the test records (nothing is split)", error_field("test_data", *r.data.test_data));
  return std::nullopt;
}
Why unless_split_seeded(const ResolvedRequest& r) {
  if (auto why = unless_split(r)) return why;
  if (r.data.records && !r.data.test_fraction)
    return fmt::format("records in memory are not split unless {} is given", error_field("test_fraction"));
  return std::nullopt;
}
Why unless_binary_labels(const ResolvedRequest& r) {
  const LossKind k = r.config.loss.kind;
  if (k == LossKind::logistic || k == LossKind::huber) return std::nullopt;
  return fmt::format("{} {}", error_field("model", to_string(k)),
                     k == LossKind::softmax ? "maps every class to an id (no label becomes +1)"
                                            : "reads real labels (no label becomes +1)");
}
Why unless_federated(const ResolvedRequest& r) {
  if (r.config.algorithm == Algorithm::federated) return std::nullopt;
  return fmt::format("user ids are read by {} only (user-level training is federated Alg. 1's)",
                     error_field("algorithm", "federated"));
}
Why unless_noise(const ResolvedRequest& r) {
  if (!r.config.no_noise) return std::nullopt;
  return fmt::format("{} trains without noise: there is no privacy report to give a delta", error_field("no_noise"));
}

const std::vector<Rule>& rules() {
  static const std::vector<Rule> table = {
      {"data"},
      {"format", in_memory},
      {"labels", unless_idx_labels},
      {"label_column", unless_csv},
      {"positive", unless_binary_labels},
      {"classes"},
      {"users", unless_federated},
      {"test_data"},
      {"test_labels", unless_test_idx},
      {"test_fraction", unless_split},
      {"split_seed", unless_split_seeded},
      {"feature_scale"},
      {"feature_ranges"},
      {"feature_storage"},
      {"epsilon"},
      {"delta", unless_noise},
      {"no_noise"},
      {"seed"},
  };
  return table;
}

// What scoring with a trained model reads of a data statement (records_for): the file and how
// to read it; the labels' mapping, the public feature constants and the record norm are the
// model's, and nothing is split.
Why unless_labelled(const ResolvedRequest& r) {
  if (!r.data.no_labels) return std::nullopt;
  return fmt::format("{} states that the records have no labels", error_field("no_labels"));
}
Why unless_labelled_csv(const ResolvedRequest& r) {
  if (auto why = unless_csv(r)) return why;
  return unless_labelled(r);
}
Why the_models_mapping(const ResolvedRequest&) {
  return std::string("the model's own label mapping decides which label is +1");
}
Why the_models_features(const ResolvedRequest&) {
  return std::string("the model's own feature constants prepare the records");
}
Why not_split(const ResolvedRequest&) { return std::string("scoring reads every record (nothing is split)"); }
Why not_users(const ResolvedRequest&) { return std::string("scoring reads records, not users"); }

const std::vector<Rule>& scoring_rules() {
  static const std::vector<Rule> table = {
      {"format", in_memory},          {"labels", unless_idx_labels},      {"label_column", unless_labelled_csv},
      {"positive", the_models_mapping}, {"classes", unless_labelled},     {"users", not_users},
      {"test_data", not_split},       {"test_labels", not_split},         {"test_fraction", not_split},
      {"split_seed", not_split},      {"feature_scale", the_models_features}, {"feature_ranges", the_models_features},
  };
  return table;
}

}  // namespace

std::span<const ReadRule<ResolvedRequest>> request_rules() { return rules(); }

FieldValues DataSpec::to_map() const {
  FieldValues out;
  if (!records) out.emplace_back("data", data);
  if (format) out.emplace_back("format", *format);
  if (labels) out.emplace_back("labels", *labels);
  if (label_column) out.emplace_back("label_column", std::to_string(*label_column));
  if (positive) out.emplace_back("positive", *positive);
  if (!classes.empty()) out.emplace_back("classes", joined(classes));
  if (users) out.emplace_back("users", *users);
  if (user_ids) out.emplace_back("users", fmt::format("{} ids", user_ids->size()));
  if (test_data) out.emplace_back("test_data", *test_data);
  if (test_labels) out.emplace_back("test_labels", *test_labels);
  if (test_fraction) out.emplace_back("test_fraction", show(*test_fraction));
  if (split_seed) out.emplace_back("split_seed", std::to_string(*split_seed));
  if (!feature_scale.empty()) {
    std::vector<std::string> v;
    for (const double x : feature_scale) v.push_back(show(x));
    out.emplace_back("feature_scale", joined(v));
  }
  if (feature_ranges) out.emplace_back("feature_ranges", *feature_ranges);
  if (no_labels) out.emplace_back("no_labels", "");
  return out;
}

std::vector<FileUse> DataSpec::input_files() const {
  std::vector<FileUse> out;
  if (!records && format_name() != "array") out.push_back({data, "data"});
  for (const auto& [field, path] : {std::pair{"labels", &labels}, std::pair{"test_data", &test_data},
                                    std::pair{"test_labels", &test_labels}, std::pair{"users", &users},
                                    std::pair{"feature_ranges", &feature_ranges}})
    if (*path) out.push_back({**path, field});
  return out;
}

FieldValues TrainRequest::to_map() const {
  FieldValues out = data.to_map();
  if (epsilon) out.emplace_back("epsilon", show(*epsilon));
  if (delta) out.emplace_back("delta", show(*delta));
  if (no_noise) out.emplace_back("no_noise", "");
  if (seed) out.emplace_back("seed", std::to_string(*seed));
  return out;
}

TrainConfig TrainRequest::resolve() const {
  TrainConfig c = run.resolve();
  c.no_noise = no_noise;
  c.target_epsilon = epsilon;
  // The rule (field_use.hpp), now that the noise target is known: the run's fields, then the
  // request's and the data's.
  run.require_read(c);
  require_read<ResolvedRequest>(to_map(), rules(), ResolvedRequest{c, data});
  // Empty texts name their field (a path, a label), never read as unstated or as "".
  for (const auto& [field, value] : data.to_map())
    if (value.empty() && field != "no_labels") refuse_empty(field, "a value");
  if (delta) c.delta = require_open(opt("delta"), *delta, 0.0, 1.0);
  if (epsilon) require_positive(opt("epsilon"), *epsilon);  // before the data, like every field
  if (!run.sigma && !run.noise_std && !epsilon && !no_noise)
    fail(opt("epsilon"), "(missing)",
         fmt::format("a target {} {}, or {}, {} or {}", error_field("epsilon", "E"), error_field("delta", "D"),
                     error_field("sigma"), error_field("noise_std"), error_field("no_noise")));
  c.seed = seed;
  return c;
}

namespace {

data::Part whole(data::Dataset d) {
  data::Part p;
  p.offsets = {0, d.n};
  p.data = std::move(d);
  return p;
}

// The public feature constants of the request (a ranges file is read here, before the data).
PublicFeatures public_features(const DataSpec& ds) {
  PublicFeatures f;
  f.scale = ds.feature_scale;
  f.ranges = ds.feature_ranges ? data::read_feature_ranges(*ds.feature_ranges, opt("feature_ranges"))
                               : ds.feature_range_values;
  return f;
}

// How the features are held: the stated storage, or auto (nullopt). Centring on public
// ranges needs float64, which auto then is.
std::optional<data::FeatureStorage> storage_of(const DataSpec& ds, bool centred) {
  auto storage = data::parse_feature_storage(ds.feature_storage, opt("feature_storage"));
  if (!centred) return storage;
  if (storage && *storage != data::FeatureStorage::float64)
    fail(opt("feature_storage"), ds.feature_storage,
         fmt::format("float64 or auto with {} (centring is not a scale, so compact storage cannot hold it)",
                     error_field("feature_ranges")));
  return data::FeatureStorage::float64;
}

data::DataSource source_of(const DataSpec& ds, const std::string& path, const std::optional<std::string>& labels,
                           std::string_view field, std::optional<data::FeatureStorage> storage,
                           std::size_t dimension = 0) {
  return data::DataSource{.path = path, .format = ds.format_name(), .labels_path = labels, .labels_field = std::string(field),
                          .label_column = ds.label_column, .dimension = dimension, .storage = storage,
                          .path_field = field == "test_labels" ? "test_data" : "data"};
}

// The records of `ds` as one process holds them all: read (or handed over), users, classes.
data::Dataset whole_records(DataSpec& ds, std::optional<data::FeatureStorage> storage) {
  data::Dataset all;
  if (ds.records) {
    all = storage ? data::stored_as(std::move(*ds.records), *storage) : std::move(*ds.records);
    ds.records.reset();
  } else {
    all = data::read(source_of(ds, ds.data, ds.labels, "labels", storage));
  }
  // The users follow their records through the classes and the split.
  if (ds.users) data::read_users(all, *ds.users);
  if (ds.user_ids)
    data::assign_users(all, std::move(*ds.user_ids), opt("users"),
                       [](std::size_t i) { return fmt::format("users[{}]", i); });
  if (!ds.classes.empty()) all = data::select_classes(all, ds.classes);
  return all;
}

}  // namespace

PreparedData prepare_data(DataSpec ds, TrainConfig& c, const Layout& layout) {
  if (ds.no_labels) fail(opt("no_labels"), "true", "false for training (a model is trained on labelled records)");
  // The record-norm bound of the plan (public quantities only) is the preparation's.
  if (const auto R = planned_record_norm(c)) c.record_norm = *R;
  // ---- checked before any data are read
  if (ds.test_fraction) require_open(opt("test_fraction"), *ds.test_fraction, 0.0, 1.0);
  const PublicFeatures features = public_features(ds);
  const auto storage = storage_of(ds, !features.ranges.empty());
  // Held out: a test file, a stated fraction, or by default 0.2 of a file (records handed
  // over in memory are not split unless asked).
  const bool split = !ds.test_data && (ds.test_fraction || !ds.records);
  const double fraction = ds.test_fraction.value_or(0.2);

  PreparedData pd;
  // Data parallel: each process reads only its part of each file (data/shard.hpp). Federated
  // under mpirun: every process reads the whole file and the clients keep their users'
  // records (docs/distributed.md, "Federated training").
  const bool parts = layout.size > 1 && c.algorithm != Algorithm::federated;
  if (!parts) {
    data::Dataset all = whole_records(ds, storage);
    pd.label_kind = map_labels_for(all, c, ds.positive);
    data::Dataset train_set, test_set;
    if (ds.test_data) {
      train_set = std::move(all);
      test_set = data::read(source_of(ds, *ds.test_data, ds.test_labels, "test_labels", storage));
      if (!ds.classes.empty()) test_set = data::select_classes(test_set, ds.classes);
      apply_label_mapping(test_set, data::to_string(pd.label_kind), train_set.labels);
    } else if (split) {
      std::tie(train_set, test_set) = data::train_test_split(all, fraction, ds.split_seed.value_or(1));
    } else {
      test_set = data::Dataset::empty_like(all);
      train_set = std::move(all);
    }
    pd.train = whole(std::move(train_set));
    pd.test = whole(std::move(test_set));
  } else {
    if (ds.records) throw std::logic_error("prepare_data: records in memory are one process's");
    if (ds.users || ds.user_ids)  // users are federated's (one process says the same in train())
      fail(opt("users"), "(given)",
           fmt::format("given only with {} (user-level training is federated Alg. 1's)",
                       error_field("algorithm", "federated")));
    const data::Collectives& comm = layout.collectives;
    data::Part all = data::read_part(source_of(ds, ds.data, ds.labels, "labels", storage), comm);
    if (!ds.classes.empty()) all = data::select_classes(all, ds.classes, comm);
    pd.label_kind = map_labels_for(all, c, ds.positive, comm);
    if (ds.test_data) {
      pd.train = std::move(all);
      pd.test = data::read_part(source_of(ds, *ds.test_data, ds.test_labels, "test_labels", storage), comm);
      if (!ds.classes.empty()) pd.test = data::select_classes(pd.test, ds.classes, comm);
      apply_label_mapping(pd.test.data, data::to_string(pd.label_kind), pd.train.data.labels, pd.test.first());
    } else {
      std::tie(pd.train, pd.test) = data::train_test_split(std::move(all), fraction, ds.split_seed.value_or(1));
    }
  }
  if (ds.test_data) {
    if (pd.test.data.d != pd.train.data.d)
      fail(opt("test_data"), *ds.test_data,
           fmt::format("a file with d = {} features like {} (it has {})", pd.train.data.d, error_field("data"),
                       pd.test.data.d));
    pd.split = fmt::format("{} train records, {} test records ({})", pd.train.n(), pd.test.n(),
                           escape_controls(*ds.test_data));  // a file name is bytes: text stays UTF-8
  } else if (split) {
    pd.split = fmt::format("{} train / {} test records (split fraction {}, split seed {})", pd.train.n(),
                           pd.test.n(), show(fraction), ds.split_seed.value_or(1));
  } else {
    pd.split = fmt::format("{} train records (no test records)", pd.train.n());
  }
  pd.preparation = parts ? prepare_records(pd.train, c, features, layout.collectives)
                         : prepare_records(pd.train.data, c, features);
  prepare_like(pd.test.data, pd.preparation);
  return pd;
}

PreparedData prepare_all_records(DataSpec ds, TrainConfig& c) {
  if (ds.no_labels) fail(opt("no_labels"), "true", "false for training (a model is trained on labelled records)");
  if (const auto R = planned_record_norm(c)) c.record_norm = *R;
  // ---- checked before any data are read
  const PublicFeatures features = public_features(ds);
  const auto storage = storage_of(ds, !features.ranges.empty());
  PreparedData pd;
  data::Dataset all = whole_records(ds, storage);
  pd.label_kind = map_labels_for(all, c, ds.positive);
  pd.test = whole(data::Dataset::empty_like(all));
  pd.train = whole(std::move(all));
  pd.split = fmt::format("{} train records (every record trains; none held out)", pd.train.n());
  pd.preparation = prepare_records(pd.train.data, c, features);
  return pd;
}

ModelFile TrainOutcome::model_file() const {
  const Preparation& p = prepared.preparation;
  return ModelFile{result.model, p.feature_center, p.feature_scale, p.record_norm,
                   std::string(data::to_string(prepared.label_kind)), prepared.train.data.labels};
}

void TrainOutcome::drop_records() {
  for (data::Part* part : {&prepared.train, &prepared.test}) {
    data::Dataset& d = part->data;
    d.x = {};
    d.x32 = {};
    d.x8 = {};
    d.row_scale = {};
    d.y = {};
    d.raw_labels = {};
    d.origin = {};
    d.users = {};
  }
}

TrainOutcome train_request(TrainRequest request, const Layout& layout, Watch watch) {
  // ---- configuration (validated before any data are read)
  TrainConfig c = request.resolve();
  const bool several = layout.size > 1;
  const bool federated = several && c.algorithm == Algorithm::federated;
  // federated: rank 0 the server, the others clients; otherwise data-parallel.
  if (federated) c.federation = layout.federation;
  else if (several) c.data_parallel = layout.data_parallel;
  TrainOutcome out;
  out.lead = layout.rank == 0;
  if (out.lead) c.progress = std::move(watch.progress);

  // ---- data
  std::optional<data::Dataset> records = std::move(request.data.records);
  request.data.records.reset();
  out.data = request.data;
  if (records) out.data.format = "array";  // the document's configuration.format
  request.data.records = std::move(records);
  out.prepared = prepare_data(std::move(request.data), c, layout);
  PreparedData& pd = out.prepared;
  if (out.lead && watch.warning && !pd.preparation.warning.empty()) watch.warning(pd.preparation.warning);

  // ---- train
  if (c.data_parallel) c.data_parallel->offsets = pd.train.offsets;
  out.result = train(pd.train.data, c);
  const LinearModel& model = out.result.model;
  const bool tested = pd.test.n() > 0;
  if (several && !federated) {  // sums over the processes' records, on every process
    out.train_evaluation = evaluate(model, pd.train, layout.collectives);
    if (tested) out.test_evaluation = evaluate(model, pd.test, layout.collectives);
  } else if (out.lead) {
    out.train_evaluation = out.result.train_evaluation ? *out.result.train_evaluation : evaluate(model, pd.train.data);
    if (tested) out.test_evaluation = evaluate(model, pd.test.data);
  }
  return out;
}

namespace {

std::string randomness(const TrainResult& r) {
  return r.seeded ? "seeded: for experiments, not for release (ChaCha20 keyed from the seed)"
                  : "operating-system entropy (ChaCha20 keyed with 256 bits from getrandom)";
}


// Where the label set came from: stated, or read from the training records and declared
// public (docs/training.md "What the model file holds").
std::string label_set(const TrainOutcome& o) {
  if (o.prepared.label_kind == data::LabelKind::real) return "real labels: no label set";
  if (!o.data.classes.empty()) {
    std::string listed;  // as the command takes them: one value after another
    for (const auto& c : o.data.classes) listed += (listed.empty() ? "" : " ") + c;
    return fmt::format("stated ({}): a public input", report_field("classes", listed));
  }
  return fmt::format(
      "read from the training records and published with the model as the task's public label set (the "
      "report's neighbouring data sets share it); state it with {} to fix it before the records are read",
      report_field("classes"));
}

// The run's count-derived constants, fixed once from its n (TrainConfig::public_n).
std::string public_constants(const TrainResult& r) {
  const Run& run = r.run;
  std::string out = fmt::format(
      "n = {} ({}), b = {}, T = {}", run.n,
      r.public_n_stated ? "stated" : "the training records' count, treated as a public constant of the run",
      run.batch_size, run.steps);
  if (run.sampling == Sampling::poisson && r.sampling_rate)
    out += fmt::format(", Poisson rate q = b/n = {}/{} (the sampler draws each record with probability {})",
                       run.batch_size, run.n, show(*r.sampling_rate));
  return out + "; under add/remove-one the neighbouring data set is trained with these same constants "
               "(docs/training.md \"Public constants of the run\")";
}

// Every field of a training document, each with its provenance (train/provenance.hpp): the
// writers below keep or set aside what the table says.
nlohmann::json full_document(const TrainOutcome& o, const std::string& account_command) {
  const TrainResult& r = o.result;
  const TrainConfig& used = r.config;  // with the plan's choices
  const data::Dataset& train_set = o.prepared.train.data;
  nlohmann::json doc;
  doc["format"] = "hsdp-model";
  doc["version"] = 1;
  doc["model"] = to_json(o.model_file());
  nlohmann::json cfg;
  cfg["data"] = json_file_name(o.data.data);  // a file name is bytes (docs/input.md)
  cfg["format"] = o.data.format_name();
  cfg["feature_storage"] = data::to_string(train_set.storage);
  cfg["algorithm"] = to_string(used.algorithm);
  cfg["convention"] = to_string(r.convention);
  if (r.sigma) cfg["sigma"] = *r.sigma;
  cfg["constraint"] = {{"kind", to_string(used.constraint.kind)}, {"radius", used.constraint.radius}};
  cfg["constants"] = {{"record_norm_with_bias", r.constants.record_norm}, {"derivation", r.constants.derivation}};
  if (r.constants.lipschitz_data) cfg["constants"]["lipschitz_data"] = *r.constants.lipschitz_data;
  cfg["constants"]["smoothness"] = r.constants.smoothness();
  cfg["constants"]["strong_convexity"] = r.constants.l2;
  if (used.target_epsilon) cfg["target"] = {{"epsilon", *used.target_epsilon}, {"delta", used.delta}};
  if (!r.plan_summary.empty()) {
    cfg["plan"] = {{"summary", r.plan_summary}, {"chosen", r.plan_chosen}};
    for (const auto& [sampling, std] : r.plan_candidates) cfg["plan"]["candidates"][sampling] = std;
    cfg["plan"]["sampling"] = to_string(r.run.sampling);
    cfg["plan"]["batch_size"] = r.run.batch_size;
    cfg["plan"]["steps"] = r.run.steps;
    cfg["plan"]["eta"] = r.run.eta.at(1);
  }
  if (r.user_level) {
    const UserLevel& u = *r.user_level;
    cfg["adjacency"] = {{"unit", "user"}, {"users", u.users}, {"records", u.records}, {"description", u.description}};
    if (u.message_bound) cfg["adjacency"]["message_norm_bound"] = *u.message_bound;
    if (u.sensitivity) cfg["adjacency"]["sensitivity"] = *u.sensitivity;
  }
  // A random stopping time is hidden (the random-stop analyses assume it so): never released.
  if (used.release == Release::random_stop) cfg["stopping_time"] = r.released_step;
  else cfg["released_step"] = r.released_step;
  cfg["public_constants"] = {{"n", r.run.n}, {"n_stated", r.public_n_stated}, {"batch_size", r.run.batch_size},
                             {"steps", r.run.steps}, {"description", public_constants(r)}};
  if (r.sampling_rate) cfg["public_constants"]["sampling_rate"] = *r.sampling_rate;
  if (!r.batch_order.empty()) cfg["batch_order"] = r.batch_order;
  cfg["preprocessing"] = o.prepared.preparation.description;
  cfg["split"] = o.prepared.split;
  cfg["labels"] = train_set.labels.describe();
  cfg["label_set"] = label_set(o);
  cfg["notes"] = r.notes;
  doc["configuration"] = cfg;
  const Evaluation& tr = o.train_evaluation;
  if (tr.accuracy) {
    doc["train_accuracy"] = *tr.accuracy;
    if (o.test_evaluation) doc["test_accuracy"] = *o.test_evaluation->accuracy;
  }
  doc["train_loss"] = tr.loss;
  if (o.test_evaluation) doc["test_loss"] = o.test_evaluation->loss;
  doc["randomness"] = randomness(r);
  if (r.report) {
    doc["report"] = to_json(*r.report);
    doc["account_command"] = account_command;
  } else {
    doc["report"] = nullptr;
  }
  return doc;
}

}  // namespace

nlohmann::json to_json(const TrainOutcome& o, const std::string& account_command) {
  return owner_document(full_document(o, account_command));
}

nlohmann::json model_document(const TrainOutcome& o, const std::string& account_command) {
  return release_document(full_document(o, account_command));
}

std::string to_text(const TrainOutcome& o, const std::string& account_command,
                    const std::optional<std::string>& written_to) {
  const TrainResult& r = o.result;
  const TrainConfig& used = r.config;
  const data::Dataset& train_set = o.prepared.train.data;
  std::string out;
  out += fmt::format("data: {} ({} features); labels {}\n", escape_controls(o.data.data), train_set.d,
                     train_set.labels.describe());
  if (o.prepared.label_kind != data::LabelKind::real) out += fmt::format("label set: {}\n", label_set(o));
  out += fmt::format("split: {}\n", o.prepared.split);
  out += fmt::format("preprocessing: {}\n", o.prepared.preparation.description);
  out += fmt::format("model: {} ({} parameters{}), constraint {} r = {} (diameter {})\n", to_string(used.loss.kind),
                     r.model.parameters(), used.bias ? ", bias" : "", to_string(used.constraint.kind),
                     show(used.constraint.radius), show(r.run.diameter));
  out += fmt::format("constants: {}\n", r.constants.derivation);
  out += fmt::format("algorithm: {} ({} convention{}), released iterate {} of {}\n", to_string(used.algorithm),
                     to_string(r.convention), r.sigma ? fmt::format(", sigma = {}", show(*r.sigma)) : "",
                     r.released_step, r.run.steps);
  if (r.user_level) out += fmt::format("adjacency: {}\n", r.user_level->description);
  if (!r.plan_summary.empty()) out += fmt::format("plan: {}\n", r.plan_summary);
  if (!r.batch_order.empty()) out += fmt::format("batches: {}\n", r.batch_order);
  out += fmt::format("public constants: {}\n", public_constants(r));
  out += fmt::format("randomness: {}\n", randomness(r));
  for (const auto& note : r.notes) out += "note: " + note + "\n";
  const Evaluation& tr = o.train_evaluation;
  const auto& te = o.test_evaluation;
  // Statistics of the records: for the data owner, never in the model file (provenance.hpp).
  out += te ? "not private (statistics of the training and test records, never in the model file): "
            : "not private (statistics of the training records, never in the model file): ";
  if (tr.accuracy && te)
    out += fmt::format("train accuracy {:.4f}  test accuracy {:.4f}  (train loss {:.4f}, test loss {:.4f})\n",
                       *tr.accuracy, *te->accuracy, tr.loss, te->loss);
  else if (tr.accuracy)
    out += fmt::format("train accuracy {:.4f}  (train loss {:.4f})\n", *tr.accuracy, tr.loss);
  else if (te)
    out += fmt::format("train loss {:.6g}  test loss {:.6g}\n", tr.loss, te->loss);
  else
    out += fmt::format("train loss {:.6g}\n", tr.loss);
  if (r.report) {
    out += fmt::format("\nprivacy report of the run performed (noise: {}):\n", randomness(r)) + to_table(*r.report);
    out += "same report: " + account_command + "\n";
  } else {
    out += "privacy: none (no noise: not private)\n";
  }
  if (written_to) out += fmt::format("model written to {}\n", escape_controls(*written_to));
  return out;
}

namespace {

// The records of a file to score, read with labels unless ds.no_labels; a file that seems to
// have no labels (or, with no_labels, one label column too many) is an error saying so.
data::Dataset read_to_score(const DataSpec& ds, std::optional<data::FeatureStorage> storage, std::size_t d) {
  if (ds.format_name() == "idx" && !ds.labels && !ds.no_labels)
    fail(opt("labels"), "(missing)",
         fmt::format("the IDX labels file for {}, or {} to score images without labels", error_field("format", "idx"),
                     error_field("no_labels")));
  data::DataSource source = source_of(ds, ds.data, ds.labels, "labels", storage, d);
  source.labeled = !ds.no_labels;
  data::Dataset records;
  try {
    records = data::read(source);
  } catch (const InvalidArgument& e) {
    // A LIBSVM line read with labels that starts with index:value: the file has none
    // (the reader's message, libsvm.cpp, completed with the field that reads such a file).
    if (ds.no_labels || ds.format_name() != "libsvm" ||
        std::string_view(e.what()).find("expected a label before the features") == std::string_view::npos)
      throw;
    throw InvalidArgument(fmt::format("{} (the file seems to have no labels: {} scores such a file)", e.what(),
                                      error_field("no_labels")));
  }
  if (records.d == d) return records;
  if (ds.format_name() == "csv" && !ds.no_labels && records.d + 1 == d)
    fail(opt("data"), ds.data,
         fmt::format("a file with the model's d = {} features per record besides the label (it has {} columns, as "
                     "many as the model has features: it seems to have no label column; {} scores a file without "
                     "labels)",
                     d, d, error_field("no_labels")));
  if (ds.format_name() == "csv" && ds.no_labels && records.d == d + 1)
    fail(opt("data"), ds.data,
         fmt::format("a file of the model's d = {} features per record (it has {} columns, one more than the model "
                     "has features: it seems to have a label column; without {} the last column, or {}, is read "
                     "as the label)",
                     d, d + 1, error_field("no_labels"), error_field("label_column")));
  if (ds.no_labels)
    fail(opt("data"), ds.data, fmt::format("a file of the model's d = {} features per record (it has {})", d, records.d));
  fail(opt("data"), ds.data,
       fmt::format("a file with the model's d = {} features per record besides the label{} (it has {})", d,
                   ds.format_name() == "csv" ? fmt::format(" (in CSV the last column, or {}, is the label)",
                                                    error_field("label_column"))
                                      : std::string(),
                   records.d));
}

}  // namespace

data::Dataset records_for(const ModelFile& model, DataSpec ds) {
  {
    // The rule (field_use.hpp) over what scoring reads of the statement.
    const TrainConfig unused;
    const FieldValues stated = ds.to_map();
    require_read<ResolvedRequest>(stated, scoring_rules(), ResolvedRequest{unused, ds});
    for (const auto& [field, value] : stated)
      if (value.empty() && field != "no_labels") refuse_empty(field, "a value");
  }
  const auto storage = storage_of(ds, !model.feature_center.empty());
  const std::size_t d = model.model.d;
  data::Dataset records;
  if (ds.records) {
    records = storage ? data::stored_as(std::move(*ds.records), *storage) : std::move(*ds.records);
    if (records.d != d)  // records in memory are named by their own name (e.g. X)
      fail(ds.data, fmt::format("{} features", records.d), fmt::format("the model's d = {} features", d));
  } else {
    records = read_to_score(ds, storage, d);
  }
  if (!ds.classes.empty()) records = data::select_classes(records, ds.classes);
  // A label the model was not trained on is an error naming the record.
  if (!ds.no_labels) apply_label_mapping(records, model.label_kind, model.labels);
  Preparation p;
  p.feature_center = model.feature_center;
  p.feature_scale = model.feature_scale;
  p.record_norm = model.record_norm;
  prepare_like(records, p);
  // The model's constants must leave every record finite (an overflow scored as "loss -nan").
  std::vector<double> x(records.d);
  for (std::size_t i = 0; i < records.n; ++i) {
    records.effective_row(i, x.data());
    for (std::size_t j = 0; j < records.d; ++j)
      if (!std::isfinite(x[j]))
        fail(fmt::format("feature {} of the record at {}", j + 1, records.origin.empty() ? fmt::format("record {}", i + 1)
                                                                                          : records.label_place(i)),
             show(x[j]),
             fmt::format("finite once prepared by the model's feature_center, feature_scale and record_norm "
                         "(feature_scale[{}] = {} overflows on it)",
                         j, model.feature_scale.empty() ? std::string("1") : show(model.feature_scale[j % model.feature_scale.size()])));
  }
  return records;
}

std::vector<double> predict(const LinearModel& model, const data::Dataset& records) {
  std::vector<double> out(records.n), x(records.d);
  for (std::size_t i = 0; i < records.n; ++i) {
    records.effective_row(i, x.data());
    out[i] = model.predict(x.data());
  }
  return out;
}

}  // namespace hsdp::train
