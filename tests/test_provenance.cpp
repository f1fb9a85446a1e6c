// What leaves hsdp (issue 35, include/hsdp/train/provenance.hpp): every field of the model file
// has a provenance, the model file holds no statistic of the records, and the subtraction
// attack that the exact train_loss allowed finds nothing in it.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hsdp/train/model_io.hpp"
#include "hsdp/train/provenance.hpp"
#include "hsdp/train/request.hpp"

namespace {

using hsdp::train::DataSpec;
using hsdp::train::Provenance;
using hsdp::train::TrainOutcome;
using hsdp::train::TrainRequest;
using nlohmann::json;
namespace data = hsdp::data;
namespace train = hsdp::train;

// n records of 2 features in memory, labels "a" / "b" by the sign of a direction (with a few
// flipped), record `target` labelled `target_label`.
data::Dataset records(std::size_t n, std::size_t target, const std::string& target_label) {
  data::Dataset d;
  d.n = n;
  d.d = 2;
  d.source = "X";
  d.origin_kind = data::Dataset::Origin::row;
  for (std::size_t i = 0; i < n; ++i) {
    const double u = std::sin(1.7 * static_cast<double>(i) + 0.3), v = std::cos(2.9 * static_cast<double>(i));
    d.x.push_back(u);
    d.x.push_back(v);
    d.raw_labels.push_back((u + 0.5 * v > 0) != (i % 7 == 3) ? "b" : "a");
    d.origin.push_back(i);
  }
  d.raw_labels[target] = target_label;
  return d;
}

TrainRequest request_for(data::Dataset d, bool split, bool random_stop = false) {
  TrainRequest r;
  r.data.data = "X";
  r.data.records = std::move(d);
  if (split) r.data.test_fraction = 0.25;
  r.run.model = "logistic";
  r.run.algorithm = "noisy-gd";
  r.run.steps = 20;
  r.run.eta = 2.0;
  r.run.sigma = 0.05;
  if (random_stop) r.run.release = "random-stop";
  r.seed = 3;
  return r;
}

// The paths of a document's fields as the provenance table names them.
void paths(const json& j, const std::string& prefix, std::map<std::string, Provenance>& out) {
  for (const auto& [key, value] : j.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (path == "not_private") continue;  // the owner's list of the fields below
    if ((path == "model" || path == "configuration" || path == "configuration.adjacency") && value.is_object()) {
      paths(value, path, out);
      continue;
    }
    const auto* f = train::find_provenance(path);
    ASSERT_NE(f, nullptr) << path << " has no provenance";
    out[path] = f->provenance;
  }
}

TEST(Provenance, EveryFieldOfTheModelFileHasOneAndNoStatisticIsReleased) {
  const TrainOutcome out = train::train_request(request_for(records(40, 0, "a"), true));
  const json owner = train::to_json(out, "hsdp account --json");
  const json file = train::model_document(out, "hsdp account --json");
  std::map<std::string, Provenance> all, released;
  paths(owner, "", all);
  paths(file, "", released);
  // The data owner's document lists exactly the fields that are not releasable.
  std::set<std::string> held;
  for (const auto& [path, p] : all)
    if (!train::releasable(p)) held.insert(path);
  EXPECT_EQ(held, (std::set<std::string>{"configuration.split", "test_accuracy", "test_loss", "train_accuracy",
                                         "train_loss"}));
  EXPECT_EQ(owner["not_private"]["fields"].get<std::set<std::string>>(), held);
  // The model file: every field public or certified, and these exactly (a new field needs a
  // provenance and a line here).
  const std::map<std::string, Provenance> expected{
      {"account_command", Provenance::public_input},
      {"configuration.algorithm", Provenance::public_input},
      {"configuration.batch_order", Provenance::public_input},
      {"configuration.constants", Provenance::public_input},
      {"configuration.constraint", Provenance::public_input},
      {"configuration.convention", Provenance::public_input},
      {"configuration.data", Provenance::public_input},
      {"configuration.feature_storage", Provenance::public_input},
      {"configuration.format", Provenance::public_input},
      {"configuration.label_set", Provenance::public_input},
      {"configuration.labels", Provenance::public_input},
      {"configuration.notes", Provenance::public_input},
      {"configuration.preprocessing", Provenance::public_input},
      {"configuration.public_constants", Provenance::public_input},
      {"configuration.released_step", Provenance::public_input},
      {"configuration.sigma", Provenance::public_input},
      {"format", Provenance::public_input},
      {"model.bias", Provenance::public_input},
      {"model.features", Provenance::public_input},
      {"model.intercept", Provenance::certified_output},
      {"model.l2", Provenance::public_input},
      {"model.labels", Provenance::public_input},
      {"model.loss", Provenance::public_input},
      {"model.outputs", Provenance::public_input},
      {"model.record_norm", Provenance::public_input},
      {"model.weights", Provenance::certified_output},
      {"randomness", Provenance::public_input},
      {"report", Provenance::public_input},
      {"version", Provenance::public_input},
  };
  EXPECT_EQ(released, expected);
  // The model file is what predict reads.
  const train::ModelFile mf = train::model_from_json(file, "m.json");
  EXPECT_EQ(mf.labels.raw, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(mf.model.theta, out.result.model.theta);
}

TEST(Provenance, TheRandomStoppingTimeIsNeverReleased) {
  const TrainOutcome out = train::train_request(request_for(records(30, 0, "a"), false, true));
  const json owner = train::to_json(out, "");
  const json file = train::model_document(out, "");
  EXPECT_EQ(owner["configuration"]["stopping_time"], out.result.released_step);
  EXPECT_FALSE(file["configuration"].contains("stopping_time"));
  EXPECT_FALSE(file["configuration"].contains("released_step"));
  EXPECT_EQ(train::find_provenance("configuration.stopping_time")->provenance, Provenance::secret_of_the_run);
}

TEST(Provenance, AFieldWithoutOneIsRefusedAndOldFilesLoseTheirStatistics) {
  json doc = {{"format", "hsdp-model"}, {"version", 1}, {"train_loss", 0.25}, {"configuration", {{"split", "x"}}}};
  EXPECT_EQ(train::release_document(doc), (json{{"format", "hsdp-model"}, {"version", 1}, {"configuration", json::object()}}));
  doc["new_field"] = 1;
  EXPECT_THROW(train::release_document(doc), std::logic_error);
  EXPECT_THROW(train::owner_document(doc), std::logic_error);
  // A file read back (another hsdp's): what is not known to be releasable is dropped.
  EXPECT_FALSE(train::release_document(doc, false).contains("new_field"));
  EXPECT_FALSE(train::release_document(doc, false).contains("train_loss"));
  for (const auto& f : train::document_fields()) EXPECT_FALSE(f.why.empty()) << f.field;
}

// The attack of issue 35: an attacker who holds the n - 1 other records and the model file
// computes the last record's loss from the mean training loss by subtraction, and names its
// label as the one whose loss it matches. nullopt: the file gives it nothing to subtract from.
std::optional<std::string> subtraction_attack(const json& file, const data::Dataset& others,
                                              const data::Dataset& target_as_a, const data::Dataset& target_as_b) {
  if (!file.contains("train_loss")) return std::nullopt;
  const train::ModelFile mf = train::model_from_json(file, "m.json");
  auto loss_of = [&](data::Dataset d) {
    DataSpec spec;
    spec.data = "X";
    spec.records = std::move(d);
    return train::evaluate(mf.model, train::records_for(mf, std::move(spec))).loss;
  };
  const double n = static_cast<double>(others.n + 1);
  const double target = n * file["train_loss"].get<double>() - (n - 1) * loss_of(others);
  return std::abs(target - loss_of(target_as_a)) < std::abs(target - loss_of(target_as_b)) ? "a" : "b";
}

TEST(Provenance, TheSubtractionAttackFindsNothingInTheModelFile) {
  constexpr std::size_t n = 40, target = 5;
  data::Dataset others = records(n, target, "a");
  data::Dataset as_a = data::Dataset::empty_like(others), as_b = data::Dataset::empty_like(others);
  as_a.append_features_of(others, target);
  as_b.append_features_of(others, target);
  as_a.n = as_b.n = 1;
  as_a.raw_labels = {"a"};
  as_b.raw_labels = {"b"};
  {
    data::Dataset rest = data::Dataset::empty_like(others);
    for (std::size_t i = 0; i < n; ++i) {
      if (i == target) continue;
      rest.append_features_of(others, i);
      rest.raw_labels.push_back(others.raw_labels[i]);
      ++rest.n;
    }
    others = std::move(rest);
  }
  for (const std::string label : {"a", "b"}) {
    const TrainOutcome out = train::train_request(request_for(records(n, target, label), false));
    // The owner's document (the old model file held these fields): the attack names the label.
    const json owner = train::to_json(out, "");
    EXPECT_EQ(subtraction_attack(owner, others, as_a, as_b), label);
    // The model file: nothing to subtract from, and no field of the records' statistics.
    const json file = train::model_document(out, "");
    EXPECT_EQ(subtraction_attack(file, others, as_a, as_b), std::nullopt);
    std::map<std::string, Provenance> fields;
    paths(file, "", fields);
    for (const auto& [path, p] : fields) EXPECT_TRUE(train::releasable(p)) << path;
  }
}

}  // namespace
